// The kept spans (OtlpImportSpans.h, read by OtlpImportRead.cpp) made into MAP events in time
// order (trace/Otlp.h says how).
#include "trace/OtlpImportSpans.h"

#include <simdjson.h>

#include <algorithm>
#include <limits>
#include <map>
#include <string_view>
#include <unordered_map>

namespace mapi {

using namespace otlpimport;

namespace {

struct Usage
{
    qint64 input = 0;
    qint64 output = 0;
    double cost = 0;
    bool any = false;
    bool anyCost = false;
    void add(const Json &attrs)
    {
        const auto in = number(attrs, "gen_ai.usage.input_tokens") ? number(attrs, "gen_ai.usage.input_tokens")
                                                                     : number(attrs, "gen_ai.usage.prompt_tokens");
        const auto out = number(attrs, "gen_ai.usage.output_tokens") ? number(attrs, "gen_ai.usage.output_tokens")
                                                                       : number(attrs, "gen_ai.usage.completion_tokens");
        auto c = number(attrs, "map.cost.usd");
        if (!c)
            c = number(attrs, "gen_ai.usage.cost");
        if (in) { input += qint64(*in); any = true; }
        if (out) { output += qint64(*out); any = true; }
        if (c) { cost += *c; any = anyCost = true; }
    }
    Json report() const
    {
        Json r = {{"tokens_used", input + output}, {"input_tokens", input}, {"output_tokens", output}};
        if (anyCost)
            r["cost_usd"] = cost;
        return r;
    }
};

struct AgentInfo
{
    QString name;
    QString role;
    QString state;
    QString parent;
    QString provider;
    QString service;
    QString session;
    Json scopes;          // map.agent.scopes: scope ids
    qint64 firstMs = std::numeric_limits<qint64>::max();
    qint64 firstOwnMs = std::numeric_limits<qint64>::max(); // of the spans that are its own
    qint64 lastMs = 0;
    bool unregistered = false;
    bool hasOwnSpan = false; // false: made for spans outside every agent (a service)
};

bool isOwnSystemSpan(const Span &s)
{
    return s.name == QLatin1String("map.system") && s.parentId.empty();
}

// A message.sent event. With `rawPayload`, a placeholder 0 stands for the payload, whose text goes
// into the frame as it is when the frame is written (its JSON objects are never made).
Json messageEvent(qint64 t, const QString &from, Json to, Json payload, std::string id, bool rawPayload)
{
    Json m = {{"id", std::move(id)}, {"to", std::move(to)}, {"payload", rawPayload ? Json(0) : std::move(payload)}, {"timestamp", t}};
    Json event = {{"type", "message.sent"}};
    if (!from.isEmpty()) {
        m["from"] = from.toStdString();
        event["source"] = {{"agentId", from.toStdString()}};
    }
    event["data"] = {{"message", std::move(m)}};
    return event;
}

// Whether `text` can go into a frame as it is: one JSON text on one line that simdjson reads
// (several times faster than parsing it into objects, which took a tenth of the import), without
// a byte order mark. Anything else is parsed by nlohmann's parser and written again, as before:
// its lexer skips a leading BOM and stops at a NUL, text that no frame parser would take.
bool spliceable(const std::string &text)
{
    if (text.find_first_of("\n\r") != std::string::npos || text.rfind("\xEF\xBB\xBF", 0) == 0)
        return false;
    thread_local simdjson::dom::parser parser; // one per thread: trace loads run on several
    simdjson::dom::element ignored;
    return parser.parse(text.data(), text.size(), true).get(ignored) == simdjson::SUCCESS;
}

// A span event's event, as it is written (`rawPayload`: a message's payload text, messageEvent),
// from its row and its texts read back from the spool; null when they cannot be read back.
Json spanEventJson(const Pending &p, const SpanEvent &e, const Span &s, const QString &owner, TextSpool &spool, std::string &rawPayload)
{
    thread_local std::vector<std::string_view> texts;
    if (!spool.read(e.texts, texts) || texts.size() != (p.made == Made::SpanMessage ? 3u : 2u))
        return Json();
    if (p.made == Made::SpanMessage) {
        const std::string_view id = texts[0];
        const std::string_view toText = texts[1];
        const std::string_view payloadText = texts[2];
        Json to = e.toIsJson ? Json::parse(toText, nullptr, false) : Json(toText);
        Json payload = Json::object();
        // A JSON text goes into the frame as it is when it can (spliceable), else as parsed, and
        // any other text as a string.
        if (!payloadText.empty()) {
            std::string text(payloadText);
            if (spliceable(text)) {
                rawPayload = std::move(text);
            } else {
                payload = Json::parse(text, nullptr, false);
                if (payload.is_discarded())
                    payload = std::move(text);
            }
        }
        std::string messageId = id.empty() ? "otlp-message-" + std::to_string(p.messageNumber) : std::string(id);
        return messageEvent(e.timeMs, isOwnSystemSpan(s) ? QString() : owner, std::move(to), std::move(payload), std::move(messageId),
                            !rawPayload.empty());
    }
    const std::string status(texts[0]);
    const std::string agent(texts[1]);
    const std::string taskId = text(s.attributes, "map.task.id").toStdString();
    if (p.made == Made::TaskCreated)
        return {{"type", "task.created"},
                {"data", {{"task", {{"id", taskId}, {"title", text(s.attributes, "map.task.type").toStdString()},
                                    {"assignee", agent}, {"status", status}}}}}};
    return {{"type", "task.status"}, {"data", {{"taskId", taskId}, {"current", status}, {"agentId", agent}}}};
}

} // namespace

void OtlpImporter::finish()
{
    std::vector<Span> &spans = d->spans;
    std::unordered_map<std::string, int> byId;
    byId.reserve(spans.size());
    for (size_t i = 0; i < spans.size(); ++i)
        byId.emplace(spans[i].traceId + spans[i].spanId, int(i));
    auto parentOf = [&](size_t i) -> int {
        if (spans[i].parentId.empty())
            return -1;
        const auto it = byId.find(spans[i].traceId + spans[i].parentId);
        return it == byId.end() || it->second == int(i) ? -1 : it->second;
    };
    auto isOwnTaskSpan = [&](const Span &s) { return s.attributes.contains("map.task.id"); };
    auto isOwnAgentSpan = [&](const Span &s) { return s.attributes.contains("map.agent.messages_sent"); };

    // A span's own agent: its gen_ai.agent.id, else .name, else the agent its operation names.
    std::vector<QString> ownAgent(spans.size());
    for (size_t i = 0; i < spans.size(); ++i) {
        const Span &s = spans[i];
        QString id = text(s.attributes, "gen_ai.agent.id");
        if (id.isEmpty())
            id = text(s.attributes, "gen_ai.agent.name");
        const QString op = text(s.attributes, "gen_ai.operation.name");
        if (id.isEmpty() && (op == QLatin1String("invoke_agent") || op == QLatin1String("create_agent") || s.name.startsWith(QLatin1String("invoke_agent")))) {
            id = s.name.section(QLatin1Char(' '), 1).trimmed();
            if (id.isEmpty())
                id = QStringLiteral("agent-%1").arg(QString::fromStdString(s.spanId));
        }
        ownAgent[i] = id;
    }
    // The agent a span works for: its own, or its nearest ancestor's (walked with a bound, so
    // that a cycle of parent ids in a hostile file ends); outside every agent, its service's.
    std::vector<QString> owner(spans.size());
    std::vector<char> ownerKnown(spans.size(), 0);
    for (size_t i = 0; i < spans.size(); ++i) {
        if (ownerKnown[i])
            continue;
        std::vector<size_t> chain;
        QString found;
        bool decided = false;
        int at = int(i);
        while (at >= 0 && chain.size() < 10000) {
            if (ownerKnown[size_t(at)]) {
                found = owner[size_t(at)];
                decided = true;
                break;
            }
            chain.push_back(size_t(at));
            if (!ownAgent[size_t(at)].isEmpty()) {
                found = ownAgent[size_t(at)];
                decided = true;
                break;
            }
            at = parentOf(size_t(at));
        }
        if (!decided) {
            const Span &root = spans[chain.back()];
            found = isOwnTaskSpan(root) || isOwnSystemSpan(root) ? QString()
                                                                : (root.service.isEmpty() ? QStringLiteral("otel") : root.service);
        }
        // Each span up the chain below the one that decided has the same owner, unless it has its own agent.
        for (const size_t c : chain) {
            owner[c] = ownAgent[c].isEmpty() ? found : ownAgent[c];
            ownerKnown[c] = 1;
        }
    }

    std::map<QString, AgentInfo> agents;
    auto parentOwner = [&](size_t i) -> QString {
        const int p = parentOf(i);
        return p < 0 ? QString() : owner[size_t(p)];
    };
    for (size_t i = 0; i < spans.size(); ++i) {
        const Span &s = spans[i];
        if (owner[i].isEmpty())
            continue;
        AgentInfo &a = agents[owner[i]];
        const bool own = !ownAgent[i].isEmpty();
        if (isOwnTaskSpan(s))
            continue; // a task's times are its own, not its assignee's
        if (own) {
            a.hasOwnSpan = true;
            if (s.startMs < a.firstOwnMs) { // its earliest own span says who started the agent
                a.firstOwnMs = s.startMs;
                const QString parent = text(s.attributes, "map.agent.parent_id");
                const QString caller = parentOwner(i);
                a.parent = !parent.isEmpty() ? parent : (caller != owner[i] ? caller : QString());
            }
            const QString name = text(s.attributes, "gen_ai.agent.name");
            if (!name.isEmpty())
                a.name = name;
            if (const QString role = text(s.attributes, "map.agent.role"); !role.isEmpty())
                a.role = role;
            if (const QString state = text(s.attributes, "map.agent.state"); !state.isEmpty())
                a.state = state;
            if (const QString session = text(s.attributes, "map.agent.session_id"); !session.isEmpty())
                a.session = session;
            if (const auto scopes = s.attributes.find("map.agent.scopes"); scopes != s.attributes.end() && scopes->is_array())
                a.scopes = *scopes;
            QString provider = text(s.attributes, "gen_ai.provider.name");
            if (provider.isEmpty())
                provider = text(s.attributes, "gen_ai.system"); // before gen_ai.provider.name
            if (!provider.isEmpty())
                a.provider = provider;
            if (s.attributes.value("map.agent.unregistered", false) == Json(true))
                a.unregistered = true;
        }
        a.service = s.service;
        a.firstMs = std::min(a.firstMs, s.startMs);
        a.lastMs = std::max(a.lastMs, s.endMs);
    }
    for (auto &[id, a] : agents) {
        if (!a.hasOwnSpan) {
            a.name = id;
            a.role = QStringLiteral("service");
        } else if (a.role.isEmpty()) {
            a.role = QStringLiteral("agent");
        }
    }
    d->agentCount = qint64(agents.size());

    std::vector<Pending> &pending = d->pending;
    std::vector<Json> &ready = d->ready;
    quint32 order = 0;
    auto push = [&](qint64 t, Json event) {
        pending.push_back({t, order++, quint32(ready.size()), 0, 0, Made::Ready});
        ready.push_back(std::move(event));
    };
    auto pushSpanEvent = [&](qint64 t, Made made, size_t span, size_t spanEvent, qint64 messageNumber = 0) {
        pending.push_back({t, order++, quint32(spanEvent), quint32(span), quint32(messageNumber), made});
    };
    qint64 messageNumber = 0;
    auto message = [&](qint64 t, const QString &from, Json to, Json payload) {
        push(t, messageEvent(t, from, std::move(to), std::move(payload), "otlp-message-" + std::to_string(++messageNumber), false));
    };
    for (const auto &[id, a] : agents) {
        Json agent = {{"id", id.toStdString()}, {"name", (a.name.isEmpty() ? id : a.name).toStdString()}};
        if (!a.role.isEmpty())
            agent["role"] = a.role.toStdString();
        if (!a.state.isEmpty())
            agent["state"] = a.state.toStdString();
        if (!a.parent.isEmpty() && a.parent != id)
            agent["parent"] = a.parent.toStdString();
        if (!a.session.isEmpty())
            agent["sessionId"] = a.session.toStdString();
        if (a.scopes.is_array())
            agent["scopes"] = a.scopes;
        Json meta = {{"imported", true}, {"format", "otlp"}, {"source", d->source.toStdString()}};
        if (!a.service.isEmpty())
            meta["service"] = a.service.toStdString();
        if (!a.provider.isEmpty())
            meta["provider"] = a.provider.toStdString();
        agent["metadata"] = std::move(meta);
        const qint64 first = a.firstMs == std::numeric_limits<qint64>::max() ? 0 : a.firstMs;
        push(first, {{"type", "agent.registered"}, {"data", {{"agent", std::move(agent)}}}, {"source", {{"agentId", id.toStdString()}}}});
        if (a.unregistered)
            push(std::max(first, a.lastMs), {{"type", "agent.unregistered"}, {"data", {{"agentId", id.toStdString()}}}, {"source", {{"agentId", id.toStdString()}}}});
    }

    // Usage of foreign spans, per agent: from the spans that are not agents' own where any
    // reports it (an agent span often repeats the sum of its model calls), else from the agent
    // spans. Reported cumulatively, with the time each piece ended.
    struct UsagePiece
    {
        qint64 endMs;
        Json attributes;
    };
    std::map<QString, std::vector<UsagePiece>> fromCalls, fromAgents;
    for (size_t i = 0; i < spans.size(); ++i) {
        const Span &s = spans[i];
        if (owner[i].isEmpty() || isOwnAgentSpan(s) || isOwnTaskSpan(s))
            continue;
        Usage probe;
        probe.add(s.attributes);
        if (!probe.any)
            continue;
        (ownAgent[i].isEmpty() ? fromCalls : fromAgents)[owner[i]].push_back({s.endMs, s.attributes});
    }
    std::map<QString, std::vector<UsagePiece>> usagePieces = fromCalls;
    for (auto &[agent, pieces] : fromAgents)
        if (!usagePieces.count(agent))
            usagePieces[agent] = std::move(pieces);
    // Per agent, its usage summed up to each piece's end (sorted by end): a lookup is a search.
    std::map<QString, std::vector<std::pair<qint64, Usage>>> cumulative;
    for (auto &[agent, pieces] : usagePieces) {
        std::sort(pieces.begin(), pieces.end(), [](const UsagePiece &a, const UsagePiece &b) { return a.endMs < b.endMs; });
        std::vector<std::pair<qint64, Usage>> &sums = cumulative[agent];
        Usage running;
        for (const UsagePiece &p : pieces) {
            running.add(p.attributes);
            sums.emplace_back(p.endMs, running);
        }
    }
    auto usageUntil = [&](const QString &agent, qint64 t) {
        const auto it = cumulative.find(agent);
        if (it == cumulative.end())
            return Usage();
        const auto &sums = it->second;
        const auto after = std::upper_bound(sums.begin(), sums.end(), t,
                                            [](qint64 time, const std::pair<qint64, Usage> &s) { return time < s.first; });
        return after == sums.begin() ? Usage() : std::prev(after)->second;
    };

    for (size_t i = 0; i < spans.size(); ++i) {
        const Span &s = spans[i];
        // Messages and task transitions this inspector exported: made into events when written.
        const size_t endEvent = s.firstEvent + s.eventCount;
        for (size_t j = s.firstEvent; j < endEvent; ++j) {
            const SpanEvent &e = d->spanEvents[j];
            if (e.kind == SpanEvent::Kind::Message)
                pushSpanEvent(e.timeMs, Made::SpanMessage, i, j, e.hasId ? 0 : ++messageNumber);
        }
        if (isOwnTaskSpan(s)) {
            bool first = true;
            for (size_t j = s.firstEvent; j < endEvent; ++j) {
                const SpanEvent &e = d->spanEvents[j];
                if (e.kind != SpanEvent::Kind::TaskTransition)
                    continue;
                if (!e.fromMessage) // a transition a message made comes from that message
                    pushSpanEvent(e.timeMs, first ? Made::TaskCreated : Made::TaskStatus, i, j);
                first = false;
            }
            continue;
        }
        // Another framework's agent invoked inside a caller's work: a task the caller gave it.
        if (ownAgent[i].isEmpty() || isOwnAgentSpan(s))
            continue;
        const QString caller = parentOwner(i);
        const QString callee = ownAgent[i];
        if (caller.isEmpty() || caller == callee)
            continue;
        const std::string taskId = "otlp-" + s.spanId;
        message(s.startMs, caller, callee.toStdString(),
                {{"type", "TASK_ASSIGNMENT"}, {"task_id", taskId}, {"task_type", s.name.toStdString()}, {"from", caller.toStdString()},
                 {"to", callee.toStdString()}});
        const bool failed = s.statusCode == 2;
        Json done = {{"type", failed ? "TASK_FAILED" : "TASK_COMPLETE"}, {"task_id", taskId}, {"status", failed ? "FAILED" : "SUCCESS"}};
        if (failed && !s.statusMessage.isEmpty())
            done["error_message"] = s.statusMessage.toStdString();
        if (const Usage u = usageUntil(callee, s.endMs); u.any)
            done["resource_usage"] = u.report();
        message(s.endMs, callee, caller.toStdString(), std::move(done));
    }
    // Each agent's whole usage, reported once at its end (a status report to itself).
    for (const auto &[agent, pieces] : usagePieces) {
        const Usage u = usageUntil(agent, std::numeric_limits<qint64>::max());
        const qint64 t = pieces.empty() ? 0 : pieces.back().endMs;
        message(t, agent, agent.toStdString(), {{"type", "STATUS_UPDATE"}, {"agent_id", agent.toStdString()}, {"resource_usage", u.report()}});
    }

    std::sort(pending.begin(), pending.end(), [](const Pending &a, const Pending &b) {
        return a.timeMs != b.timeMs ? a.timeMs < b.timeMs : a.order < b.order;
    });
    d->owner = std::move(owner);
    d->spool.finishWriting(); // on failure, error() says why
    d->finished = true;
}

bool OtlpImporter::next(TraceRecord &out)
{
    if (!d->finished)
        return false;
    std::vector<Pending> &pending = d->pending;
    if (!d->openWritten) {
        d->openWritten = true;
        out = TraceRecord();
        out.timeMs = pending.empty() ? 0 : pending.front().timeMs;
        out.dir = recordDirName(RecordDir::Open);
        out.raw = QStringLiteral("import:%1").arg(d->source).toUtf8();
        return true;
    }
    Json event;
    std::string rawPayload;
    const Pending *p = nullptr;
    while (event.is_null()) { // null: its texts could not be read back (error() says why), not written
        if (d->nextPending >= pending.size()) { // also when asked again after the end
            // All written: what they were made from goes.
            std::vector<Pending>().swap(pending);
            std::vector<Json>().swap(d->ready);
            std::vector<SpanEvent>().swap(d->spanEvents);
            std::vector<Span>().swap(d->spans);
            std::vector<QString>().swap(d->owner);
            d->spool.release();
            return false;
        }
        p = &pending[d->nextPending++];
        event = p->made == Made::Ready
            ? std::move(d->ready[p->item])
            : spanEventJson(*p, d->spanEvents[p->item], d->spans[p->span], d->owner[p->span], d->spool, rawPayload);
    }
    const qint64 eventNumber = ++d->eventsWritten;
    const std::string id = "otlp-" + std::to_string(eventNumber);
    event["id"] = id;
    event["timestamp"] = p->timeMs;
    const Json frame = {{"jsonrpc", "2.0"},
                        {"method", "map/event"},
                        {"params", {{"eventId", id}, {"timestamp", p->timeMs}, {"event", std::move(event)}}}};
    std::string text = frame.dump(-1, ' ', false, Json::error_handler_t::replace);
    if (!rawPayload.empty()) {
        // The placeholder is the first "payload" key of the frame: the keys are sorted, and every
        // one before it (params.event.data.message's from and id) holds a string, in which a
        // written quote is always escaped.
        static constexpr std::string_view kPlaceholder = "\"payload\":0";
        const size_t at = text.find(kPlaceholder);
        if (at != std::string::npos)
            text.replace(at + kPlaceholder.size() - 1, 1, rawPayload);
    }
    out = TraceRecord();
    out.timeMs = p->timeMs;
    out.dir = recordDirName(RecordDir::Recv);
    out.connection = 1;
    out.raw = QByteArray::fromStdString(text);
    return true;
}

} // namespace mapi
