// The official MAPServer with its extensions on (tools/demo-system/extensions-demo.mjs: mail,
// workspace, trajectory handlers wired in by the host, an ACP stream): the CLI records it, and
// the model is checked against what the server itself answers (mail/list, mail/get,
// mail/turns/list, trajectory/list, as reported by the program's own raw client):
//   - every conversation, also the one made before the console connected (history), with its
//     subject, status, threads and turns in order;
//   - participants by agent: one row per agent, by name where the console saw the agent's
//     session (MAPServer names creators and joiners by session id);
//   - every checkpoint with its label, on its agent;
//   - the same after replaying the recording (the history pages are in the trace).
#include "DemoSystem.h"

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSet>
#include <QTemporaryDir>
#include <QTest>

using namespace mapi;
using namespace mapi::test;

namespace {

const QString kDemo = QStringLiteral(MAPI_SOURCE_DIR "/tools/demo-system/extensions-demo.mjs");

QString str(const Json &j, const char *key)
{
    const Json *v = jsonChild(j, key);
    return v && v->is_string() ? QString::fromStdString(v->get<std::string>()) : QString();
}

const Json *conversationIn(const Json &state, const QString &id)
{
    for (const Json &c : state["conversations"])
        if (str(c, "id") == id)
            return &c;
    return nullptr;
}

} // namespace

