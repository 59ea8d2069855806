// Traces: writing and reading back (including damaged files), and replay giving the same model
// as live processing of the same frames. The redaction of frames: tst_frame_redaction.
#include "TestSupport.h"
#include "TraceReplayer.h"

#include "model/StateJson.h"
#include "trace/Trace.h"
#include "trace/TraceTimeline.h"

#include <QJsonArray>
#include <QRandomGenerator>
#include <QTemporaryDir>
#include <QThread>
#include <QElapsedTimer>

using namespace mapi;
using mapi_test::CaptureRecord;
using mapi_test::dump;
using mapi_test::s;

namespace {

QString writeFile(const QTemporaryDir &dir, const QString &name, const QByteArray &content)
{
    QFile f(dir.filePath(name));
    if (!f.open(QIODevice::WriteOnly))
        return {};
    f.write(content);
    return f.fileName();
}

QList<TraceRecord> readAll(const QString &path, TraceReadStats &stats, bool *ok = nullptr)
{
    QList<TraceRecord> out;
    QString error;
    const bool read = readTrace(path, [&](const TraceRecord &r) {
        out << r;
        return true;
    }, stats, &error);
    if (ok)
        *ok = read;
    return out;
}

} // namespace

class TestTrace : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase() { mapi_test::installWarningGuard(); }
    void init() { mapi_test::armWarningGuard(); }
    void cleanup() { MAPI_NO_WARNINGS(); }
    void cleanupTestCase() { MAPI_NO_WARNINGS(); }

    void writerAndReaderRoundTrip();
    void writerRedactsButReaderKeepsEverythingElse();
    void damagedLinesAreReportedByNumber();
    void framesAreWrittenAsJsonWhenTheyCanBe();
    void garbageBinaryFieldDoesNotThrow();
    void captureBinaryFrameKeepsItsText();
    void readerStopsWhenSinkSaysSo();
    void missingFileIsAnError();
    void replayEqualsLiveProcessing();
    void timelineGivesBackEveryRecord();
    void timelineMapsEventsToTheirRecords();
    void timelineCompressesWhatItsFileCannotGiveBack_data();
    void writerFlushesEverySecondEvenWithoutItsTimer();
    void timelineCompressesWhatItsFileCannotGiveBack();
};

