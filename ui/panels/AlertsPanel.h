// The attention inbox: every open alert (core/alerts, through AlertMonitor), the most severe and
// longest waiting first, the agents of one loop or cycle on one row, a storm's alerts under one
// group row (listed on demand; acknowledge, snooze and the actions act on the whole group). Selecting a row selects its
// agents everywhere (topology, timeline, agents table; one agent is also inspected). From the row
// the operator shows it in the timeline, walks its evidence (each message, task or agent focused in
// the inspector, a message also in the timeline), acknowledges (greyed, sorted last), snoozes
// (hidden for a while), or acts: inject,
// suspend, stop, each through the window's usual confirmation (MainWindow), never directly.
// Thread: GUI thread.
#pragma once

#include "session/SelectionHub.h"

#include <QWidget>

class QLabel;
class QMenu;
class QTableView;
class QToolButton;

namespace mapi {
class AlertMonitor;
class InspectorSession;
} // namespace mapi

namespace mapi::ui {

class AlertModel;
class AlertOrder;

class AlertsPanel : public QWidget
{
    Q_OBJECT
public:
    AlertsPanel(InspectorSession *session, SelectionHub *selection, AlertMonitor *monitor, QWidget *parent = nullptr);

    AlertModel *model() const { return m_model; }
    // The alert of the selected row, by key (empty: none).
    QString selectedKey() const;
    void selectKey(const QString &key);
    void acknowledgeSelected();
    void snoozeSelected(qint64 forMs);

Q_SIGNALS:
    // The operator asked to act on the selected alert's agents, now selected in the hub.
    void injectRequested();
    void suspendRequested();
    void stopRequested();
    // Alerts → Supervise automatically… (the supervision ladder's dialog).
    void superviseRequested(const QString &selectedKey); // the selected row's key ("group:…" for a storm), or ""
    // Alerts → Settings… (rules, notifications, webhook).
    void settingsRequested();
    // Bring this moment (model time, ms) into the timeline's view: an alert's start, an
    // evidence message.
    void timelineRequested(qint64 atMs);
    // Open alerts not acknowledged nor snoozed, and how many of them are critical.
    void attentionChanged(int waiting, int critical);

private:
    void updateButtons();
    void updateSummary();
    void selectAgentsOfSelection();
    void fillEvidenceMenu();

    InspectorSession *m_session;
    SelectionHub *m_selection;
    AlertModel *m_model;
    AlertOrder *m_proxy;
    QTableView *m_table;
    QLabel *m_summary;
    QToolButton *m_inspect;
    QToolButton *m_expand;
    QToolButton *m_acknowledge;
    QToolButton *m_snooze;
    QToolButton *m_timeline;
    QToolButton *m_evidence;
    QMenu *m_evidenceMenu;
    QToolButton *m_inject;
    QToolButton *m_suspend;
    QToolButton *m_stop;
    QToolButton *m_supervise;
    QToolButton *m_settings;
    bool m_evaluated = false; // the detectors evaluated the model since their last reset
};

} // namespace mapi::ui