class ExtensionsTest : public QObject
{
    Q_OBJECT

private slots:
    void conversationsAndCheckpointsAreTheServers()
    {
        QTemporaryDir dir;
        Launcher demo;
        QVERIFY(demo.start(QStringLiteral(MAPI_NODE), kDemo,
                           {QStringLiteral("--port"), QString::number(freePort()), QStringLiteral("--wait-clients"), QStringLiteral("1"),
                            QStringLiteral("--duration"), QStringLiteral("90")}));
        const QJsonObject ready = demo.waitFor(QStringLiteral("ready"), 30000);
        QVERIFY(!ready.isEmpty());
        const QString trace = dir.filePath(QStringLiteral("extensions.jsonl"));
        RunningCli record;
        record.start({QStringLiteral("record"), QStringLiteral("--url"), ready.value(QStringLiteral("url")).toString(),
                      QStringLiteral("--duration"), QStringLiteral("10"), QStringLiteral("--out"), trace});
        const QJsonObject done = demo.waitFor(QStringLiteral("trafficDone"), 60000);
        QVERIFY(!done.isEmpty());
        QVERIFY2(done.value(QStringLiteral("errors")).toArray().isEmpty(),
                 QJsonDocument(done.value(QStringLiteral("errors")).toArray()).toJson().constData());
        const CliResult recorded = record.finish(60000);
        QVERIFY2(recorded.exitCode == 0, recorded.err.constData());

        const QJsonObject server = done.value(QStringLiteral("server")).toObject();
        const QJsonObject agents = done.value(QStringLiteral("agents")).toObject();
        QHash<QString, QString> agentName; // agent id -> name
        for (auto it = agents.begin(); it != agents.end(); ++it)
            agentName.insert(it.value().toObject().value(QStringLiteral("id")).toString(), it.key());
        const QString carolSession = agents.value(QStringLiteral("carol")).toObject().value(QStringLiteral("sessionId")).toString();

        const CliResult replayed = runCli({QStringLiteral("state"), QStringLiteral("--trace"), trace});
        QCOMPARE(replayed.exitCode, 0);
        const Json model = replayed.json();
        QVERIFY(model.is_object());
        QVERIFY2(model["missing"].empty(), model["missing"].dump().c_str());
        // Nothing of mail or trajectory is an unknown event any more.
        for (const Json &u : model["unknownEventTypes"])
            QVERIFY2(!QString::fromStdString(u.value("type", std::string())).startsWith(QLatin1String("mail.")), u.dump().c_str());

        // Conversations: every one the server lists, the history-only one included.
        const QJsonArray listed = server.value(QStringLiteral("mailList")).toObject().value(QStringLiteral("conversations")).toArray();
        QCOMPARE(listed.size(), 3);
        QCOMPARE(qsizetype(model["conversations"].size()), listed.size());
        const QJsonObject details = server.value(QStringLiteral("conversations")).toObject();
        int turnsCompared = 0;
        for (const QJsonValue &value : listed) {
            const QJsonObject c = value.toObject();
            const QString id = c.value(QStringLiteral("id")).toString();
            const Json *mine = conversationIn(model, id);
            QVERIFY2(mine, qPrintable(id));
            QCOMPARE(str(*mine, "subject"), c.value(QStringLiteral("subject")).toString());
            QCOMPARE(str(*mine, "type"), c.value(QStringLiteral("type")).toString());
            QCOMPARE(str(*mine, "status"), c.value(QStringLiteral("status")).toString());
            const QJsonObject detail = details.value(id).toObject();
            // Turns: the server's, in the server's time order, each by its participant's name
            // where the console knows whose session it is.
            const QJsonArray turns = detail.value(QStringLiteral("turns")).toObject().value(QStringLiteral("turns")).toArray();
            QCOMPARE(qsizetype((*mine)["turns"].size()), turns.size());
            for (qsizetype i = 0; i < turns.size(); ++i) {
                const QJsonObject t = turns[i].toObject();
                const Json &m = (*mine)["turns"][size_t(i)];
                QCOMPARE(str(m, "id"), t.value(QStringLiteral("id")).toString());
                QCOMPARE(str(m, "contentType"), t.value(QStringLiteral("contentType")).toString());
                const QJsonValue text = t.value(QStringLiteral("content")).toObject().value(QStringLiteral("text"));
                if (text.isString())
                    QCOMPARE(str(m, "text"), text.toString());
                const QString participant = t.value(QStringLiteral("participant")).toString();
                if (agentName.contains(participant) || participant == carolSession)
                    QCOMPARE(str(m, "participant"),
                             participant == carolSession ? QStringLiteral("carol") : agentName.value(participant));
                QCOMPARE(str(m, "inReplyTo"), t.value(QStringLiteral("inReplyTo")).toString());
                QCOMPARE(str(m, "threadId"), t.value(QStringLiteral("threadId")).toString());
                ++turnsCompared;
            }
            const QJsonArray threads = detail.value(QStringLiteral("threads")).toObject().value(QStringLiteral("threads")).toArray();
            QCOMPARE(qsizetype((*mine)["threads"].size()), threads.size());
            for (qsizetype i = 0; i < threads.size(); ++i)
                QCOMPARE(str((*mine)["threads"][size_t(i)], "subject"), threads[i].toObject().value(QStringLiteral("subject")).toString());
            // Participants by agent: never more rows than the server's entries, one per agent,
            // and carol (whose session the console saw register her) by name, once.
            const QJsonArray participants = detail.value(QStringLiteral("get")).toObject().value(QStringLiteral("participants")).toArray();
            QVERIFY(qsizetype((*mine)["participants"].size()) <= participants.size());
            QSet<QString> agentRows;
            int carolRows = 0;
            for (const Json &p : (*mine)["participants"]) {
                const QString agentId = str(p, "agentId");
                if (!agentId.isEmpty()) {
                    QVERIFY2(!agentRows.contains(agentId), qPrintable(agentId + u" twice in " + id));
                    agentRows.insert(agentId);
                }
                carolRows += str(p, "name") == QLatin1String("carol");
            }
            bool carolTookPart = false;
            for (const QJsonValue &p : participants) {
                const QString pid = p.toObject().value(QStringLiteral("id")).toString();
                carolTookPart = carolTookPart || pid == carolSession || agentName.value(pid) == QLatin1String("carol");
            }
            QCOMPARE(carolRows, carolTookPart ? 1 : 0);
        }
        QVERIFY(turnsCompared >= 12);

        // Checkpoints: every one the server lists, on its agent, with its label.
        const QJsonArray checkpoints = server.value(QStringLiteral("trajectoryList")).toObject().value(QStringLiteral("checkpoints")).toArray();
        QCOMPARE(checkpoints.size(), 4);
        QCOMPARE(qsizetype(model["checkpoints"].size()), checkpoints.size());
        for (const QJsonValue &value : checkpoints) {
            const QJsonObject c = value.toObject();
            bool found = false;
            for (const Json &m : model["checkpoints"])
                if (str(m, "id") == c.value(QStringLiteral("id")).toString()) {
                    found = true;
                    QCOMPARE(str(m, "label"), c.value(QStringLiteral("label")).toString());
                    QCOMPARE(str(m, "agentId"), c.value(QStringLiteral("agentId")).toString());
                    QCOMPARE(str(m, "agent"), agentName.value(c.value(QStringLiteral("agentId")).toString()));
                }
            QVERIFY2(found, qPrintable(c.value(QStringLiteral("id")).toString()));
        }

        // ACP: the stream the IDE opened, its requests each paired with its response, and the
        // agent's updates (message chunks, a tool call) in order.
        const QJsonArray streams = server.value(QStringLiteral("acpStreamIds")).toArray();
        QCOMPARE(streams.size(), 1);
        const QJsonObject stream = streams[0].toObject();
        QCOMPARE(qsizetype(model["acpStreams"].size()), qsizetype(1));
        const Json &mine = model["acpStreams"][0];
        QCOMPARE(str(mine, "streamId"), stream.value(QStringLiteral("streamId")).toString());
        QCOMPARE(str(mine, "agent"), QStringLiteral("bob"));
        const int requests = stream.value(QStringLiteral("clientToAgent")).toInt();
        const int fromAgent = stream.value(QStringLiteral("agentToClient")).toInt();
        QCOMPARE(int(mine["exchanges"].size()), requests);
        QStringList methods;
        for (const Json &x : mine["exchanges"]) {
            QVERIFY2(x["answered"].get<bool>(), x.dump().c_str());
            methods << str(x, "method");
        }
        QCOMPARE(methods, (QStringList{QStringLiteral("initialize"), QStringLiteral("session/new"), QStringLiteral("session/prompt")}));
        QVERIFY(!str(mine["exchanges"][2], "text").isEmpty()); // the prompt, readable
        QCOMPARE(int(mine["updates"].size()), fromAgent - requests);
        bool toolCall = false;
        for (const Json &u : mine["updates"])
            toolCall = toolCall || str(u, "update") == QLatin1String("tool_call");
        QVERIFY(toolCall);
        QVERIFY(!str(mine, "transcript").isEmpty());

        // Exported from the recording: a CSV row per turn, per checkpoint, per ACP request and update.
        const auto csvRows = [&](const char *table) {
            const QString out = dir.filePath(QStringLiteral("%1.csv").arg(QLatin1String(table)));
            const CliResult r = runCli({QStringLiteral("convert"), QStringLiteral("--trace"), trace, QStringLiteral("--out"), out,
                                        QStringLiteral("--table"), QLatin1String(table)});
            if (r.exitCode != 0)
                qWarning("convert --table %s: %s", table, r.err.constData());
            QFile f(out);
            return f.open(QIODevice::ReadOnly) ? int(f.readAll().count("\r\n")) - 1 : -1; // without the header
        };
        QCOMPARE(csvRows("turns"), turnsCompared);
        QCOMPARE(csvRows("checkpoints"), int(checkpoints.size()));
        QCOMPARE(csvRows("acp"), fromAgent); // requests (each with its response) + updates

        // And as OpenTelemetry: a span per conversation with a turn event per turn, a trajectory
        // span per agent with a checkpoint event per checkpoint.
        const QString otlp = dir.filePath(QStringLiteral("extensions.otlp.json"));
        const CliResult exported = runCli({QStringLiteral("convert"), QStringLiteral("--trace"), trace, QStringLiteral("--out"), otlp});
        QVERIFY2(exported.exitCode == 0, exported.err.constData());
        QFile otlpFile(otlp);
        QVERIFY(otlpFile.open(QIODevice::ReadOnly));
        int conversationSpans = 0, turnEvents = 0, checkpointEvents = 0;
        for (const QByteArray &line : otlpFile.readAll().split('\n')) {
            for (const QJsonValue &rs : QJsonDocument::fromJson(line).object().value(QStringLiteral("resourceSpans")).toArray())
                for (const QJsonValue &ss : rs.toObject().value(QStringLiteral("scopeSpans")).toArray())
                    for (const QJsonValue &span : ss.toObject().value(QStringLiteral("spans")).toArray()) {
                        conversationSpans += span.toObject().value(QStringLiteral("name")).toString().startsWith(QLatin1String("conversation "));
                        for (const QJsonValue &e : span.toObject().value(QStringLiteral("events")).toArray()) {
                            const QString name = e.toObject().value(QStringLiteral("name")).toString();
                            turnEvents += name == QLatin1String("map.conversation.turn");
                            checkpointEvents += name == QLatin1String("map.trajectory.checkpoint");
                        }
                    }
        }
        // And compared like the rest: a run against itself is equal, its counts of turns,
        // checkpoints and ACP requests among the compared ones.
        const CliResult diff = runCli({QStringLiteral("diff"), trace, trace});
        QCOMPARE(diff.exitCode, 0);
        const Json deltas = diff.json()["deltas"];
        QCOMPARE(deltas["turns"]["a"].get<int>(), turnsCompared);
        QCOMPARE(deltas["checkpoints"]["a"].get<int>(), int(checkpoints.size()));
        QCOMPARE(deltas["acpRequests"]["a"].get<int>(), requests);
        QCOMPARE(conversationSpans, int(listed.size()));
        QCOMPARE(turnEvents, turnsCompared);
        QCOMPARE(checkpointEvents, int(checkpoints.size()));
    }
};

QTEST_GUILESS_MAIN(ExtensionsTest)
#include "tst_extensions.moc"