void TestTrace::writerAndReaderRoundTrip()
{
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString path = dir.filePath(QStringLiteral("round.trace"));
    QByteArray binary;
    for (int i = 0; i < 256; ++i)
        binary.append(char(i));
    ActionUpdate action;
    action.step = ActionUpdate::Step::Fallback;
    action.timeMs = 1500;
    action.action.id = QStringLiteral("action-1");
    action.action.kind = ActionKind::Inject;
    action.action.agentId = QStringLiteral("a1");
    action.action.method = QStringLiteral("map/send");
    action.action.note = QStringLiteral("map/inject is not supported");
    action.action.params = {{"agentId", "a1"}, {"content", "hi"}};

    const QList<TraceRecord> written = {
        {1000, QStringLiteral("open"), 1, "ws://127.0.0.1:8080/client", false, Json()},
        {1001, QStringLiteral("send"), 1, mapi_test::requestFrame(1, QStringLiteral("map/connect"), {{"protocolVersion", 1}}), false, Json()},
        {1002, QStringLiteral("recv"), 1, R"({"jsonrpc":"2.0","id":1,"result":{"name":"ünïcødé — 🚀","text":"a\nb\t\"q\""}})", false, Json()},
        {1003, QStringLiteral("recv"), 1, binary, true, Json()},
        {1004, QStringLiteral("recv"), 1, "not json at all {", false, Json()},
        {1005, QStringLiteral("close"), 1, "socket closed (code 1006)", false, Json()},
        {1006, QStringLiteral("open"), 2, "ws://127.0.0.1:8080/client", false, Json()},
        {1500, QStringLiteral("action"), 2, QByteArray(), false, actionUpdateToJson(action)},
    };
    {
        TraceWriter writer;
        QString error;
        QVERIFY2(writer.open(path, QStringLiteral("ws://127.0.0.1:8080/client"), &error), qPrintable(error));
        for (const TraceRecord &r : written)
            writer.write(r);
        QCOMPARE(writer.recordsWritten(), qint64(written.size()));
        writer.close();
    }
    TraceReadStats stats;
    bool ok = false;
    const QList<TraceRecord> read = readAll(path, stats, &ok);
    QVERIFY(ok);
    QCOMPARE(stats.format, QStringLiteral("map-inspector-trace"));
    QCOMPARE(stats.lines, qint64(written.size() + 1)); // + header
    QCOMPARE(stats.records, qint64(written.size()));
    QVERIFY(stats.badLines.isEmpty());
    QCOMPARE(read.size(), written.size());
    for (int i = 0; i < written.size(); ++i) {
        QCOMPARE(read[i].timeMs, written[i].timeMs);
        QCOMPARE(read[i].dir, written[i].dir);
        QCOMPARE(read[i].connection, written[i].connection);
        QCOMPARE(read[i].binary, written[i].binary);
        if (written[i].dir != QLatin1String("action"))
            QCOMPARE(read[i].raw, written[i].raw);
    }
    const ActionUpdate back = actionUpdateFromJson(read.back().extra);
    QCOMPARE(int(back.step), int(action.step));
    QCOMPARE(back.action.id, action.action.id);
    QCOMPARE(int(back.action.kind), int(action.action.kind));
    QCOMPARE(back.action.agentId, action.action.agentId);
    QCOMPARE(back.action.method, action.action.method);
    QCOMPARE(back.action.note, action.action.note);
    QCOMPARE(back.action.params, action.action.params);

    // Every line is one JSON object: the file is valid JSON Lines.
    QFile f(path);
    QVERIFY(f.open(QIODevice::ReadOnly));
    const QList<QByteArray> lines = f.readAll().split('\n');
    QCOMPARE(lines.last(), QByteArray()); // ends with a newline
    for (int i = 0; i + 1 < lines.size(); ++i)
        QVERIFY2(QJsonDocument::fromJson(lines[i]).isObject(), lines[i].constData());
}

void TestTrace::writerRedactsButReaderKeepsEverythingElse()
{
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("secret.trace"));
    const QByteArray connect = mapi_test::requestFrame(
        1, QStringLiteral("map/connect"), {{"auth", {{"method", "bearer"}, {"credential", "eyJhbGciOi.secret.jwt"}}}});
    const QByteArray disconnected = mapi_test::eventFrame(
        QStringLiteral("sub-1"), 9,
        mapi_test::innerEvent(QStringLiteral("E9"), QStringLiteral("session.disconnected"), 9,
                              {{"sessionId", "S"}, {"resumeToken", "resume_SECRET"}}));
    {
        TraceWriter writer;
        QVERIFY(writer.open(path, QStringLiteral("ws://h/"), nullptr));
        writer.write({1, QStringLiteral("send"), 1, connect, false, Json()});
        writer.write({2, QStringLiteral("recv"), 1, disconnected, false, Json()});
    } // the destructor closes and flushes
    QFile f(path);
    QVERIFY(f.open(QIODevice::ReadOnly));
    const QByteArray content = f.readAll();
    QVERIFY(!content.contains("eyJhbGciOi.secret.jwt"));
    QVERIFY(!content.contains("resume_SECRET"));
    TraceReadStats stats;
    const QList<TraceRecord> read = readAll(path, stats);
    QCOMPARE(read.size(), 2);
    QCOMPARE(read[0].raw, redactSecrets(connect));
    QCOMPARE(read[1].raw, redactSecrets(disconnected));
}

