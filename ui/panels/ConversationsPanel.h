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

#include <initializer_list>
#include <utility>

class QAbstractItemModel;
class QHeaderView;
class QLabel;
class QLineEdit;
class QPlainTextEdit;
class QPushButton;
class QSortFilterProxyModel;
class QSplitter;
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

// The widgets the Conversations and Agent work panels build alike, so that their labels, texts,
// tables and panes look and behave the same (defined in ConversationsPanel.cpp; ui/common/ is
// their place once a third panel wants them). GUI thread.

// A label with `objectName`, in `format` (Qt::PlainText for servers' words: never markup).
QLabel *textLabel(const char *objectName, Qt::TextFormat format, QWidget *parent);
// The same, word-wrapped and selectable with the mouse: reasons, statuses and headers to copy.
QLabel *selectableLabel(const char *objectName, Qt::TextFormat format, QWidget *parent);
// A filter or search box with a clear button, `placeholder` while empty.
QLineEdit *searchBox(const char *objectName, const QString &placeholder, QWidget *parent);
// A read-only text to read through (a turn, a transcript, a file), `placeholder` while empty;
// wrapped at the widget's width, in the widget's font.
QPlainTextEdit *readOnlyText(const char *objectName, const QString &placeholder, QWidget *parent);
// A read-only table over `model` whose rows are selected one at a time (setUpReadOnlyTable);
// `stretchColumn` takes the width left.
QTableView *readOnlyTable(const char *objectName, QAbstractItemModel *model, int stretchColumn, QWidget *parent);
// Fixed widths, in `metrics`, for the columns of `samples` (column, sample text), with room for
// the sort arrow: ResizeToContents would measure every row on each change.
void sizeColumnsFor(QHeaderView *header, const QFontMetrics &metrics,
                    std::initializer_list<std::pair<int, QString>> samples);
// A box of `above` (widgets or layouts, in order) over `fill`, which takes the height left: edge
// to edge, 2 px apart.
QWidget *columnBox(std::initializer_list<QObject *> above, QWidget *fill, QWidget *parent);
// `first` and `second` side by side (Qt::Horizontal) or one above the other, neither collapsible;
// they share the room `firstShare`:`secondShare`, or as they ask when both are 0.
QSplitter *twoPanes(Qt::Orientation orientation, QWidget *first, QWidget *second, QWidget *parent, int firstShare = 0,
                    int secondShare = 0);

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
    // Every conversation (m_proxy sorts and filters them for the table), and the turns of the one
    // shown below it.
    ConversationListModel *m_model;
    QSortFilterProxyModel *m_proxy;
    TurnListModel *m_turns;
    QLineEdit *m_filter = nullptr;      // applied once typing settles (whenTypingSettles)
    QLabel *m_counts = nullptr;         // conversations and turns kept, and how many were not
    QStackedWidget *m_pages = nullptr; // the empty state, or the table and the selected conversation
    QLabel *m_emptyText = nullptr;      // none yet, or a server without mail
    QTableView *m_table = nullptr;
    // The selected conversation: header, participants, threads, turns and the selected turn's text.
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
