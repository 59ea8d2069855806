#include "FleetTrace.h"

#include "trace/CompressedFile.h"

#include <QDateTime>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <queue>
#include <random>
#include <string_view>
#include <utility>
#include <vector>

namespace mapi::fleet {

namespace {

using Json = nlohmann::json;

constexpr qint64 kHeartbeatMs = 30000;    // the seeds' default interval (AlertRules too)
constexpr qint64 kRegistrationMs = 10000; // every agent registers within the first 10 s
constexpr const char *kSubscription = "01FLEETSVBSCR1PT10N0000000";

const char *const kTeamNames[] = {
    "ingest", "payments", "search", "billing", "support", "research", "infra", "growth", "ml-platform", "security",
    "checkout", "catalog", "recommend", "fraud", "ledger", "identity", "notify", "analytics", "pricing", "logistics",
    "inventory", "reviews", "media", "translate", "compliance", "onboarding", "crawler", "indexer", "reports", "forecast",
    "chat", "voice", "vision", "docs", "qa", "release", "observability", "storage", "gateway", "scheduler",
    "etl", "warehouse", "experiments", "ads", "feeds", "maps", "routing", "claims", "underwriting", "trading",
    "risk", "payroll", "hr-bot", "legal", "sales", "marketing", "outreach", "triage", "labeling", "eval",
};
constexpr int kTeamNameCount = int(sizeof(kTeamNames) / sizeof(kTeamNames[0]));

struct FleetAgent
{
    QString id;
    QString name;
    const char *role = "worker";
    int team = -1;   // -1: the coordinator
    int parent = -1; // index; -1: none
    std::vector<int> children;
    QString state = QStringLiteral("idle");
    qint64 silentAtMs = std::numeric_limits<qint64>::max();
    bool failed = false;
};

struct Team
{
    QString name;
    QString scopeId;
    int lead = -1;
    int size = 0;
};

enum class Step { Heartbeat, TaskStart, WorkerAccept, SubRequest, SubComplete, WorkerComplete, LeadQuery, LeadAnswer, CrossAnswer, Fail };

struct Scheduled
{
    qint64 ms = 0;
    quint64 order = 0; // ties in time keep the order scheduled: the file repeats byte for byte
    Step step = Step::Heartbeat;
    int agent = -1;
    int peer = -1;
    int task = 0;
    bool operator>(const Scheduled &other) const { return ms != other.ms ? ms > other.ms : order > other.order; }
};

// A ULID-shaped id (26 Crockford base-32 characters): the time, then a counter.
QString makeId(qint64 ms, quint64 counter)
{
    static const char alphabet[] = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";
    char out[26];
    for (int i = 9; i >= 0; --i, ms >>= 5)
        out[i] = alphabet[ms & 31];
    for (int i = 25; i >= 10; --i, counter >>= 5)
        out[i] = alphabet[counter & 31];
    return QString::fromLatin1(out, 26);
}

std::string iso(qint64 ms)
{
    return QDateTime::fromMSecsSinceEpoch(ms).toUTC().toString(Qt::ISODateWithMs).toStdString();
}

class Writer
{
public:
    Writer(const FleetOptions &options)
        : m_options(options)
        , m_random(options.seed)
    {
    }
    ErrorOr<FleetSummary> run(const QString &path);

private:
    qint64 jitter(qint64 from, qint64 to) { return std::uniform_int_distribution<qint64>(from, to)(m_random); }
    void schedule(qint64 ms, Step step, int agent, int peer = -1, int task = 0)
    {
        m_queue.push({ms, m_order++, step, agent, peer, task});
    }
    bool silent(int agent, qint64 ms) const { return ms >= m_agents[size_t(agent)].silentAtMs; }
    void record(qint64 ms, const Json &frame);
    void event(qint64 ms, const char *type, Json data, Json source);
    void message(qint64 ms, int from, int to, const char *type, Json payload, int priority = 3);
    void setState(qint64 ms, int agent, const QString &state);
    void build();
    void registerAll();
    void handle(const Scheduled &s);
    QString taskId(int task) const { return QStringLiteral("task-%1").arg(task, 6, 10, QLatin1Char('0')); }