void TestTrace::damagedLinesAreReportedByNumber()
{
    QTemporaryDir dir;
    const QByteArray header = R"({"format":"map-inspector-trace","version":1,"app":"0.1.0","startedAt":1,"url":"ws://h/"})";
    const QByteArray r1 = dump(Json{{"t", 10}, {"dir", "recv"}, {"conn", 1}, {"raw", R"({"jsonrpc":"2.0","method":"m"})"}});
    const QByteArray r2 = dump(Json{{"t", 11}, {"dir", "send"}, {"conn", 1}, {"raw", R"({"jsonrpc":"2.0","id":1,"method":"x"})"}});
    const QByteArray r3 = dump(Json{{"t", 12}, {"dir", "recv"}, {"conn", 1}, {"raw", R"({"jsonrpc":"2.0","id":1,"result":{}})"}});
    const QByteArray content = header + '\n'                    // 1
        + r1 + '\n'                                             // 2
        + "this line is garbage {\n"                            // 3 bad
        + '\n'                                                  // 4 empty: skipped, not bad
        + r2 + '\n'                                             // 5
        + R"({"t":"soon","dir":"recv","raw":"x"})" + '\n'       // 6 bad: t not a number
        + R"({"dir":"recv","raw":"x"})" + '\n'                  // 7 bad: no time
        + R"([1,2,3])" + '\n'                                   // 8 bad: not an object
        + r3 + '\n'                                             // 9
        + r1.left(r1.size() / 2);                               // 10 bad: truncated, no newline
    const QString path = writeFile(dir, QStringLiteral("damaged.trace"), content);
    QVERIFY(!path.isEmpty());
    TraceReadStats stats;
    bool ok = false;
    const QList<TraceRecord> read = readAll(path, stats, &ok);
    QVERIFY(ok);
    QCOMPARE(stats.badLines, (QList<qint64>{3, 6, 7, 8, 10}));
    QCOMPARE(stats.records, qint64(3));
    QCOMPARE(stats.lines, qint64(10));
    QCOMPARE(read.size(), 3);
    QCOMPARE(read[0].timeMs, qint64(10));
    QCOMPARE(read[1].dir, QStringLiteral("send"));
    QCOMPARE(read[2].raw, QByteArray(R"({"jsonrpc":"2.0","id":1,"result":{}})"));

    // The replayer still applies every good record.
    SystemStore store;
    mapi::test::TraceReplayer replayer(&store);
    TraceReadStats replayStats;
    QString error;
    QVERIFY(replayer.replayFile(path, replayStats, &error));
    QCOMPARE(replayStats.badLines, stats.badLines);
    QCOMPARE(store.counters().problems, qint64(0)); // the response matched the request
    QCOMPARE(store.now(), qint64(12));
}

