// OpenTelemetry against real implementations (tools/otel-check/otel-check.mjs, Node.js):
//   - spans made by the official OpenTelemetry JS SDK and serialised by its OTLP/JSON
//     serializer open as agents, tasks and usage (through the CLI, as an operator would);
//   - this inspector's export (of the demo system's sample trace, and of the SDK's spans after
//     import) is read through the OTLP protobuf definitions without an error or a lost field.
#include "model/SystemStore.h"
#include "trace/Otlp.h"
#include "trace/TraceLoader.h"

#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

using namespace mapi;

// QCOMPARE cannot print nlohmann::json here (its toString lives in the unit tests' support).
#define JSON_EQ(actual, expected) QVERIFY2((actual) == (expected), ((actual).dump() + " != " + Json(expected).dump()).c_str())

namespace {

const QString kCheckScript = QStringLiteral(MAPI_SOURCE_DIR "/tools/otel-check/otel-check.mjs");

struct Run
{
    int exitCode = -1;
    QByteArray out;
    QByteArray err;
};

Run run(const QString &program, const QStringList &args)
{
    QProcess p;
    p.start(program, args);
    Run r;
    if (!p.waitForFinished(120000)) {
        p.kill();
        p.waitForFinished();
        r.err = "timed out or did not start: " + p.errorString().toUtf8();
        return r;
    }
    r.exitCode = p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1;
    r.out = p.readAllStandardOutput();
    r.err = p.readAllStandardError();
    return r;
}

Run node(const QStringList &args)
{
    return run(QStringLiteral(MAPI_NODE), QStringList{kCheckScript} + args);
}

Json lastJsonLine(const QByteArray &out)
{
    const QList<QByteArray> lines = out.trimmed().split('\n');
    return lines.isEmpty() ? Json() : Json::parse(lines.last().toStdString(), nullptr, false);
}

} // namespace

class TestOtelInterop : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void sdkSpansOpenAsAgentsTasksAndUsage()
    {
        QTemporaryDir dir;
        const QString spans = dir.filePath(QStringLiteral("sdk.otlp.json"));
        const Run made = node({QStringLiteral("sdk-spans"), spans});
        QVERIFY2(made.exitCode == 0, made.err.constData());
        QCOMPARE(lastJsonLine(made.out).value("spans", 0), 11);

        const Run state = run(QStringLiteral(MAPI_CLI_PATH), {QStringLiteral("state"), QStringLiteral("--trace"), spans});
        QVERIFY2(state.exitCode == 0, state.err.constData());
        const Json model = Json::parse(state.out.toStdString(), nullptr, false);
        QVERIFY(model.is_object());
        JSON_EQ(model["trace"]["format"], Json("otlp"));
        std::map<std::string, Json> agents;
        for (const Json &a : model["agents"])
            agents[a["id"].get<std::string>()] = a;
        QCOMPARE(agents.size(), size_t(5)); // the service, the planner and the three it invoked
        JSON_EQ(agents["research-crew"]["role"], Json("service"));
        JSON_EQ(agents["planner-1"]["name"], Json("planner"));
        JSON_EQ(agents["planner-1"]["parentId"], Json("research-crew"));
        for (const char *child : {"researcher-1", "fetcher-1", "writer-1"})
            JSON_EQ(agents[child]["parentId"], Json("planner-1"));
        // Usage: the sum of each agent's own model calls (input/output as the SDK recorded them).
        JSON_EQ(agents["planner-1"]["inputTokens"], Json(1200));
        JSON_EQ(agents["planner-1"]["outputTokens"], Json(300));
        JSON_EQ(agents["researcher-1"]["inputTokens"], Json(2800));
        JSON_EQ(agents["researcher-1"]["outputTokens"], Json(700));
        JSON_EQ(agents["writer-1"]["tokensUsed"], Json(2400));
        QVERIFY(!agents["fetcher-1"].contains("tokensUsed"));

        SystemStore store;
        const TraceLoadResult r = loadTraceInto(store, spans);
        QVERIFY2(r.ok, qPrintable(r.error));
        QCOMPARE(store.tasks().size(), size_t(4));
        int failed = 0, completed = 0;
        for (const Task &t : store.tasks()) {
            failed += t.status == QLatin1String("failed");
            completed += t.status == QLatin1String("completed");
        }
        QCOMPARE(failed, 1);
        QCOMPARE(completed, 3);

        // The imported SDK run exported again reads through the protobuf definitions.
        const QString again = dir.filePath(QStringLiteral("again.otlp.json"));
        QString error;
        QVERIFY2(writeOtlpJson(store, again, {}, nullptr, &error), qPrintable(error));
        const Run valid = node({QStringLiteral("validate"), again});
        QVERIFY2(valid.exitCode == 0, QByteArray(valid.out + valid.err).constData());
    }

    void exportReadsThroughTheProtobufDefinitions()
    {
        QTemporaryDir dir;
        const QString out = dir.filePath(QStringLiteral("sample.otlp.json"));
        const Run convert = run(QStringLiteral(MAPI_CLI_PATH), {QStringLiteral("convert"), QStringLiteral("--trace"),
                                                               QStringLiteral(MAPI_SOURCE_DIR "/resources/sample/demo-system.jsonl.zst"),
                                                               QStringLiteral("--out"), out});
        QVERIFY2(convert.exitCode == 0, convert.err.constData());
        const Run valid = node({QStringLiteral("validate"), out});
        QVERIFY2(valid.exitCode == 0, QByteArray(valid.out + valid.err).constData());
        const Json summary = lastJsonLine(valid.out);
        SystemStore store;
        QVERIFY(loadTraceInto(store, QStringLiteral(MAPI_SOURCE_DIR "/resources/sample/demo-system.jsonl.zst")).ok);
        QCOMPARE(summary.value("spans", 0), int(store.agents().size() + store.tasks().size()));
        QVERIFY(summary.value("events", 0) >= int(store.messages().size()));

        // The validator does catch what the mapping forbids: an enum by name, a field the
        // definitions lack.
        QFile f(out);
        QVERIFY(f.open(QIODevice::ReadOnly));
        QByteArray broken = f.readAll();
        f.close();
        broken.replace("\"kind\":1", "\"kind\":\"SPAN_KIND_INTERNAL\"");
        broken.replace("\"startTimeUnixNano\"", "\"startTimeUnixNanos\"");
        const QString bad = dir.filePath(QStringLiteral("bad.otlp.json"));
        QFile b(bad);
        QVERIFY(b.open(QIODevice::WriteOnly));
        b.write(broken);
        b.close();
        const Run invalid = node({QStringLiteral("validate"), bad});
        QCOMPARE(invalid.exitCode, 1);
        QVERIFY(invalid.out.contains("enum not a number"));
        QVERIFY(invalid.out.contains("no such field"));
    }
};

QTEST_GUILESS_MAIN(TestOtelInterop)
#include "tst_otel_interop.moc"
