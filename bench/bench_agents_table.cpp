// The Agents panel at scale: sorting and filtering its table of N agents (default 10,000).
//
//   bench_agents_table [--agents N]
//
// Data: N agents in 10 team scopes under one "org" scope, each team a lead and its workers
// (parents), states spread over busy/idle/thinking/suspended/stopped/failed, roles coordinator
// and worker, a tenth with a task, token and cost figures; plus one message per agent so that
// last-activity times differ. The panel is offscreen at 1400×900.
//
// Each measurement: the operation, then a synchronous repaint of the table's viewport (what the
// operator waits for). Printed: wall milliseconds, average and maximum over 5 rounds, and the
// rows shown. A sort = a click on a column's header (QTableView::sortByColumn, both
// directions); a filter = the query typed into the filter box and applied (Return).
#include "common/VectorStateGuard.h"
#include "models/AgentTableModel.h"
#include "panels/AgentsPanel.h"
#include "session/InspectorSession.h"
#include "session/SelectionHub.h"
#include "style/Theme.h"

#include <QApplication>
#include <QElapsedTimer>
#include <QLineEdit>
#include <QTableView>

#include <algorithm>
#include <cstdio>
#include <functional>

using namespace mapi;
using namespace mapi::ui;

namespace {

constexpr qint64 kStartMs = 1800000000000;
constexpr int kTeams = 10;
constexpr int kRounds = 5;

void fillStore(SystemStore &store, int agentCount)
{
    ModelInputs inputs;
    ScopesSnapshot scopes;
    scopes.timeMs = kStartMs;
    scopes.data.scopes.push_back(ScopeRecord{QStringLiteral("org"), QStringLiteral("org"), std::nullopt, Json()});
    for (int t = 0; t < kTeams; ++t)
        scopes.data.scopes.push_back(ScopeRecord{QStringLiteral("team-%1").arg(t), QStringLiteral("team-%1").arg(t),
                                                 QStringLiteral("org"), Json()});
    inputs.push_back(scopes);

    const QString states[] = {QStringLiteral("busy"), QStringLiteral("idle"), QStringLiteral("custom:thinking"),
                              QStringLiteral("suspended"), QStringLiteral("stopped"), QStringLiteral("custom:failed")};
    AgentsSnapshot agents;
    agents.timeMs = kStartMs;
    const int perTeam = std::max(1, agentCount / kTeams);
    std::vector<QStringList> members(kTeams);
    for (int i = 0; i < agentCount; ++i) {
        const int team = std::min(kTeams - 1, i / perTeam);
        const bool lead = i % perTeam == 0;
        AgentRecord a;
        a.id = QStringLiteral("agent-%1").arg(i, 6, 10, QLatin1Char('0'));
        a.name = lead ? QStringLiteral("lead-%1").arg(team) : QStringLiteral("worker-%1.%2").arg(team).arg(i % perTeam);
        a.role = lead ? QStringLiteral("coordinator") : QStringLiteral("worker");
        a.state = states[(i * 7) % 6];
        if (!lead)
            a.parentId = QStringLiteral("agent-%1").arg(team * perTeam, 6, 10, QLatin1Char('0'));
        a.registeredAtMs = kStartMs;
        a.metadata = Json::object({{"usage", {{"input_tokens", (i * 7919) % 100000}, {"output_tokens", (i * 104729) % 50000}}},
                                   {"cost_usd", double((i * 31) % 1000) / 100.0}});
        agents.data.agents.push_back(a);
        members[size_t(team)] << a.id;
    }
    inputs.push_back(agents);
    for (int t = 0; t < kTeams; ++t)
        inputs.push_back(MembersSnapshot{SnapshotMembers{QStringLiteral("team-%1").arg(t), members[size_t(t)]}, kStartMs});
    for (int i = 0; i < agentCount; ++i) {
        EventInput e;
        e.event.kind = EventKind::MessageSent;
        e.event.type = QStringLiteral("message.sent");
        e.event.eventId = QStringLiteral("e%1").arg(i);
        e.event.timestampMs = kStartMs + 1000 + (qint64(i) * 7919) % 600000;
        MessageRecord m;
        m.id = QStringLiteral("m%1").arg(i);
        m.from = QStringLiteral("agent-%1").arg(i, 6, 10, QLatin1Char('0'));
        m.to = Json(QStringLiteral("agent-%1").arg((i + 1) % agentCount, 6, 10, QLatin1Char('0')).toStdString());
        m.timestampMs = e.event.timestampMs;
        m.setPayload(i % 10 == 0 ? Json::object({{"type", "TASK_REQUEST"}, {"task_id", QStringLiteral("t%1").arg(i).toStdString()}})
                                 : Json::object({{"type", "chatter"}}));
        e.event.message = std::move(m);
        e.receivedMs = e.event.timestampMs;
        inputs.push_back(std::move(e));
    }
    store.apply(inputs);
    store.advanceTime(kStartMs + 601000);
    store.flushChanges();
}

struct Figures
{
    double averageMs = 0;
    double maxMs = 0;
};

Figures measure(QTableView *view, const std::function<void(int)> &operation)
{
    Figures f;
    QElapsedTimer timer;
    for (int round = 0; round < kRounds; ++round) {
        timer.start();
        operation(round);
        view->viewport()->repaint();
        const double ms = double(timer.nsecsElapsed()) / 1e6;
        f.averageMs += ms / kRounds;
        f.maxMs = std::max(f.maxMs, ms);
        QApplication::processEvents();
    }
    return f;
}

void printRow(const QString &what, const Figures &f, int rows)
{
    std::printf("| %-46s | %8.1f | %8.1f | %6d |\n", qPrintable(what), f.averageMs, f.maxMs, rows);
    std::fflush(stdout);
}

} // namespace

