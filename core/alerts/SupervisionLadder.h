// The supervision ladder: what the operator allowed to happen, rule by rule, while an alert stays
// open. For an alert of a kind whose plan is enabled: a nudge (a steering message to its agents)
// after nudgeAfterMs, then a suspend after suspendAfterMs, then a stop after stopAfterMs, each
// counted from when the alert was raised, each taken once, in that order. The ladder stops the
// moment the alert clears. Nothing runs unless a plan was enabled explicitly (plans are per
// connection: reset() turns them all off), and nothing runs in observer mode.
//
// Storms (AlertGroups): the steps of alerts in one group that come due together are one action
// on all their agents — one nudge, one suspend of a thousand agents, not a thousand of each — and
// a plan can be limited to some groups (LadderPlan::onlyGroups: supervise this storm).
//
// The ladder decides; its owner acts (the window through InspectorSession, whose actions are
// tracked and marked automatic in the audit log). Times are model time (AlertMonitor's).
// Thread: the store's. Memory: one entry per open alert of an enabled kind.
#pragma once

#include "alerts/AlertEngine.h"

#include <QStringList>

#include <array>
#include <functional>
#include <map>
#include <vector>

namespace mapi {

struct LadderPlan
{
    bool enabled = false;
    // The nudge's text; "%1" becomes the alert's reason.
    QString nudgeText = QStringLiteral("An operator's supervision rule noticed: %1. Re-check your plan, and report your status.");
    qint64 nudgeAfterMs = 0;       // < 0: no nudge
    qint64 suspendAfterMs = 120000; // < 0: no suspend
    qint64 stopAfterMs = -1;       // < 0: no stop (the default: stopping is asked for explicitly)
    // Empty: every alert of the kind climbs. Else only those in these groups (AlertGroups keys,
    // "unresponsive|scope:<id>"): an alert's group is fixed when it is raised.
    QStringList onlyGroups;
};

enum class LadderStep { Nudge, Suspend, Stop };
QString ladderStepName(LadderStep step); // "nudge", "suspend", "stop"

struct LadderAction
{
    LadderStep step = LadderStep::Nudge;
    AlertKind kind = AlertKind::Stalled;
    QStringList agents;            // each once, in the order of their alerts
    QString alertKey;              // the alert's key; for a group's merged step, "group:" + the group's key
    QString text;                  // the nudge's text (nudge), or the reason sent (suspend, stop)
    QString origin;                // "automatic (rule stalled)": how the audit log marks it
};

class SupervisionLadder
{
public:
    // The group an open alert is in (AlertGroups::groupOf), "" for none. Unset: no groups.
    using GroupOf = std::function<QString(const QString &alertKey)>;
    void setGroupOf(GroupOf groupOf) { m_groupOf = std::move(groupOf); }

    void setPlan(AlertKind kind, const LadderPlan &plan);
    const LadderPlan &plan(AlertKind kind) const { return m_plans[size_t(kind)]; }
    bool anyEnabled() const;
    // Every plan off and every climb forgotten: a new connection starts with nothing enabled.
    void reset();
    // Observer mode: no climb starts, and those under way end (when observer mode is turned off,
    // nothing overdue fires at once: only alerts raised from then on climb).
    void setObserverOnly(bool observer);

    // What the alert monitor reported: raised alerts of an enabled kind start a climb, cleared
    // ones end theirs.
    void alertsChanged(const std::vector<AlertChange> &changes);
    // After the detectors started over (new rules) and evaluated again: climbs whose alert is
    // not open any more end (no clearing will come for them); the others go on where they were.
    void retainOnly(const std::map<QString, Alert> &openAlerts);
    // The steps due at `nowMs` (model time), in ladder order; each is returned once. Steps of one
    // kind for alerts of one group due in the same call are merged into one action.
    std::vector<LadderAction> due(qint64 nowMs);

    // The agents a plan of `kind` would act on now: those of its open alerts (in `onlyGroups` when
    // not empty).
    QStringList preview(AlertKind kind, const std::map<QString, Alert> &openAlerts, const QStringList &onlyGroups = {}) const;

private:
    struct Climb
    {
        Alert alert;
        qint64 raisedAtMs = 0;
        int nextStep = 0;          // 0 nudge, 1 suspend, 2 stop, 3 done
    };
    std::array<LadderPlan, kAlertKindCount> m_plans{};
    std::map<QString, Climb> m_climbs; // by alert key
    bool m_observer = false;
    GroupOf m_groupOf;
    QString groupOf(const QString &alertKey) const { return m_groupOf ? m_groupOf(alertKey) : QString(); }
    bool inPlan(const LadderPlan &plan, const QString &alertKey) const;
};

} // namespace mapi