    const FleetOptions m_options;
    std::mt19937 m_random;
    std::vector<FleetAgent> m_agents;
    std::vector<Team> m_teams;
    QString m_fleetScope;
    std::priority_queue<Scheduled, std::vector<Scheduled>, std::greater<>> m_queue;
    quint64 m_order = 0;
    quint64 m_ids = 0;
    qint64 m_sequence = 0;
    int m_tasks = 0;
    CompressingWriter m_out;
    bool m_writeFailed = false;
    FleetSummary m_summary;
};

void Writer::record(qint64 ms, const Json &frame)
{
    const std::string line = Json{{"t", ms}, {"dir", "recv"}, {"conn", 1}, {"frame", frame}}.dump() + '\n';
    m_writeFailed = m_writeFailed || !m_out.write(line.data(), qint64(line.size()));
}

void Writer::event(qint64 ms, const char *type, Json data, Json source)
{
    const std::string id = makeId(ms, ++m_ids).toStdString();
    record(ms, Json{{"jsonrpc", "2.0"},
                    {"method", "map/event"},
                    {"params",
                     {{"subscriptionId", kSubscription},
                      {"sequenceNumber", ++m_sequence},
                      {"eventId", id},
                      {"timestamp", ms},
                      {"event", {{"type", type}, {"data", std::move(data)}, {"source", std::move(source)}, {"id", id}, {"timestamp", ms}}}}}});
    ++m_summary.events;
}

void Writer::message(qint64 ms, int from, int to, const char *type, Json payload, int priority)
{
    const FleetAgent &a = m_agents[size_t(from)], &b = m_agents[size_t(to)];
    const std::string fromId = a.id.toStdString(), toId = b.id.toStdString();
    const std::string id = makeId(ms, ++m_ids).toStdString();
    Json envelope{{"message_id", id},
                  {"type", type},
                  {"from", fromId},
                  {"to", toId},
                  {"timestamp", iso(ms)},
                  {"priority", priority},
                  {"payload", std::move(payload)},
                  {"metadata", {{"agent_name", a.name.toStdString()}}}};
    event(ms, "message.sent",
          Json{{"message",
                {{"id", id}, {"from", fromId}, {"to", toId}, {"payload", std::move(envelope)}, {"timestamp", ms}, {"priority", priority}, {"messageType", type}}}},
          Json{{"agentId", fromId}});
    ++m_summary.messages;
    if (a.team >= 0 && b.team >= 0 && a.team != b.team)
        ++m_summary.crossTeamMessages;
}

void Writer::setState(qint64 ms, int agent, const QString &state)
{
    FleetAgent &a = m_agents[size_t(agent)];
    if (a.state == state)
        return;
    const QString previous = std::exchange(a.state, state);
    event(ms, "agent.state.changed",
          Json{{"agent", {{"id", a.id.toStdString()}, {"name", a.name.toStdString()}, {"role", a.role}, {"state", state.toStdString()}, {"lastStateChange", ms}}},
               {"previousState", previous.toStdString()}},
          Json{{"agentId", a.id.toStdString()}});
}

// Teams of unequal size: the first about 12 % of all agents (the one that falls silent), the
// others sharing the rest with ±30 %. A team: a lead, a third of the rest workers, the others
// sub-agents spread over the workers.
void Writer::build()
{
    const int total = std::max(10, m_options.agents);
    const int teamCount = std::clamp(int(std::lround(std::sqrt(double(total)) / 4.0)), 2, 60);
    std::vector<int> sizes(size_t(teamCount), 0);
    const int members = total - 1;
    sizes[0] = std::max(4, members * 12 / 100);
    std::vector<double> weights(size_t(teamCount - 1));
    for (double &w : weights)
        w = 0.7 + 0.6 * std::uniform_real_distribution<double>(0, 1)(m_random);
    double weightSum = 0;
    for (double w : weights)
        weightSum += w;
    int left = members - sizes[0];
    for (int t = 1; t < teamCount; ++t) {
        sizes[size_t(t)] = t == teamCount - 1 ? left : std::max(4, int(double(members - sizes[0]) * weights[size_t(t - 1)] / weightSum));
        left -= sizes[size_t(t)];
    }
    m_agents.push_back({});
    m_agents[0].name = QStringLiteral("coordinator");
    m_agents[0].role = "coordinator";
    for (int t = 0; t < teamCount; ++t) {
        Team team;
        team.name = QString::fromLatin1(kTeamNames[t % kTeamNameCount]);
        if (t >= kTeamNameCount)
            team.name += QStringLiteral("-%1").arg(t / kTeamNameCount + 1);
        team.size = sizes[size_t(t)];
        team.lead = int(m_agents.size());
        FleetAgent lead;
        lead.name = team.name + QStringLiteral("-lead");
        lead.role = "lead";
        lead.team = t;
        lead.parent = 0;
        m_agents.push_back(lead);
        m_agents[0].children.push_back(team.lead);
        const int workers = std::max(1, (team.size - 1) / 3);
        std::vector<int> workerIndex;
        for (int w = 0; w < workers; ++w) {
            FleetAgent worker;
            worker.name = QStringLiteral("%1-w%2").arg(team.name).arg(w + 1, 3, 10, QLatin1Char('0'));
            worker.team = t;
            worker.parent = team.lead;
            workerIndex.push_back(int(m_agents.size()));
            m_agents[size_t(team.lead)].children.push_back(int(m_agents.size()));
            m_agents.push_back(worker);
        }
        for (int s = 0; s < team.size - 1 - workers; ++s) {
            const int parent = workerIndex[size_t(s % workers)];
            FleetAgent sub;
            sub.name = QStringLiteral("%1.sub-%2").arg(m_agents[size_t(parent)].name).arg(s / workers + 1);
            sub.role = "subagent";
            sub.team = t;
            sub.parent = parent;
            m_agents[size_t(parent)].children.push_back(int(m_agents.size()));
            m_agents.push_back(sub);
        }
        m_teams.push_back(team);
    }
    for (size_t i = 0; i < m_agents.size(); ++i)
        m_agents[i].id = makeId(m_options.startMs, 0x100000 + i);
    m_summary.agents = int(m_agents.size());
    m_summary.teams = teamCount;
}

void Writer::registerAll()
{
    const qint64 start = m_options.startMs;
    m_fleetScope = makeId(start, ++m_ids);
    const auto createScope = [&](qint64 ms, const QString &id, const QString &name, const std::string &purpose, const QString &parent) {
        Json scope{{"id", id.toStdString()}, {"name", name.toStdString()}, {"metadata", {{"purpose", purpose}}}, {"createdAt", ms}};
        if (!parent.isEmpty())
            scope["parentId"] = parent.toStdString();
        event(ms, "scope.created", Json{{"scope", scope}}, Json{{"scopeId", id.toStdString()}});
        ++m_summary.scopes;
    };
    const auto join = [&](qint64 ms, const QString &scope, const FleetAgent &a) {
        event(ms, "scope.agent.joined", Json{{"scopeId", scope.toStdString()}, {"agentId", a.id.toStdString()}},
              Json{{"scopeId", scope.toStdString()}, {"agentId", a.id.toStdString()}});
    };
    createScope(start, m_fleetScope, QStringLiteral("fleet"), "the coordinator and the team leads", QString());
    for (Team &team : m_teams) {
        team.scopeId = makeId(start, ++m_ids);
        createScope(start, team.scopeId, QStringLiteral("team/") + team.name, "one team's work", m_fleetScope);
    }
    for (size_t i = 0; i < m_agents.size(); ++i) {
        const FleetAgent &a = m_agents[i];
        const qint64 ms = start + 1 + qint64(i) * (kRegistrationMs - 1) / qint64(m_agents.size());
        Json metadata = Json::object();
        if (a.team >= 0)
            metadata["team"] = m_teams[size_t(a.team)].name.toStdString();
        if (a.parent >= 0)
            metadata["parentId"] = m_agents[size_t(a.parent)].id.toStdString();
        event(ms, "agent.registered",
              Json{{"agent",
                    {{"id", a.id.toStdString()}, {"name", a.name.toStdString()}, {"role", a.role}, {"state", "idle"}, {"metadata", metadata},
                     {"registeredAt", ms}, {"lastStateChange", ms}}}},
              Json{{"agentId", a.id.toStdString()}});
        if (a.team < 0 || a.parent == 0)
            join(ms, m_fleetScope, a);
        if (a.team >= 0)
            join(ms, m_teams[size_t(a.team)].scopeId, a);
        // Work starts once everyone has registered: the file stays in time order.
        const qint64 settled = start + kRegistrationMs;
        schedule(settled + jitter(0, kHeartbeatMs), Step::Heartbeat, int(i));
        if (std::string_view(a.role) == "worker")
            schedule(settled + jitter(5000, 60000), Step::TaskStart, int(i));
        if (std::string_view(a.role) == "lead")
            schedule(settled + jitter(30000, 120000), Step::LeadQuery, int(i));
    }
}

void Writer::handle(const Scheduled &s)
{
    FleetAgent &a = m_agents[size_t(s.agent)];
    if (silent(s.agent, s.ms))
        return; // a silent agent says nothing and schedules nothing
    switch (s.step) {
    case Step::Heartbeat: {
        if (a.parent >= 0) {
            const char *status = a.failed ? "ERROR" : a.state == QLatin1String("busy") ? "BUSY" : "IDLE";
            message(s.ms, s.agent, a.parent, "HEARTBEAT",
                    Json{{"status", status}, {"load", a.state == QLatin1String("busy") ? 0.7 : 0.1}, {"tasks_running", a.state == QLatin1String("busy") ? 1 : 0}, {"tasks_queued", 0}},
                    1);
        }
        schedule(s.ms + kHeartbeatMs + jitter(-400, 400), Step::Heartbeat, s.agent);
        break;
    }
    case Step::TaskStart: {
        if (a.failed || silent(a.parent, s.ms)) {
            schedule(s.ms + 60000, Step::TaskStart, s.agent);
            break;
        }
        const int task = ++m_tasks;
        message(s.ms, a.parent, s.agent, "TASK_REQUEST",
                Json{{"task_id", taskId(task).toStdString()}, {"task_type", "analysis"}, {"input", "batch " + std::to_string(task)}, {"timeout", 120}, {"attempt", 1}});
        schedule(s.ms + jitter(200, 800), Step::WorkerAccept, s.agent, a.parent, task);
        break;
    }
    case Step::WorkerAccept:
        if (a.failed)
            break;
        message(s.ms, s.agent, s.peer, "TASK_ACCEPT", Json{{"task_id", taskId(s.task).toStdString()}, {"estimated_duration", 10}, {"accepted_at", iso(s.ms)}});
        setState(s.ms, s.agent, QStringLiteral("busy"));
        if (jitter(0, 99) < 8 && m_teams.size() > 1) {
            // One task in twelve needs a neighbouring team: a worker asks one of theirs.
            const Team &next = m_teams[size_t(a.team + 1) % m_teams.size()];
            const std::vector<int> &theirs = m_agents[size_t(next.lead)].children;
            const int peer = theirs[size_t(jitter(0, qint64(theirs.size()) - 1))];
            message(s.ms, s.agent, peer, "STATUS_QUERY", Json{{"query_type", "CAPABILITY"}, {"task_id", taskId(s.task).toStdString()}});
            schedule(s.ms + jitter(100, 800), Step::CrossAnswer, peer, s.agent);
        }
        if (!a.children.empty())
            schedule(s.ms + jitter(100, 500), Step::SubRequest, s.agent, a.children[size_t(s.task) % a.children.size()], s.task);
        else
            schedule(s.ms + jitter(5000, 20000), Step::WorkerComplete, s.agent, s.peer, s.task);
        break;
    case Step::SubRequest:
        if (a.failed)
            break;
        message(s.ms, s.agent, s.peer, "TASK_REQUEST", Json{{"task_id", taskId(s.task).toStdString() + ".1"}, {"task_type", "lookup"}, {"timeout", 60}, {"attempt", 1}});
        schedule(s.ms + jitter(3000, 15000), Step::SubComplete, s.peer, s.agent, s.task);
        break;
    case Step::SubComplete:
        if (a.failed)
            break; // the worker waits on it: a stalled task, as a real failure leaves
        message(s.ms, s.agent, s.peer, "TASK_COMPLETE",
                Json{{"task_id", taskId(s.task).toStdString() + ".1"}, {"status", "SUCCESS"}, {"duration", 8}, {"completed_at", iso(s.ms)}});
        schedule(s.ms + jitter(500, 2000), Step::WorkerComplete, s.peer, m_agents[size_t(s.peer)].parent, s.task);
        break;
    case Step::WorkerComplete:
        if (a.failed)
            break;
        message(s.ms, s.agent, s.peer, "TASK_COMPLETE",
                Json{{"task_id", taskId(s.task).toStdString()}, {"status", "SUCCESS"}, {"duration", 12}, {"completed_at", iso(s.ms)}, {"output", {{"result", "PASS"}}}});
        setState(s.ms, s.agent, QStringLiteral("idle"));
        schedule(s.ms + jitter(20000, 90000), Step::TaskStart, s.agent);
        break;
    case Step::LeadQuery: {
        // Most questions stay at home: a lead asks another lead, rarely, and the coordinator.
        int other = m_teams[size_t(jitter(0, qint64(m_teams.size()) - 1))].lead;
        if (other == s.agent)
            other = 0;
        message(s.ms, s.agent, other, "STATUS_QUERY", Json{{"query_type", "AGENT_STATUS"}});
        schedule(s.ms + jitter(100, 500), Step::LeadAnswer, other, s.agent);
        schedule(s.ms + jitter(60000, 180000), Step::LeadQuery, s.agent);
        break;
    }
    case Step::CrossAnswer:
    case Step::LeadAnswer:
        message(s.ms, s.agent, s.peer, "STATUS_RESPONSE", Json{{"status", a.failed ? "ERROR" : "IDLE"}, {"progress", 100}, {"tasks_running", 0}});
        break;
    case Step::Fail: {
        // The team's shared dependency is down: this agent reports it and stops working.
        a.failed = true;
        message(s.ms, s.agent, a.parent, "ERROR_REPORT",
                Json{{"error_id", makeId(s.ms, ++m_ids).toStdString()},
                     {"agent_id", a.id.toStdString()},
                     {"error_type", "DEPENDENCY"},
                     {"severity", "CRITICAL"},
                     {"error_code", "E_DEPENDENCY_DOWN"},
                     {"message", "vector store vs-" + m_teams[size_t(a.team)].name.toStdString() + " unreachable: connection refused"},
                     {"recovery_attempts", Json::array({"retry"})},
                     {"suggested_actions", Json::array({"check the vector store"})}},
                6);
        setState(s.ms, s.agent, QStringLiteral("error"));
        break;
    }
    }
}

ErrorOr<FleetSummary> Writer::run(const QString &path)
{
    QString error;
    if (!m_out.open(path, compressionFromPath(path), &error))
        return Failure{error};
    build();
    const qint64 start = m_options.startMs, end = start + std::max<qint64>(m_options.durationMs, kRegistrationMs + 1000);
    const Json header{{"format", "map-inspector-trace"},
                      {"version", 2},
                      {"app", "fleet-trace"},
                      {"startedAt", start},
                      {"url", "ws://fleet.example/map"},
                      {"generated", {{"agents", m_options.agents}, {"seed", m_options.seed}, {"durationMs", m_options.durationMs}}}};
    const std::string headerLine = header.dump() + '\n';
    m_writeFailed = !m_out.write(headerLine.data(), qint64(headerLine.size()));
    const auto client = [&](const char *dir, const Json &frame) {
        const std::string line = Json{{"t", start}, {"dir", dir}, {"conn", 1}, {"frame", frame}}.dump() + '\n';
        m_writeFailed = m_writeFailed || !m_out.write(line.data(), qint64(line.size()));
    };
    client("send", Json{{"id", 1}, {"jsonrpc", "2.0"}, {"method", "map/connect"}, {"params", {{"name", "map-inspector"}, {"participantType", "client"}, {"protocolVersion", 1}}}});
    client("recv", Json{{"jsonrpc", "2.0"},
                        {"id", 1},
                        {"result",
                         {{"protocolVersion", "2024-12"}, {"sessionId", "01FLEETSESS10N000000000000"}, {"participantId", "01FLEETSESS10N000000000000"},
                          {"capabilities", {{"roles", {"client"}}, {"features", Json::array()}}},
                          {"systemInfo", {{"name", "Generated fleet (fleet-trace, seed " + std::to_string(m_options.seed) + ")"}, {"version", "1"}}}}}});
    client("send", Json{{"id", 2}, {"jsonrpc", "2.0"}, {"method", "map/subscribe"}, {"params", {{"filter", Json::object()}}}});
    client("recv", Json{{"jsonrpc", "2.0"}, {"id", 2}, {"result", {{"subscriptionId", kSubscription}}}});

    if (m_options.incidents) {
        // The largest team falls silent within 20 s at 70 % of the run; another team's shared
        // dependency fails at 55 %, for seven in ten of its workers and sub-agents.
        const qint64 silence = start + (end - start) * 70 / 100;
        const Team &silentTeam = m_teams[0];
        for (FleetAgent &a : m_agents)
            if (a.team == 0) {
                a.silentAtMs = silence + jitter(0, 20000);
                ++m_summary.silentAgents;
            }
        m_summary.silentTeam = silentTeam.name;
        m_summary.silenceAtMs = silence;
        const qint64 failure = start + (end - start) * 55 / 100;
        m_summary.failingTeam = m_teams[1].name;
        m_summary.failureAtMs = failure;
        for (size_t i = 0; i < m_agents.size(); ++i)
            if (m_agents[i].team == 1 && std::string_view(m_agents[i].role) != "lead" && jitter(0, 9) < 7) {
                schedule(failure + jitter(0, 10000), Step::Fail, int(i));
                ++m_summary.failedAgents;
            }
    }
    registerAll();
    while (!m_queue.empty() && m_queue.top().ms <= end) {
        const Scheduled next = m_queue.top();
        m_queue.pop();
        handle(next);
    }
    if (m_writeFailed || !m_out.close())
        return Failure{QStringLiteral("cannot write %1").arg(path)};
    return m_summary;
}

} // namespace

ErrorOr<FleetSummary> writeFleetTrace(const QString &path, const FleetOptions &options)
{
    Writer writer(options);
    return writer.run(path);
}

} // namespace mapi::fleet
