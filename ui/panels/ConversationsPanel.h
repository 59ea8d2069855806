// Conversations panel (MAP mail): every conversation the store keeps in a filterable, sortable
// table, and below it the selected one: who started it and how it ended, its participants by
// agent, its threads, its turns in order with their reply links, and the selected turn's text.
//
// Double-clicking a turn (or Enter) opens its mail.turn.added event in the inspector
// (SelectionHub::focus(Kind::Event)); double-clicking its reply cell, or "Go to the turn it
// answers", selects the turn it answers. Servers without mail (no capabilities.mail in
// map/connect) have none: availabilityChanged() lets the window hide the dock there.
// Thread: GUI thread.
#pragma once

#include "session/SelectionHub.h"

#include <QWidget>

class QLabel;
class QLineEdit;
class QPlainTextEdit;
class QPushButton;
class QSortFilterProxyModel;
class QStackedWidget;
class QTableView;
class QTreeWidget;

namespace mapi {
class InspectorSession;
struct ChangeSet;
}

namespace mapi::ui {

class ConversationListModel;
class TurnListModel;

class ConversationsPanel : public QWidget
{
    Q_OBJECT
public:
    ConversationsPanel(InspectorSession *session, SelectionHub *selection, QWidget *parent = nullptr);

    // The server serves conversations (capabilities.mail) or the store has some (a trace, a
    // history page): the dock is worth showing.
    bool hasContent() const { return m_available; }
    // The conversation shown below the table (empty: none).
    QString currentConversationId() const;

Q_SIGNALS:
    // hasContent() changed.
    void availabilityChanged(bool available);

protected:
    void changeEvent(QEvent *event) override;
    bool eventFilter(QObject *watched, QEvent *event) override;

private:
    void onStoreChanged(const ChangeSet &changes);
    void showConversation(const QString &conversationId);
    void applyFilter();
    void updateEmptyState();
    void updateCounts();
    void updateConversationDetails(); // header and participants
    void updateThreads();
    void updateTurnText();
    void updateAvailability();
    void goToAnsweredTurn();
    void openTurnEvent(int turnRow);
    int currentTurnRow() const;
    void selectTurnRow(int row);

    InspectorSession *m_session;
    SelectionHub *m_selection;
    ConversationListModel *m_model;
    QSortFilterProxyModel *m_proxy;
    TurnListModel *m_turns;
    QLineEdit *m_filter = nullptr;
    QLabel *m_counts = nullptr;
    QStackedWidget *m_pages = nullptr; // the empty state, or the table and the selected conversation
    QLabel *m_emptyText = nullptr;
    QTableView *m_table = nullptr;
    QLabel *m_header = nullptr;
    QLabel *m_participants = nullptr;
    QTreeWidget *m_threads = nullptr;
    QTableView *m_turnTable = nullptr;
    QPushButton *m_goToAnswered = nullptr;
    QPlainTextEdit *m_turnText = nullptr;
    QString m_currentTurnId; // kept across a turn model reset (a history page reorders)
    bool m_available = false;
    bool m_filtering = false; // the filter is being applied: selection changes are Qt's, not the operator's
};

} // namespace mapi::ui
