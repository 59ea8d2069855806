#include "models/ConversationModels.h"

#include "common/ColumnTitles.h"
#include "common/ModelSignals.h"
#include "common/TimeText.h"

#include <QGuiApplication>
#include <QPalette>

#include <algorithm>

namespace mapi::ui {

namespace {

constexpr QChar kEllipsis(u'\u2026');

// The newest moment a conversation shows: created, updated, closed, or its newest kept turn.
qint64 lastActivityOf(const Conversation &c)
{
    qint64 latest = std::max({c.createdMs, c.updatedMs, c.closedMs});
    if (!c.turns.empty())
        latest = std::max(latest, c.turns.back().timeMs);
    return latest;
}

// The first line of a turn's text, with "…" when there is more (other lines, or text the ledger
// cut): a table cell holds one line.
QString firstLineOf(const ConversationTurn &turn)
{
    const qsizetype end = turn.text.indexOf(QLatin1Char('\n'));
    if (end < 0)
        return turn.textCut ? QString(turn.text + kEllipsis) : turn.text;
    QString line = turn.text.left(end);
    if (line.endsWith(QLatin1Char('\r')))
        line.chop(1);
    return line + kEllipsis;
}

} // namespace

// ---- ParticipantNamesWatch ---------------------------------------------------------------

bool ParticipantNamesWatch::changed(const SystemStore &store, const ChangeSet &changes)
{
    const std::vector<Agent> &agents = store.agents();
    bool any = false;
    if (agents.size() < m_signatures.size()) { // a reset the owner did not pass on: start again
        m_signatures.clear();
        any = true;
    }
    // In a flood most agents change every batch (states): compared in place, nothing allocated.
    for (const int row : changes.agentRows) {
        if (row < 0 || size_t(row) >= m_signatures.size())
            continue;
        const Agent &agent = agents[size_t(row)];
        Signature &known = m_signatures[size_t(row)];
        if (shownName(agent) != known.name || agent.sessionId != known.sessionId) {
            known = {shownName(agent), agent.sessionId};
            any = true;
        }
    }
    for (size_t row = m_signatures.size(); row < agents.size(); ++row) {
        m_signatures.push_back({shownName(agents[row]), agents[row].sessionId});
        any = true;
    }
    return any;
}

// ---- ConversationListModel ---------------------------------------------------------------

ConversationListModel::ConversationListModel(const SystemStore *store, QObject *parent)
    : QAbstractTableModel(parent)
    , m_store(store)
    , m_rows(int(store->conversations().conversations().size()))
{
    m_names.changed(*store, {});
    m_participants.reserve(size_t(m_rows));
    for (int row = 0; row < m_rows; ++row)
        m_participants.push_back(participantsOf(conversationAt(row)));
    connect(store, &SystemStore::changed, this, &ConversationListModel::onChanged);
    connect(store, &SystemStore::aboutToReset, this, [this] {
        beginResetModel();
        m_rows = 0;
        m_participants.clear();
        m_names.clear();
    });
    connect(store, &SystemStore::wasReset, this, [this] {
        m_names.changed(*m_store, {});
        endResetModel();
    });
}

int ConversationListModel::rowOfConversation(const QString &conversationId) const
{
    const Conversation *c = m_store->conversations().find(conversationId);
    if (!c)
        return -1;
    const int row = int(c - m_store->conversations().conversations().data());
    return row < m_rows ? row : -1;
}

ConversationListModel::Participants ConversationListModel::participantsOf(const Conversation &conversation) const
{
    Participants shown;
    const std::vector<SystemStore::ParticipantRow> rows = m_store->conversationParticipants(conversation);
    shown.count = int(rows.size());
    QStringList names;
    names.reserve(qsizetype(rows.size()));
    for (const SystemStore::ParticipantRow &p : rows)
        names << (p.role.isEmpty() ? p.name : QStringLiteral("%1 (%2)").arg(p.name, p.role));
    shown.names = names.join(QStringLiteral(", "));
    return shown;
}

void ConversationListModel::onChanged(const ChangeSet &changes)
{
    const int oldRows = m_rows;
    const int newRows = int(m_store->conversations().conversations().size());
    const bool namesChanged = m_names.changed(*m_store, changes);
    if (namesChanged) {
        for (int row = 0; row < oldRows; ++row)
            m_participants[size_t(row)] = participantsOf(conversationAt(row));
    } else {
        for (const int row : changes.conversationRows)
            if (row >= 0 && row < oldRows)
                m_participants[size_t(row)] = participantsOf(conversationAt(row));
    }
    if (newRows > oldRows) {
        beginInsertRows({}, oldRows, newRows - 1);
        for (int row = oldRows; row < newRows; ++row)
            m_participants.push_back(participantsOf(conversationAt(row)));
        m_rows = newRows;
        endInsertRows();
    }
    // The subject column carries the filter text (participant names): it is in the range.
    if (namesChanged && oldRows > 0)
        Q_EMIT dataChanged(index(0, SubjectColumn), index(oldRows - 1, ParticipantsColumn));
    emitRowsChanged(this, changes.conversationRows, oldRows, 0, ColumnCount - 1);
}

QVariant ConversationListModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const Conversation &c = conversationAt(index.row());
    const Participants &participants = m_participants[size_t(index.row())];
    const int column = index.column();
    const qsizetype keptTurns = qsizetype(c.turns.size());
    switch (role) {
    case ConversationIdRole:
        return c.id;
    case FilterTextRole:
        return QStringList{c.subject, c.type, c.status, participants.names, c.id}.join(QLatin1Char(' '));
    case Qt::DisplayRole:
    case SortRole:
        switch (column) {
        case SubjectColumn: return c.subject.isEmpty() ? c.id : c.subject;
        case TypeColumn: return c.type;
        case StatusColumn:
            if (role == SortRole || c.closeReason.isEmpty())
                return c.status;
            return QStringLiteral("%1 · %2").arg(c.status, c.closeReason);
        case ParticipantsColumn: return participants.count;
        case TurnsColumn:
            if (role == SortRole)
                return qint64(keptTurns) + c.turnsNotKept;
            if (c.turnsNotKept > 0)
                return tr("%1 (%2 earlier not kept)").arg(keptTurns).arg(c.turnsNotKept);
            return QString::number(keptTurns);
        case LastActivityColumn: {
            const qint64 last = lastActivityOf(c);
            return role == SortRole ? QVariant(last) : QVariant(timeOfDay(last));
        }
        }
        return {};
    case Qt::ToolTipRole:
        switch (column) {
        case SubjectColumn:
            return c.parentConversationId.isEmpty() ? c.id : tr("%1\nwithin conversation %2").arg(c.id, c.parentConversationId);
        case StatusColumn: {
            if (c.closedMs <= 0 && c.closedBy.isEmpty())
                return {};
            QString tip = c.closedBy.isEmpty() ? tr("Closed") : tr("Closed by %1").arg(m_store->participantName(c.closedBy));
            if (c.closedMs > 0)
                tip += QLatin1Char(' ') + tr("at %1").arg(dateAndTime(c.closedMs));
            if (!c.closeReason.isEmpty())
                tip += QStringLiteral(": ") + c.closeReason;
            return tip;
        }
        case ParticipantsColumn: return participants.names;
        case TurnsColumn: {
            QString tip = tr("%1 turn(s) kept here").arg(keptTurns);
            if (c.turnsNotKept > 0)
                tip += QLatin1Char('\n') + tr("%1 earlier turn(s) not kept (the console's bound): the server still has them").arg(c.turnsNotKept);
            if (c.serverTurnCount >= 0)
                tip += QLatin1Char('\n') + tr("The server counts %1").arg(c.serverTurnCount);
            return tip;
        }
        case LastActivityColumn:
            return tr("Created %1\nLast activity %2").arg(dateAndTime(c.createdMs), dateAndTime(lastActivityOf(c)));
        default: return {};
        }
    case Qt::ForegroundRole:
        // A closed conversation reads as done: its status in the muted colour.
        if (column == StatusColumn && c.closedMs > 0)
            return QGuiApplication::palette().color(QPalette::PlaceholderText);
        return {};
    case Qt::TextAlignmentRole:
        if (column == ParticipantsColumn || column == TurnsColumn)
            return int(Qt::AlignRight | Qt::AlignVCenter);
        return {};
    default:
        return {};
    }
}

