#include "alerts/AlertMonitor.h"

#include "model/SystemStore.h"

#include <QElapsedTimer>

#include <algorithm>
#include <iterator>
#include <limits>
#include <utility>

namespace mapi {

AlertMonitor::AlertMonitor(QObject *parent)
    : QObject(parent)
{
    m_tick.setObjectName(QStringLiteral("alertTick"));
    m_tick.setInterval(kIntervalMs);
    // The tick asks for a slice like the backlog does: several systems' ticks never stack in a turn.
    connect(&m_tick, &QTimer::timeout, this, [this] { askSlice(); });
    m_engine.setEvaluationSliceMs(kSliceMs);
}

AlertMonitor::~AlertMonitor()
{
    share()->cancelAll(this);
}

void AlertMonitor::setTurnShare(TurnShare *share)
{
    TurnShare *next = share ? share : &m_ownShare;
    if (next == this->share())
        return;
    const bool slice = this->share()->isWaiting(this, kSlicePiece);
    const bool tell = this->share()->isWaiting(this, kTellPiece);
    this->share()->cancelAll(this);
    m_share = share;
    if (slice)
        askSlice();
    if (tell)
        askTellPart();
}

void AlertMonitor::askSlice()
{
    share()->ask(this, kSlicePiece, [this] { step(); });
}

void AlertMonitor::askTellPart()
{
    share()->ask(this, kTellPiece, [this] { tellVerdictPart(m_tellPart); });
}

void AlertMonitor::setStore(SystemStore *store)
{
    if (m_store)
        disconnect(m_store, nullptr, this, nullptr);
    m_store = store;
    dropVerdict();
    m_engine.reset();
    m_groups.clear();
    Q_EMIT alertsReset();
    if (store) {
        // A verdict on the content that goes is told before it goes (a time travel's swap, a
        // reconnect's fresh model): its views still show that content.
        connect(store, &SystemStore::aboutToReset, this, &AlertMonitor::tellVerdict);
        connect(store, &SystemStore::wasReset, this, [this] { m_engine.restartReading(); });
    }
}

void AlertMonitor::setRules(const AlertRules &rules)
{
    dropVerdict();
    m_engine.reset();
    m_engine.setRules(rules);
    m_groups.setRules(rules);
    Q_EMIT alertsReset();
}

void AlertMonitor::step()
{
    if (!m_store)
        return;
    if (m_verdictDue) {
        // The last verdict is still being told in parts: this step waits for its end (telling the
        // rest now would put a storm's whole work back into one turn), and is never replaced unheard.
        m_stepAfterTell = true;
        return;
    }
    const qint64 evaluationsBefore = m_engine.evaluationCount();
    std::vector<AlertChange> changes = m_engine.update(*m_store);
    if (m_engine.evaluationCount() == evaluationsBefore) {
        // Still reading, or evaluating in slices: go on at the next turn of the event loop.
        if (m_engine.isBehind(*m_store))
            askSlice();
        return;
    }
    // An evaluation ended: its changes are reported even when messages arrived between its
    // slices (a flood always brings some), and the next one waits for the tick. Going on at once
    // lost the changes and evaluated back to back, a slice at every turn of the event loop.
    share()->cancel(this, kSlicePiece);
    // An evaluation over thousands of open alerts or tasks can take a hundred milliseconds (in
    // slices): then evaluate less often, so that the detectors never take more than a tenth of
    // the thread.
    m_tick.setInterval(int(std::clamp<qint64>(10 * m_engine.lastEvaluationNs() / 1000000, kIntervalMs, 60000)));
    // Told at the next turn of the event loop, not in this slice: the views' work on a storm's
    // thousands of changes (10-15 ms) would otherwise add to the evaluation's last step.
    m_verdict = std::move(changes);
    m_verdictTold = 0;
    m_verdictDue = true;
    askTellPart();
}

void AlertMonitor::tellVerdict()
{
    tellVerdictPart(std::numeric_limits<size_t>::max());
}

void AlertMonitor::tellVerdictPart(size_t most)
{
    if (!m_verdictDue)
        return;
    // A storm's thousands of changes go in parts, a turn of the event loop each: the views'
    // work on 3,000 changes at once (20-25 ms) was the longest single event of a flood.
    const size_t count = std::min(most, m_verdict.size() - m_verdictTold);
    if (count > 0) {
        const auto first = m_verdict.begin() + std::ptrdiff_t(m_verdictTold);
        const std::vector<AlertChange> part(std::make_move_iterator(first), std::make_move_iterator(first + std::ptrdiff_t(count)));
        m_verdictTold += count;
        QElapsedTimer views;
        views.start();
        tell(part);
        if (most == m_tellPart && count >= kTellPartLeast) { // a part, not the rest told at once
            // Smaller at once when a part took too long; larger by at most twice a part, so that
            // one quick part (a small inbox's) does not bring back a part a large inbox cannot take.
            const qint64 perChangeNs = std::max<qint64>(1, views.nsecsElapsed() / qint64(count));
            const qint64 fitting = kTellPartTargetNs / perChangeNs;
            m_tellPart = size_t(std::clamp<qint64>(std::min(fitting, 2 * qint64(m_tellPart)), qint64(kTellPartLeast), qint64(kTellPartMost)));
        }
    }
    if (!m_verdictDue) // a receiver dropped it (new rules, another store)
        return;
    if (m_verdictTold < m_verdict.size()) {
        askTellPart();
        return;
    }
    m_verdictDue = false;
    m_verdict.clear();
    m_verdictTold = 0;
    Q_EMIT evaluated();
    if (std::exchange(m_stepAfterTell, false))
        askSlice();
}

std::vector<AlertGroups::Notice> AlertMonitor::groupNoticesDue()
{
    return m_store ? m_groups.due(m_store->now()) : std::vector<AlertGroups::Notice>{};
}

void AlertMonitor::tell(const std::vector<AlertChange> &changes)
{
    if (m_store)
        m_groups.apply(changes, *m_store, m_store->now());
    Q_EMIT alertsChanged(changes);
}

void AlertMonitor::dropVerdict()
{
    m_stepAfterTell = false;
    share()->cancel(this, kTellPiece);
    m_verdict.clear();
    m_verdictTold = 0;
    m_verdictDue = false;
}

void AlertMonitor::evaluateNow()
{
    if (!m_store)
        return;
    tellVerdict(); // one finished by the last slice comes first
    // An evaluation under way in slices is finished first (it saw an older clock), then one
    // runs over everything now.
    for (int round = 0; round < 2; ++round) {
        if (round == 0 && !m_engine.isEvaluating())
            continue;
        // Every call's changes are kept: an evaluation finished by one call is followed by
        // another when messages came meanwhile, and both verdicts' changes are told.
        std::vector<AlertChange> changes = m_engine.update(*m_store);
        while (m_engine.isBehind(*m_store)) {
            std::vector<AlertChange> more = m_engine.update(*m_store);
            changes.insert(changes.end(), std::make_move_iterator(more.begin()), std::make_move_iterator(more.end()));
        }
        if (!changes.empty())
            tell(changes);
        Q_EMIT evaluated();
    }
}

} // namespace mapi
