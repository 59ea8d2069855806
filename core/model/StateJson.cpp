#include "model/StateJson.h"

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

Json stateToJson(const SystemStore &store, const StateJsonOptions &options)
{
    std::vector<const Agent *> agents;
    for (const Agent &a : store.agents())
        agents.push_back(&a);
    std::sort(agents.begin(), agents.end(), [](const Agent *l, const Agent *r) { return l->id < r->id; });
    Json live = Json::array(), departed = Json::array(), placeholders = Json::array();
    for (const Agent *a : agents) {
        if (a->placeholder)
            placeholders.push_back(a->id.toStdString());
        else if (a->unregistered)
            departed.push_back(agentToJson(*a));
        else
            live.push_back(agentToJson(*a));
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
    Json out = {{"agents", live},
                {"scopes", liveScopes},
                {"counts",
                 {{"agents", live.size()},
                  {"scopes", liveScopes.size()},
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
        out["departedAgents"] = departed;
        out["deletedScopes"] = deletedScopes;
        out["placeholders"] = placeholders;
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