QVariant ConversationListModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation == Qt::Horizontal && role == Qt::ToolTipRole && section == ParticipantsColumn)
        return tr("Participants by agent: an agent that joined from several sessions counts once");
    return columnTitle(section, orientation, role,
                       {tr("Subject"), tr("Type"), tr("Status"), tr("Participants"), tr("Turns"), tr("Last activity")});
}

// ---- TurnListModel -----------------------------------------------------------------------

TurnListModel::TurnListModel(const SystemStore *store, QObject *parent)
    : QAbstractTableModel(parent)
    , m_store(store)
{
    m_names.changed(*store, {});
    connect(store, &SystemStore::changed, this, &TurnListModel::onChanged);
    connect(store, &SystemStore::aboutToReset, this, [this] {
        beginResetModel();
        m_conversationRow = -1; // the id stays: the conversation is shown again if it comes back
        m_rows.clear();
        m_rowOfTurn.clear();
        m_names.clear();
    });
    connect(store, &SystemStore::wasReset, this, [this] {
        m_names.changed(*m_store, {});
        endResetModel();
    });
}

void TurnListModel::setConversationId(const QString &conversationId)
{
    if (conversationId == m_conversationId)
        return;
    beginResetModel();
    m_conversationId = conversationId;
    const Conversation *found = conversationId.isEmpty() ? nullptr : m_store->conversations().find(conversationId);
    m_conversationRow = found ? int(found - m_store->conversations().conversations().data()) : -1;
    m_rows = snapshot();
    indexRows();
    endResetModel();
}

