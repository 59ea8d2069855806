// Two runs compared (trace/RunDiff.h says how).
#include "trace/RunDiff.h"

#include "map/PayloadConventions.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace mapi {

namespace {

bool isFailedTask(const QString &status) { return status == QLatin1String("failed") || status == QLatin1String("rejected"); }

// path/of/names#role: names from the root down, following parent links (bounded against cycles).
QString agentPath(const SystemStore &store, const Agent &agent)
{
    QStringList names{shownName(agent)};
    QString parent = agent.parentId;
    QSet<QString> seen{agent.id};
    while (!parent.isEmpty() && !seen.contains(parent) && seen.size() < 64) {
        seen.insert(parent);
        const Agent *p = store.agent(parent);
        if (!p)
            break;
        names.prepend(shownName(*p));
        parent = p->parentId;
    }
    return names.join(QLatin1Char('/')) + QLatin1Char('#') + agent.role;
}

Json optionalNumber(const std::optional<qint64> &v) { return v ? Json(*v) : Json(); }
Json optionalNumber(const std::optional<double> &v) { return v ? Json(*v) : Json(); }

double mean(const std::vector<qint64> &v)
{
    return v.empty() ? 0.0 : double(std::accumulate(v.begin(), v.end(), qint64(0))) / double(v.size());
}

double median(std::vector<qint64> v)
{
    if (v.empty())
        return 0.0;
    std::sort(v.begin(), v.end());
    const size_t n = v.size();
    return n % 2 ? double(v[n / 2]) : (double(v[n / 2 - 1]) + double(v[n / 2])) / 2.0;
}

std::string s(const QString &text) { return text.toStdString(); }

} // namespace

static qint64 acpRequests(const SystemStore &store)
{
    qint64 n = 0;
    for (const AcpStream &stream : store.acpStreams().streams())
        n += qint64(stream.exchanges.size());
    return n;
}

