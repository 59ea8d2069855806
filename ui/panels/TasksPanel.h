// Tasks panel: every task in a sortable, filterable table, and below it the lifecycle of the
// selected task (requested, accepted/rejected, handed off, completed/failed), colour-coded.
//
// Selecting a task focuses it for the inspector (SelectionHub::focus(Kind::Task)); a task
// focused elsewhere is selected here. Thread: GUI thread.
#pragma once

#include "session/SelectionHub.h"

#include <QTimer>
#include <QWidget>

class QLabel;
class QLineEdit;
class QSortFilterProxyModel;
class QTableView;
class QSplitter;
class QTreeView;

namespace mapi {
class InspectorSession;
}

namespace mapi::ui {

class TaskHistoryModel;
class TaskTableModel;

class TasksPanel : public QWidget
{
    Q_OBJECT
public:
    TasksPanel(InspectorSession *session, SelectionHub *selection, QWidget *parent = nullptr);

protected:
    void changeEvent(QEvent *event) override;
    // In a wide, low dock (the bottom area) the list and the selected task's lifecycle sit side by
    // side, so that the list keeps the whole height (ten rows or more at 1366×768); else one
    // above the other.
    void resizeEvent(QResizeEvent *event) override;

private:
    void showTask(const QString &taskId);
    void updateCounts();
    void updateHistoryTitle();
    void followFocus(SelectionHub::Kind kind, const QString &key, QObject *origin);

    InspectorSession *m_session;
    SelectionHub *m_selection;
    TaskTableModel *m_model;
    QSortFilterProxyModel *m_proxy;
    TaskHistoryModel *m_history;
    QLineEdit *m_filter;
    QLabel *m_counts;
    QSplitter *m_splitter = nullptr;
    QTableView *m_table;
    QLabel *m_historyTitle;
    QTreeView *m_historyView;
    bool m_following = false;  // true while mirroring a focus made elsewhere: no echo
};

} // namespace mapi::ui
