#include "model/StateJson.h"

#include "map/Federation.h"

#include <algorithm>

namespace mapi {

template <typename Texts>
static Json stringArray(const Texts &list)
{
    Json out = Json::array();
    for (const QString &s : list)
        out.push_back(s.toStdString());
    return out;
}

static Json optionalString(const QString &s)
{
    return s.isEmpty() ? Json() : Json(s.toStdString());
}

static Json agentToJson(const Agent &a)
{
    Json j = {{"id", a.id.toStdString()},
              {"name", a.name.toStdString()},
              {"role", optionalString(a.role)},
              {"state", a.state.toStdString()},
              {"parentId", optionalString(a.parentId)},
              {"scopes", stringArray(a.scopes)},
              {"sessionId", optionalString(a.sessionId)},
              {"health", healthName(a.health).toStdString()}};
    if (const QString from = federatedFrom(a.metadata); !from.isEmpty()) { // another system's (map/Federation.h)
        j["federatedFrom"] = from.toStdString();
        j["originalId"] = federatedOriginalId(a.id, a.metadata).toStdString();
    }
    if (!a.currentTaskId.isEmpty())
        j["currentTask"] = a.currentTaskId.toStdString();
    if (a.tokensUsed)
        j["tokensUsed"] = *a.tokensUsed;
    if (a.inputTokens)
        j["inputTokens"] = *a.inputTokens;
    if (a.outputTokens)
        j["outputTokens"] = *a.outputTokens;
    if (a.costUsd)
        j["costUsd"] = *a.costUsd;
    if (!a.lastErrorSeverity.isEmpty())
        j["lastError"] = {{"severity", a.lastErrorSeverity.toStdString()}, {"message", a.lastErrorMessage.toStdString()}};
    return j;
}

Json actionToJson(const OperatorAction &a)
{
    return {{"id", a.id.toStdString()},
            {"kind", actionKindName(a.kind).toStdString()},
            {"agentId", a.agentId.toStdString()},
            {"method", a.method.toStdString()},
            {"fallback", a.fallback},
            {"note", a.note.toStdString()},
            {"status", actionStatusName(a.status).toStdString()},
            {"detail", a.detail.toStdString()},
            {"sentAt", a.sentAtMs},
            {"answeredAt", a.answeredAtMs},
            {"settledAt", a.settledAtMs},
            {"confirmingEventId", optionalString(a.confirmingEventId)}};
}

// Conversations as the console shows them: participants by agent, threads, turns in order.
static Json conversationsToJson(const SystemStore &store)
{
    Json out = Json::array();
    for (const Conversation &c : store.conversations().conversations()) {
        Json participants = Json::array();
        for (const SystemStore::ParticipantRow &p : store.conversationParticipants(c))
            participants.push_back({{"agentId", optionalString(p.agentId)},
                                    {"name", p.name.toStdString()},
                                    {"type", p.type.toStdString()},
                                    {"role", p.role.toStdString()},
                                    {"left", p.leftMs != 0}});
        Json threads = Json::array();
        for (const ConversationThread &t : c.threads)
            threads.push_back({{"id", t.id.toStdString()}, {"subject", t.subject.toStdString()},
                               {"rootTurnId", t.rootTurnId.toStdString()}});
        Json turns = Json::array();
        for (const ConversationTurn &t : c.turns)
            turns.push_back({{"id", t.id.toStdString()},
                             {"participant", store.participantName(t.participant).toStdString()},
                             {"time", t.timeMs},
                             {"contentType", t.contentType.toStdString()},
                             {"text", t.text.toStdString()},
                             {"threadId", optionalString(t.threadId)},
                             {"inReplyTo", optionalString(t.inReplyTo)},
                             {"interceptedMessageId", optionalString(t.interceptedMessageId)}});
        out.push_back({{"id", c.id.toStdString()},
                       {"type", c.type.toStdString()},
                       {"subject", c.subject.toStdString()},
                       {"status", c.status.toStdString()},
                       {"closeReason", optionalString(c.closeReason)},
                       {"participants", std::move(participants)},
                       {"threads", std::move(threads)},
                       {"turns", std::move(turns)},
                       {"turnsNotKept", c.turnsNotKept}});
    }
    return out;
}

static Json checkpointsToJson(const SystemStore &store)
{
    Json out = Json::array();
    for (const Checkpoint &c : store.checkpoints().checkpoints())
        out.push_back({{"id", c.id.toStdString()},
                       {"agentId", c.agentId.toStdString()},
                       {"agent", store.agentName(c.agentId).toStdString()},
                       {"label", c.label.toStdString()},
                       {"time", c.timeMs}});
    return out;
}

// ACP sessions: each stream with its requests paired to their responses, and its updates.
static Json acpToJson(const SystemStore &store)
{
    Json out = Json::array();
    for (const AcpStream &s : store.acpStreams().streams()) {
        Json exchanges = Json::array();
        for (const AcpExchange &x : s.exchanges)
            exchanges.push_back({{"id", x.id.toStdString()},
                                 {"method", x.method.toStdString()},
                                 {"text", x.text.toStdString()},
                                 {"answered", x.responseRow >= 0},
                                 {"answer", x.answer.toStdString()},
                                 {"error", x.error}});
        Json updates = Json::array();
        for (const AcpNotice &n : s.notices)
            updates.push_back({{"method", n.method.toStdString()}, {"update", n.update.toStdString()}, {"text", n.text.toStdString()},
                               {"toolCallId", optionalString(n.toolCallId)}});
        out.push_back({{"streamId", s.streamId.toStdString()},
                       {"sessionId", optionalString(s.sessionId)},
                       {"agentId", optionalString(s.agentId)},
                       {"agent", store.agentName(s.agentId).toStdString()},
                       {"exchanges", std::move(exchanges)},
                       {"updates", std::move(updates)},
                       {"transcript", s.transcript().toStdString()},
                       {"framesNotKept", s.framesNotKept}});
    }
    return out;
}

static std::vector<const Agent *> agentsById(const SystemStore &store)
{
    std::vector<const Agent *> agents;
    agents.reserve(store.agents().size());
    for (const Agent &a : store.agents())
        agents.push_back(&a);
    std::sort(agents.begin(), agents.end(), [](const Agent *l, const Agent *r) { return l->id < r->id; });
    return agents;
}

void forEachAgentJson(const SystemStore &store, bool departed, const std::function<void(const Json &)> &f)
{
    for (const Agent *a : agentsById(store))
        if (!a->placeholder && a->unregistered == departed)
            f(agentToJson(*a));
}

Json stateToJson(const SystemStore &store, const StateJsonOptions &options)
{
    Json live = Json::array(), departed = Json::array(), placeholders = Json::array();
    size_t liveCount = 0;
    for (const Agent *a : agentsById(store)) {
        if (a->placeholder) {
            placeholders.push_back(a->id.toStdString());
        } else if (a->unregistered) {
            if (options.listAgents)
                departed.push_back(agentToJson(*a));
        } else {
            ++liveCount;
            if (options.listAgents)
                live.push_back(agentToJson(*a));
        }
    }

    std::vector<const Scope *> scopes;
    for (const Scope &s : store.scopes())
        scopes.push_back(&s);
    std::sort(scopes.begin(), scopes.end(), [](const Scope *l, const Scope *r) { return l->id < r->id; });
    Json liveScopes = Json::array(), deletedScopes = Json::array();
    for (const Scope *s : scopes) {
        Json j = {{"id", s->id.toStdString()},
                  {"name", s->name.toStdString()},
                  {"parentId", optionalString(s->parentId)},
                  {"members", stringArray(s->members)}};
        if (s->deleted)
            deletedScopes.push_back(s->id.toStdString());
        else
            liveScopes.push_back(std::move(j));
    }

    const StoreCounters &c = store.counters();
    const size_t liveScopeCount = liveScopes.size();
    Json out = {{"agents", std::move(live)},
                {"scopes", std::move(liveScopes)},
                {"counts",
                 {{"agents", liveCount},
                  {"scopes", liveScopeCount},
                  {"events", c.eventsApplied},
                  {"messages", c.messages},
                  {"tasks", c.tasks},
                  {"gaps", c.gaps},
                  {"sequenceGaps", c.sequenceGaps},
                  {"problems", c.problems},
                  {"duplicates", c.duplicateEvents},
                  {"unknownEvents", c.unknownEvents},
                  {"futureTimestamps", c.futureTimestamps},
                  {"recipientsNotKept", c.recipientsNotKept},
                  {"agentsNotKept", c.agentsNotKept},
                  {"historyNotKept", c.historyNotKept},
                  {"textsNotKept", store.events().textsNotKept() + store.messages().textsNotKept()}}}};
    // Event types the model does not understand, each with its count and the first one as a
    // sample (ObservationNotes); and what the server did not give, one sentence each.
    const ObservationNotes &notes = store.observation();
    Json unknownTypes = Json::array();
    for (const UnknownEventType &u : notes.unknownTypes()) {
        Json sample = Json::parse(u.sample.constData(), u.sample.constData() + u.sample.size(), nullptr, false);
        if (sample.is_discarded()) // cut at kMaxSampleBytes: the text as it is
            sample = u.sample.toStdString();
        unknownTypes.push_back({{"type", u.type.toStdString()}, {"count", u.count}, {"sample", std::move(sample)}});
    }
    if (notes.unknownOfOtherTypes() > 0)
        unknownTypes.push_back({{"type", "(more types)"}, {"count", notes.unknownOfOtherTypes()}});
    out["unknownEventTypes"] = unknownTypes;
    // Every task with its title and true status (as the server or its agents said it).
    Json tasks = Json::array();
    for (const Task &t : store.tasks())
        tasks.push_back({{"id", t.id.toStdString()},
                         {"title", t.type.toStdString()},
                         {"status", t.status.toStdString()},
                         {"assignee", t.assigneeId.toStdString()},
                         {"requester", t.requesterId.toStdString()}});
    out["tasks"] = tasks;
    out["conversations"] = conversationsToJson(store);
    out["checkpoints"] = checkpointsToJson(store);
    out["acpStreams"] = acpToJson(store);
    if (Json federation = store.federation().toJson(); !federation.is_null())
        out["federation"] = std::move(federation);
    out["counts"]["conversations"] = store.conversations().conversations().size();
    out["counts"]["turns"] = store.conversations().turnCount();
    out["counts"]["checkpoints"] = store.checkpoints().checkpoints().size();
    Json missing = Json::array();
    for (const QString &reason : notes.missing())
        missing.push_back(reason.toStdString());
    out["missing"] = missing;
    const ConnectionInfo &conn = store.connection();
    out["connection"] = {{"url", conn.url.toStdString()},
                         {"state", conn.state.toStdString()},
                         {"server", conn.serverName.toStdString()},
                         {"serverVersion", conn.serverVersion.toStdString()},
                         {"protocolVersion", conn.protocolVersion.toStdString()},
                         {"clockOffsetMs", conn.clockOffsetMs},
                         {"clockSamples", conn.clockSamples}};
    if (options.includeDeparted) {
        out["departedAgents"] = std::move(departed);
        out["deletedScopes"] = std::move(deletedScopes);
        out["placeholders"] = std::move(placeholders);
    }
    if (options.includeActions) {
        Json actions = Json::array();
        for (const OperatorAction &a : store.actions())
            actions.push_back(actionToJson(a));
        out["actions"] = actions;
    }
    Json gaps = Json::array();
    for (const Gap &g : store.gaps())
        gaps.push_back({{"kind", gapKindName(g.kind).toStdString()},
                        {"time", g.timeMs},
                        {"detail", g.detail.toStdString()},
                        {"recovered", g.recovered},
                        {"partial", g.partial}});
    out["gaps"] = gaps;
    Json problems = Json::array();
    for (const ProtocolProblem &p : store.problems())
        problems.push_back({{"kind", problemKindName(p.kind).toStdString()}, {"time", p.timeMs}, {"detail", p.detail.toStdString()}});
    out["problems"] = problems;
    return out;
}

} // namespace mapi
