// The detectors kept running over one store: an AlertEngine evaluated every second (model time
// moves with the store's clock; less often when one evaluation takes more than 100 ms, so that
// it never takes more than a tenth of the thread), reading what is new and evaluating in slices
// between which the event loop runs, and started over when the store is reset. What the window's attention inbox and the CLI's
// watch listen to.
// Thread: the store's (the GUI thread in the window).
#pragma once

#include "alerts/AlertEngine.h"
#include "alerts/AlertGroups.h"
#include "common/TurnShare.h"

#include <QObject>
#include <QPointer>
#include <QTimer>

#include <vector>

namespace mapi {

class AlertMonitor : public QObject
{
    Q_OBJECT
public:
    static constexpr int kIntervalMs = 1000; // the rules are defined in seconds
    // A slice of evaluation stops past this (AlertEngine::setEvaluationSliceMs): well under the
    // window's 30 ms stall goal, with room for the step that runs over it.
    static constexpr int kSliceMs = 8;

    explicit AlertMonitor(QObject *parent = nullptr);
    ~AlertMonitor() override;
    // A slice's time (default kSliceMs): a window with several live systems gives each a share.
    void setSliceMs(int ms) { m_engine.setEvaluationSliceMs(ms); }
    // Where its slices and verdict parts wait for their turn (null: its own). A window gives all
    // its systems' monitors one, so that one system's piece runs a turn, never three stacked.
    void setTurnShare(TurnShare *share);

    // Watches `store` (null: none) from its first row; evaluation starts with start().
    void setStore(SystemStore *store);
    void setRules(const AlertRules &rules);
    const AlertRules &rules() const { return m_engine.rules(); }
    void start() { m_tick.start(); }
    void stop()
    {
        m_tick.stop();
        share()->cancel(this, kSlicePiece);
    }
    bool isRunning() const { return m_tick.isActive(); }

    // Another source replaced the store's content: every open alert is forgotten at once (not at
    // the next evaluation: the previous system's alerts must not show over the new one).
    void forgetAlerts()
    {
        dropVerdict();
        m_engine.reset();
        m_groups.clear();
        Q_EMIT alertsReset();
    }

    // Reads everything new and evaluates now, without yielding (tests, and the CLI).
    void evaluateNow();
    // One slice of reading and evaluating, as the tick's and the backlog's turns run it (and tests);
    // schedules the next slice while behind. An evaluation it finishes is told at the next turn
    // of the event loop.
    void step();

    const std::map<QString, Alert> &openAlerts() const { return m_engine.openAlerts(); }
    // The open alerts' groups (the rules' "grouping"), brought up to date with each part before
    // alertsChanged is emitted: a receiver asks groups().isGrouped(key) of the alerts it is told.
    const AlertGroups &groups() const { return m_groups; }
    // The group notices due now (model time; AlertGroups::due), each told once: the window's
    // delivery asks after each evaluation.
    std::vector<AlertGroups::Notice> groupNoticesDue();
    qint64 notTracked() const { return m_engine.notTracked(); }
    // How the detectors keep up (benchmarks): evaluations completed, messages not read yet.
    qint64 evaluationCount() const { return m_engine.evaluationCount(); }
    qint64 unreadMessages() const { return m_store ? m_engine.unreadMessages(*m_store) : 0; }

Q_SIGNALS:
    // Alerts raised and cleared by one evaluation, cleared first; a storm's changes come in
    // parts of at most kTellPartMost, one turn of the event loop each, in order.
    void alertsChanged(const std::vector<mapi::AlertChange> &changes);
    // Every open alert was forgotten (a new store, new rules): views empty their lists.
    void alertsReset();
    // An evaluation ended (after alertsChanged when it changed something): openAlerts() is the
    // rules' verdict on the whole store. Both come at later turns of the event loop than the
    // evaluation's last slice, one part a turn (evaluateNow(): before it returns).
    void evaluated();

private:
    void tellVerdict(); // emits what is left of the finished evaluation's alertsChanged, then evaluated
    void tellVerdictPart(size_t most); // at most `most` changes, the rest at the next turn
    void dropVerdict(); // forgets a finished evaluation not yet told (its store or rules are gone)
    void askSlice(); // the next slice at a later turn
    void askTellPart(); // the next part of the verdict at a later turn
    void tell(const std::vector<AlertChange> &changes); // groups brought up to date, then alertsChanged

    QPointer<SystemStore> m_store;
    AlertEngine m_engine;
    AlertGroups m_groups;
    QTimer m_tick;
    // The next slice of a backlog, and the next part of a verdict, wait here for a turn of the
    // event loop: its own share, or the window's (setTurnShare).
    TurnShare m_ownShare;
    QPointer<TurnShare> m_share; // the window's; null: its own (also once the window's is gone)
    TurnShare *share() { return m_share ? m_share.data() : &m_ownShare; }
    static constexpr int kSlicePiece = 0;
    static constexpr int kTellPiece = 1;
    std::vector<AlertChange> m_verdict; // what the finished evaluation changed, until told
    size_t m_verdictTold = 0;           // of m_verdict, told already
    bool m_stepAfterTell = false;       // a step came while it was being told: it runs after
    // A part's size follows what the views took for the last one (per change), aimed at
    // kTellPartTargetNs: 500 changes cost 2-5 ms in a small inbox, but 30 ms in one of 10,000
    // rows whose cleared rows are scattered (each removal walks the sorted view's rows).
    static constexpr size_t kTellPartMost = 500;
    static constexpr size_t kTellPartLeast = 50; // measured: 0.1-0.2 ms of a part is fixed (counts, summaries)
    static constexpr qint64 kTellPartTargetNs = 4'000'000;
    size_t m_tellPart = kTellPartMost; // changes in the next part
    bool m_verdictDue = false;
};

} // namespace mapi