int main(int argc, char **argv)
{
    if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM"))
        qputenv("QT_QPA_PLATFORM", "offscreen");
    QApplication app(argc, argv);
    installVectorStateGuard(); // as the application does
    applyTheme(Theme::Light);
    const QStringList args = QApplication::arguments();
    int agentCount = 10000;
    if (const int at = int(args.indexOf(QStringLiteral("--agents"))); at > 0)
        agentCount = std::max(100, args.value(at + 1).toInt());

    InspectorSession session;
    SelectionHub hub;
    QElapsedTimer timer;
    timer.start();
    fillStore(*session.store(), agentCount);
    const double fillMs = double(timer.nsecsElapsed()) / 1e6;
    timer.start();
    AgentsPanel panel(&session, &hub);
    panel.resize(1400, 900);
    panel.show();
    QApplication::processEvents();
    const double openMs = double(timer.nsecsElapsed()) / 1e6;
    auto *view = panel.findChild<QTableView *>(QStringLiteral("agentsTable"));
    auto *filter = panel.findChild<QLineEdit *>(QStringLiteral("agentFilter"));
    if (!view || !filter) {
        std::fprintf(stderr, "the Agents panel's table or filter box was not found\n");
        return 1;
    }
    std::printf("Agents panel: %d agents (store filled in %.0f ms), panel built and shown in %.0f ms, Qt %s\n\n",
                agentCount, fillMs, openMs, qVersion());
    std::printf("| %-46s | %8s | %8s | %6s |\n", "operation + repaint (wall ms)", "average", "max", "rows");
    std::printf("|------------------------------------------------|----------|----------|--------|\n");

    const struct { int column; const char *name; } columns[] = {
        {AgentTableModel::NameColumn, "name"},          {AgentTableModel::HealthColumn, "health"},
        {AgentTableModel::StateColumn, "state"},        {AgentTableModel::RoleColumn, "role"},
        {AgentTableModel::ParentColumn, "parent"},      {AgentTableModel::ScopesColumn, "scopes"},
        {AgentTableModel::LastActivityColumn, "last activity"}, {AgentTableModel::TaskColumn, "task"},
        {AgentTableModel::TokensColumn, "tokens"},      {AgentTableModel::CostColumn, "cost"},
    };
    for (const auto &c : columns) {
        const Figures f = measure(view, [&](int round) {
            view->sortByColumn(c.column, round % 2 ? Qt::DescendingOrder : Qt::AscendingOrder);
        });
        printRow(QStringLiteral("sort by %1").arg(QLatin1String(c.name)), f, view->model()->rowCount());
    }
    view->sortByColumn(AgentTableModel::NameColumn, Qt::AscendingOrder);

    const char *queries[] = {"role:worker", "state:busy", "-state:stopped", "health:late OR health:unresponsive",
                             "name:~^worker-3\\.\\d+$", "scope:team-7", "worker-5", "-role:coordinator worker-1"};
    for (const char *query : queries) {
        const Figures f = measure(view, [&](int round) {
            // Odd rounds clear the box first, so that every round filters all rows again.
            if (round % 2) {
                filter->setText(QString());
                Q_EMIT filter->returnPressed();
            }
            filter->setText(QString::fromUtf8(query));
            Q_EMIT filter->returnPressed();
        });
        printRow(QStringLiteral("filter \"%1\"").arg(QString::fromUtf8(query)), f, view->model()->rowCount());
    }
    const Figures cleared = measure(view, [&](int) {
        filter->setText(QStringLiteral("role:worker"));
        Q_EMIT filter->returnPressed();
        filter->setText(QString());
        Q_EMIT filter->returnPressed();
    });
    printRow(QStringLiteral("filter \"role:worker\", then cleared"), cleared, view->model()->rowCount());
    return 0;
}
