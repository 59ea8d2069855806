// Lone UTF-16 surrogates (issue 42, item 4): JavaScript writes a string cut inside an emoji as a
// lone "\ud83d", which strict JSON parsers reject. The frame, trace line or imported log line is
// used with U+FFFD in its place, counted as a "repaired" problem, and no event is lost (no false
// gap): live (both parsers), in the inspector's trace format, in raw captures and in seed logs.
#include "TestSupport.h"

#include "protocol/SimdJsonParser.h"
#include "protocol/Utf16Repair.h"
#include "trace/TraceLoader.h"

#include <QTemporaryDir>

using namespace mapi;
using mapi_test::q;

namespace {

QByteArray repaired(QByteArray text, int *count = nullptr)
{
    const int n = repairLoneSurrogates(text);
    if (count)
        *count = n;
    return text;
}

// Two agent.registered events of one subscription; the second one's name is cut inside an emoji.
QList<QByteArray> framesWithACutEmoji()
{
    return {
        "{\"jsonrpc\":\"2.0\",\"method\":\"map/event\",\"params\":{\"subscriptionId\":\"s\",\"sequenceNumber\":1,\"eventId\":\"e1\",\"timestamp\":1000,\"event\":{\"id\":\"e1\",\"type\":\"agent.registered\",\"timestamp\":1000,\"data\":{\"agent\":{\"id\":\"alpha\",\"name\":\"alpha\",\"state\":\"idle\"}}}}}",
        "{\"jsonrpc\":\"2.0\",\"method\":\"map/event\",\"params\":{\"subscriptionId\":\"s\",\"sequenceNumber\":2,\"eventId\":\"e2\",\"timestamp\":1001,\"event\":{\"id\":\"e2\",\"type\":\"agent.registered\",\"timestamp\":1001,\"data\":{\"agent\":{\"id\":\"beta\",\"name\":\"beta \\ud83d\",\"state\":\"idle\"}}}}}",
        "{\"jsonrpc\":\"2.0\",\"method\":\"map/event\",\"params\":{\"subscriptionId\":\"s\",\"sequenceNumber\":3,\"eventId\":\"e3\",\"timestamp\":1002,\"event\":{\"id\":\"e3\",\"type\":\"agent.registered\",\"timestamp\":1002,\"data\":{\"agent\":{\"id\":\"gamma\",\"name\":\"gamma \\ud83d\\ude00\",\"state\":\"idle\"}}}}}",
    };
}

void expectEveryAgentAndNoGap(const SystemStore &store)
{
    QVERIFY(store.agent(QStringLiteral("alpha")));
    QVERIFY(store.agent(QStringLiteral("beta")));
    QCOMPARE(store.agent(QStringLiteral("beta"))->name, QStringLiteral("beta \uFFFD"));
    QCOMPARE(store.agent(QStringLiteral("gamma"))->name, QString(QStringLiteral("gamma ") + QString::fromUcs4(U"\U0001F600")));
    QCOMPARE(store.counters().gaps, qint64(0));
    int repairedRows = 0;
    for (const ProtocolProblem &p : store.problems()) {
        QVERIFY2(p.kind == ProblemKind::Repaired, qPrintable(p.detail));
        ++repairedRows;
    }
    QCOMPARE(repairedRows, 1);
}

} // namespace

class SurrogatesTest : public QObject
{
    Q_OBJECT

private slots:
    void loneSurrogatesAreReplacedPairsKept();
    void liveFramesKeepEveryEvent_data();
    void liveFramesKeepEveryEvent();
    // The same frames in a trace of our own, in a raw capture, and one cut name in a seed log.
    void tracesKeepEveryEvent();
};