void TestTrace::framesAreWrittenAsJsonWhenTheyCanBe()
{
    struct Case
    {
        TraceRecord record;
        const char *field; // how the line holds it
    };
    const QByteArray spaced = R"( {"jsonrpc": "2.0", "method":"map/event", "params":{"a":[1, 2.50, -0, "\u00e9\n"]}}  )";
    const QList<Case> cases = {
        {{1, QStringLiteral("recv"), 1, spaced, false, Json()}, R"("frame":)"},
        {{2, QStringLiteral("send"), 3, R"([{"jsonrpc":"2.0","id":7,"method":"x"}])", false, Json()}, R"("frame":)"},
        {{3, QStringLiteral("recv"), 1, "{\"jsonrpc\":\n\"2.0\"}", false, Json()}, R"("raw":")"}, // a line break
        {{4, QStringLiteral("recv"), 1, "{\"jsonrpc\":\r\"2.0\"}", false, Json()}, R"("raw":")"},
        {{5, QStringLiteral("recv"), 1, R"({"jsonrpc":"2.0",)", false, Json()}, R"("raw":")"},          // not JSON
        {{6, QStringLiteral("recv"), 1, R"({"a":"\q"})", false, Json()}, R"("raw":")"},                // bad escape
        {{7, QStringLiteral("open"), 2, "ws://h/", false, Json()}, R"("raw":")"},
    };
    RecordLineParser whole;
    RecordLineParser later;
    later.setFramesCheckedLater(true);
    for (const Case &c : cases) {
        const QByteArray line = encodeRecordLine(c.record);
        QVERIFY2(line.endsWith("}\n") && line.count('\n') == 1, line.constData());
        QVERIFY2(line.contains(c.field), line.constData());
        const bool embedded = qstrcmp(c.field, R"("frame":)") == 0;
        if (embedded) // byte for byte, spaces included
            QVERIFY2(line.contains(QByteArray(QByteArray(R"("frame":)") + c.record.raw + "}\n")), line.constData());
        QVERIFY2(QJsonDocument::fromJson(line).isObject(), line.constData());
        for (RecordLineParser *parser : {&whole, &later}) {
            TraceRecord back;
            QCOMPARE(parser->parse(line.constData(), line.size() - 1, line.size() - 1, back), RecordLineParser::Result::Record);
            QCOMPARE(back.raw, c.record.raw);
            QCOMPARE(back.timeMs, c.record.timeMs);
            QCOMPARE(back.dir, c.record.dir);
            QCOMPARE(back.connection, c.record.connection);
            QCOMPARE(back.frameUnchecked, embedded && parser == &later);
        }
    }

    // A line in another shape (edited by hand, written by another tool) is parsed whole: the
    // frame comes back as the same JSON, minified.
    const QByteArray edited = R"({"frame":{"b": [1, {"c":null}]},"conn":2,"dir":"recv","t":5})";
    for (RecordLineParser *parser : {&whole, &later}) {
        TraceRecord back;
        QCOMPARE(parser->parse(edited.constData(), edited.size(), edited.size(), back), RecordLineParser::Result::Record);
        QCOMPARE(back.raw, QByteArray(R"({"b":[1,{"c":null}]})"));
        QCOMPARE(back.timeMs, qint64(5));
        QCOMPARE(back.connection, 2);
        QVERIFY(!back.frameUnchecked);
    }
    // Our prefix, then more members after the frame (a duplicate key, edited by hand): parsed
    // whole, the last "frame" counts, as for any JSON object.
    const QByteArray twice = R"({"t":5,"dir":"recv","conn":2,"frame":{"a":1},"frame":{"b":2}})";
    TraceRecord last;
    QCOMPARE(whole.parse(twice.constData(), twice.size(), twice.size(), last), RecordLineParser::Result::Record);
    QCOMPARE(last.raw, QByteArray(R"({"b":2})"));

    // Our shape with a damaged frame: bad when parsed whole; left to the decoder otherwise.
    const QByteArray damaged = R"({"t":9,"dir":"recv","conn":1,"frame":{"jsonrpc":"2.0","id":}})";
    TraceRecord back;
    QCOMPARE(whole.parse(damaged.constData(), damaged.size(), damaged.size(), back), RecordLineParser::Result::Bad);
    QCOMPARE(later.parse(damaged.constData(), damaged.size(), damaged.size(), back), RecordLineParser::Result::Record);
    QVERIFY(back.frameUnchecked);
    back.line = 42;
    RecordDecoder decoder;
    ModelInputs inputs;
    QCOMPARE(decoder.decode(back, inputs), 0);
    QCOMPARE(decoder.damagedLines(), std::vector<qint64>{42});
    back.frameUnchecked = false; // the same frame, received so from a server: a protocol problem
    QCOMPARE(decoder.decode(back, inputs), 1);
    QVERIFY(std::holds_alternative<ProblemInput>(inputs.front()));
    QCOMPARE(decoder.damagedLines().size(), size_t(1));
}

void TestTrace::garbageBinaryFieldDoesNotThrow()
{
    QTemporaryDir dir;
    const QByteArray good = dump(Json{{"t", 1}, {"dir", "recv"}, {"raw", "{}"}});
    const QString path = writeFile(dir, QStringLiteral("binary.trace"),
                                   good + '\n' + R"({"t":2,"dir":"recv","raw":"x","binary":"yes"})" + '\n' + good + '\n');
    TraceReadStats stats;
    bool threw = false;
    int records = 0;
    try {
        QString error;
        readTrace(path, [&](const TraceRecord &) {
            ++records;
            return true;
        }, stats, &error);
    } catch (...) {
        threw = true;
    }
    // A non-boolean "binary" makes the line bad; nothing throws out of the reader.
    QVERIFY(!threw);
    QCOMPARE(records + stats.badLines.size(), 3);
}

