// Health panel: every agent's heartbeat status at a glance — a dense table sorted worst-first
// with a summary line of counts per health, and charts of traffic, agents by state, task
// outcomes and reported usage over the last ten minutes (or the whole trace).
//
// Clicking agents selects them for actions (SelectionHub::selectAgents); the table follows
// selections made elsewhere. Thread: GUI thread.
#pragma once

#include <QTimer>
#include <QWidget>

class QLabel;
class QTableView;

namespace mapi {
class InspectorSession;
}

namespace mapi::ui {

class HealthCharts;
class HealthHistory;
class HealthModel;
class HealthSortProxy;
class SelectionHub;

class HealthPanel : public QWidget
{
    Q_OBJECT
public:
    HealthPanel(InspectorSession *session, SelectionHub *selection, QWidget *parent = nullptr);

private:
    void tick();
    void updateSummary();
    void updateColumns();
    void publishSelection();
    void followSelection(const QStringList &agentIds, QObject *origin);

    InspectorSession *m_session;
    SelectionHub *m_selection;
    HealthModel *m_model;
    HealthSortProxy *m_proxy;
    HealthHistory *m_history;
    QLabel *m_summary;
    QTableView *m_table;
    HealthCharts *m_charts;
    QTimer m_replayRebuild;    // coalesces chart rebuilds while a replay moves
    QTimer m_clock;            // 1 Hz: chart samples and heartbeat ages (health moves in tens of seconds)
    bool m_following = false;  // true while mirroring another panel's selection: no echo
};

} // namespace mapi::ui