std::vector<TurnListModel::Row> TurnListModel::snapshot() const
{
    std::vector<Row> rows;
    if (m_conversationRow < 0)
        return rows;
    const Conversation &c = m_store->conversations().conversations()[size_t(m_conversationRow)];
    QHash<QString, QString> threadSubjects;
    for (const ConversationThread &thread : c.threads)
        threadSubjects.insert(thread.id, thread.subject);
    QHash<QString, int> rowOf;
    rowOf.reserve(qsizetype(c.turns.size()));
    rows.reserve(c.turns.size());
    for (const ConversationTurn &turn : c.turns) {
        rowOf.insert(turn.id, int(rows.size()));
        Row &row = rows.emplace_back();
        row.turn = turn;
        if (!turn.threadId.isEmpty())
            row.threadSubject = threadSubjects.value(turn.threadId);
    }
    for (Row &row : rows)
        if (!row.turn.inReplyTo.isEmpty())
            row.replyToRow = rowOf.value(row.turn.inReplyTo, -1);
    return rows;
}

void TurnListModel::indexRows()
{
    m_rowOfTurn.clear();
    m_rowOfTurn.reserve(qsizetype(m_rows.size()));
    for (size_t row = 0; row < m_rows.size(); ++row)
        m_rowOfTurn.insert(m_rows[row].turn.id, int(row));
}

void TurnListModel::refresh()
{
    std::vector<Row> next = snapshot();
    const size_t old = m_rows.size();
    // The ledger appends turns and drops each conversation's oldest past its bound: the new
    // snapshot is then the old one without its first `dropped` rows, plus new rows at the end.
    bool appendOnly = true;
    size_t dropped = 0;
    if (old > 0) {
        if (next.empty()) {
            dropped = old;
        } else if (const int start = rowOfTurn(next.front().turn.id); start < 0) {
            appendOnly = false;
        } else {
            dropped = size_t(start);
            const size_t kept = old - dropped;
            appendOnly = kept <= next.size();
            for (size_t i = 0; appendOnly && i < kept; ++i)
                appendOnly = m_rows[dropped + i].turn.id == next[i].turn.id;
        }
    }
    if (!appendOnly) {
        beginResetModel();
        m_rows = std::move(next);
        indexRows();
        endResetModel();
        return;
    }
    if (dropped > 0) {
        beginRemoveRows({}, 0, int(dropped) - 1);
        m_rows.erase(m_rows.begin(), m_rows.begin() + qptrdiff(dropped));
        indexRows();
        endRemoveRows();
    }
    const size_t kept = m_rows.size();
    if (next.size() > kept) {
        beginInsertRows({}, int(kept), int(next.size()) - 1);
        m_rows = std::move(next);
        indexRows();
        endInsertRows();
    } else {
        m_rows = std::move(next);
        indexRows();
    }
    // Kept rows may have changed too: a status, a thread's subject, the row a reply points to.
    if (kept > 0)
        Q_EMIT dataChanged(index(0, 0), index(int(kept) - 1, ColumnCount - 1));
}

