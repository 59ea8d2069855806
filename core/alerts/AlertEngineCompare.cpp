// AlertEngine: the evaluation's last step, in slices (compareInSlices): the alerts of agents
// that all departed are dropped, the new verdict is compared with the open one, and replaces it.
#include "alerts/AlertEngine.h"

#include "model/SystemStore.h"

#include <QThreadPool>

#include <algorithm>
#include <memory>

namespace mapi {

namespace {
// How many alerts are looked at between two looks at the clock.
constexpr int kCompareClockEvery = 256;

// One thread that frees old verdicts. Not the global pool: the views paint on its threads
// (ui/common/PoolThreadPaint.h) and paint on the GUI thread, far slower, when none is free.
QThreadPool &reaper()
{
    static QThreadPool pool;
    static const bool once = [] {
        pool.setMaxThreadCount(1);
        pool.setExpiryTimeout(10000);
        return true;
    }();
    Q_UNUSED(once);
    return pool;
}
} // namespace

std::optional<std::vector<AlertChange>> AlertEngine::compareInSlices(const SystemStore &store, qint64 now,
                                                                     const std::function<bool()> &outOfTime)
{
    CompareState &c = m_compare;
    if (!c.started) {
        c = {};
        c.started = true;
        c.drop = m_current.begin();
    }
    int sinceClock = 0;
    const auto timeToStop = [&] { return ++sinceClock % kCompareClockEvery == 0 && (m_compareStopsAtEveryCheck || outOfTime()); };

    // An agent that unregistered (or that a fresh snapshot no longer lists: a restarted server)
    // needs nobody's attention: an alert all of whose agents departed clears. Without this, a
    // restarted server showed every loop and help request twice, once for the departed agent and
    // once for its successor of the same name.
    while (c.drop != m_current.end()) {
        if (timeToStop())
            return std::nullopt;
        const QStringList &agents = c.drop->second.agents;
        const bool allDeparted = !agents.isEmpty() && std::all_of(agents.cbegin(), agents.cend(), [&](const QString &id) {
            const Agent *agent = store.agent(id);
            return agent && agent->unregistered;
        });
        c.drop = allDeparted ? m_current.erase(c.drop) : std::next(c.drop);
    }
    if (!c.merging) { // set once the dropping is done: it erases from m_current
        c.merging = true;
        c.current = m_current.begin();
        c.open = m_open.begin();
    }

    // Both maps are in key order: one pass over the two. Only positions are kept until the end,
    // so m_open (what openAlerts() shows) is whole between slices.
    while (c.current != m_current.end()) {
        if (timeToStop())
            return std::nullopt;
        const QString &key = c.current->first;
        for (; c.open != m_open.end() && c.open->first < key; ++c.open)
            c.cleared.push_back(c.open);
        if (c.open != m_open.end() && c.open->first == key) {
            c.current->second.sinceMs = std::min(c.current->second.sinceMs, c.open->second.sinceMs); // an open alert keeps its start
            ++c.open;
        } else {
            c.raised.push_back(c.current);
        }
        ++c.current;
    }
    for (; c.open != m_open.end(); ++c.open) {
        if (timeToStop())
            return std::nullopt; // a storm's end: every alert clears, and m_current is empty
        c.cleared.push_back(c.open);
    }

    // Cleared first, as AlertChange's users expect; cleared alerts are moved out of the old verdict.
    std::vector<AlertChange> changes;
    changes.reserve(c.cleared.size() + c.raised.size());
    for (const auto &it : c.cleared)
        changes.push_back({std::move(it->second), false, now});
    for (const auto &it : c.raised)
        changes.push_back({it->second, true, now});
    // The old verdict is freed on a thread of its own: 10,000 alerts took 4-7 ms of the GUI thread.
    // (Its strings may share data with the new one's; Qt's reference counts are atomic.)
    auto old = std::make_shared<std::map<QString, Alert>>(std::move(m_open));
    m_open = std::move(m_current);
    m_current = {};
    m_compare = {};
    if (old->size() > 1000)
        reaper().start([old]() mutable { old.reset(); });
    return changes;
}

} // namespace mapi