void SurrogatesTest::loneSurrogatesAreReplacedPairsKept()
{
    int n = 0;
    QCOMPARE(repaired("{\"a\":\"x\\ud83d\"}", &n), QByteArray("{\"a\":\"x\\ufffd\"}"));
    QCOMPARE(n, 1);
    QCOMPARE(repaired("{\"a\":\"\\uD83D y\"}", &n), QByteArray("{\"a\":\"\\ufffd y\"}")); // upper case
    QCOMPARE(repaired("{\"a\":\"\\ude00\"}", &n), QByteArray("{\"a\":\"\\ufffd\"}"));     // a lone low one
    QCOMPARE(repaired("{\"a\":\"\\ud83d\\ud83d\\ude00\"}", &n), QByteArray("{\"a\":\"\\ufffd\\ud83d\\ude00\"}"));
    QCOMPARE(n, 1);
    QCOMPARE(repaired("{\"a\":\"\\ud83d\\ude00 \\u00e9 \\\\ud83d\"}", &n), QByteArray("{\"a\":\"\\ud83d\\ude00 \\u00e9 \\\\ud83d\"}"));
    QCOMPARE(n, 0); // a pair, a BMP character, an escaped backslash followed by text
    QCOMPARE(repaired("{\"a\":\"\\\\\\ud83d\"}", &n), QByteArray("{\"a\":\"\\\\\\ufffd\"}"));
    QCOMPARE(n, 1); // an escaped backslash, then a real escape
    QCOMPARE(repaired("\"\\ud83", &n), QByteArray("\"\\ud83")); // cut short: left as it is
    QCOMPARE(n, 0);
}

void SurrogatesTest::liveFramesKeepEveryEvent_data()
{
    QTest::addColumn<bool>("simdjson");
    QTest::newRow("nlohmann") << false;
    QTest::newRow("simdjson") << true;
}

void SurrogatesTest::liveFramesKeepEveryEvent()
{
    QFETCH(bool, simdjson);
    ProtocolPipeline pipeline(CodecLimits{}, simdjson ? SimdJsonParser::instance() : std::shared_ptr<const JsonParser>());
    SystemStore store;
    qint64 t = 1000;
    store.apply(pipeline.connectionOpened(QStringLiteral("ws://test"), t));
    for (const QByteArray &frame : framesWithACutEmoji())
        store.apply(pipeline.frameReceived(frame, t += 10).inputs);
    store.flushChanges();
    expectEveryAgentAndNoGap(store);
}

void SurrogatesTest::tracesKeepEveryEvent()
{
    QTemporaryDir dir;
    QByteArray own = "{\"format\":\"map-inspector-trace\",\"version\":1,\"url\":\"ws://test\",\"startedAt\":1000}"
                     "\n";
    QByteArray capture;
    qint64 t = 1000;
    for (const QByteArray &frame : framesWithACutEmoji()) {
        own += "{\"t\":" + QByteArray::number(t += 10) + ",\"dir\":\"recv\",\"conn\":1,\"frame\":" + frame + "}\n";
        capture += "{\"seq\":1,\"dir\":\"recv\",\"t\":" + QByteArray::number(t) + ",\"raw\":"
            + mapi_test::dump(Json(frame.toStdString())) + "}\n";
    }
    for (const auto &[name, text] : {std::pair<const char *, QByteArray>{"own.jsonl", own}, {"capture.ndjson", capture}}) {
        const QString path = dir.filePath(QString::fromLatin1(name));
        QFile f(path);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(text);
        f.close();
        SystemStore store;
        const TraceLoadResult r = loadTraceInto(store, path, TraceLoadOptions());
        QVERIFY2(r.ok, qPrintable(r.error));
        QVERIFY2(r.stats.badLines.isEmpty(), name);
        store.flushChanges();
        expectEveryAgentAndNoGap(store);
    }
    // A seed-format log (003) whose message text is cut: the line is read, not skipped.
    const QString seed = dir.filePath(QStringLiteral("seed.jsonl"));
    QFile f(seed);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write("{\"id\":\"m1\",\"from\":\"a\",\"to\":\"b\",\"type\":\"STATUS_UPDATE\",\"timestamp\":\"2026-01-01T00:00:00Z\",\"payload\":{\"text\":\"ok\"}}"
            "\n"
            "{\"id\":\"m2\",\"from\":\"b\",\"to\":\"a\",\"type\":\"STATUS_UPDATE\",\"timestamp\":\"2026-01-01T00:00:01Z\",\"payload\":{\"text\":\"cut \\ud83d\"}}"
            "\n");
    f.close();
    SystemStore store;
    const TraceLoadResult r = loadTraceInto(store, seed, TraceLoadOptions());
    QVERIFY2(r.ok, qPrintable(r.error));
    QVERIFY(r.stats.badLines.isEmpty());
    QCOMPARE(store.counters().messages, qint64(2));
}

QTEST_GUILESS_MAIN(SurrogatesTest)
#include "tst_surrogates.moc"