void TurnListModel::onChanged(const ChangeSet &changes)
{
    const bool namesChanged = m_names.changed(*m_store, changes);
    if (m_conversationId.isEmpty())
        return;
    if (m_conversationRow < 0) { // the conversation may have arrived since it was chosen
        if (changes.conversationRows.isEmpty())
            return;
        const Conversation *found = m_store->conversations().find(m_conversationId);
        if (!found)
            return;
        m_conversationRow = int(found - m_store->conversations().conversations().data());
    }
    if (changes.conversationRows.contains(m_conversationRow))
        refresh();
    else if (namesChanged && !m_rows.empty())
        Q_EMIT dataChanged(index(0, ParticipantColumn), index(int(m_rows.size()) - 1, ParticipantColumn));
}

QVariant TurnListModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const Row &row = m_rows[size_t(index.row())];
    const ConversationTurn &turn = row.turn;
    const int column = index.column();
    switch (role) {
    case TurnIdRole: return turn.id;
    case EventRowRole: return turn.eventRow;
    case ReplyToRowRole: return row.replyToRow;
    case FullTextRole: return turn.text;
    case TextCutRole: return turn.textCut;
    case Qt::DisplayRole:
        switch (column) {
        case NumberColumn: return index.row() + 1;
        case TimeColumn: return timeOfDay(turn.timeMs, TimePrecision::Milliseconds);
        case ParticipantColumn: return m_store->participantName(turn.participant);
        case ThreadColumn: return row.threadSubject.isEmpty() ? turn.threadId : row.threadSubject;
        case ReplyToColumn:
            if (turn.inReplyTo.isEmpty())
                return {};
            if (row.replyToRow >= 0)
                return QStringLiteral("↩ #%1").arg(row.replyToRow + 1);
            return QString(QStringLiteral("↩ ") + turn.inReplyTo);
        case ContentTypeColumn: {
            QString text = turn.contentType;
            if (!turn.interceptedMessageId.isEmpty())
                text += QStringLiteral(" · ") + tr("intercepted (%1)").arg(turn.interceptedMessageId);
            if (!turn.status.isEmpty() && turn.status != QLatin1String("complete"))
                text += QStringLiteral(" · ") + turn.status;
            return text;
        }
        case TextColumn: return firstLineOf(turn);
        }
        return {};
    case Qt::ToolTipRole:
        switch (column) {
        case TimeColumn: return tr("%1\nturn %2").arg(dateAndTime(turn.timeMs), turn.id);
        case ParticipantColumn: return turn.participant;
        case ThreadColumn: return turn.threadId;
        case ReplyToColumn:
            if (turn.inReplyTo.isEmpty())
                return {};
            if (row.replyToRow >= 0)
                return tr("Answers turn #%1 (double-click to go to it)").arg(row.replyToRow + 1);
            return tr("Answers turn %1, which is not kept here (older than the kept turns, or never seen)").arg(turn.inReplyTo);
        case ContentTypeColumn:
            if (turn.interceptedMessageId.isEmpty())
                return turn.status.isEmpty() ? QVariant() : QVariant(tr("status %1").arg(turn.status));
            return tr("Recorded by the server from the map/send message %1 (source: intercepted)").arg(turn.interceptedMessageId);
        case TextColumn:
            if (turn.textCut)
                return tr("%1%2\n(cut here: the whole content is in the event's frame, which the inspector opens)")
                    .arg(turn.text, QString(kEllipsis));
            return turn.text;
        default: return {};
        }
    case Qt::TextAlignmentRole:
        if (column == NumberColumn)
            return int(Qt::AlignRight | Qt::AlignVCenter);
        return {};
    default:
        return {};
    }
}

QVariant TurnListModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    return columnTitle(section, orientation, role,
                       {tr("Time"), tr("#"), tr("Participant"), tr("Thread"), tr("Reply to"), tr("Type"), tr("Text")});
}

} // namespace mapi::ui