void TestTrace::captureBinaryFrameKeepsItsText()
{
    // The capture format keeps `raw` as the frame text, binary frames included (captures/README).
    QTemporaryDir dir;
    const QByteArray frame = R"({"jsonrpc":"2.0","id":105,"method":"map/agents/list","params":{}})";
    const QByteArray line = dump(Json{{"seq", 1}, {"dir", "send"}, {"bytes", frame.size()}, {"binary", true},
                                      {"raw", frame.toStdString()}, {"t", 1795251957.5}});
    const QString path = writeFile(dir, QStringLiteral("capture.ndjson"), line + '\n');
    TraceReadStats stats;
    const QList<TraceRecord> read = readAll(path, stats);
    QCOMPARE(stats.format, QStringLiteral("capture"));
    QCOMPARE(read.size(), 1);
    QVERIFY(read[0].binary);
    // Only map-inspector traces base64-encode binary frames; captures keep the text.
    QCOMPARE(read[0].raw, frame);
}

void TestTrace::readerStopsWhenSinkSaysSo()
{
    TraceReadStats stats;
    QString error;
    int seen = 0;
    QVERIFY(readTrace(mapi_test::dataPath(QStringLiteral("scenario-basic.ndjson")), [&](const TraceRecord &) {
        return ++seen < 5;
    }, stats, &error));
    QCOMPARE(seen, 5);
    QCOMPARE(stats.records, qint64(5));
}

void TestTrace::missingFileIsAnError()
{
    TraceReadStats stats;
    QString error;
    QVERIFY(!readTrace(QStringLiteral("/nonexistent/dir/trace.ndjson"), [](const TraceRecord &) { return true; }, stats, &error));
    QVERIFY(!error.isEmpty());
    SystemStore store;
    mapi::test::TraceReplayer replayer(&store);
    QVERIFY(!replayer.replayFile(QStringLiteral("/nonexistent/dir/trace.ndjson"), stats, &error));

    TraceWriter writer;
    error.clear();
    QVERIFY(!writer.open(QStringLiteral("/nonexistent/dir/out.trace"), QStringLiteral("ws://h/"), &error));
    QVERIFY(!error.isEmpty());
    writer.write({1, QStringLiteral("recv"), 1, "{}", false, Json()}); // ignored, no crash
    QCOMPARE(writer.recordsWritten(), qint64(0));
}

