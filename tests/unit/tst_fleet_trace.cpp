// The realistic large system (tools/fleet-trace): what issue 44's views are tried on must be what
// it says it is — distinct names in a tree, a scope per team, traffic that stays mostly within a
// team, and the two incidents showing in the model and the detectors at the end — and the same
// options must give the same file.
#include "FleetTrace.h"
#include "TestSupport.h"
#include "alerts/AlertEngine.h"
#include "model/SystemStore.h"
#include "trace/TraceLoader.h"

#include <QFile>
#include <QSet>
#include <QTemporaryDir>

using namespace mapi;

class TstFleetTrace : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void aBelievableTreeWithTwoIncidents()
    {
        QTemporaryDir dir;
        fleet::FleetOptions options;
        options.agents = 1000;
        const QString path = dir.filePath(QStringLiteral("fleet.jsonl.zst"));
        const auto written = fleet::writeFleetTrace(path, options);
        QVERIFY2(written.ok(), qPrintable(written.error()));
        QCOMPARE(written->agents, 1000);
        QVERIFY(written->teams >= 5);

        SystemStore store;
        TraceLoadOptions load;
        load.readerThread = false;
        const TraceLoadResult r = loadTraceInto(store, path, load);
        QVERIFY2(r.ok, qPrintable(r.error));
        store.advanceTime(r.lastTimeMs);
        QCOMPARE(int(store.agents().size()), 1000);

        // Distinct names; a tree: coordinator → leads → workers → sub-agents, by role and parent.
        QSet<QString> names;
        QHash<QString, const Agent *> byId;
        for (const Agent &a : store.agents()) {
            names.insert(a.name);
            byId.insert(a.id, &a);
        }
        QCOMPARE(int(names.size()), 1000);
        const QHash<QString, QString> parentRole{{QStringLiteral("lead"), QStringLiteral("coordinator")},
                                                 {QStringLiteral("worker"), QStringLiteral("lead")},
                                                 {QStringLiteral("subagent"), QStringLiteral("worker")}};
        int subagents = 0;
        for (const Agent &a : store.agents()) {
            if (a.role == QLatin1String("coordinator")) {
                QVERIFY(a.parentId.isEmpty());
                continue;
            }
            const Agent *parent = byId.value(a.parentId);
            QVERIFY2(parent, qPrintable(a.name));
            QCOMPARE(parent->role, parentRole.value(a.role));
            QVERIFY2(a.name.startsWith(parent->name.section(QLatin1Char('-'), 0, -2)) || a.role == QLatin1String("lead"), qPrintable(a.name));
            subagents += a.role == QLatin1String("subagent");
        }
        QVERIFY(subagents > 500); // most of a team is sub-agents, as in the demo system

        // A scope per team (and "fleet"): every agent but the coordinator is in its team's.
        QHash<QString, QString> teamOf; // agent id → its team scope's name
        int teamScopes = 0;
        for (const Scope &s : store.scopes()) {
            if (!s.name.startsWith(QLatin1String("team/")))
                continue;
            ++teamScopes;
            for (const QString &id : toStringList(s.members)) {
                QVERIFY2(!teamOf.contains(id), qPrintable(id)); // one team each
                teamOf.insert(id, s.name);
            }
        }
        QCOMPARE(teamScopes, written->teams);
        QCOMPARE(int(teamOf.size()), 999);

        // Locality: of the messages between two teams' agents, few cross.
        qint64 within = 0, across = 0;
        const MessageLog &messages = store.messages();
        for (size_t row = messages.firstRow(); row < messages.size(); ++row) {
            const Message m = messages[row];
            const QString from = teamOf.value(m.fromAgentId);
            for (const QString &to : m.toAgentIds)
                if (!from.isEmpty() && teamOf.contains(to))
                    (teamOf.value(to) == from ? within : across) += 1;
        }
        QVERIFY2(across > 0 && across * 50 < within, qPrintable(QStringLiteral("%1 across, %2 within").arg(across).arg(within)));
        QCOMPARE(across, written->crossTeamMessages);

        // The incidents, at the end: the silent team is unresponsive, the failing one failed.
        int unresponsive = 0, failed = 0;
        for (const Agent &a : store.agents()) {
            if (a.health == Health::Unresponsive) {
                ++unresponsive;
                QCOMPARE(teamOf.value(a.id), QStringLiteral("team/") + written->silentTeam);
            } else if (a.health == Health::Failed) {
                ++failed;
                QCOMPARE(teamOf.value(a.id), QStringLiteral("team/") + written->failingTeam);
            }
        }
        QCOMPARE(unresponsive, written->silentAgents);
        QCOMPARE(failed, written->failedAgents);
        QVERIFY(written->silentAgents >= 100 && written->failedAgents >= 50);
        // The detectors see them: one alert per agent, for now (issue 44 groups them).
        AlertEngine engine;
        int unresponsiveAlerts = 0, failedAlerts = 0;
        do {
            for (const AlertChange &c : engine.update(store)) {
                unresponsiveAlerts += c.raised && c.alert.kind == AlertKind::Unresponsive;
                failedAlerts += c.raised && c.alert.kind == AlertKind::Failed;
            }
        } while (engine.isBehind(store));
        QCOMPARE(unresponsiveAlerts, written->silentAgents);
        QCOMPARE(failedAlerts, written->failedAgents);
    }

    void theSameOptionsGiveTheSameFile()
    {
        QTemporaryDir dir;
        fleet::FleetOptions options;
        options.agents = 300;
        options.durationMs = 120000;
        const QString a = dir.filePath(QStringLiteral("a.jsonl")), b = dir.filePath(QStringLiteral("b.jsonl")),
                      c = dir.filePath(QStringLiteral("c.jsonl"));
        QVERIFY(fleet::writeFleetTrace(a, options).ok());
        QVERIFY(fleet::writeFleetTrace(b, options).ok());
        options.seed = 2;
        QVERIFY(fleet::writeFleetTrace(c, options).ok());
        const auto read = [](const QString &path) {
            QFile f(path);
            return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
        };
        QVERIFY(!read(a).isEmpty());
        QCOMPARE(read(a), read(b));
        QVERIFY(read(a) != read(c));
        // A place that cannot be written is an error, not a crash.
        const auto refused = fleet::writeFleetTrace(dir.filePath(QStringLiteral("missing/dir/x.jsonl")), options);
        QVERIFY(!refused.ok());
        QVERIFY(!refused.error().isEmpty());
    }
};

QTEST_GUILESS_MAIN(TstFleetTrace)
#include "tst_fleet_trace.moc"
