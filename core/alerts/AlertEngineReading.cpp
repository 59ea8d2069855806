// AlertEngine: reading the store (messages, tasks) into the windows the rules evaluate; the loop
// detector's edges, its candidates, and the tally of an edge's shapes (with their names) it evaluates.
#include "alerts/AlertEngine.h"

#include "model/SystemStore.h"

#include <QHashFunctions>
#include <QSet>

#include <algorithm>
#include <array>
#include <limits>

namespace mapi {

namespace {

// The shape of a payload: its type and the names of its keys two levels deep ("payload.task_id"),
// sorted, hashed. Values (ids, times, text) do not count: a loop repeats a shape, not bytes.
// Reads at most the first 64 KiB of the text.
quint64 payloadShape(QByteArrayView text, const QString &type, ConventionKind convention)
{
    std::array<size_t, 128> paths;
    size_t count = 0;
    const qsizetype end = std::min<qsizetype>(text.size(), 64 * 1024);
    int depth = 0;
    size_t topKey = 0;
    for (qsizetype i = 0; i < end && count < paths.size(); ++i) {
        const char c = text[i];
        if (c == '{' || c == '[') {
            ++depth;
        } else if (c == '}' || c == ']') {
            --depth;
        } else if (c == '"') {
            const qsizetype start = ++i;
            while (i < end && text[i] != '"')
                i += text[i] == '\\' ? 2 : 1;
            const QByteArrayView word = text.sliced(start, std::min(i, end) - start);
            qsizetype j = i + 1;
            while (j < end && (text[j] == ' ' || text[j] == '\n' || text[j] == '\t' || text[j] == '\r'))
                ++j;
            if (j < end && text[j] == ':') { // a key
                if (depth == 1)
                    paths[count++] = topKey = qHash(word, 1);
                else if (depth == 2)
                    paths[count++] = qHashMulti(2, topKey, word);
            }
        }
    }
    std::sort(paths.begin(), paths.begin() + count);
    size_t h = qHashMulti(0, type, int(convention));
    for (size_t i = 0; i < count; ++i)
        h = qHashMulti(h, paths[i]);
    return quint64(h);
}

bool isProgress(ConventionKind kind)
{
    switch (kind) {
    case ConventionKind::TaskAccept:
    case ConventionKind::TaskReject:
    case ConventionKind::TaskHandoff:
    case ConventionKind::TaskUpdate:
    case ConventionKind::TaskComplete:
    case ConventionKind::TaskFailed:
    case ConventionKind::TaskStatus:   // the SDK's task shapes in payloads (macro-agent's bridge)
    case ConventionKind::TaskAssigned:
        return true;
    default:
        return false;
    }
}

bool isSettled(const QString &status)
{
    static const QSet<QString> settled = {QStringLiteral("completed"), QStringLiteral("failed"), QStringLiteral("rejected"),
                                          QStringLiteral("cancelled"), QStringLiteral("canceled"), QStringLiteral("done"),
                                          QStringLiteral("succeeded"), QStringLiteral("error")};
    return settled.contains(status.toLower());
}

template<typename Deque>
void pushCapped(Deque &deque, typename Deque::value_type value, size_t cap)
{
    deque.push_back(std::move(value));
    while (deque.size() > cap)
        deque.pop_front();
}

} // namespace

// ---- reading the store ------------------------------------------------------------------------

void AlertEngine::readMessages(const SystemStore &store, const QElapsedTimer &slice)
{
    const MessageLog &log = store.messages();
    if (m_nextMessage > log.size()) // the store was reset without restartReading()
        restartReading();
    if (m_nextMessage < log.firstRow()) { // trimmed before they were read
        m_notTracked += qint64(log.firstRow() - m_nextMessage);
        m_nextMessage = log.firstRow();
    }
    const size_t end = m_readBudget > 0 ? std::min(log.size(), m_nextMessage + size_t(m_readBudget)) : log.size();
    for (size_t read = 0; m_nextMessage < end; ++m_nextMessage, ++read) {
        if (read >= kMinReadPerCall && read % kReadTimeCheckEvery == 0 && m_evaluationSliceMs > 0 && slice.elapsed() >= m_evaluationSliceMs)
            return;
        readMessage(store, m_nextMessage);
    }
}

bool AlertEngine::isBehind(const SystemStore &store) const
{
    return m_nextMessage < store.messages().size() || m_step != Idle;
}

qint64 AlertEngine::unreadMessages(const SystemStore &store) const
{
    return qint64(store.messages().size()) - qint64(std::min(m_nextMessage, store.messages().size()));
}

void AlertEngine::readMessage(const SystemStore &store, size_t row)
{
    const MessageLog &log = store.messages();
    const QString &from = log.fromAgentId(row);
    if (from.isEmpty())
        return;
    const qint64 t = log.timestampMs(row);
    const ConventionKind convention = log.convention(row);
    AgentTrack &track = m_agents[from];

    if (convention == ConventionKind::Heartbeat)
        return; // a sign of life, not of work (the health rules read heartbeats)
    track.lastWorkMs = std::max(track.lastWorkMs, t);
    if (isProgress(convention) || (convention == ConventionKind::StatusUpdate && !log.taskId(row).isEmpty()))
        track.lastTaskProgressMs = std::max(track.lastTaskProgressMs, t);

    // Sending rate.
    rollRateBucket(track, t);
    ++track.bucketCount;
    track.rateRow = qint64(row);

    // Cost reports.
    if (const std::optional<double> cost = log.costUsd(row)) {
        if (!track.costSamples.empty() && t < track.costSamples.back().first)
            track.costSamples.clear(); // time ran backwards: start the rate over
        track.costSamples.emplace_back(t, *cost);
        if (track.costSamples.size() > kMaxCostSamples) { // thin: keep every other one, the newest always
            std::deque<std::pair<qint64, double>> thinned;
            for (size_t i = 0; i < track.costSamples.size(); ++i)
                if (i % 2 == 1 || i + 1 == track.costSamples.size())
                    thinned.push_back(track.costSamples[i]);
            track.costSamples.swap(thinned);
        }
        track.costRow = qint64(row);
    }

    switch (convention) {
    case ConventionKind::ErrorReport: {
        // A report that states no severity counts as an error.
        const Severity severity = log.severity(row) == Severity::None ? Severity::Error : log.severity(row);
        if (severity >= severityOf(m_rules.errorStormMinSeverity)) {
            pushCapped(track.errors, {t, qint64(row)}, size_t(std::max(1, m_rules.errorStormCount)));
            if (m_rules.errorStormSystemCount > 0)
                pushCapped(m_systemErrors, {t, qint64(row)}, size_t(m_rules.errorStormSystemCount));
        }
        break;
    }
    case ConventionKind::HelpRequest: {
        HelpRequest request;
        request.requester = from;
        if (log.recipientCount(row) == 1)
            request.helper = log.recipient(row, 0);
        request.messageId = log.id(row);
        request.taskId = log.taskId(row);
        request.timeMs = t;
        if (m_helpCount >= kMaxOpenHelpRequests) {
            ++m_notTracked;
            break;
        }
        m_help[from].push_back(request);
        ++m_helpCount;
        break;
    }
    case ConventionKind::HelpResponse: {
        // Answers the requester's oldest open request to this helper (or to no agent in particular,
        // or about the same task).
        const int recipients = log.recipientCount(row);
        const QString taskId = log.taskId(row);
        for (int r = 0; r < recipients; ++r) {
            const QString &requester = log.recipient(row, r);
            const auto open = m_help.find(requester);
            if (open == m_help.end())
                continue;
            auto it = std::find_if(open->begin(), open->end(), [&](const HelpRequest &h) {
                return h.helper == from || h.helper.isEmpty() || (!taskId.isEmpty() && h.taskId == taskId);
            });
            if (it != open->end()) {
                open->erase(it);
                --m_helpCount;
                if (open->empty())
                    m_help.erase(open);
            }
        }
        break;
    }
    default:
        break;
    }

    // Loops: one sender, one recipient, a message that is not task progress.
    if (!isProgress(convention) && log.recipientCount(row) == 1) {
        const QString &to = log.recipient(row, 0);
        if (to != from)
            noteLoopEdge(idOf(from), idOf(to), payloadShape(log.payloadText(row), log.payloadType(row), convention), t, qint64(row));
    }
}

int AlertEngine::idOf(const QString &agentId)
{
    const auto it = m_ids.constFind(agentId);
    if (it != m_ids.cend())
        return *it;
    m_names << agentId;
    return *m_ids.insert(agentId, int(m_names.size() - 1));
}

QString AlertEngine::messageEvidence(const SystemStore &store, qint64 row)
{
    const MessageLog &log = store.messages();
    return row >= 0 && log.isKept(size_t(row)) ? QStringLiteral("message:") + log.id(size_t(row)) : QString();
}

QStringList AlertEngine::newestMessageEvidence(const SystemStore &store, size_t count, const std::function<qint64(size_t)> &rowAt)
{
    QStringList ids;
    for (size_t i = count > size_t(kMaxEvidence) ? count - size_t(kMaxEvidence) : 0; i < count; ++i)
        if (const QString e = messageEvidence(store, rowAt(i)); !e.isEmpty())
            ids << e;
    return ids;
}

void AlertEngine::noteLoopEdge(int from, int to, quint64 shape, qint64 t, qint64 row)
{
    auto edge = m_edges.find(EdgeKey{from, to});
    if (edge == m_edges.end()) {
        if (m_edges.size() >= kMaxLoopEdges) {
            ++m_notTracked;
            return;
        }
        edge = m_edges.insert(EdgeKey{from, to}, Edge());
        m_edgesFrom[from].insert(to);
    }
    const size_t carriedBefore = edge->sent.size();
    pushCapped(edge->sent, Sent{t, row, shape}, size_t(std::max(2, m_rules.loopExchanges)));
    if (!enabled(AlertKind::Loop))
        return;

    // A pair: the way back exists. A ring of three: to → x and x → from exist. A loop is repeated
    // traffic on every edge of it: each must carry at least a share of the exchanges (half of an
    // even share), so that random traffic between many agents does not make candidates by the
    // thousand. Whether that traffic repeats a small set of shapes is the evaluation's question
    // (evaluateLoops): the shapes of an edge change while a candidate waits.
    const size_t pairShare = size_t(std::max(2, m_rules.loopExchanges / 4));
    const size_t ringShare = size_t(std::max(2, m_rules.loopExchanges / 6));
    auto carries = [this](const EdgeKey &key, size_t share) {
        const auto e = m_edges.constFind(key);
        return e != m_edges.cend() && e->sent.size() >= share;
    };
    // A candidate's key is its ring rotated to the smallest agent number: the same ring is found
    // from any of its edges, its two directions are two candidates. Per message, for groups
    // already known: no allocation, no string compared.
    auto remember = [&](int x, int y, int z) {
        std::array<int, 3> ring{x, y, z};
        const size_t n = z < 0 ? 2 : 3;
        std::rotate(ring.begin(), std::min_element(ring.begin(), ring.begin() + n), ring.begin() + n);
        const LoopKey key{ring[0], ring[1], n > 2 ? ring[2] : -1};
        if (m_loops.contains(key))
            return;
        if (m_loops.size() >= kMaxLoopGroups) {
            ++m_notTracked;
            return;
        }
        m_loops.insert(key, LoopGroup{std::vector<int>(ring.begin(), ring.begin() + n)});
    };
    if (edge->sent.size() >= pairShare && carries(EdgeKey{to, from}, pairShare))
        remember(from, to, -1);
    // Rings through this edge are looked for when it comes to carry its share (the last edge of
    // a ring to do so finds it: the others carry theirs already), and again every
    // kRingSearchEvery messages (an edge that kept its share while a ring's other edges came and
    // went). Looking at every message cost up to 128 lookups each: with three systems at 20,000
    // messages/s that was most of the GUI thread (docs/benchmarks.md, "Several systems").
    const bool crossed = carriedBefore < ringShare && edge->sent.size() >= ringShare;
    if (!crossed && ++edge->sinceRingSearch < kRingSearchEvery)
        return;
    edge->sinceRingSearch = 0;
    const auto next = m_edgesFrom.constFind(to);
    if (edge->sent.size() >= ringShare && next != m_edgesFrom.cend()) {
        int looked = 0;
        for (const int x : *next) {
            if (++looked > 64) // a hub that talks to many: rings through it are looked for among the first 64
                break;
            if (x != from && x != to && carries(EdgeKey{to, x}, ringShare) && carries(EdgeKey{x, from}, ringShare))
                remember(from, to, x);
        }
    }
}

AlertEngine::EdgeTally AlertEngine::tallyEdge(const Edge &edge, qint64 since, TallyScratch &scratch, std::vector<qint64> &rows)
{
    // The edge's messages within the window grouped by shape (sorted: at most loopExchanges of
    // them), then each run of one shape: seen twice or more, it repeats.
    std::vector<Sent> &sent = scratch.sent;
    sent.clear();
    for (const Sent &message : edge.sent)
        if (message.timeMs >= since)
            sent.push_back(message);
    std::sort(sent.begin(), sent.end(), [](const Sent &x, const Sent &y) { return x.shape != y.shape ? x.shape < y.shape : x.row < y.row; });
    EdgeTally tally;
    tally.messages = int(sent.size());
    tally.firstMs = std::numeric_limits<qint64>::max();
    std::vector<TallyScratch::Run> &runs = scratch.runs;
    runs.clear();
    for (size_t i = 0; i < sent.size();) {
        size_t end = i;
        while (end < sent.size() && sent[end].shape == sent[i].shape)
            ++end;
        const int count = int(end - i);
        if (count >= 2) {
            tally.repeated += count;
            ++tally.repeatedShapes;
            runs.push_back({sent[i].shape, count, sent[end - 1].row});
            for (size_t j = i; j < end; ++j) {
                rows.push_back(sent[j].row);
                tally.firstMs = std::min(tally.firstMs, sent[j].timeMs);
            }
        }
        i = end;
    }
    // Most frequent first (the question before a rarer variant of it); ties by shape, so that a
    // reason reads the same at every evaluation.
    std::sort(runs.begin(), runs.end(), [](const TallyScratch::Run &x, const TallyScratch::Run &y) {
        return x.count != y.count ? x.count > y.count : x.shape < y.shape;
    });
    for (size_t i = 0; i < runs.size() && i < size_t(kMaxLoopShapesPerEdge); ++i)
        tally.shapes.emplace_back(runs[i].shape, runs[i].newestRow);
    return tally;
}

QString AlertEngine::shapeName(const SystemStore &store, qint64 row, quint64 shape)
{
    // Its type, else its convention, else its keys ("{text, meta}"): what a person recognises.
    // A row the history bound trimmed has none of them left: the shape's hash then.
    const MessageLog &log = store.messages();
    QString name;
    if (row >= 0 && log.isKept(size_t(row))) {
        name = log.payloadType(size_t(row));
        if (name.isEmpty())
            name = conventionName(log.convention(size_t(row)));
        if (name.isEmpty()) {
            const QByteArray text = store.messagePayload(int(row));
            const Json payload = Json::parse(text.constBegin(), text.constEnd(), nullptr, false);
            if (payload.is_object() && !payload.empty()) {
                QStringList keys;
                for (auto it = payload.begin(); it != payload.end() && keys.size() < 4; ++it)
                    keys << QString::fromStdString(it.key());
                name = QStringLiteral("{%1%2}").arg(keys.join(QStringLiteral(", ")), payload.size() > 4 ? QStringLiteral(", …") : QString());
            }
        }
    }
    if (name.isEmpty())
        name = QStringLiteral("shape %1").arg(shape, 16, 16, QLatin1Char('0'));
    return u'"' + name + u'"';
}

void AlertEngine::rollRateBucket(AgentTrack &track, qint64 t) const
{
    const qint64 window = m_rules.loopWindowMs;
    if (track.bucketStartMs == 0) {
        track.bucketStartMs = t;
        return;
    }
    if (t < track.bucketStartMs + window)
        return;
    // Close the current window, and the empty ones after it (at most 50: the usual count has
    // decayed to nothing by then).
    constexpr double kWeight = 0.2; // each window's share of the usual count
    const qint64 windows = (t - track.bucketStartMs) / window;
    for (qint64 i = 0; i < std::min<qint64>(windows, 50); ++i) {
        const double count = i == 0 ? double(track.bucketCount) : 0.0;
        track.usualCount = track.bucketsClosed == 0 ? count : (1 - kWeight) * track.usualCount + kWeight * count;
        ++track.bucketsClosed;
    }
    track.bucketStartMs += windows * window;
    track.bucketCount = 0;
}

void AlertEngine::readTasks(const SystemStore &store)
{
    const std::vector<Task> &tasks = store.tasks();
    if (m_nextTask > tasks.size())
        restartReading();
    for (; m_nextTask < tasks.size(); ++m_nextTask) {
        if (!isSettled(tasks[m_nextTask].status))
            m_openTasks.insert(int(m_nextTask), 0);
        else
            m_settledTasks.insert(int(m_nextTask), tasks[m_nextTask].historySize);
    }
    // A settled task can open again (rejected by one agent, then accepted by another): one with a
    // transition since it settled is looked at again. O(settled tasks) a read: a hash walk.
    for (auto it = m_settledTasks.begin(); it != m_settledTasks.end();) {
        const Task &task = tasks[size_t(it.key())];
        if (task.historySize != it.value() && !isSettled(task.status)) {
            m_openTasks.insert(it.key(), 0);
            it = m_settledTasks.erase(it);
        } else {
            ++it;
        }
    }
    for (auto it = m_openTasks.begin(); it != m_openTasks.end();) {
        const Task &task = tasks[size_t(it.key())];
        if (task.updatedAtMs > it.value()) {
            it.value() = task.updatedAtMs;
            if (!task.assigneeId.isEmpty() && task.status != QLatin1String("requested")) {
                AgentTrack &track = m_agents[task.assigneeId];
                track.lastTaskProgressMs = std::max(track.lastTaskProgressMs, task.updatedAtMs);
            }
        }
        if (isSettled(task.status)) {
            m_settledTasks.insert(it.key(), task.historySize);
            it = m_openTasks.erase(it);
        } else {
            ++it;
        }
    }
}

bool AlertEngine::pruneLoopEdges(qint64 now, const std::function<bool()> &outOfTime)
{
    const qint64 since = now - m_rules.loopWindowMs;
    if (!m_pruneUnderWay) {
        m_pruneUnderWay = true;
        m_nextEdge = m_edges.begin();
    }
    int looked = 0;
    for (auto &it = m_nextEdge; it != m_edges.end();) {
        if (++looked % 1024 == 0 && outOfTime())
            return false;
        while (!it->sent.empty() && it->sent.front().timeMs < since)
            it->sent.pop_front();
        if (it->sent.empty()) {
            auto from = m_edgesFrom.find(it.key().from);
            if (from != m_edgesFrom.end()) {
                from->remove(it.key().to);
                if (from->isEmpty())
                    m_edgesFrom.erase(from);
            }
            it = m_edges.erase(it);
        } else {
            ++it;
        }
    }
    m_pruneUnderWay = false;
    return true;
}

void AlertEngine::pruneWindows(qint64 now)
{
    const qint64 errorsSince = now - m_rules.errorStormWindowMs;
    for (AgentTrack &track : m_agents) {
        while (!track.errors.empty() && track.errors.front().first < errorsSince)
            track.errors.pop_front();
        rollRateBucket(track, now); // a quiet agent's window closes too
    }
    while (!m_systemErrors.empty() && m_systemErrors.front().first < errorsSince)
        m_systemErrors.pop_front();
}

} // namespace mapi
