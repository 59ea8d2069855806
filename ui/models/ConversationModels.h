// Item models of the Conversations panel: every conversation the store keeps (MAP mail: one row
// per ConversationLedger row), and the turns of one conversation in their order.
//
// Thread: GUI thread, like the store. Both follow SystemStore::changed (≤ 30 Hz) through
// ChangeSet::conversationRows, and aboutToReset()/wasReset() bracket a model reset.
// Participants are shown by name: a participant the server names by a session id is that
// session's agent (SystemStore::participantName), so names follow agents' renames and sessions.
#pragma once

#include "model/SystemStore.h"

#include <QAbstractTableModel>
#include <QHash>

#include <vector>

namespace mapi::ui {

// Notices when what names participants may have changed: an agent's shown name or its session
// (a participant named by a session id is that session's agent). One signature per agent row,
// compared only for the rows a ChangeSet names and the new ones.
class ParticipantNamesWatch
{
public:
    // True when an agent was added, renamed or moved to another session since the last call.
    bool changed(const SystemStore &store, const ChangeSet &changes);
    void clear() { m_signatures.clear(); }

private:
    struct Signature
    {
        QString name;       // shownName()
        QString sessionId;
    };
    std::vector<Signature> m_signatures; // per agent row
};

class ConversationListModel : public QAbstractTableModel
{
    Q_OBJECT
public:
    enum Column { SubjectColumn, TypeColumn, StatusColumn, ParticipantsColumn, TurnsColumn, LastActivityColumn,
                  ColumnCount };
    enum Role {
        SortRole = Qt::UserRole + 1, // raw value for sorting (numbers and times stay numbers)
        ConversationIdRole,
        // What the filter box matches (on SubjectColumn): subject, type, status, participant
        // names, id.
        FilterTextRole,
    };

    explicit ConversationListModel(const SystemStore *store, QObject *parent = nullptr);

    int rowCount(const QModelIndex &parent = {}) const override { return parent.isValid() ? 0 : m_rows; }
    int columnCount(const QModelIndex &parent = {}) const override { return parent.isValid() ? 0 : ColumnCount; }
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

    // Store row of a conversation id, or -1 (unknown, or not announced to the views yet).
    int rowOfConversation(const QString &conversationId) const;

private:
    // What a row shows of its participants, computed when its conversation or the agents change
    // (SystemStore::conversationParticipants walks the participants; data() runs per paint and
    // per sort comparison).
    struct Participants
    {
        int count = 0;          // by agent: one per agent however many sessions it joined from
        QString names;          // "name (role), …", for the tooltip and the filter
    };
    void onChanged(const ChangeSet &changes);
    Participants participantsOf(const Conversation &conversation) const;
    const Conversation &conversationAt(int row) const { return m_store->conversations().conversations()[size_t(row)]; }

    const SystemStore *m_store;
    int m_rows = 0;                            // rows announced to the views
    std::vector<Participants> m_participants;  // per row, m_rows of them
    ParticipantNamesWatch m_names;
};

// The turns of one conversation, oldest first (the ledger's order: by time, ties in arrival
// order). A snapshot of the conversation's kept turns, taken again whenever its row is in
// ChangeSet::conversationRows: O(kept turns of that conversation) per such batch (implicitly
// shared strings: no text is copied). Turns appended, and the oldest dropped by the ledger's
// bound, become row inserts and removals; any other reordering (a history page bringing older
// turns) resets the model, so a view keeps its current turn by TurnIdRole.
class TurnListModel : public QAbstractTableModel
{
    Q_OBJECT
public:
    // NumberColumn (the turn's row number, which reply cells name) is not column 0: a row's
    // number changes when older rows go, and column 0 is what views and testers take as the
    // row's identity. The panel shows it first (QHeaderView::moveSection).
    enum Column { TimeColumn, NumberColumn, ParticipantColumn, ThreadColumn, ReplyToColumn, ContentTypeColumn,
                  TextColumn, ColumnCount };
    enum Role {
        TurnIdRole = Qt::UserRole + 1,
        EventRowRole,                // int: the mail.turn.added event's row in the store, -1: none
        ReplyToRowRole,              // int: the row of the turn this one answers, -1: none or not kept
        FullTextRole,                // the turn's whole kept text (cut at kMaxTurnTextChars: TextCutRole)
        TextCutRole,                 // bool: the kept text was cut (the whole content is in the event's frame)
    };

    explicit TurnListModel(const SystemStore *store, QObject *parent = nullptr);

    // Shows the turns of `conversationId` (empty: nothing). A conversation not (yet) in the store
    // is shown once it arrives.
    void setConversationId(const QString &conversationId);
    QString conversationId() const { return m_conversationId; }
    int conversationRow() const { return m_conversationRow; }

    int rowOfTurn(const QString &turnId) const { return m_rowOfTurn.value(turnId, -1); }

    int rowCount(const QModelIndex &parent = {}) const override { return parent.isValid() ? 0 : int(m_rows.size()); }
    int columnCount(const QModelIndex &parent = {}) const override { return parent.isValid() ? 0 : ColumnCount; }
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    struct Row
    {
        ConversationTurn turn;
        int replyToRow = -1;     // in the same snapshot
        QString threadSubject;   // empty: no thread, or a thread not known
    };
    void onChanged(const ChangeSet &changes);
    std::vector<Row> snapshot() const;
    void refresh();              // takes a new snapshot and announces how it differs
    void indexRows();            // m_rowOfTurn from m_rows

    const SystemStore *m_store;
    QString m_conversationId;
    int m_conversationRow = -1;
    std::vector<Row> m_rows;
    QHash<QString, int> m_rowOfTurn;
    ParticipantNamesWatch m_names;
};

} // namespace mapi::ui