void TestTrace::replayEqualsLiveProcessing()
{
    // Frames: a real capture (scenario-basic), plus an operator action, a binary frame and a
    // frame that is no JSON, on two connections.
    QList<TraceRecord> records;
    for (const CaptureRecord &r : mapi_test::readCapture(mapi_test::dataPath(QStringLiteral("scenario-basic.ndjson")))) {
        if (r.dir == QLatin1String("send") || r.dir == QLatin1String("recv") || r.dir == QLatin1String("close"))
            records << TraceRecord{qint64(r.timeMs), r.dir, 1, r.raw, false, Json()};
        else if (r.dir == QLatin1String("open"))
            records << TraceRecord{qint64(r.timeMs), r.dir, 1, "ws://127.0.0.1/client", false, Json()};
    }
    QVERIFY(records.size() > 700);
    const qint64 t = records.back().timeMs + 10;
    ActionUpdate created;
    created.step = ActionUpdate::Step::Created;
    created.timeMs = t + 1;
    created.action.id = QStringLiteral("action-x");
    created.action.kind = ActionKind::Stop;
    created.action.agentId = QStringLiteral("01M7YNNBC4PW0X6HRDQEVEE4MN");
    created.action.method = QStringLiteral("map/agents/stop");
    records << TraceRecord{t, QStringLiteral("open"), 2, "ws://127.0.0.1/client", false, Json()}
            << TraceRecord{t + 1, QStringLiteral("action"), 2, QByteArray(), false, actionUpdateToJson(created)}
            << TraceRecord{t + 2, QStringLiteral("recv"), 2, QByteArray("\x00\x01\x02", 3), true, Json()}
            << TraceRecord{t + 3, QStringLiteral("recv"), 2, "garbage", false, Json()}
            << TraceRecord{t + 4, QStringLiteral("recv"), 2, R"({"jsonrpc":"2.0","id":99,"result":{}})", false, Json()};

    // Live: the same frames through ProtocolPipelines (one per connection) into a store.
    SystemStore live;
    QHash<int, ProtocolPipeline *> pipelines;
    std::vector<std::unique_ptr<ProtocolPipeline>> owned;
    qint64 last = 0;
    for (const TraceRecord &r : records) {
        ProtocolPipeline *&p = pipelines[r.connection];
        if (!p) {
            owned.push_back(std::make_unique<ProtocolPipeline>());
            p = owned.back().get();
        }
        last = std::max(last, r.timeMs);
        if (r.dir == QLatin1String("open"))
            live.apply(p->connectionOpened(QString::fromUtf8(r.raw), r.timeMs));
        else if (r.dir == QLatin1String("close"))
            live.apply(p->connectionClosed(QString::fromUtf8(r.raw), r.timeMs));
        else if (r.dir == QLatin1String("send"))
            p->frameSent(r.raw, r.timeMs);
        else if (r.dir == QLatin1String("recv"))
            live.apply((r.binary ? p->binaryFrameReceived(r.raw, r.timeMs) : p->frameReceived(r.raw, r.timeMs)).inputs);
        else if (r.dir == QLatin1String("action")) {
            ActionUpdate u = created;
            u.timeMs = r.timeMs;
            live.apply(ModelInput(u));
        }
    }
    live.advanceTime(last);

    // Recorded: written with TraceWriter, replayed from the file.
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("session.trace"));
    {
        TraceWriter writer;
        QVERIFY(writer.open(path, QStringLiteral("ws://127.0.0.1/client"), nullptr));
        for (const TraceRecord &r : records)
            writer.write(r);
    }
    SystemStore replayed;
    mapi::test::TraceReplayer replayer(&replayed);
    TraceReadStats stats;
    QString error;
    QVERIFY2(replayer.replayFile(path, stats, &error), qPrintable(error));
    QVERIFY(stats.badLines.isEmpty());
    QCOMPARE(stats.records, qint64(records.size()));

    const Json a = stateToJson(live);
    const Json b = stateToJson(replayed);
    QVERIFY(a.at("agents").size() > 5);
    QVERIFY(a.at("counts").at("problems").get<int>() >= 3); // binary, garbage, unmatched
    QCOMPARE(b, a);
    QCOMPARE(int(replayed.events().size()), int(live.events().size()));
    QCOMPARE(int(replayed.messages().size()), int(live.messages().size()));
    QCOMPARE(replayed.now(), live.now());
}