RunProfile profileRun(const SystemStore &store, const QString &name)
{
    RunProfile p;
    p.name = name;
    const EventLog &events = store.events();
    qint64 start = std::numeric_limits<qint64>::max();
    if (events.firstRow() < events.size())
        start = events[events.firstRow()].timestampMs;
    if (store.messages().firstRow() < store.messages().size())
        start = std::min(start, store.messages().timestampMs(store.messages().firstRow()));
    p.startMs = start == std::numeric_limits<qint64>::max() ? 0 : start;

    // Agents by key; several with one key paired in registration order.
    std::map<QString, std::vector<const Agent *>> byPath;
    for (const Agent &a : store.agents())
        if (!a.placeholder)
            byPath[agentPath(store, a)].push_back(&a);
    QHash<QString, QString> keyOfId;
    std::map<QString, int> assignedTasks, failedTasks;
    for (const Task &t : store.tasks()) {
        ++assignedTasks[t.assigneeId];
        if (isFailedTask(t.status))
            ++failedTasks[t.assigneeId];
    }
    // What each agent said in conversations, checkpointed and talked over ACP: compared like its
    // messages, so a diff says which agent did less, not only that the run did.
    std::map<QString, int> turnsSaid, checkpoints, acpSessions;
    for (const Conversation &c : store.conversations().conversations())
        for (const ConversationTurn &turn : c.turns)
            ++turnsSaid[store.agentBehind(turn.participant)];
    for (const Checkpoint &cp : store.checkpoints().checkpoints())
        ++checkpoints[store.agentBehind(cp.agentId)];
    for (const AcpStream &stream : store.acpStreams().streams())
        ++acpSessions[stream.agentId];
    for (auto &[path, list] : byPath) {
        std::stable_sort(list.begin(), list.end(), [](const Agent *x, const Agent *y) {
            const qint64 tx = x->registeredAtMs ? x->registeredAtMs : x->knownSinceMs;
            const qint64 ty = y->registeredAtMs ? y->registeredAtMs : y->knownSinceMs;
            return tx < ty;
        });
        for (size_t k = 0; k < list.size(); ++k) {
            const Agent &a = *list[k];
            RunProfile::AgentEntry e;
            // The first has no suffix, so that one "worker" in a run still meets the first of
            // several in the other.
            e.key = k == 0 ? path : QStringLiteral("%1[%2]").arg(path).arg(k + 1);
            e.id = a.id;
            e.name = shownName(a);
            e.registeredOffsetMs = std::max<qint64>(0, (a.registeredAtMs ? a.registeredAtMs : a.knownSinceMs) - p.startMs);
            e.facts = {{"state", s(a.state)},
                       {"health", s(healthName(a.health))},
                       {"unregistered", a.unregistered},
                       {"messagesSent", a.messagesSent},
                       {"messagesReceived", a.messagesReceived},
                       {"tasksAssigned", assignedTasks[a.id]},
                       {"tasksFailed", failedTasks[a.id]},
                       {"turnsSaid", turnsSaid[a.id]},
                       {"checkpoints", checkpoints[a.id]},
                       {"acpSessions", acpSessions[a.id]},
                       {"tokensUsed", optionalNumber(a.tokensUsed)},
                       {"costUsd", optionalNumber(a.costUsd)}};
            keyOfId.insert(a.id, e.key);
            p.agentByKey[e.key] = int(p.agents.size());
            p.agents.push_back(std::move(e));
        }
    }

    // Conversations.
    QHash<QString, int> typeRows;
    auto typeRow = [&](const QString &type) {
        const auto it = typeRows.constFind(type);
        if (it != typeRows.constEnd())
            return it.value();
        p.types.push_back(type);
        return typeRows[type] = int(p.types.size() - 1);
    };
    const MessageLog &messages = store.messages();
    qint64 entries = 0;
    qint64 errors = 0;
    for (size_t row = messages.firstRow(); row < messages.size(); ++row) {
        if (messages.severity(row) >= Severity::Error)
            ++errors;
        const QString from = keyOfId.value(messages.fromAgentId(row), QStringLiteral("(unknown)"));
        QString type = messages.payloadType(row);
        if (type.isEmpty())
            type = messages.convention(row) != ConventionKind::None ? conventionName(messages.convention(row)) : QStringLiteral("message");
        const RunProfile::MessageEntry entry{messages.timestampMs(row) - p.startMs, typeRow(type), int(row)};
        const int recipients = messages.recipientCount(row);
        auto add = [&](const QString &to) {
            if (entries >= RunProfile::kMaxPairEntries) {
                ++p.pairEntriesNotKept;
                return;
            }
            ++entries;
            p.pairs[{from, to}].push_back(entry);
        };
        if (recipients == 0) {
            const Message m = messages[row];
            add(QStringLiteral("(%1)").arg(m.toDisplay.isEmpty() ? QStringLiteral("nobody") : m.toDisplay));
        }
        for (int i = 0; i < recipients; ++i)
            add(keyOfId.value(messages.recipient(row, i), QStringLiteral("(unknown)")));
    }

    qint64 completed = 0, failed = 0;
    for (const Task &t : store.tasks()) {
        if (t.status == QLatin1String("completed")) {
            ++completed;
            p.taskDurationsMs.push_back(std::max<qint64>(0, t.updatedAtMs - t.createdAtMs));
        } else if (isFailedTask(t.status)) {
            ++failed;
        }
    }
    qint64 tokens = 0;
    double cost = 0;
    for (const Agent &a : store.agents()) {
        tokens += a.tokensUsed.value_or(0);
        cost += a.costUsd.value_or(0.0);
    }
    p.counts = {{"agents", qint64(p.agents.size())},
                {"messages", qint64(messages.keptCount())},
                {"tasks", qint64(store.tasks().size())},
                {"tasksCompleted", completed},
                {"tasksFailed", failed},
                {"errors", errors},
                {"tokensUsed", tokens},
                {"costUsd", std::round(cost * 1e6) / 1e6},
                // What servers keep beyond the core (issue 40): conversations and their turns,
                // trajectory checkpoints, ACP sessions and their requests.
                {"conversations", qint64(store.conversations().conversations().size())},
                {"turns", store.conversations().turnCount()},
                {"checkpoints", qint64(store.checkpoints().checkpoints().size())},
                {"acpSessions", qint64(store.acpStreams().streams().size())},
                {"acpRequests", acpRequests(store)}};
    return p;
}

