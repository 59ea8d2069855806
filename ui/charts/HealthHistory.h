// The time series behind the Health panel's charts: event and message rates, agents by state,
// task outcomes and reported token/cost usage, in a bounded window.
//
// Two sources, one shape:
//  - live: sampleLive() once a second reads the store (counter deltas give the rates);
//  - trace: rebuildFromStore() derives the same series from the timestamps kept in the store
//    (a replayed trace arrives all at once, so there is nothing to sample). The rebuild runs
//    in slices of a few milliseconds on the GUI thread (the store lives there and does not
//    change during a replay view), and is abandoned when the store resets.
//
// Thread: GUI thread.
#pragma once

#include "model/SystemStore.h"

#include <QObject>
#include <QTimer>

#include <array>
#include <deque>
#include <functional>
#include <memory>

namespace mapi::ui {

// Agent states as the "agents by state" chart groups them.
enum class StateGroup { Idle, Busy, Suspended, Stopped, Failed, Other };
constexpr int kStateGroupCount = 6;
StateGroup stateGroup(const QString &state, bool unregistered);
QString stateGroupName(StateGroup group);

struct HealthSample
{
    qint64 timeMs = 0;                 // end of the sampled interval, ms since the epoch
    double eventsPerSecond = 0;        // over the interval ending at timeMs
    double messagesPerSecond = 0;
    std::array<int, kStateGroupCount> agentsByState{}; // indexed by int(StateGroup)
    int tasksCompleted = 0;            // tasks whose status is completed at timeMs
    int tasksFailed = 0;               // tasks whose status is failed at timeMs
    qint64 tokensUsed = 0;             // sum of the agents' latest reports
    double costUsd = 0;
    bool usageReported = false;        // at least one agent has reported tokens or cost
};

class TraceHistoryBuilder;

class HealthHistory : public QObject
{
    Q_OBJECT
public:
    // At most this many samples in each series. Live: the newest at 1 s, older ones merged two
    // into one each time the series is full (the oldest half), so a session of any length keeps
    // its whole span, coarser with age. A trace is bucketed to fit.
    static constexpr int kCapacity = 600;

    explicit HealthHistory(const SystemStore *store, QObject *parent = nullptr);
    ~HealthHistory() override;

    // What the charts show: the live series, or the one derived from the store (a trace, or a
    // live session viewed in the past).
    const std::deque<HealthSample> &samples() const { return m_showDerived ? m_derived : m_live; }
    bool showsDerived() const { return m_showDerived; }

    // Live: appends one sample of `live` (the model the connection feeds, which is not the
    // shown store while a live session is viewed in the past) at `timeMs` (ms since the epoch).
    // Rates are the counter deltas since the previous call divided by the time between the
    // calls, so the first call after clear() only sets the baseline.
    void sampleLive(qint64 timeMs, const SystemStore &live);
    void sampleLive(qint64 timeMs) { sampleLive(timeMs, *m_store); }
    // Back to the live series (after viewing the past).
    void showLive();

    // Replaces the shown series with one derived from the store's events, messages, tasks and
    // agents. Asynchronous (time-sliced); samplesChanged() follows in the turn after.
    void rebuildFromStore();
    bool isRebuilding() const { return m_builder != nullptr; }

    // Everything goes (a new source). When the store resets while keepLive() says so (a live
    // session moving between the present and the past), only the derived series goes.
    void clear();
    void setKeepLiveOnReset(std::function<bool()> keepLive) { m_keepLive = std::move(keepLive); }

Q_SIGNALS:
    void samplesChanged();

private:
    void continueRebuild();
    void clearDerived();

    const SystemStore *m_store;
    std::deque<HealthSample> m_live;
    std::deque<HealthSample> m_derived;
    bool m_showDerived = false;
    std::function<bool()> m_keepLive;
    qint64 m_baselineTimeMs = -1;      // -1: no baseline yet
    qint64 m_baselineEvents = 0;
    qint64 m_baselineMessages = 0;
    std::unique_ptr<TraceHistoryBuilder> m_builder;
    QTimer m_rebuildTimer;             // zero-interval: one slice per event-loop turn
};

} // namespace mapi::ui