// The timeline keeps records in compact parallel arrays (sizes from offsets, connections as runs,
// times stepping back aside, times as 32-bit offsets in spans): every field must come back as
// appended, across sealed chunks and clock jumps of weeks.
void TestTrace::timelineGivesBackEveryRecord()
{
    std::vector<TraceRecord> records;
    qint64 t = 1000;
    constexpr qint64 kDay = 24 * 3600 * 1000;
    for (int i = 0; i < 6000; ++i) {
        TraceRecord r;
        t += (i % 97 == 5) ? -40 : (i % 3); // a clock stepping back now and then
        if (i == 2000 || i == 2001 || i == 4500)
            t += 60 * kDay; // a jump past what 32 bits of milliseconds hold (49.7 days)
        if (i == 2002)
            t -= 61 * kDay; // and back by more than that
        r.timeMs = t;
        r.connection = 1 + (i / 1500) % 3;
        static const char *dirs[] = {"recv", "send", "recv", "open", "close", "action"};
        r.dir = QString::fromLatin1(dirs[i % 6]);
        if (r.dir == QLatin1String("action"))
            r.extra = Json{{"step", "answered"}, {"id", i}};
        else if (i % 50 != 7) // some records are empty
            r.raw = QByteArray(200 + (i % 400), char('a' + i % 26));
        r.binary = r.dir == QLatin1String("recv") && i % 11 == 0;
        if (i == 3000)
            r.raw = QByteArray(3 * 1024 * 1024, 'x'); // bigger than a chunk
        records.push_back(r);
    }
    TraceTimeline timeline;
    for (const TraceRecord &r : records)
        timeline.appendRecord(r);
    QCOMPARE(timeline.recordCount(), qint64(records.size()));
    QCOMPARE(timeline.startTimeMs(), records.front().timeMs);
    qint64 latest = 0;
    for (size_t i = 0; i < records.size(); ++i) {
        const TraceRecord back = timeline.record(qint64(i));
        const TraceRecord &r = records[i];
        QCOMPARE(back.timeMs, r.timeMs);
        QCOMPARE(timeline.recordTimeMs(qint64(i)), r.timeMs);
        QCOMPARE(back.dir, r.dir);
        QCOMPARE(timeline.recordDirOf(qint64(i)), recordDir(r.dir));
        QCOMPARE(back.connection, r.connection);
        QCOMPARE(back.binary, r.binary);
        QCOMPARE(back.raw, r.raw);
        QCOMPARE(back.extra, r.extra);
        latest = std::max(latest, r.timeMs);
    }
    QCOMPARE(timeline.endTimeMs(), latest);
    // Seeks count records whose running maximum time is at or before T: at each record's time,
    // just before and after it, before the first and past the last.
    const auto recordsUpTo = [&](qint64 at) {
        qint64 expected = 0;
        for (qint64 max = 0; size_t(expected) < records.size(); ++expected) {
            max = std::max(max, records[size_t(expected)].timeMs);
            if (max > at)
                break;
        }
        return expected;
    };
    for (size_t i = 0; i < records.size(); i += 7)
        for (const qint64 at : {records[i].timeMs - 1, records[i].timeMs, records[i].timeMs + 1})
            QCOMPARE(timeline.recordsUpTo(at), recordsUpTo(at));
    for (const qint64 at : {qint64(0), latest, latest + 1, records[2000].timeMs + 30 * kDay, records[4500].timeMs - 30 * kDay})
        QCOMPARE(timeline.recordsUpTo(at), recordsUpTo(at));
}

// The timeline keeps which record each store event came from as runs (TraceTimeline::
// mapEvents): one event a record, many from one record, records giving none, events mapped
// again from an earlier point (a replay) must all answer as a plain list of every event's record.
void TestTrace::timelineMapsEventsToTheirRecords()
{
    TraceTimeline timeline;
    std::vector<qint64> expected; // per event: its record, -1 none
    const auto map = [&](int first, int end, qint64 record) {
        timeline.mapEvents(first, end, record);
        if (first < 0 || end <= first)
            return;
        expected.resize(size_t(first), -1);
        expected.resize(size_t(end), record);
    };
    QRandomGenerator random(21);
    int event = 0;
    qint64 record = 1;
    for (int step = 0; step < 3000; ++step) {
        const int kind = int(random.bounded(20));
        if (kind == 0) {
            record += 1 + random.bounded(3); // records that gave no event
        } else if (kind == 1) {
            const int count = 2 + int(random.bounded(5)); // a frame of several events
            map(event, event + count, record++);
            event += count;
        } else if (kind == 2 && event > 10) {
            event -= 1 + int(random.bounded(10)); // mapped again from an earlier event
            record -= 1 + random.bounded(3);
            map(event, event + 1, record++);
            ++event;
        } else if (kind == 3) {
            event += 2; // events not from a record (mapped by no one)
            map(event, event + 1, record++);
            ++event;
        } else {
            map(event, event + 1, record++);
            ++event;
        }
        map(event, event, record); // an empty range changes nothing
    }
    QCOMPARE(timeline.eventCount(), qint64(expected.size()));
    for (int e = -2; e < int(expected.size()) + 3; ++e)
        QCOMPARE(timeline.recordForEvent(e), e >= 0 && e < int(expected.size()) ? expected[size_t(e)] : qint64(-1));
}