Json diffRuns(const RunProfile &a, const RunProfile &b, const SystemStore *storeA, const SystemStore *storeB)
{
    Json result = {{"a", s(a.name)}, {"b", s(b.name)}};
    bool equal = true;

    // The first divergence found so far (the earliest in time).
    Json first;
    qint64 firstOffset = std::numeric_limits<qint64>::max();
    auto consider = [&](qint64 offset, Json divergence) {
        if (offset < firstOffset) {
            firstOffset = offset;
            divergence["offsetMs"] = offset;
            first = std::move(divergence);
        }
    };

    // Agents.
    Json onlyA = Json::array(), onlyB = Json::array(), changed = Json::array();
    qint64 onlyACount = 0, onlyBCount = 0, changedCount = 0, matched = 0;
    auto agentJson = [](const RunProfile::AgentEntry &e) { return Json{{"key", s(e.key)}, {"id", s(e.id)}, {"name", s(e.name)}}; };
    for (const RunProfile::AgentEntry &ea : a.agents) {
        const auto it = b.agentByKey.find(ea.key);
        if (it == b.agentByKey.end()) {
            if (++onlyACount <= kMaxListed)
                onlyA.push_back(agentJson(ea));
            consider(ea.registeredOffsetMs, {{"kind", "agent"}, {"agents", {s(ea.key)}}, {"onlyIn", "a"}});
            continue;
        }
        ++matched;
        const RunProfile::AgentEntry &eb = b.agents[size_t(it->second)];
        Json fields = Json::object();
        for (auto f = ea.facts.begin(); f != ea.facts.end(); ++f) {
            const Json other = eb.facts.value(f.key(), Json());
            if (f.value() != other)
                fields[f.key()] = {f.value(), other};
        }
        if (!fields.empty() && ++changedCount <= kMaxListed)
            changed.push_back({{"key", s(ea.key)}, {"idA", s(ea.id)}, {"idB", s(eb.id)}, {"fields", fields}});
    }
    for (const RunProfile::AgentEntry &eb : b.agents) {
        if (a.agentByKey.count(eb.key))
            continue;
        if (++onlyBCount <= kMaxListed)
            onlyB.push_back(agentJson(eb));
        consider(eb.registeredOffsetMs, {{"kind", "agent"}, {"agents", {s(eb.key)}}, {"onlyIn", "b"}});
    }
    equal = equal && onlyACount == 0 && onlyBCount == 0 && changedCount == 0;
    result["agents"] = {{"matched", matched}, {"onlyA", onlyA}, {"onlyB", onlyB}, {"changed", changed},
                        {"onlyACount", onlyACount}, {"onlyBCount", onlyBCount}, {"changedCount", changedCount}};

    // Conversations.
    auto messageJson = [](const RunProfile &p, const SystemStore *store, const RunProfile::MessageEntry &m) {
        Json j = {{"type", s(p.types[size_t(m.typeRow)])}, {"offsetMs", m.offsetMs}};
        if (store && store->messages().isKept(size_t(m.row)))
            j["id"] = s(store->messages().id(size_t(m.row)));
        return j;
    };
    Json differing = Json::array(), pairsOnlyA = Json::array(), pairsOnlyB = Json::array();
    qint64 compared = 0, differingCount = 0, pairsOnlyACount = 0, pairsOnlyBCount = 0;
    for (const auto &[pair, seqA] : a.pairs) {
        const auto it = b.pairs.find(pair);
        if (it == b.pairs.end()) {
            if (++pairsOnlyACount <= kMaxListed)
                pairsOnlyA.push_back({s(pair.first), s(pair.second)});
            consider(seqA.front().offsetMs, {{"kind", "conversation"}, {"agents", {s(pair.first), s(pair.second)}}, {"index", 0},
                                            {"messageA", messageJson(a, storeA, seqA.front())}, {"messageB", nullptr}});
            continue;
        }
        ++compared;
        const std::vector<RunProfile::MessageEntry> &seqB = it->second;
        auto sameType = [&](const RunProfile::MessageEntry &x, const RunProfile::MessageEntry &y) {
            return a.types[size_t(x.typeRow)] == b.types[size_t(y.typeRow)];
        };
        size_t start = 0;
        while (start < seqA.size() && start < seqB.size() && sameType(seqA[start], seqB[start]))
            ++start;
        if (start == seqA.size() && start == seqB.size())
            continue;
        size_t end = 0;
        while (end < seqA.size() - start && end < seqB.size() - start
               && sameType(seqA[seqA.size() - 1 - end], seqB[seqB.size() - 1 - end]))
            ++end;
        const Json ma = start < seqA.size() ? messageJson(a, storeA, seqA[start]) : Json();
        const Json mb = start < seqB.size() ? messageJson(b, storeB, seqB[start]) : Json();
        if (++differingCount <= kMaxListed)
            differing.push_back({{"from", s(pair.first)}, {"to", s(pair.second)}, {"lengthA", qint64(seqA.size())},
                                 {"lengthB", qint64(seqB.size())}, {"commonStart", qint64(start)}, {"commonEnd", qint64(end)},
                                 {"firstDifference", qint64(start)}, {"typeA", ma.is_object() ? ma.at("type") : Json()},
                                 {"typeB", mb.is_object() ? mb.at("type") : Json()}});
        const qint64 at = std::min(start < seqA.size() ? seqA[start].offsetMs : std::numeric_limits<qint64>::max(),
                                   start < seqB.size() ? seqB[start].offsetMs : std::numeric_limits<qint64>::max());
        consider(at, {{"kind", "conversation"}, {"agents", {s(pair.first), s(pair.second)}}, {"index", qint64(start)},
                      {"messageA", ma}, {"messageB", mb}});
    }
    for (const auto &[pair, seqB] : b.pairs) {
        if (a.pairs.count(pair))
            continue;
        if (++pairsOnlyBCount <= kMaxListed)
            pairsOnlyB.push_back({s(pair.first), s(pair.second)});
        consider(seqB.front().offsetMs, {{"kind", "conversation"}, {"agents", {s(pair.first), s(pair.second)}}, {"index", 0},
                                        {"messageA", nullptr}, {"messageB", messageJson(b, storeB, seqB.front())}});
    }
    equal = equal && differingCount == 0 && pairsOnlyACount == 0 && pairsOnlyBCount == 0;
    result["conversations"] = {{"compared", compared}, {"differing", differing}, {"differingCount", differingCount},
                               {"onlyA", pairsOnlyA}, {"onlyACount", pairsOnlyACount},
                               {"onlyB", pairsOnlyB}, {"onlyBCount", pairsOnlyBCount}};

    // Deltas.
    Json deltas = Json::object();
    for (auto it = a.counts.begin(); it != a.counts.end(); ++it) {
        const Json &va = it.value();
        const Json vb = b.counts.value(it.key(), Json(0));
        const double d = vb.get<double>() - va.get<double>();
        deltas[it.key()] = {{"a", va}, {"b", vb}, {"delta", va.is_number_float() || vb.is_number_float() ? Json(std::round(d * 1e6) / 1e6) : Json(qint64(d))}};
        if (d != 0)
            equal = false;
    }
    deltas["taskDurationMs"] = {{"meanA", mean(a.taskDurationsMs)}, {"meanB", mean(b.taskDurationsMs)},
                                {"medianA", median(a.taskDurationsMs)}, {"medianB", median(b.taskDurationsMs)}};
    result["deltas"] = deltas;

    if (!first.is_null()) {
        first["timeA"] = a.startMs + firstOffset;
        first["timeB"] = b.startMs + firstOffset;
    }
    result["firstDivergence"] = first;
    result["truncated"] = a.pairEntriesNotKept > 0 || b.pairEntriesNotKept > 0;
    result["equal"] = equal && first.is_null();
    return result;
}

} // namespace mapi
