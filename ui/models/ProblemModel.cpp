#include "models/ProblemModel.h"

#include "style/Colors.h"

#include <QDateTime>
#include <QLocale>

namespace mapi::ui {

namespace {

QString timeOfDay(qint64 ms)
{
    return QDateTime::fromMSecsSinceEpoch(ms).toString(QStringLiteral("HH:mm:ss.zzz"));
}

QString isoTime(qint64 ms)
{
    return QDateTime::fromMSecsSinceEpoch(ms).toString(Qt::ISODateWithMs);
}

} // namespace

// ---- problems --------------------------------------------------------------------------

ProblemModel::ProblemModel(const SystemStore *store, QObject *parent)
    : QAbstractTableModel(parent)
    , m_store(store)
    , m_rows(int(store->problems().size()))
{
    connect(store, &SystemStore::changed, this, &ProblemModel::appendNewRows);
    connect(store, &SystemStore::aboutToReset, this, [this] { beginResetModel(); });
    connect(store, &SystemStore::wasReset, this, [this] {
        m_rows = int(m_store->problems().size());
        m_dropped = m_store->problemsDropped();
        endResetModel();
    });
}

void ProblemModel::appendNewRows()
{
    if (m_store->problemsDropped() != m_dropped) { // the oldest went: rows moved up
        beginResetModel();
        m_dropped = m_store->problemsDropped();
        m_rows = int(m_store->problems().size());
        endResetModel();
        return;
    }
    const int total = int(m_store->problems().size());
    if (total <= m_rows)
        return;
    beginInsertRows({}, m_rows, total - 1);
    m_rows = total;
    endInsertRows();
}

int ProblemModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : m_rows;
}

int ProblemModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant ProblemModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const ProtocolProblem &p = m_store->problems()[size_t(index.row())];
    const bool truncated = p.frame.size() >= ProtocolProblem::kMaxKeptProblemBytes;
    switch (role) {
    case Qt::DisplayRole:
        switch (index.column()) {
        case TimeColumn: return timeOfDay(p.timeMs);
        case KindColumn: return problemKindName(p.kind);
        case DetailColumn: return p.detail;
        case SizeColumn:
            return truncated ? tr("≥ %1 B").arg(QLocale().toString(p.frame.size())) : tr("%1 B").arg(QLocale().toString(p.frame.size()));
        }
        break;
    case Qt::ToolTipRole:
        switch (index.column()) {
        case TimeColumn: return isoTime(p.timeMs);
        case DetailColumn: return p.detail;
        case SizeColumn:
            return truncated ? tr("The frame was longer: only its first %1 bytes were kept").arg(ProtocolProblem::kMaxKeptProblemBytes)
                             : tr("Frame size in bytes");
        }
        break;
    case Qt::TextAlignmentRole:
        if (index.column() == SizeColumn)
            return int(Qt::AlignRight | Qt::AlignVCenter);
        break;
    default: break;
    }
    return {};
}

QVariant ProblemModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return {};
    switch (section) {
    case TimeColumn: return tr("Time");
    case KindColumn: return tr("Problem");
    case DetailColumn: return tr("Detail");
    case SizeColumn: return tr("Frame");
    }
    return {};
}

// ---- gaps ------------------------------------------------------------------------------

GapModel::GapModel(const SystemStore *store, QObject *parent)
    : QAbstractTableModel(parent)
    , m_store(store)
    , m_rows(int(store->gaps().size()))
{
    connect(store, &SystemStore::changed, this, &GapModel::appendNewRows);
    connect(store, &SystemStore::aboutToReset, this, [this] { beginResetModel(); });
    connect(store, &SystemStore::wasReset, this, [this] {
        m_rows = int(m_store->gaps().size());
        endResetModel();
    });
}

void GapModel::appendNewRows()
{
    const int total = int(m_store->gaps().size());
    if (total <= m_rows)
        return;
    beginInsertRows({}, m_rows, total - 1);
    m_rows = total;
    endInsertRows();
}

int GapModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : m_rows;
}

int GapModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant GapModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const Gap &g = m_store->gaps()[size_t(index.row())];
    switch (role) {
    case Qt::DisplayRole:
        switch (index.column()) {
        case TimeColumn: return timeOfDay(g.timeMs);
        case KindColumn: return gapKindName(g.kind);
        case MissingColumn:
            if (g.fromSequence < 0)
                return QStringLiteral("—");
            if (g.toSequence <= g.fromSequence)
                return tr("#%1").arg(g.fromSequence);
            return tr("#%1 – #%2 (%3 events)").arg(g.fromSequence).arg(g.toSequence).arg(g.toSequence - g.fromSequence + 1);
        case DetailColumn: return g.detail;
        case RecoveredColumn: return g.recovered ? tr("recovered") : tr("lost");
        }
        break;
    case Qt::ToolTipRole:
        switch (index.column()) {
        case TimeColumn: return isoTime(g.timeMs);
        case MissingColumn: return tr("Sequence numbers of the missing events, when the server numbers them");
        case DetailColumn: return g.detail;
        case RecoveredColumn:
            return g.recovered ? tr("The missing events were replayed from the server")
                               : tr("The missing events could not be replayed: the model may lack what happened meanwhile");
        }
        break;
    case Qt::ForegroundRole:
        if (index.column() == RecoveredColumn)
            return healthColor(g.recovered ? Health::Healthy : Health::Unresponsive);
        break;
    default: break;
    }
    return {};
}

QVariant GapModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return {};
    switch (section) {
    case TimeColumn: return tr("Time");
    case KindColumn: return tr("Gap");
    case MissingColumn: return tr("Missing");
    case DetailColumn: return tr("Detail");
    case RecoveredColumn: return tr("Outcome");
    }
    return {};
}

} // namespace mapi::ui