// The recorder's event loop may be too busy for the flush timer (records keep coming): the
// writer then flushes from write() once a second has passed, so a kill still loses at most it.
void TestTrace::writerFlushesEverySecondEvenWithoutItsTimer()
{
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("busy.jsonl.zst"));
    TraceWriter writer;
    QString error;
    QVERIFY2(writer.open(path, QStringLiteral("ws://127.0.0.1:1"), &error), qPrintable(error));
    auto recordsOnDisk = [&] {
        qint64 n = 0;
        TraceReadStats stats;
        QString why;
        readTrace(path, [&](const TraceRecord &) { return ++n, true; }, stats, &why);
        return n;
    };
    QElapsedTimer busy;
    busy.start();
    int written = 0;
    while (busy.elapsed() < 1300) { // no event loop meanwhile: the timer cannot fire
        writer.write({1000 + written, QStringLiteral("recv"), 1, R"({"jsonrpc":"2.0","method":"x"})", false, Json()});
        ++written;
        QThread::msleep(20);
    }
    // What was written more than a second ago is on disk (in a decodable zstd block).
    const qint64 onDisk = recordsOnDisk();
    QVERIFY2(onDisk >= written * 1000 / 1300 - 5, qPrintable(QStringLiteral("%1 of %2").arg(onDisk).arg(written)));
    writer.close();
    QCOMPARE(recordsOnDisk(), qint64(written));
}

void TestTrace::timelineCompressesWhatItsFileCannotGiveBack_data()
{
    QTest::addColumn<int>("compression");
    QTest::newRow("gzip: nothing to read back") << int(Compression::Gzip);
    QTest::newRow("zstd: a frame that never ends") << int(Compression::Zstd);
}

// Chunks wait, uncompressed, for the file's index to reach their records; they must not wait
// for what will never be read back (the whole trace would be held uncompressed until the end).
void TestTrace::timelineCompressesWhatItsFileCannotGiveBack()
{
    QFETCH(int, compression);
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("any"));
    {
        QFile file(path);
        QVERIFY(file.open(QIODevice::WriteOnly));
        file.write("{}\n");
    }
    auto index = std::make_shared<ContentIndex>();
    QVERIFY(index->open(path, nullptr));
    index->setCompression(Compression(compression)); // and no frame is ever complete
    TraceTimeline timeline;
    timeline.setSource(index);
    qint64 offset = 0;
    qint64 peak = 0;
    for (int i = 0; i < 40000; ++i) { // 40 MB of frames
        TraceRecord r;
        r.timeMs = 1000 + i;
        r.dir = QStringLiteral("recv");
        r.raw = R"({"jsonrpc":"2.0","method":"map/event","params":{"n":)" + QByteArray::number(i) + R"(,"pad":")"
            + QByteArray(960, char('a' + i % 26)) + R"("}})";
        r.contentOffset = offset + 30; // as in a trace line
        offset += r.raw.size() + 32;
        timeline.appendRecord(r);
        peak = std::max(peak, qint64(timeline.memoryBytes()));
    }
    timeline.finishAppending();
    // At most the open chunk and what may still come back (ContentIndex::kMaxFrameBytes), raw;
    // from a gzip file nothing comes back: only the open chunk.
    const qint64 mayWait = compression == int(Compression::Gzip) ? 0 : ContentIndex::kMaxFrameBytes;
    QVERIFY2(peak < mayWait + 3 * 1024 * 1024, qPrintable(QString::number(peak)));
    QVERIFY(timeline.memoryBytes() < size_t(timeline.frameBytes() / 10));
    for (qint64 i : {qint64(0), qint64(20000), qint64(39999)})
        QVERIFY(timeline.record(i).raw.startsWith(QByteArray(R"({"jsonrpc":"2.0","method":"map/event","params":{"n":)" + QByteArray::number(i) + ",")));
    QVERIFY(timeline.sourceError().isEmpty());
}

QTEST_GUILESS_MAIN(TestTrace)
#include "tst_trace.moc"
