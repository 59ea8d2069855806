// What the Agents and Scopes panels' GUI tests share: inputs made by hand (agents, scopes,
// memberships, convention messages, snapshots), a small system of six agents and three scopes,
// and readers of a model's columns and a tree's shape.
#pragma once

#include "GuiTestSupport.h"

#include "models/AgentFilter.h"
#include "models/AgentTableModel.h"
#include "models/ScopeTreeModel.h"
#include "panels/AgentsPanel.h"
#include "panels/ScopesPanel.h"
#include "session/InspectorSession.h"
#include "session/SelectionHub.h"

#include <QAbstractItemModelTester>
#include <QCheckBox>
#include <QFont>
#include <QHeaderView>
#include <QIcon>
#include <QLabel>
#include <QLineEdit>
#include <QLocale>
#include <QSignalSpy>
#include <QTableView>
#include <QTreeView>
#include <QtTest>

#include <algorithm>


namespace mapi::test_agents {

using namespace mapi;
using namespace mapi::ui;

constexpr qint64 kStartMs = 1'800'000'000'000;
constexpr qint64 kLaterMs = kStartMs + 40'000; // past one 30 s health interval

inline AgentRecord agentRecord(const char *id, const char *name, const char *role, const char *state, const char *parent,
                        const char *session, const QStringList &scopes)
{
    AgentRecord r;
    r.id = QLatin1String(id);
    r.name = QString::fromUtf8(name);
    r.role = QLatin1String(role);
    r.state = QLatin1String(state);
    if (*parent)
        r.parentId = QLatin1String(parent);
    r.sessionId = QLatin1String(session);
    r.scopes = scopes;
    return r;
}

inline ScopeRecord scopeRecord(const char *id, const char *name, const char *parent)
{
    ScopeRecord r;
    r.id = QLatin1String(id);
    r.name = QLatin1String(name);
    if (*parent)
        r.parentId = QLatin1String(parent);
    return r;
}

inline ModelInput agentEvent(EventKind kind, const QString &agentId, qint64 timeMs, const QString &state = QString())
{
    EventInput input;
    input.event.kind = kind;
    input.event.agentId = agentId;
    input.event.timestampMs = timeMs;
    if (!state.isEmpty()) {
        AgentRecord r;
        r.id = agentId;
        r.state = state;
        input.event.agent = r;
    }
    input.receivedMs = timeMs;
    return input;
}

inline ModelInput membershipEvent(EventKind kind, const char *scopeId, const char *agentId, qint64 timeMs)
{
    EventInput input;
    input.event.kind = kind;
    input.event.scopeId = QLatin1String(scopeId);
    input.event.agentId = QLatin1String(agentId);
    input.event.timestampMs = timeMs;
    input.receivedMs = timeMs;
    return input;
}

// A message from `from` to `to` carrying a seed-convention payload (bare format).
inline ModelInput conventionMessage(const char *id, const char *from, const char *to, const Json &payload, qint64 timeMs)
{
    EventInput input;
    input.event.kind = EventKind::MessageSent;
    input.event.timestampMs = timeMs;
    MessageRecord message;
    message.id = QLatin1String(id);
    message.from = QLatin1String(from);
    message.to = Json(to);
    message.setPayload(payload);
    message.timestampMs = timeMs;
    input.event.message = message;
    input.receivedMs = timeMs;
    return input;
}

inline ModelInput scopeCreated(const char *id, const char *name, const char *parent, qint64 timeMs)
{
    EventInput input;
    input.event.kind = EventKind::ScopeCreated;
    input.event.scope = scopeRecord(id, name, parent);
    input.event.timestampMs = timeMs;
    input.receivedMs = timeMs;
    return input;
}

inline ModelInput scopesSnapshot(const std::vector<ScopeRecord> &scopes, qint64 timeMs)
{
    ScopesSnapshot snapshot;
    snapshot.data.scopes = scopes;
    snapshot.timeMs = timeMs;
    return snapshot;
}

inline ModelInput agentsSnapshot(const std::vector<AgentRecord> &agents, qint64 timeMs)
{
    AgentsSnapshot snapshot;
    snapshot.data.agents = agents;
    snapshot.timeMs = timeMs;
    snapshot.complete = false; // adds, never retires
    return snapshot;
}

inline const std::vector<ScopeRecord> &baseScopes()
{
    static const std::vector<ScopeRecord> scopes = {
        scopeRecord("s-project", "project", ""),
        scopeRecord("s-a", "squad-a", "s-project"),
        scopeRecord("s-b", "squad-b", "s-project"),
    };
    return scopes;
}

// Six agents, one per interesting case:
//   coordinator  healthy      worker-1  healthy, busy     worker-2  late (silent 40 s)
//   worker-10    failed       data helper  suspended      gone      departed (unregistered)
// worker-1 works on task t-42 (40 %) and reported 12345 tokens, $0.0123.
inline void fillSmallSystem(SystemStore &store)
{
    const QStringList project{QStringLiteral("s-project")}, a{QStringLiteral("s-a")}, b{QStringLiteral("s-b")};
    ModelInputs inputs;
    inputs.push_back(scopesSnapshot(baseScopes(), kStartMs));
    inputs.push_back(agentsSnapshot({agentRecord("a-coord", "coordinator", "coordinator", "idle", "", "sess-c", project),
                                     agentRecord("a-w1", "worker-1", "worker", "busy", "a-coord", "sess-1", a),
                                     agentRecord("a-w2", "worker-2", "worker", "idle", "a-coord", "sess-2", b),
                                     agentRecord("a-w10", "worker-10", "worker", "custom:failed", "a-coord", "sess-10", a),
                                     agentRecord("a-helper", "data helper", "subagent", "suspended", "a-w1", "sess-1", b),
                                     agentRecord("a-gone", "gone", "worker", "stopped", "a-coord", "sess-g", {})},
                                    kStartMs));
    inputs.push_back(agentEvent(EventKind::AgentStateChanged, QStringLiteral("a-coord"), kLaterMs, QStringLiteral("idle")));
    inputs.push_back(agentEvent(EventKind::AgentStateChanged, QStringLiteral("a-w1"), kLaterMs, QStringLiteral("busy")));
    inputs.push_back(agentEvent(EventKind::AgentUnregistered, QStringLiteral("a-gone"), kLaterMs));
    inputs.push_back(conventionMessage("m-1", "a-w1", "a-coord", {{"type", "TASK_ACCEPT"}, {"task_id", "t-42"}}, kLaterMs));
    inputs.push_back(conventionMessage("m-2", "a-w1", "a-coord",
                                       {{"type", "STATUS_UPDATE"},
                                        {"task_id", "t-42"},
                                        {"progress", 40},
                                        {"resource_usage", {{"tokens_used", 12345}, {"cost_usd", 0.0123}}}},
                                       kLaterMs));
    store.apply(inputs);
    store.advanceTime(kLaterMs);
    store.flushChanges();
}

inline QStringList namesMatching(const AgentFilter &filter, const SystemStore &store)
{
    QStringList names;
    for (const Agent &agent : store.agents())
        if (filter.matches(agent, store))
            names << agent.name;
    names.sort();
    return names;
}

inline QStringList column(const QAbstractItemModel *model, int col, int role = Qt::DisplayRole)
{
    QStringList out;
    for (int row = 0; row < model->rowCount(); ++row)
        out << model->index(row, col).data(role).toString();
    return out;
}

inline QPoint rowCenter(QTableView *view, int row)
{
    return view->visualRect(view->model()->index(row, AgentTableModel::NameColumn)).center();
}

// "name[child,child…]" for a tree, to compare structures in one QCOMPARE.
inline QString treeShape(const QAbstractItemModel *model, const QModelIndex &parent = QModelIndex())
{
    QStringList parts;
    for (int row = 0; row < model->rowCount(parent); ++row) {
        const QModelIndex index = model->index(row, 0, parent);
        QString part = index.data(ScopeTreeModel::IdRole).toString();
        if (model->rowCount(index) > 0)
            part += QLatin1Char('[') + treeShape(model, index) + QLatin1Char(']');
        parts << part;
    }
    return parts.join(QLatin1Char(','));
}

} // namespace mapi::test_agents
