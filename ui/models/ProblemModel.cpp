#include "models/ProblemModel.h"

#include "common/ColumnTitles.h"
#include "common/Redaction.h"
#include "common/TimeText.h"
#include "style/Colors.h"

#include <QDateTime>
#include <QLocale>

namespace mapi::ui {

namespace {

QString isoTime(qint64 ms)
{
    return QDateTime::fromMSecsSinceEpoch(ms).toString(Qt::ISODateWithMs);
}

} // namespace

// ---- problems --------------------------------------------------------------------------

ProblemModel::ProblemModel(const SystemStore *store, QObject *parent)
    : LogTableModel(
        store, ColumnCount, [store] { return int(store->problems().size()); }, [store] { return store->problemsDropped(); },
        parent)
{
    connect(store, &SystemStore::changed, this, [this] { followLog(); });
}

QVariant ProblemModel::entryData(size_t row, int column, int role) const
{
    const ProtocolProblem &p = m_store->problems()[row];
    const bool truncated = p.frame.size() >= ProtocolProblem::kMaxKeptProblemBytes;
    switch (role) {
    case Qt::DisplayRole:
        switch (column) {
        case TimeColumn: return timeOfDay(p.timeMs, TimePrecision::Milliseconds, Clock::Local); // received here
        case KindColumn: return problemKindName(p.kind);
        case DetailColumn: return redactSecrets(p.detail); // a server's error text can quote a credential
        case SizeColumn:
            return truncated ? tr("≥ %1 B").arg(QLocale().toString(p.frame.size())) : tr("%1 B").arg(QLocale().toString(p.frame.size()));
        }
        break;
    case Qt::ToolTipRole:
        switch (column) {
        case TimeColumn: return isoTime(p.timeMs);
        case DetailColumn: return redactSecrets(p.detail); // a server's error text can quote a credential
        case SizeColumn:
            return truncated ? tr("The frame was longer: only its first %1 bytes were kept").arg(ProtocolProblem::kMaxKeptProblemBytes)
                             : tr("Frame size in bytes");
        }
        break;
    case Qt::TextAlignmentRole:
        if (column == SizeColumn)
            return int(Qt::AlignRight | Qt::AlignVCenter);
        break;
    default: break;
    }
    return {};
}

QVariant ProblemModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    return columnTitle(section, orientation, role, {tr("Time"), tr("Problem"), tr("Detail"), tr("Frame")});
}

// ---- gaps ------------------------------------------------------------------------------

GapModel::GapModel(const SystemStore *store, QObject *parent)
    : LogTableModel(store, ColumnCount, [store] { return int(store->gaps().size()); }, {}, parent)
{
    connect(store, &SystemStore::changed, this, [this] { followLog(); });
}

QVariant GapModel::entryData(size_t row, int column, int role) const
{
    const Gap &g = m_store->gaps()[row];
    switch (role) {
    case Qt::DisplayRole:
        switch (column) {
        case TimeColumn: return timeOfDay(g.timeMs, TimePrecision::Milliseconds, Clock::Local); // noticed here
        case KindColumn: return gapKindName(g.kind);
        case MissingColumn:
            if (g.fromSequence < 0)
                return QStringLiteral("—");
            if (g.toSequence <= g.fromSequence)
                return tr("#%1").arg(g.fromSequence);
            return tr("#%1 – #%2 (%3 events)").arg(g.fromSequence).arg(g.toSequence).arg(g.toSequence - g.fromSequence + 1);
        case DetailColumn: return g.detail;
        case RecoveredColumn: return g.recovered ? tr("recovered") : g.partial ? tr("partly recovered") : tr("lost");
        }
        break;
    case Qt::ToolTipRole:
        switch (column) {
        case TimeColumn: return isoTime(g.timeMs);
        case MissingColumn: return tr("Sequence numbers of the missing events, when the server numbers them");
        case DetailColumn: return g.detail;
        case RecoveredColumn:
            return g.recovered ? tr("The missing events were replayed from the server")
                : g.partial ? tr("Some of the missing events were replayed, then the replay reached its bound: the rest are missing")
                            : tr("The missing events could not be replayed: the model may lack what happened meanwhile");
        }
        break;
    case Qt::ForegroundRole:
        if (column == RecoveredColumn)
            return healthColor(g.recovered ? Health::Healthy : Health::Unresponsive);
        break;
    default: break;
    }
    return {};
}

QVariant GapModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    return columnTitle(section, orientation, role, {tr("Time"), tr("Gap"), tr("Missing"), tr("Detail"), tr("Outcome")});
}

} // namespace mapi::ui
