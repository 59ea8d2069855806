// Actions panel: the operator action audit log (SystemStore::actions()): when each inject, stop,
// suspend, resume or send went out, to which agent, with which method (and fallback), and how it
// ended (sent → accepted → confirmed | failed | timed-out | unsupported) with its latencies.
//
// Oldest first, like a log: rows keep the store's order, so new actions are appended with one
// row insert and a status change repaints just its row; the view follows new rows while it is
// scrolled to the bottom and stays put while the operator reads older ones.
// Selecting a row focuses the action (the inspector shows it); a focus set elsewhere selects it here.
// Thread: GUI thread.
#pragma once

#include "session/SelectionHub.h"

#include <QWidget>

class QLabel;
class QTableView;

namespace mapi {
class InspectorSession;
class SystemStore;
} // namespace mapi

namespace mapi::ui {

class ActionModel;

class ActionsPanel : public QWidget
{
    Q_OBJECT
public:
    ActionsPanel(InspectorSession *session, SelectionHub *selection, QWidget *parent = nullptr);

private:
    void updateSummary();
    void followFocus(SelectionHub::Kind kind, const QString &key, QObject *origin);

    SelectionHub *m_selection;
    const SystemStore *m_store;
    ActionModel *m_model;
    QTableView *m_table;
    QLabel *m_summary;
    bool m_syncingSelection = false; // selecting a row for a focus set elsewhere: do not echo it
};

} // namespace mapi::ui
