// Traces beyond the basics: record → replay equality (plain, .zst, .gz), damaged and truncated
// files (also compressed), the threaded loader (progress, cancel, the window's job), time
// travel (seek, step, playback), bookmarks, rotation, imports of the seed envelope formats,
// and the Chrome trace and CSV exports, checked with independent parsers (QJsonDocument and a
// small RFC 4180 reader here).
#include "TestSupport.h"
#include "TraceReplayer.h"

#include "model/StateJson.h"
#include "protocol/SimdJsonParser.h"
#include "trace/Trace.h"
#include "trace/ModelExport.h"
#include "trace/TraceImport.h"
#include "trace/TraceLoader.h"
#include "trace/TraceTimeline.h"

#include <QBuffer>
#include <QJsonArray>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QDir>
#include <QTimer>
#include <QThread>

using namespace mapi;
using mapi_test::CaptureRecord;

namespace {

QString importPath(const QString &name)
{
    return mapi_test::dataPath(QStringLiteral("import/") + name);
}

// The records of a capture, as a recorder would have written them (one connection).
QList<TraceRecord> captureRecords(const QString &file)
{
    QList<TraceRecord> records;
    for (const CaptureRecord &r : mapi_test::readCapture(mapi_test::dataPath(file))) {
        if (r.dir == QLatin1String("send") || r.dir == QLatin1String("recv") || r.dir == QLatin1String("close")
            || r.dir == QLatin1String("open"))
            records << TraceRecord{qint64(r.timeMs), r.dir, 1, r.raw, r.binary, Json()};
    }
    return records;
}

// Drives a store with records exactly as the live client does (one connection).
void feedLive(SystemStore &store, const QList<TraceRecord> &records, qint64 untilMs = -1)
{
    ProtocolPipeline pipeline;
    qint64 last = 0;
    for (const TraceRecord &r : records) {
        if (untilMs >= 0 && r.timeMs > untilMs)
            break;
        last = std::max(last, r.timeMs);
        if (r.dir == QLatin1String("open"))
            store.apply(pipeline.connectionOpened(QString::fromUtf8(r.raw), r.timeMs));
        else if (r.dir == QLatin1String("close"))
            store.apply(pipeline.connectionClosed(QString::fromUtf8(r.raw), r.timeMs));
        else if (r.dir == QLatin1String("send"))
            pipeline.frameSent(r.raw, r.timeMs);
        else if (r.dir == QLatin1String("recv"))
            store.apply((r.binary ? pipeline.binaryFrameReceived(r.raw, r.timeMs) : pipeline.frameReceived(r.raw, r.timeMs)).inputs);
    }
    store.advanceTime(untilMs >= 0 ? untilMs : last);
}

bool writeTrace(const QString &path, const QList<TraceRecord> &records, QString *error = nullptr)
{
    TraceWriter writer;
    if (!writer.open(path, QStringLiteral("ws://127.0.0.1/client"), error))
        return false;
    for (const TraceRecord &r : records)
        writer.write(r);
    writer.close();
    return writer.lastError().isEmpty();
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

QByteArray fileBytes(const QString &path)
{
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

bool putFile(const QString &path, const QByteArray &bytes)
{
    QFile f(path);
    return f.open(QIODevice::WriteOnly) && f.write(bytes) == bytes.size();
}

// A small RFC 4180 reader (quoted fields, "" escapes, CRLF or LF), independent of the writer.
QList<QStringList> parseCsv(const QByteArray &text)
{
    QList<QStringList> rows;
    QStringList row;
    QByteArray field;
    bool quoted = false;
    bool fieldStarted = false;
    for (qsizetype i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (quoted) {
            if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') {
                field.append('"');
                ++i;
            } else if (c == '"') {
                quoted = false;
            } else {
                field.append(c);
            }
            continue;
        }
        if (c == '"' && !fieldStarted) {
            quoted = true;
            fieldStarted = true;
        } else if (c == ',') {
            row << QString::fromUtf8(field);
            field.clear();
            fieldStarted = false;
        } else if (c == '\r') {
            continue;
        } else if (c == '\n') {
            row << QString::fromUtf8(field);
            rows << row;
            row.clear();
            field.clear();
            fieldStarted = false;
        } else {
            field.append(c);
            fieldStarted = true;
        }
    }
    if (fieldStarted || !row.isEmpty()) {
        row << QString::fromUtf8(field);
        rows << row;
    }
    return rows;
}

// A synthetic trace of `events` map/event frames (agent state changes and messages between
// a few agents), for the loader's cancel and job tests.
QList<TraceRecord> syntheticRecords(int events)
{
    QList<TraceRecord> records;
    const qint64 t0 = 1'800'000'000'000;
    records << TraceRecord{t0, QStringLiteral("open"), 1, "ws://synthetic/", false, Json()};
    for (int i = 0; i < 5; ++i) {
        const QString id = QStringLiteral("agent-%1").arg(i);
        const Json inner = mapi_test::innerEvent(QStringLiteral("reg-%1").arg(i), QStringLiteral("agent.registered"), t0 + i,
                                                 {{"agent", mapi_test::regAgent(id, id)}}, {{"agentId", mapi_test::s(id)}});
        records << TraceRecord{t0 + i, QStringLiteral("recv"), 1, mapi_test::eventFrame(QStringLiteral("sub"), i + 1, inner), false, Json()};
    }
    for (int i = 0; i < events; ++i) {
        const qint64 t = t0 + 10 + i;
        const QString from = QStringLiteral("agent-%1").arg(i % 5);
        const QString to = QStringLiteral("agent-%1").arg((i + 1) % 5);
        const Json inner = mapi_test::innerEvent(
            QStringLiteral("evt-%1").arg(i), QStringLiteral("message.sent"), t,
            {{"message", {{"id", mapi_test::s(QStringLiteral("msg-%1").arg(i))}, {"from", mapi_test::s(from)},
                          {"to", mapi_test::s(to)}, {"payload", {{"type", "HEARTBEAT"}, {"status", "BUSY"}, {"load", 0.5}}},
                          {"timestamp", t}}}},
            {{"agentId", mapi_test::s(from)}});
        records << TraceRecord{t, QStringLiteral("recv"), 1, mapi_test::eventFrame(QStringLiteral("sub"), i + 6, inner), false, Json()};
    }
    return records;
}

// The state without its connection (whose url names the file or the capture's socket).
Json withoutConnection(Json state)
{
    state.erase("connection");
    return state;
}


} // namespace

class TestTraceImportExport : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void zstdFramesReadBackAsTheStreamDecodedThem();
    void initTestCase() { mapi_test::installWarningGuard(); }
    void init() { mapi_test::armWarningGuard(); }
    void cleanup() { MAPI_NO_WARNINGS(); }
    void cleanupTestCase() { MAPI_NO_WARNINGS(); }

    void recordThenReplayEqualsLive_data();
    void recordThenReplayEqualsLive();
    void simdJsonParserMatchesNlohmann();
    void compressedRoundTripsAreByteIdentical();
    void compressionIsDetectedByContentNotName();
    void binaryFramesOfEveryVintage();
    void truncatedFileLoadsEverythingValid();
    void corruptedMiddleLineIsReportedAndSkipped();
    void corruptedCompressedStreamsKeepWhatCameBefore_data();
    void corruptedCompressedStreamsKeepWhatCameBefore();
    void writerRotatesBySizeAndTime();
    void importFormats_data();
    void importFormats();
    void importedJsonArrayOnOneLineAndCompressed();
    void unknownFormatIsAClearError();
    void chromeExportMatchesTheStore();
    void chromeExportOfSomeAgents();
    void csvParsesBackWithTheSameRows();
    void exportJobWritesInSlicesWhileTheLoopRuns();
    void exportJobCancelAndResetLeaveNoFile();
    void payloadsReadFromFramesEqualKeptPayloads();
    void deliveryOfAMessageNeverSeenSent();
    void seekGivesTheStateOfADirectReplay();
    void timelineReadsFramesBackFromTheFile_data();
    void timelineReadsFramesBackFromTheFile();
    void zstdTracesAreWrittenInSmallFrames();
    void stepForwardAndBack();
    void playbackReachesTheEnd();
    void bookmarksRoundTrip();
    void importedLinesMeetTheCodecLimits();
    void cancelStopsTheLoaderEarly();
    void loadJobFillsTheStoreInItsThread();
    void loadJobCancel();
    void loadJobGivesSlowViewsLessOfTheThread();
    void backgroundJobRules();
};

// ---- record and replay ---------------------------------------------------------------------------

void TestTraceImportExport::recordThenReplayEqualsLive_data()
{
    QTest::addColumn<QString>("name");
    QTest::newRow("plain") << QStringLiteral("live.jsonl");
    QTest::newRow("zstd") << QStringLiteral("live.jsonl.zst");
    QTest::newRow("gzip") << QStringLiteral("live.jsonl.gz");
}

void TestTraceImportExport::recordThenReplayEqualsLive()
{
    QFETCH(QString, name);
    const QList<TraceRecord> records = captureRecords(QStringLiteral("scenario-deliver.ndjson"));
    QVERIFY(records.size() > 700);

    // Live: frames through a ProtocolPipeline into a store while a TraceWriter records them.
    QTemporaryDir dir;
    const QString path = dir.filePath(name);
    SystemStore live;
    {
        TraceWriter writer;
        QString error;
        QVERIFY2(writer.open(path, QStringLiteral("ws://127.0.0.1/client"), &error), qPrintable(error));
        ProtocolPipeline pipeline;
        qint64 last = 0;
        for (const TraceRecord &r : records) {
            writer.write(r);
            last = std::max(last, r.timeMs);
            if (r.dir == QLatin1String("open"))
                live.apply(pipeline.connectionOpened(QString::fromUtf8(r.raw), r.timeMs));
            else if (r.dir == QLatin1String("close"))
                live.apply(pipeline.connectionClosed(QString::fromUtf8(r.raw), r.timeMs));
            else if (r.dir == QLatin1String("send"))
                pipeline.frameSent(r.raw, r.timeMs);
            else
                live.apply(pipeline.frameReceived(r.raw, r.timeMs).inputs);
        }
        live.advanceTime(last);
        writer.close();
        QCOMPARE(writer.recordsWritten(), qint64(records.size()));
    }
    const QByteArray head = fileBytes(path).left(4);
    QCOMPARE(compressionFromMagic(head.constData(), head.size()), compressionFromPath(path));

    // Replayed from the file, through the threaded loader.
    SystemStore replayed;
    const TraceLoadResult r = loadTraceInto(replayed, path);
    QVERIFY2(r.ok, qPrintable(r.error));
    QCOMPARE(r.stats.records, qint64(records.size()));
    QVERIFY(r.stats.badLines.isEmpty());
    QVERIFY(r.stats.streamError.isEmpty());
    QCOMPARE(r.stats.format, QStringLiteral("map-inspector-trace"));
    const Json expected = stateToJson(live);
    QVERIFY(expected.at("agents").size() > 5);
    QCOMPARE(stateToJson(replayed), expected);
    QCOMPARE(replayed.events().size(), live.events().size());
    QCOMPARE(replayed.now(), live.now());

    // Frames are not kept in the store, but the timeline gives each event's frame back.
    QVERIFY(r.timeline);
    QCOMPARE(r.timeline->eventCount(), qint64(live.events().size()));
    for (size_t i = 0; i < live.events().size(); ++i) {
        QVERIFY(replayed.events().keptFrame(i).isEmpty());
        const QByteArray frame = r.timeline->frameForEvent(int(i));
        if (!live.events().keptFrame(i).isEmpty())
            QCOMPARE(frame, redactSecrets(live.events().keptFrame(i))); // as recorded
        else // events of a map/replay result or a snapshot: the frame that carried them
            QVERIFY(frame.contains(live.events().eventId(i).toUtf8()));
    }

    // The single-threaded replayer with the default parser agrees.
    SystemStore classic;
    mapi::test::TraceReplayer replayer(&classic);
    TraceReadStats stats;
    QString error;
    QVERIFY2(replayer.replayFile(path, stats, &error), qPrintable(error));
    QCOMPARE(stateToJson(classic), expected);
}

void TestTraceImportExport::simdJsonParserMatchesNlohmann()
{
    const SimdJsonParser simd;
    const NlohmannJsonParser reference;
    QList<QByteArray> frames = {
        R"({"a":1,"b":-2,"c":1.5,"d":-0,"e":18446744073709551615,"f":123456789012345678901234567890,"g":[true,false,null]})",
        R"({"dup":1,"dup":2})",
        R"({"s":"\u00e9\ud83d\ude80 \"q\" \\ /"})",
        "{\"bad\": \"\xff\xfe\"}",
        R"({"unterminated": )",
        R"(  [1, 2, {"x": {}}]  )",
        "",
    };
    for (const CaptureRecord &r : mapi_test::readCapture(mapi_test::dataPath(QStringLiteral("errors.ndjson"))))
        frames << r.raw;
    for (const QByteArray &frame : std::as_const(frames)) {
        Json a;
        Json b;
        QString errorA;
        QString errorB;
        const bool okA = simd.parse(frame, a, errorA);
        const bool okB = reference.parse(frame, b, errorB);
        QCOMPARE(okA, okB);
        QCOMPARE(errorA, errorB);
        if (okA) {
            QCOMPARE(a, b);
            QCOMPARE(a.dump(), b.dump()); // same number types, same key order
        }
    }
}

void TestTraceImportExport::compressedRoundTripsAreByteIdentical()
{
    // Every kind of record, including frames that are no valid UTF-8 and binary ones.
    QList<TraceRecord> records = captureRecords(QStringLiteral("methods-tour.ndjson"));
    QByteArray binary;
    for (int i = 0; i < 256; ++i)
        binary.append(char(i));
    const qint64 t = records.isEmpty() ? 1 : records.back().timeMs;
    records << TraceRecord{t + 1, QStringLiteral("recv"), 1, binary, true, Json()}
            << TraceRecord{t + 2, QStringLiteral("recv"), 1, QByteArray("{\"text\":\"caf\xe9\"}"), false, Json()}
            << TraceRecord{t + 3, QStringLiteral("recv"), 1, QByteArray("line\nbreaks\r\nand \"quotes\" \\ \x01", 30), false, Json()}
            << TraceRecord{t + 4, QStringLiteral("action"), 1, QByteArray(), false, Json{{"step", "created"}, {"id", "a-1"}}};
    QVERIFY(records.size() > 100);

    QTemporaryDir dir;
    QList<QList<TraceRecord>> reads;
    for (const char *name : {"r.jsonl", "r.jsonl.zst", "r.jsonl.gz"}) {
        const QString path = dir.filePath(QString::fromUtf8(name));
        QVERIFY(writeTrace(path, records));
        TraceReadStats stats;
        bool ok = false;
        reads << readAll(path, stats, &ok);
        QVERIFY(ok);
        QVERIFY(stats.badLines.isEmpty());
        QVERIFY2(stats.streamError.isEmpty(), qPrintable(stats.streamError));
        QCOMPARE(stats.compression, compressionName(compressionFromPath(path)));
    }
    for (const QList<TraceRecord> &read : std::as_const(reads)) {
        QCOMPARE(read.size(), records.size());
        for (int i = 0; i < records.size(); ++i) {
            QCOMPARE(read[i].timeMs, records[i].timeMs);
            QCOMPARE(read[i].dir, records[i].dir);
            QCOMPARE(read[i].binary, records[i].binary);
            if (records[i].dir == QLatin1String("action"))
                QCOMPARE(read[i].extra, records[i].extra);
            else if (records[i].dir == QLatin1String("send") || records[i].dir == QLatin1String("recv"))
                QCOMPARE(read[i].raw, redactSecrets(records[i].raw)); // byte for byte, secrets aside
            else
                QCOMPARE(read[i].raw, records[i].raw);
        }
    }
    // The decompressed files are the plain file, byte for byte (headers aside: their startedAt).
    auto body = [](const QByteArray &text) { return text.mid(text.indexOf('\n') + 1); };
    const QByteArray plain = fileBytes(dir.filePath(QStringLiteral("r.jsonl")));
    for (const char *name : {"r.jsonl.zst", "r.jsonl.gz"}) {
        DecompressingReader in;
        QVERIFY(in.open(dir.filePath(QString::fromUtf8(name)), nullptr));
        QByteArray content;
        char buffer[4096];
        qint64 n = 0;
        while ((n = in.read(buffer, sizeof buffer)) > 0)
            content.append(buffer, n);
        QCOMPARE(n, qint64(0));
        QCOMPARE(body(content), body(plain));
        QVERIFY(in.compressedBytesRead() == in.fileSize());
    }
}

void TestTraceImportExport::compressionIsDetectedByContentNotName()
{
    QTemporaryDir dir;
    const QList<TraceRecord> records = captureRecords(QStringLiteral("scenario-basic.ndjson"));
    const QString zst = dir.filePath(QStringLiteral("t.jsonl.zst"));
    QVERIFY(writeTrace(zst, records));
    const QString disguised = dir.filePath(QStringLiteral("t.trace"));
    QVERIFY(QFile::copy(zst, disguised));
    TraceReadStats stats;
    QCOMPARE(readAll(disguised, stats).size(), records.size());
    QCOMPARE(stats.compression, QStringLiteral("zstd"));
}

void TestTraceImportExport::binaryFramesOfEveryVintage()
{
    QTemporaryDir dir;
    const QByteArray bytes("\x00\x01\x02\xff", 4);
    // A trace from before "encoding" existed (binary frames were base64 all the same), one with
    // it, a text frame that is no UTF-8, and a capture (binary frames kept as text).
    const QString old = dir.filePath(QStringLiteral("old.jsonl"));
    QVERIFY(putFile(old, R"({"format":"map-inspector-trace","version":1,"startedAt":1,"url":"ws://h/"})" "\n"
                         R"({"t":1,"dir":"recv","conn":1,"binary":true,"raw":"AAEC/w=="})" "\n"
                         R"({"t":2,"dir":"recv","conn":1,"binary":true,"encoding":"base64","raw":"AAEC/w=="})" "\n"
                         R"({"t":3,"dir":"recv","conn":1,"encoding":"base64","raw":"e30K/w=="})" "\n"));
    TraceReadStats stats;
    const QList<TraceRecord> read = readAll(old, stats);
    QCOMPARE(read.size(), 3);
    QCOMPARE(read[0].raw, bytes);
    QCOMPARE(read[1].raw, bytes);
    QVERIFY(!read[2].binary);
    QCOMPARE(read[2].raw, QByteArray("{}\n\xff"));
    const QString capture = dir.filePath(QStringLiteral("capture.ndjson"));
    QVERIFY(putFile(capture, R"({"seq":1,"dir":"recv","t":5.5,"binary":true,"raw":"AAEC/w=="})" "\n"));
    const QList<TraceRecord> fromCapture = readAll(capture, stats);
    QCOMPARE(fromCapture.size(), 1);
    QCOMPARE(fromCapture[0].raw, QByteArray("AAEC/w=="));
    // Written now: both say "encoding":"base64" and come back byte for byte.
    const QString now = dir.filePath(QStringLiteral("now.jsonl"));
    QVERIFY(writeTrace(now, {TraceRecord{1, QStringLiteral("recv"), 1, bytes, true, Json()},
                             TraceRecord{2, QStringLiteral("recv"), 1, QByteArray("{}\n\xff"), false, Json()}}));
    QCOMPARE(fileBytes(now).count("\"encoding\":\"base64\""), 2);
    const QList<TraceRecord> back = readAll(now, stats);
    QCOMPARE(back.size(), 2);
    QCOMPARE(back[0].raw, bytes);
    QCOMPARE(back[1].raw, QByteArray("{}\n\xff"));
}

// ---- damaged files ---------------------------------------------------------------------------------

void TestTraceImportExport::truncatedFileLoadsEverythingValid()
{
    QTemporaryDir dir;
    const QList<TraceRecord> records = captureRecords(QStringLiteral("scenario-deliver.ndjson"));
    const QString path = dir.filePath(QStringLiteral("whole.jsonl"));
    QVERIFY(writeTrace(path, records));
    QByteArray text = fileBytes(path);
    const int lines = int(text.count('\n'));
    // Cut in the middle of line 501 (a record): 500 lines survive, the rest of 501 is bad.
    qsizetype at = 0;
    for (int i = 0; i < 500; ++i)
        at = text.indexOf('\n', at) + 1;
    const qsizetype next = text.indexOf('\n', at);
    text.truncate(at + (next - at) / 2);
    const QString cut = dir.filePath(QStringLiteral("cut.jsonl"));
    QVERIFY(putFile(cut, text));
    QVERIFY(lines > 501);

    SystemStore store;
    const TraceLoadResult r = loadTraceInto(store, cut);
    QVERIFY(r.ok);
    QCOMPARE(r.stats.records, qint64(499)); // 500 lines minus the header
    QCOMPARE(r.stats.badLines, QList<qint64>{501});
    SystemStore expected;
    feedLive(expected, records.mid(0, 499));
    QCOMPARE(stateToJson(store), stateToJson(expected));
}

void TestTraceImportExport::corruptedMiddleLineIsReportedAndSkipped()
{
    QTemporaryDir dir;
    const QList<TraceRecord> records = captureRecords(QStringLiteral("scenario-deliver.ndjson"));
    const QString path = dir.filePath(QStringLiteral("t.jsonl"));
    QVERIFY(writeTrace(path, records));
    QList<QByteArray> lines = fileBytes(path).split('\n');
    // Line 301 (record 300, an event) gets garbage in the middle of its JSON.
    QByteArray &victim = lines[300];
    QVERIFY(victim.contains("map/event"));
    QVERIFY(victim.contains(R"("frame":{)")); // written as JSON: the decoder finds the damage
    victim[victim.size() / 2] = '\x01';
    victim.insert(victim.size() / 3, "}}}{");
    // And a request we sent, later on: its response then matches no request.
    int sendLine = 301;
    while (!lines[sendLine].contains(R"("dir":"send")"))
        ++sendLine;
    lines[sendLine].insert(lines[sendLine].size() / 2, "\"");
    const QString bad = dir.filePath(QStringLiteral("bad.jsonl.gz"));
    {
        CompressingWriter out;
        QVERIFY(out.open(bad, Compression::Gzip, nullptr));
        out.write(lines.join('\n'));
        QVERIFY(out.close());
    }
    SystemStore store;
    const TraceLoadResult r = loadTraceInto(store, bad);
    QVERIFY(r.ok);
    QCOMPARE(r.stats.badLines, (QList<qint64>{301, sendLine + 1}));
    QCOMPARE(r.stats.records, qint64(records.size() - 2));
    QList<TraceRecord> without = records;
    without.removeAt(sendLine - 1);
    without.removeAt(299);
    SystemStore expected;
    feedLive(expected, without);
    QCOMPARE(stateToJson(store), stateToJson(expected));
    QVERIFY(store.counters().problems > 0); // the unmatched response: the damage has an effect

    // Time travel replays the kept records: the damaged ones are skipped as the load skipped them.
    SystemStore replayed;
    RecordDecoder decoder = r.timeline->makeDecoder();
    r.timeline->replay(replayed, decoder, 0, r.timeline->recordCount());
    replayed.advanceTime(r.lastTimeMs);
    replayed.flushChanges();
    QCOMPARE(stateToJson(replayed), stateToJson(store));
}

void TestTraceImportExport::corruptedCompressedStreamsKeepWhatCameBefore_data()
{
    QTest::addColumn<QString>("name");
    QTest::addColumn<bool>("truncate"); // else: bytes flipped in the middle
    QTest::newRow("zstd truncated") << QStringLiteral("t.jsonl.zst") << true;
    QTest::newRow("gzip truncated") << QStringLiteral("t.jsonl.gz") << true;
    QTest::newRow("zstd corrupted") << QStringLiteral("t.jsonl.zst") << false;
    QTest::newRow("gzip corrupted") << QStringLiteral("t.jsonl.gz") << false;
}

void TestTraceImportExport::corruptedCompressedStreamsKeepWhatCameBefore()
{
    QFETCH(QString, name);
    QFETCH(bool, truncate);
    QTemporaryDir dir;
    const QList<TraceRecord> records = captureRecords(QStringLiteral("scenario-deliver.ndjson"));
    const QString path = dir.filePath(name);
    {
        // Flushed every 100 records, as the recorder does every second: the damage stays local.
        TraceWriter writer;
        QVERIFY(writer.open(path, QStringLiteral("ws://h/"), nullptr));
        for (int i = 0; i < records.size(); ++i) {
            writer.write(records[i]);
            if (i % 100 == 99)
                writer.flush();
        }
        writer.close();
    }
    QByteArray bytes = fileBytes(path);
    if (truncate) {
        bytes.truncate(bytes.size() / 2);
    } else {
        for (qsizetype i = bytes.size() / 2; i < bytes.size() / 2 + 16; ++i)
            bytes[i] = char(bytes[i] ^ 0x5a);
    }
    QVERIFY(putFile(path, bytes));

    SystemStore store;
    const TraceLoadResult r = loadTraceInto(store, path);
    QVERIFY(r.ok);
    QVERIFY2(!r.stats.streamError.isEmpty(), "the damage is reported");
    QVERIFY2(r.stats.records > 100, qPrintable(QString::number(r.stats.records)));
    QVERIFY(r.stats.records < records.size());
    // zstd checks every block: at most the line the damage cut is lost. Deflate has no block
    // checks: it may decode some garbage (bad lines) before it notices.
    if (name.endsWith(QLatin1String(".zst")))
        QVERIFY(r.stats.badLines.size() <= 1);
    // What was read is a prefix of the trace, record for record: the model of that prefix.
    TraceReadStats stats;
    const QList<TraceRecord> read = readAll(path, stats);
    QCOMPARE(read.size(), int(r.stats.records));
    for (int i = 0; i < read.size(); ++i)
        QCOMPARE(read[i].raw, records[i].raw);
    SystemStore expected;
    feedLive(expected, records.mid(0, int(r.stats.records)));
    QCOMPARE(stateToJson(store), stateToJson(expected));
}

void TestTraceImportExport::writerRotatesBySizeAndTime()
{
    QTemporaryDir dir;
    const QList<TraceRecord> records = captureRecords(QStringLiteral("scenario-deliver.ndjson"));
    QCOMPARE(TraceWriter::partPath(QStringLiteral("/x/s.jsonl.zst"), 2), QStringLiteral("/x/s.2.jsonl.zst"));
    QCOMPARE(TraceWriter::partPath(QStringLiteral("/x/s.trace.jsonl"), 1), QStringLiteral("/x/s.trace.1.jsonl"));
    QCOMPARE(TraceWriter::partPath(QStringLiteral("/x/s"), 1), QStringLiteral("/x/s.1"));

    for (const bool bySize : {true, false}) {
        const QString path = dir.filePath(bySize ? QStringLiteral("size.jsonl") : QStringLiteral("time.jsonl.gz"));
        TraceWriter writer;
        TraceWriterOptions options;
        if (bySize)
            options.maxBytes = 100 * 1024;
        else
            options.maxSeconds = 3;
        writer.setOptions(options);
        QSignalSpy rotated(&writer, &TraceWriter::rotated);
        QVERIFY(writer.open(path, QStringLiteral("ws://h/"), nullptr));
        for (const TraceRecord &r : records)
            writer.write(r);
        writer.close();
        const QStringList parts = writer.files();
        QVERIFY2(parts.size() >= 3, qPrintable(parts.join(QLatin1Char(' '))));
        QCOMPARE(rotated.count(), parts.size() - 1);
        // Each part is a trace of its own; in order they hold every record once.
        QList<TraceRecord> all;
        for (int i = 0; i < parts.size(); ++i) {
            TraceReadStats stats;
            const QList<TraceRecord> part = readAll(parts[i], stats);
            QCOMPARE(stats.format, QStringLiteral("map-inspector-trace"));
            QCOMPARE(jsonInt(stats.header, "part", 0), qint64(i));
            QVERIFY(!part.isEmpty());
            if (bySize && i + 1 < parts.size())
                QVERIFY(QFileInfo(parts[i]).size() < 100 * 1024 + 64 * 1024);
            else if (!bySize)
                QVERIFY(part.back().timeMs - part.front().timeMs < 3000);
            all << part;
        }
        QCOMPARE(all.size(), records.size());
        // Concatenated (as `cat` would), the parts replay as the whole session.
        QByteArray joined;
        for (const QString &part : parts)
            joined += fileBytes(part);
        const QString whole = dir.filePath(bySize ? QStringLiteral("joined.jsonl") : QStringLiteral("joined.jsonl.gz"));
        QVERIFY(putFile(whole, joined));
        SystemStore fromParts;
        QVERIFY(loadTraceInto(fromParts, whole).ok);
        SystemStore expected;
        feedLive(expected, records);
        QCOMPARE(stateToJson(fromParts), stateToJson(expected));
    }
}

// ---- imports ---------------------------------------------------------------------------------------

void TestTraceImportExport::importFormats_data()
{
    QTest::addColumn<QString>("file");
    QTest::addColumn<QString>("format");
    QTest::addColumn<QStringList>("agents");
    QTest::addColumn<int>("messages");
    QTest::addColumn<QStringList>("tasks"); // "id=status"
    QTest::addColumn<QList<qint64>>("badLines");

    QTest::newRow("000 lines") << QStringLiteral("seed-000.jsonl") << QStringLiteral("seed-000")
                               << QStringList{QStringLiteral("coordinator"), QStringLiteral("worker-1"), QStringLiteral("worker-2")}
                               << 9 << QStringList{QStringLiteral("T-100=completed"), QStringLiteral("T-101=rejected")}
                               << QList<qint64>{9, 10};
    QTest::newRow("002 array") << QStringLiteral("seed-002.json") << QStringLiteral("seed-002")
                               << QStringList{QStringLiteral("executor"), QStringLiteral("planner")} << 5
                               << QStringList{QStringLiteral("job-7=completed")} << QList<qint64>{21, 22};
    QTest::newRow("003 lines") << QStringLiteral("seed-003.jsonl") << QStringLiteral("seed-003")
                               << QStringList{QStringLiteral("dev-1"), QStringLiteral("dev-2"), QStringLiteral("manager"),
                                              QStringLiteral("senior")}
                               << 10 << QStringList{QStringLiteral("bug-7=failed"), QStringLiteral("feat-42=completed")}
                               << QList<qint64>{5};
    QTest::newRow("004 lines") << QStringLiteral("seed-004.jsonl") << QStringLiteral("seed-004")
                               << QStringList{QStringLiteral("agent-a"), QStringLiteral("agent-b"), QStringLiteral("agent-c")}
                               << 5 << QStringList{QStringLiteral("q-1=failed")} << QList<qint64>{4};
}

void TestTraceImportExport::importFormats()
{
    QFETCH(QString, file);
    QFETCH(QString, format);
    QFETCH(QStringList, agents);
    QFETCH(int, messages);
    QFETCH(QStringList, tasks);
    QFETCH(QList<qint64>, badLines);

    SystemStore store;
    const TraceLoadResult r = loadTraceInto(store, importPath(file));
    QVERIFY2(r.ok, qPrintable(r.error));
    QCOMPARE(r.stats.format, format);
    QCOMPARE(r.stats.badLines, badLines);
    QStringList ids;
    for (const Agent &a : store.agents())
        ids << a.id;
    ids.sort();
    QCOMPARE(ids, agents);
    QCOMPARE(int(store.messages().size()), messages);
    QStringList taskStates;
    for (const Task &t : store.tasks())
        taskStates << t.id + QLatin1Char('=') + t.status;
    taskStates.sort();
    QCOMPARE(taskStates, tasks);
    // Every message names its sender, and the envelope was understood.
    for (const Message &m : store.messages()) {
        QVERIFY2(!m.fromAgentId.isEmpty(), qPrintable(m.id));
        QVERIFY2(m.convention != ConventionKind::None, qPrintable(m.id));
    }
    QCOMPARE(store.counters().problems, qint64(0));

    if (format == QLatin1String("seed-000")) {
        const Agent *w1 = store.agent(QStringLiteral("worker-1"));
        QVERIFY(w1);
        QCOMPARE(w1->heartbeatStatus, QStringLiteral("BUSY"));
        QCOMPARE(w1->tasksQueued, std::optional<int>(2));
        QCOMPARE(w1->lastHeartbeatMs, QDateTime::fromString(QStringLiteral("2026-03-02T10:00:05.000Z"), Qt::ISODateWithMs).toMSecsSinceEpoch());
        QCOMPARE(store.agent(QStringLiteral("worker-2"))->lastErrorSeverity, QStringLiteral("CRITICAL"));
        QCOMPARE(store.task(QStringLiteral("T-100"))->requesterId, QStringLiteral("coordinator"));
        QCOMPARE(store.task(QStringLiteral("T-100"))->assigneeId, QStringLiteral("worker-1"));
    } else if (format == QLatin1String("seed-003")) {
        QCOMPARE(store.task(QStringLiteral("feat-42"))->assigneeId, QStringLiteral("dev-2")); // handed off
        QCOMPARE(store.agent(QStringLiteral("dev-2"))->tokensUsed, std::optional<qint64>(12000));
    } else if (format == QLatin1String("seed-004")) {
        // 12:00:00 at +08:00 is 04:00:00 UTC.
        QCOMPARE(store.messages().front().timestampMs,
                 QDateTime::fromString(QStringLiteral("2026-03-02T04:00:00Z"), Qt::ISODate).toMSecsSinceEpoch());
    }
    // The same import, converted to a trace file, replays to the same model.
    QTemporaryDir dir;
    const QString converted = dir.filePath(QStringLiteral("converted.jsonl.zst"));
    {
        TraceFileReader reader;
        QVERIFY(reader.open(importPath(file), nullptr));
        TraceWriter writer;
        QVERIFY(writer.open(converted, QStringLiteral("import:") + file, nullptr));
        TraceRecord record;
        while (reader.next(record))
            writer.write(record);
    }
    SystemStore again;
    QVERIFY(loadTraceInto(again, converted).ok);
    QCOMPARE(stateToJson(again), stateToJson(store));
}

void TestTraceImportExport::importedJsonArrayOnOneLineAndCompressed()
{
    // The 002 array compacted onto one line, and the 000 log gzipped: the same models.
    QTemporaryDir dir;
    QVERIFY(QJsonDocument::fromJson(fileBytes(importPath(QStringLiteral("seed-002.json")))).isArray());
    QByteArray compact = fileBytes(importPath(QStringLiteral("seed-002.json")));
    compact.replace('\n', ' ');
    const QString oneLine = dir.filePath(QStringLiteral("one-line.json"));
    QVERIFY(putFile(oneLine, compact));
    SystemStore a;
    SystemStore b;
    const TraceLoadResult ra = loadTraceInto(a, importPath(QStringLiteral("seed-002.json")));
    const TraceLoadResult rb = loadTraceInto(b, oneLine);
    QVERIFY(ra.ok && rb.ok);
    QCOMPARE(withoutConnection(stateToJson(b)), withoutConnection(stateToJson(a)));
    QCOMPARE(rb.stats.badLines, (QList<qint64>{1, 1}));

    const QString gz = dir.filePath(QStringLiteral("seed-000.jsonl.gz"));
    {
        CompressingWriter out;
        QVERIFY(out.open(gz, Compression::Gzip, nullptr));
        out.write(fileBytes(importPath(QStringLiteral("seed-000.jsonl"))));
        QVERIFY(out.close());
    }
    SystemStore c;
    SystemStore d;
    QVERIFY(loadTraceInto(c, importPath(QStringLiteral("seed-000.jsonl"))).ok);
    const TraceLoadResult rd = loadTraceInto(d, gz);
    QVERIFY(rd.ok);
    QCOMPARE(rd.stats.compression, QStringLiteral("gzip"));
    QCOMPARE(withoutConnection(stateToJson(d)), withoutConnection(stateToJson(c)));

    // A JSON array cut short: the complete elements are kept, the cut one is reported.
    QByteArray cut = fileBytes(importPath(QStringLiteral("seed-002.json")));
    cut.truncate(cut.indexOf("m002-03"));
    const QString cutPath = dir.filePath(QStringLiteral("cut.json"));
    QVERIFY(putFile(cutPath, cut));
    SystemStore e;
    const TraceLoadResult re = loadTraceInto(e, cutPath);
    QVERIFY(re.ok);
    QCOMPARE(int(e.messages().size()), 2);
    QCOMPARE(re.stats.badLineCount, qint64(1));
}

void TestTraceImportExport::unknownFormatIsAClearError()
{
    SystemStore store;
    const TraceLoadResult r = loadTraceInto(store, importPath(QStringLiteral("unknown.jsonl")));
    QVERIFY(!r.ok);
    QVERIFY2(r.error.contains(QLatin1String("unknown format")), qPrintable(r.error));
    for (const char *named : {"map-inspector-trace", "capture", "000", "002", "003", "004", "JSON array", ".gz", ".zst"})
        QVERIFY2(r.error.contains(QString::fromUtf8(named)), named);
    QVERIFY(r.error.contains(QLatin1String("unknown.jsonl")));
    QVERIFY(store.agents().empty());

    // Not JSON at all: the same kind of error.
    QTemporaryDir dir;
    const QString text = dir.filePath(QStringLiteral("notes.txt"));
    QVERIFY(putFile(text, "hello\nworld\n"));
    TraceReadStats stats;
    QString error;
    QVERIFY(!readTrace(text, [](const TraceRecord &) { return true; }, stats, &error));
    QVERIFY(error.contains(QLatin1String("unknown format")));
}

// ---- exports ---------------------------------------------------------------------------------------

void TestTraceImportExport::chromeExportOfSomeAgents()
{
    SystemStore store;
    QVERIFY(loadTraceInto(store, mapi_test::dataPath(QStringLiteral("scenario-deliver.ndjson"))).ok);
    QString agent;
    for (const Agent &a : store.agents())
        if (!a.placeholder && a.role == QLatin1String("worker"))
            agent = a.id;
    QVERIFY(!agent.isEmpty());
    // What the filter must keep, counted from the store.
    int involving = 0;
    for (const EventEntry &e : store.events()) {
        bool keep = store.events().agentId(e) == agent;
        if (!keep && e.messageIndex() >= 0) {
            const Message &m = store.messages()[size_t(e.messageIndex())];
            keep = m.fromAgentId == agent || m.toAgentIds.contains(agent);
        }
        involving += keep ? 1 : 0;
    }
    QVERIFY(involving > 0 && size_t(involving) < store.events().size());

    ChromeTraceOptions options;
    options.agents = {agent};
    QBuffer buffer;
    QVERIFY(buffer.open(QIODevice::WriteOnly));
    ChromeTraceCounts counts;
    QString error;
    QVERIFY2(writeChromeTrace(store, buffer, options, &counts, &error), qPrintable(error));
    QCOMPARE(counts.instantEvents, qint64(involving));
    const QJsonObject doc = QJsonDocument::fromJson(buffer.data()).object();
    QCOMPARE(doc.value(QStringLiteral("otherData")).toObject().value(QStringLiteral("agents")).toArray(),
             QJsonArray{agent});
    QSet<int> usedTids, namedTids;
    int instants = 0;
    for (const QJsonValue &v : doc.value(QStringLiteral("traceEvents")).toArray()) {
        const QJsonObject e = v.toObject();
        const int tid = e.value(QStringLiteral("tid")).toInt();
        if (e.value(QStringLiteral("ph")).toString() == QLatin1String("M"))
            namedTids << tid;
        else
            usedTids << tid;
        instants += e.value(QStringLiteral("ph")).toString() == QLatin1String("i") ? 1 : 0;
        if (e.value(QStringLiteral("ph")).toString() == QLatin1String("X")) {
            const QJsonObject args = e.value(QStringLiteral("args")).toObject();
            QVERIFY(args.value(QStringLiteral("requester")).toString() == agent
                    || args.value(QStringLiteral("assignee")).toString() == agent);
        }
    }
    QCOMPARE(instants, involving);
    QVERIFY(namedTids.contains(store.agentRow(agent) + 1));
    usedTids << 0; // the system thread is always named
    QCOMPARE(namedTids, usedTids); // only the threads in use are named
}

void TestTraceImportExport::chromeExportMatchesTheStore()
{
    for (const QString &source : {mapi_test::dataPath(QStringLiteral("scenario-deliver.ndjson")), importPath(QStringLiteral("seed-003.jsonl"))}) {
        SystemStore store;
        const TraceLoadResult r = loadTraceInto(store, source);
        QVERIFY(r.ok);
        QBuffer buffer;
        QVERIFY(buffer.open(QIODevice::WriteOnly));
        ChromeTraceOptions options;
        options.timeline = r.timeline.get();
        ChromeTraceCounts counts;
        QString error;
        QVERIFY2(writeChromeTrace(store, buffer, options, &counts, &error), qPrintable(error));
        QJsonParseError parseError;
        const QJsonDocument doc = QJsonDocument::fromJson(buffer.data(), &parseError);
        QVERIFY2(doc.isObject(), qPrintable(parseError.errorString()));
        const QJsonArray events = doc.object().value(QStringLiteral("traceEvents")).toArray();
        int instants = 0, messageInstants = 0, stateInstants = 0, withState = 0, complete = 0, threadNames = 0;
        QSet<int> tids;
        for (const QJsonValue &v : events) {
            const QJsonObject e = v.toObject();
            const QString ph = e.value(QStringLiteral("ph")).toString();
            QCOMPARE(e.value(QStringLiteral("pid")).toInt(), 1);
            const int tid = e.value(QStringLiteral("tid")).toInt(-1);
            QVERIFY(tid >= 0 && tid <= int(store.agents().size()));
            if (ph == QLatin1String("M")) {
                if (e.value(QStringLiteral("name")).toString() == QLatin1String("thread_name")) {
                    ++threadNames;
                    tids.insert(tid);
                }
                continue;
            }
            QVERIFY(e.value(QStringLiteral("ts")).toDouble() >= 0);
            if (ph == QLatin1String("i")) {
                ++instants;
                if (e.value(QStringLiteral("name")).toString() == QLatin1String("message.sent"))
                    ++messageInstants;
                if (e.value(QStringLiteral("name")).toString() == QLatin1String("agent.state.changed")) {
                    ++stateInstants;
                    withState += e.value(QStringLiteral("args")).toObject().contains(QStringLiteral("state"));
                }
            } else if (ph == QLatin1String("X")) {
                ++complete;
                QVERIFY(e.value(QStringLiteral("dur")).toDouble() >= 0);
            } else {
                QFAIL(qPrintable(QStringLiteral("unexpected phase ") + ph));
            }
        }
        int sent = 0, stateChanges = 0;
        for (const EventEntry &e : store.events()) {
            sent += store.events().kind(e) == EventKind::MessageSent;
            stateChanges += store.events().kind(e) == EventKind::AgentStateChanged;
        }
        QCOMPARE(instants, int(store.events().size()));
        QCOMPARE(messageInstants, sent);
        QCOMPARE(stateInstants, stateChanges);
        QCOMPARE(withState, stateChanges);
        QCOMPARE(complete, int(store.tasks().size()));
        QCOMPARE(threadNames, int(store.agents().size()) + 1);
        QCOMPARE(tids.size(), threadNames);
        QCOMPARE(counts.instantEvents, qint64(instants));
        QCOMPARE(counts.taskEvents, qint64(complete));
    }

    // A time range: only what overlaps it.
    SystemStore store;
    QVERIFY(loadTraceInto(store, mapi_test::dataPath(QStringLiteral("scenario-deliver.ndjson"))).ok);
    const qint64 from = store.events()[100].timestampMs;
    const qint64 to = store.events()[200].timestampMs;
    int inRange = 0;
    for (const EventEntry &e : store.events())
        inRange += e.timestampMs >= from && e.timestampMs <= to;
    QBuffer buffer;
    QVERIFY(buffer.open(QIODevice::WriteOnly));
    ChromeTraceOptions options;
    options.fromMs = from;
    options.toMs = to;
    ChromeTraceCounts counts;
    QVERIFY(writeChromeTrace(store, buffer, options, &counts));
    QCOMPARE(counts.instantEvents, qint64(inRange));
    QVERIFY(QJsonDocument::fromJson(buffer.data()).isObject());
}

void TestTraceImportExport::csvParsesBackWithTheSameRows()
{
    QCOMPARE(csvField(QStringLiteral("plain")), QByteArray("plain"));
    QCOMPARE(csvField(QStringLiteral("a,b")), QByteArray("\"a,b\""));
    QCOMPARE(csvField(QStringLiteral("say \"hi\"")), QByteArray("\"say \"\"hi\"\"\""));
    QCOMPARE(csvField(QStringLiteral("=1+2")), QByteArray("'=1+2"));
    QCOMPARE(csvField(QStringLiteral("-5"), false), QByteArray("-5"));

    for (const QString &source : {mapi_test::dataPath(QStringLiteral("scenario-deliver.ndjson")), importPath(QStringLiteral("seed-000.jsonl")),
                                  importPath(QStringLiteral("seed-003.jsonl"))}) {
        SystemStore store;
        QVERIFY(loadTraceInto(store, source).ok);
        for (const CsvTable table : {CsvTable::Agents, CsvTable::Messages, CsvTable::Tasks}) {
            QBuffer buffer;
            QVERIFY(buffer.open(QIODevice::WriteOnly));
            const qint64 written = writeCsv(store, table, buffer).value();
            const QList<QStringList> rows = parseCsv(buffer.data());
            QVERIFY(!rows.isEmpty());
            const qsizetype columns = rows.front().size();
            for (const QStringList &row : rows)
                QCOMPARE(row.size(), columns);
            const qint64 expected = table == CsvTable::Agents ? qint64(store.agents().size())
                : table == CsvTable::Messages                 ? qint64(store.messages().size())
                                                              : qint64(store.tasks().size());
            QCOMPARE(written, expected);
            QCOMPARE(qint64(rows.size() - 1), expected);
            if (table == CsvTable::Messages) {
                // Payloads (quotes, commas) come back exactly; a loaded trace's are read from
                // its frames (the store keeps none of them).
                const int payload = int(rows.front().indexOf(QStringLiteral("payload")));
                int withPayload = 0;
                for (size_t i = 0; i < store.messages().size(); ++i) {
                    const QString text = rows[int(i) + 1][payload];
                    const QByteArray kept = store.messagePayload(int(i));
                    QCOMPARE(text.toUtf8(), kept);
                    withPayload += !kept.isEmpty();
                    QCOMPARE(rows[int(i) + 1][0], store.messages()[i].id);
                }
                QVERIFY(withPayload > 0);
            }
        }
    }
}

// ---- time travel -----------------------------------------------------------------------------------

// A loaded trace keeps no payloads (SystemStore::messagePayload reads them from the timeline's
// frames); a load that keeps its frames keeps them. Both must give the same payloads and model,
// on the demo system's recording (every payload convention) and a seed log.
void TestTraceImportExport::payloadsReadFromFramesEqualKeptPayloads()
{
    for (const QString &source : {QStringLiteral(MAPI_SAMPLE_TRACE), importPath(QStringLiteral("seed-000.jsonl"))}) {
        SystemStore lean;
        SystemStore full;
        QVERIFY(loadTraceInto(lean, source).ok);
        TraceLoadOptions keep;
        keep.keepRawFrames = true;
        QVERIFY(loadTraceInto(full, source, keep).ok);
        QCOMPARE(stateToJson(lean), stateToJson(full));
        QCOMPARE(lean.messages().size(), full.messages().size());
        QVERIFY(lean.messages().size() > 0);
        size_t inFrame = 0;
        size_t conventions = 0;
        size_t usage = 0;
        for (size_t row = 0; row < lean.messages().size(); ++row) {
            const Message a = lean.messages()[row];
            const Message b = full.messages()[row];
            QVERIFY(!b.payloadInFrame);
            QCOMPARE(a.payloadText.isEmpty(), a.payloadInFrame || b.payloadText.isEmpty());
            inFrame += a.payloadInFrame;
            QCOMPARE(lean.messagePayload(int(row)), b.payloadText);
            QCOMPARE(full.messagePayload(int(row)), b.payloadText);
            QCOMPARE(a.id, b.id);
            QCOMPARE(a.convention, b.convention);
            QCOMPARE(a.taskId, b.taskId);
            QCOMPARE(a.payloadType, b.payloadType);
            QCOMPARE(a.tokensUsed, b.tokensUsed);
            QCOMPARE(a.costUsd, b.costUsd);
            conventions += a.convention != ConventionKind::None;
            usage += a.tokensUsed || a.costUsd;
        }
        QVERIFY2(inFrame > lean.messages().size() / 2, qPrintable(source));
        QVERIFY2(conventions > 0, qPrintable(source));
        if (source == QLatin1String(MAPI_SAMPLE_TRACE))
            QVERIFY(usage > 0);
    }
}

// A trace that starts mid-flight: the first thing heard of a message is its delivery. The
// decoder leaves a delivery's payload in its frame; the store must read it from there, live and
// loaded alike, with what it means (a completed task, usage).
void TestTraceImportExport::deliveryOfAMessageNeverSeenSent()
{
    const auto delivered = [](int sequence, const char *messageId, const Json &payload) {
        const Json frame = {{"jsonrpc", "2.0"}, {"method", "map/event"},
                            {"params", {{"subscriptionId", "s1"}, {"sequenceNumber", sequence},
                                        {"eventId", "01M8344131X0HT1QXQ5T4X07" + std::to_string(10 + sequence)},
                                        {"timestamp", 1795401363849 + sequence},
                                        {"event", {{"type", "message.delivered"},
                                                   {"data", {{"message", {{"id", messageId}, {"from", "agent-w"},
                                                                          {"to", Json::array({"agent-c", "agent-d"})},
                                                                          {"payload", payload},
                                                                          {"timestamp", 1795401363849}}},
                                                             {"agentId", "agent-c"}}}}}}}};
        return QByteArray::fromStdString(frame.dump());
    };
    const Json complete = {{"message_id", "e-1"}, {"type", "TASK_COMPLETE"}, {"from", "agent-w"}, {"to", "agent-c"},
                           {"payload", {{"task_id", "task-7"}, {"status", "SUCCESS"}}}};
    const Json status = {{"type", "STATUS_UPDATE"}, {"agent_id", "agent-w"},
                         {"resource_usage", {{"tokens_used", 1234}, {"cost_usd", 0.5}}}};
    QList<TraceRecord> records;
    records << TraceRecord{1795401363000, QStringLiteral("open"), 1, QByteArray("ws://127.0.0.1:1/"), false, Json()};
    records << TraceRecord{1795401363850, QStringLiteral("recv"), 1, delivered(1, "01M8344131X0HT1QXQ5T4X0788", complete), false, Json()};
    records << TraceRecord{1795401363851, QStringLiteral("recv"), 1, delivered(2, "01M8344131X0HT1QXQ5T4X0789", status), false, Json()};
    // The same delivery again: the message is known now, nothing more is read.
    records << TraceRecord{1795401363852, QStringLiteral("recv"), 1, delivered(3, "01M8344131X0HT1QXQ5T4X0788", complete), false, Json()};
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("midflight.jsonl"));
    QVERIFY(writeTrace(path, records));

    SystemStore lean;
    QVERIFY(loadTraceInto(lean, path).ok);
    SystemStore full;
    TraceLoadOptions keep;
    keep.keepRawFrames = true;
    QVERIFY(loadTraceInto(full, path, keep).ok);
    SystemStore live; // as the live client decodes: simdjson, frames kept with events
    {
        ProtocolPipeline pipeline({}, SimdJsonParser::instance());
        live.apply(pipeline.connectionOpened(QStringLiteral("ws://127.0.0.1:1/"), records[0].timeMs));
        for (qsizetype i = 1; i < records.size(); ++i)
            live.apply(pipeline.frameReceived(records[i].raw, records[i].timeMs).inputs);
    }
    for (const SystemStore *store : {&lean, &full, &live}) {
        QCOMPARE(store->messages().size(), size_t(2));
        const Message done = store->messages()[0];
        QCOMPARE(done.convention, ConventionKind::TaskComplete);
        QCOMPARE(done.taskId, QStringLiteral("task-7"));
        QCOMPARE(done.payloadType, QStringLiteral("TASK_COMPLETE"));
        QCOMPARE(Json::parse(store->messagePayload(0).toStdString()), complete);
        // Its recipients, also read from the frame (the decoder leaves a delivery's `to` there).
        QCOMPARE(done.toDisplay, QStringLiteral("agent-c, agent-d"));
        QCOMPARE(done.toAgentIds, QStringList({QStringLiteral("agent-c"), QStringLiteral("agent-d")}));
        const Task *task = store->task(QStringLiteral("task-7"));
        QVERIFY(task);
        QCOMPARE(task->status, QStringLiteral("completed"));
        const Message usage = store->messages()[1];
        QCOMPARE(usage.convention, ConventionKind::StatusUpdate);
        QCOMPARE(usage.tokensUsed, std::optional<qint64>(1234));
        QCOMPARE(usage.costUsd, std::optional<double>(0.5));
        QCOMPARE(Json::parse(store->messagePayload(1).toStdString()), status);
        QCOMPARE(stateToJson(*store), stateToJson(lean));
    }
}

void TestTraceImportExport::seekGivesTheStateOfADirectReplay()
{
    const QString path = mapi_test::dataPath(QStringLiteral("scenario-deliver.ndjson"));
    const QList<TraceRecord> records = captureRecords(QStringLiteral("scenario-deliver.ndjson"));
    SystemStore store;
    const TraceLoadResult r = loadTraceInto(store, path);
    QVERIFY(r.ok && r.timeline);
    ReplayController controller(&store, r.timeline);
    QSignalSpy moved(&controller, &ReplayController::positionChanged);
    QCOMPARE(controller.positionMs(), r.timeline->endTimeMs());
    const qint64 start = controller.startMs();
    const qint64 span = controller.endMs() - start;
    QVERIFY(span > 1000);
    // Backwards, forwards, backwards again, and to both ends.
    for (const double f : {0.5, 0.75, 0.25, 0.26, 0.9, 0.0, 1.0, 0.6}) {
        const qint64 t = start + qint64(double(span) * f);
        controller.seek(t);
        QCOMPARE(controller.positionMs(), t);
        SystemStore direct;
        TraceLoadOptions until;
        until.untilTimeMs = t;
        QVERIFY(loadTraceInto(direct, path, until).ok);
        direct.advanceTime(t);
        QCOMPARE(stateToJson(store), stateToJson(direct));
        // And the same as the live pipeline fed up to t.
        SystemStore live;
        feedLive(live, records, t);
        QCOMPARE(withoutConnection(stateToJson(store)), withoutConnection(stateToJson(live)));
    }
    QCOMPARE(moved.count(), 8);
    controller.seek(start - 100000); // clamped
    QCOMPARE(controller.positionMs(), start);
}

void TestTraceImportExport::stepForwardAndBack()
{
    SystemStore store;
    const TraceLoadResult r = loadTraceInto(store, importPath(QStringLiteral("seed-000.jsonl")));
    QVERIFY(r.ok);
    ReplayController controller(&store, r.timeline, false);
    QVERIFY(store.events().empty());
    QList<Json> states;
    states << stateToJson(store);
    // Each step applies exactly one record that changes the model.
    int steps = 0;
    while (controller.recordsApplied() < r.timeline->recordCount()) {
        const size_t before = store.events().size();
        controller.step();
        ++steps;
        QVERIFY(store.events().size() > before || r.timeline->inputsOf(controller.recordsApplied() - 1) > 0);
        states << stateToJson(store);
        QVERIFY(steps < 1000);
    }
    QCOMPARE(controller.positionMs(), controller.endMs());
    QCOMPARE(store.counters().messages, qint64(9));
    // Back one by one: the same states, in reverse (health is evaluated at each position).
    for (int i = steps - 1; i >= 0; --i) {
        controller.stepBack();
        const Json now = stateToJson(store);
        if (i > 0)
            QCOMPARE(now, states[i]);
        else
            QCOMPARE(now.at("counts"), states[i].at("counts"));
    }
    QVERIFY(store.events().empty());
}

void TestTraceImportExport::playbackReachesTheEnd()
{
    SystemStore store;
    const TraceLoadResult r = loadTraceInto(store, mapi_test::dataPath(QStringLiteral("scenario-deliver.ndjson")));
    QVERIFY(r.ok);
    const Json full = stateToJson(store);
    ReplayController controller(&store, r.timeline);
    controller.seek(controller.startMs());
    QVERIFY(store.events().size() < 10);
    controller.setSpeed(1000); // clamped
    QCOMPARE(controller.speed(), ReplayController::kMaxSpeed);
    controller.setSpeed(0.01);
    QCOMPARE(controller.speed(), ReplayController::kMinSpeed);
    controller.setSpeed(100);
    QSignalSpy finished(&controller, &ReplayController::finished);
    QSignalSpy playing(&controller, &ReplayController::playingChanged);
    QSignalSpy moved(&controller, &ReplayController::positionChanged);
    controller.play();
    QVERIFY(controller.isPlaying());
    // 12.5 s of trace at 100×: about 0.13 s.
    QVERIFY(finished.wait(10000));
    QVERIFY(!controller.isPlaying());
    QCOMPARE(playing.count(), 2);
    QVERIFY(moved.count() >= 2);
    qint64 previous = 0;
    for (const QList<QVariant> &args : std::as_const(moved)) {
        QVERIFY(args.at(0).toLongLong() >= previous);
        previous = args.at(0).toLongLong();
    }
    QCOMPARE(controller.positionMs(), controller.endMs());
    QCOMPARE(stateToJson(store), full);

    // Pause stops the clock.
    controller.seek(controller.startMs());
    controller.setSpeed(0.1);
    controller.play();
    controller.pause();
    const qint64 at = controller.positionMs();
    QTest::qWait(100);
    QCOMPARE(controller.positionMs(), at);
}

// A seed-format log line nested 300,000 levels deep once crashed the reader (stack overflow):
// every imported line now meets the live codec's limits before it is parsed.
void TestTraceImportExport::importedLinesMeetTheCodecLimits()
{
    QTemporaryDir dir;
    auto line = [](const char *id, const char *time, const QByteArray &payload) -> QByteArray {
        return QByteArray(R"({"message_id":")") + id + R"(","type":"note","from":"a","to":"b","timestamp":")" + time
            + R"(","payload":)" + payload + "}\n";
    };
    const int depth = 300000;
    const QByteArray deep = QByteArray(depth, '[') + QByteArray(depth, ']');
    const QByteArray justDeepEnough = QByteArray(100, '[') + QByteArray(100, ']'); // the message is 1 level, its envelope 1

    const QString mixed = dir.filePath(QStringLiteral("mixed.jsonl"));
    QVERIFY(putFile(mixed, line("m0", "2026-11-21T09:08:43.230Z", "{}") + line("m1", "2026-11-21T09:08:44.230Z", deep)
                               + line("m2", "2026-11-21T09:08:45.230Z", justDeepEnough)));
    SystemStore store;
    const TraceLoadResult r = loadTraceInto(store, mixed);
    QVERIFY2(r.ok, qPrintable(r.error));
    QCOMPARE(store.counters().messages, qint64(2)); // the lines around the deep one are kept
    QCOMPARE(r.stats.badLines, QList<qint64>{2});   // and the deep one is named
    QCOMPARE(r.stats.format, QStringLiteral("seed-000"));

    // Only deep lines: no format to find, and the error says why.
    const QString onlyDeep = dir.filePath(QStringLiteral("deep.jsonl"));
    QVERIFY(putFile(onlyDeep, line("m1", "2026-11-21T09:08:44.230Z", deep)));
    SystemStore empty;
    const TraceLoadResult refused = loadTraceInto(empty, onlyDeep);
    QVERIFY(!refused.ok);
    QVERIFY2(refused.error.contains(QLatin1String("nested deeper than 128 levels")), qPrintable(refused.error));

    // Six lines past the size limit ahead of the first record (issue 16: the format probe kept
    // every line it read, 64 giant ones took 2 GiB): each is named as a bad line, the records
    // after them are read.
    const QString giant = dir.filePath(QStringLiteral("giant-first.jsonl"));
    {
        QFile out(giant);
        QVERIFY(out.open(QIODevice::WriteOnly));
        const QByteArray big = QByteArray(R"({"note":")") + QByteArray(17 << 20, 'x') + "\"}\n";
        for (int i = 0; i < 6; ++i)
            QCOMPARE(out.write(big), big.size());
        out.write(R"({"seq":1,"dir":"open","url":"ws://127.0.0.1:1/client","t":1795252123000})" "\n");
        out.write(R"({"seq":2,"dir":"recv","t":1795252123001,"raw":"{\"jsonrpc\":\"2.0\",\"method\":\"map/event\",\"params\":{\"subscriptionId\":\"s\",\"sequenceNumber\":1,\"eventId\":\"e1\",\"timestamp\":1795252123001,\"event\":{\"type\":\"agent.registered\",\"data\":{\"agent\":{\"id\":\"after\",\"name\":\"after\",\"state\":\"idle\"}}}}}"})" "\n");
    }
    SystemStore afterGiants;
    const TraceLoadResult read = loadTraceInto(afterGiants, giant);
    QVERIFY2(read.ok, qPrintable(read.error));
    QCOMPARE(read.stats.badLines, (QList<qint64>{1, 2, 3, 4, 5, 6}));
    QVERIFY(afterGiants.agent(QStringLiteral("after")));
}

void TestTraceImportExport::bookmarksRoundTrip()
{
    QTemporaryDir dir;
    const QString trace = dir.filePath(QStringLiteral("session.jsonl.zst"));
    QString error;
    ErrorOr<QList<Bookmark>> none = loadBookmarks(trace);
    QVERIFY(none.ok()); // none yet
    QVERIFY(none->isEmpty());
    QVERIFY(none.error().isEmpty());
    const QList<Bookmark> marks = {{1795252123500, QStringLiteral("first failure"), QStringLiteral("worker-3 → custom:failed, \"why?\"")},
                                   {1795252129000, QStringLiteral("handoff"), QString()}};
    QVERIFY2(saveBookmarks(trace, marks, &error), qPrintable(error));
    QCOMPARE(bookmarksPath(trace), trace + QStringLiteral(".bookmarks.json"));
    QVERIFY(QFile::exists(bookmarksPath(trace)));
    const ErrorOr<QList<Bookmark>> read = loadBookmarks(trace);
    QVERIFY2(read.ok(), qPrintable(read.error()));
    const QList<Bookmark> &loaded = *read;
    QCOMPARE(loaded.size(), 2);
    for (int i = 0; i < 2; ++i) {
        QCOMPARE(loaded[i].timeMs, marks[i].timeMs);
        QCOMPARE(loaded[i].title, marks[i].title);
        QCOMPARE(loaded[i].note, marks[i].note);
    }
    QVERIFY(putFile(bookmarksPath(trace), "not json"));
    const ErrorOr<QList<Bookmark>> broken = loadBookmarks(trace);
    QVERIFY(!broken.ok());
    QVERIFY2(broken.error().contains(QLatin1String("not a bookmarks file")), qPrintable(broken.error()));
}

// ---- the loader ------------------------------------------------------------------------------------

void TestTraceImportExport::cancelStopsTheLoaderEarly()
{
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("big.jsonl.zst"));
    QVERIFY(writeTrace(path, syntheticRecords(30000)));
    std::atomic<bool> cancel{false};
    TraceLoadOptions options;
    options.cancel = &cancel;
    options.batchRecords = 500;
    qint64 batches = 0;
    qint64 lastBytes = 0;
    const TraceLoadResult r = loadTraceBatches(path, options, [&](TraceLoadBatch &&batch) {
        ++batches;
        if (batch.bytesRead < lastBytes || batch.bytesRead > batch.bytesTotal)
            return false;
        lastBytes = batch.bytesRead;
        if (batches == 3)
            cancel = true;
        return true;
    });
    QVERIFY(r.ok);
    QVERIFY(r.cancelled);
    QVERIFY(r.stats.cancelled);
    QVERIFY2(batches <= 4, qPrintable(QString::number(batches)));
    QVERIFY(r.stats.records < 30000);

    // readTrace: the same flag.
    cancel = false;
    TraceReadOptions readOptions;
    readOptions.cancel = &cancel;
    qint64 seen = 0;
    TraceReadStats stats;
    QVERIFY(readTrace(path, [&](const TraceRecord &) {
        if (++seen == 100)
            cancel = true;
        return true;
    }, stats, nullptr, readOptions));
    QVERIFY(stats.cancelled);
    QCOMPARE(seen, qint64(100));

    // A sink that says stop stops too.
    batches = 0;
    const TraceLoadResult stopped = loadTraceBatches(path, TraceLoadOptions(), [&](TraceLoadBatch &&) { return ++batches < 2; });
    QVERIFY(stopped.cancelled);
    QCOMPARE(batches, qint64(2));
}

void TestTraceImportExport::loadJobFillsTheStoreInItsThread()
{
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("job.jsonl.gz"));
    QVERIFY(writeTrace(path, syntheticRecords(20000)));
    SystemStore store;
    TraceLoadJob job(&store);
    QSignalSpy progress(&job, &TraceLoadJob::progress);
    QSignalSpy first(&job, &TraceLoadJob::firstBatchApplied);
    QSignalSpy finished(&job, &TraceLoadJob::finished);
    bool appliedInThisThread = true;
    connect(&store, &SystemStore::changed, this, [&] { appliedInThisThread &= QThread::currentThread() == thread(); });
    job.start(path);
    QVERIFY(job.isRunning());
    QVERIFY(finished.wait(60000));
    QVERIFY(!job.isRunning());
    QVERIFY(finished.first().at(0).value<JobOutcome>().ok());
    QCOMPARE(first.count(), 1);
    QVERIFY(progress.count() >= 2);
    QCOMPARE(progress.last().at(0).toLongLong(), progress.last().at(1).toLongLong()); // 100 %
    QVERIFY(appliedInThisThread);
    QCOMPARE(store.counters().messages, qint64(20000));
    SystemStore direct;
    QVERIFY(loadTraceInto(direct, path).ok);
    QCOMPARE(stateToJson(store), stateToJson(direct));
    QVERIFY(job.result().timeline);
    QCOMPARE(job.result().timeline->recordCount(), qint64(20006));
    QVERIFY(!job.result().timeline->frameForEvent(1000).isEmpty());

    // A second start replaces the model.
    job.start(importPath(QStringLiteral("seed-004.jsonl")));
    QVERIFY(finished.wait(20000));
    QCOMPARE(store.counters().messages, qint64(5));

    // An unreadable file: finished(Failed, why).
    job.start(importPath(QStringLiteral("unknown.jsonl")));
    QVERIFY(finished.wait(20000));
    const JobOutcome unreadable = finished.last().at(0).value<JobOutcome>();
    QVERIFY(unreadable.end == JobOutcome::End::Failed);
    QVERIFY(unreadable.error.contains(QLatin1String("unknown format")));

    // Started again while loading: the running load ends as cancelled at once, and what it had
    // queued is never applied to the new one (stale): the store holds the second file only.
    const int before = int(finished.count());
    bool restarted = false;
    const auto restart = connect(&job, &TraceLoadJob::firstBatchApplied, &job, [&] {
        if (std::exchange(restarted, true))
            return;
        job.start(importPath(QStringLiteral("seed-004.jsonl"))); // from inside the first load's drain
        QCOMPARE(finished.count(), before + 1);
        QVERIFY(finished.last().at(0).value<JobOutcome>().cancelled());
    });
    job.start(path);
    QVERIFY(QTest::qWaitFor([&] { return finished.count() == before + 2; }, 20000));
    disconnect(restart);
    QVERIFY(restarted);
    QVERIFY(finished.last().at(0).value<JobOutcome>().ok());
    QCOMPARE(store.counters().messages, qint64(5));
}

// While loading, the store's changes reach the views at most every kLoadingViewShare-th of the
// thread: a receiver that takes 40 ms per change is told of changes every ≥ 200 ms (not every
// 100 ms), and the live rate is back once the load ends.
void TestTraceImportExport::loadJobGivesSlowViewsLessOfTheThread()
{
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("slow-views.jsonl"));
    QVERIFY(writeTrace(path, syntheticRecords(100000)));
    SystemStore store;
    TraceLoadJob job(&store);
    QSignalSpy finished(&job, &TraceLoadJob::finished);
    int changes = 0;
    connect(&store, &SystemStore::changed, this, [&] {
        ++changes;
        QThread::msleep(40);
    });
    int longestInterval = 0;
    QTimer watch;
    connect(&watch, &QTimer::timeout, this, [&] {
        if (job.isRunning())
            longestInterval = std::max(longestInterval, store.flushInterval());
    });
    watch.start(5);
    job.start(path);
    QVERIFY(finished.wait(60000));
    QVERIFY(finished.first().at(0).value<JobOutcome>().ok());
    // (whole milliseconds, and sleeps are not exact: 35 of the 40 ms are counted on)
    QVERIFY2(longestInterval >= (TraceLoadJob::kLoadingViewShare - 1) * 35, qPrintable(QString::number(longestInterval)));
    QVERIFY(longestInterval <= TraceLoadJob::kMaxLoadingFlushIntervalMs);
    QCOMPARE(store.flushInterval(), SystemStore::kFlushIntervalMs);
    QVERIFY(changes >= 2);
    QCOMPARE(store.counters().messages, qint64(100000));
}

void TestTraceImportExport::loadJobCancel()
{
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("cancel.jsonl"));
    QVERIFY(writeTrace(path, syntheticRecords(60000)));
    SystemStore store;
    TraceLoadJob job(&store);
    QSignalSpy finished(&job, &TraceLoadJob::finished);
    connect(&job, &TraceLoadJob::firstBatchApplied, &job, &TraceLoadJob::cancel);
    TraceLoadOptions options;
    options.batchRecords = 256;
    job.start(path, options);
    QVERIFY(finished.wait(60000));
    QVERIFY(finished.first().at(0).value<JobOutcome>().cancelled());
    QVERIFY(job.wasCancelled());
    QVERIFY(job.result().cancelled);
    QVERIFY2(store.counters().messages < 60000, qPrintable(QString::number(store.counters().messages)));

    // Destroying a running job cancels and waits.
    {
        SystemStore other;
        TraceLoadJob running(&other);
        running.start(path);
    }
}

namespace {

// A job whose "work" the test finishes by hand, to check the rules BackgroundJob keeps for all.
class ManualJob : public BackgroundJob
{
public:
    quint64 start() { return beginAttempt(); }
    bool report(quint64 ticket, JobOutcome outcome) { return endAttempt(ticket, std::move(outcome)); }
    int stopRequests = 0;
    bool endAtOnce = false; // like an export: the work is this thread's

private:
    void requestStop() override
    {
        ++stopRequests;
        if (endAtOnce)
            endAttempt(currentTicket(), JobOutcome::cancel());
    }
};

} // namespace

void TestTraceImportExport::backgroundJobRules()
{
    ManualJob job;
    QSignalSpy finished(&job, &BackgroundJob::finished);
    auto last = [&] { return finished.last().at(0).value<JobOutcome>(); };

    job.cancel(); // nothing runs: nothing to stop, nothing said
    QCOMPARE(job.stopRequests, 0);
    QCOMPARE(finished.count(), 0);

    // Done, once: a second report of the same attempt is ignored.
    const quint64 first = job.start();
    QVERIFY(job.isRunning());
    QVERIFY(job.report(first, JobOutcome::done()));
    QVERIFY(!job.report(first, JobOutcome::failed(QStringLiteral("late"))));
    QCOMPARE(finished.count(), 1);
    QVERIFY(last().ok());

    // Cancelled work that still reports success ends as cancelled: what it made is not used.
    const quint64 second = job.start();
    job.cancel();
    QCOMPARE(job.stopRequests, 1);
    QVERIFY(job.isRunning()); // ends when the work stopped (a trace load joins its threads first)
    QVERIFY(job.report(second, JobOutcome::done()));
    QVERIFY(last().cancelled());
    QVERIFY(job.wasCancelled());

    // Superseded: a new attempt ends the running one as cancelled; the old ticket is stale.
    const quint64 third = job.start();
    const quint64 fourth = job.start();
    QCOMPARE(finished.count(), 3);
    QVERIFY(last().cancelled());
    QVERIFY(!job.report(third, JobOutcome::done()));
    QCOMPARE(finished.count(), 3);
    QVERIFY(job.report(fourth, JobOutcome::failed(QStringLiteral("disk full"))));
    QVERIFY(last().end == JobOutcome::End::Failed);
    QCOMPARE(last().error, QStringLiteral("disk full"));

    // Work in the job's own thread ends at cancel() itself; a late report changes nothing.
    job.endAtOnce = true;
    const quint64 fifth = job.start();
    job.cancel();
    QVERIFY(!job.isRunning());
    QVERIFY(last().cancelled());
    QVERIFY(!job.report(fifth, JobOutcome::done()));
    QCOMPARE(finished.count(), 5);
}

void TestTraceImportExport::exportJobWritesInSlicesWhileTheLoopRuns()
{
    // The window's exports: written a slice at a time with the event loop running in between;
    // the file is the same as the one-go writers give, and appears only once complete.
    SystemStore store;
    QVERIFY(loadTraceInto(store, QStringLiteral(MAPI_SAMPLE_TRACE)).ok);
    QVERIFY(store.messages().size() > 1000);
    QTemporaryDir dir;
    const struct
    {
        const char *name;
        ExportJob::MakeWriter make;
        std::function<void(QIODevice &)> oneGo;
    } exports[] = {
        {"messages.csv", [&](QIODevice &out) { return makeCsvWriter(store, CsvTable::Messages, out); },
         [&](QIODevice &out) { QVERIFY(*writeCsv(store, CsvTable::Messages, out) > 0); }},
        {"chrome.json", [&](QIODevice &out) { return makeChromeTraceWriter(store, out); },
         [&](QIODevice &out) { QVERIFY(writeChromeTrace(store, out)); }},
    };
    for (const auto &e : exports) {
        const QString path = dir.filePath(QString::fromLatin1(e.name));
        ExportJob job(&store, path, e.make);
        job.setSliceMs(0); // one step of rows per slice
        QList<qint64> done;
        qint64 total = 0;
        connect(&job, &ExportJob::progress, &job, [&](qint64 d, qint64 t) { done << d; total = t; });
        QSignalSpy finished(&job, &ExportJob::finished);
        int loopTurns = 0;
        QTimer ticker;
        connect(&ticker, &QTimer::timeout, &job, [&] {
            ++loopTurns;
            if (job.isRunning())
                QVERIFY2(!QFile::exists(path), e.name); // nothing at the path before the end
        });
        ticker.start(0);
        job.start();
        QVERIFY(QTest::qWaitFor([&] { return finished.count() == 1; }, 30000));
        ticker.stop();
        const JobOutcome outcome = finished.front().at(0).value<JobOutcome>();
        QVERIFY2(outcome.ok(), qPrintable(outcome.error));
        QVERIFY2(total > 64 * 4, e.name);
        QVERIFY2(done.size() > total / 64, e.name); // a step of 64 rows a slice
        QVERIFY(std::is_sorted(done.cbegin(), done.cend()));
        QCOMPARE(done.back(), total);
        QVERIFY2(loopTurns >= total / 64 - 1, e.name); // the loop ran between the slices
        QFile file(path);
        QVERIFY(file.open(QIODevice::ReadOnly));
        QBuffer oneGo;
        QVERIFY(oneGo.open(QIODevice::WriteOnly));
        e.oneGo(oneGo);
        QVERIFY2(file.readAll() == oneGo.data(), e.name);
    }
}

void TestTraceImportExport::exportJobCancelAndResetLeaveNoFile()
{
    SystemStore store;
    QVERIFY(loadTraceInto(store, QStringLiteral(MAPI_SAMPLE_TRACE)).ok);
    QTemporaryDir dir;
    auto messages = [&](QIODevice &out) { return makeCsvWriter(store, CsvTable::Messages, out); };

    // A messages export interrupted after a few slices: what it then said, once.
    struct Ending
    {
        bool sliced = false;  // a few slices ran before the interruption
        int endings = 0;      // finished() signals right after it
        JobOutcome outcome;   // what finished() said
        bool running = true;  // still running after it
        bool cancelled = false;
    };
    auto interrupt = [&](const QString &path, const std::function<void(ExportJob &)> &how) {
        Ending ending;
        ExportJob job(&store, path, messages);
        job.setSliceMs(0);
        QSignalSpy finished(&job, &ExportJob::finished);
        QSignalSpy progress(&job, &ExportJob::progress);
        job.start();
        ending.sliced = QTest::qWaitFor([&] { return progress.count() >= 3; }, 10000) && job.isRunning();
        how(job);
        ending.endings = int(finished.count());
        if (ending.endings > 0)
            ending.outcome = finished.front().at(0).value<JobOutcome>();
        ending.running = job.isRunning();
        ending.cancelled = job.wasCancelled();
        QTest::qWait(20); // no slice runs after the end
        ending.endings = int(finished.count());
        return ending;
    };

    // Cancelled: no file, and it says so.
    const QString cancelled = dir.filePath(QStringLiteral("cancelled.csv"));
    Ending ending = interrupt(cancelled, [](ExportJob &job) { job.cancel(); });
    QVERIFY(ending.sliced);
    QCOMPARE(ending.endings, 1);
    QVERIFY(ending.outcome.cancelled()); // typed: a caller does not compare the text
    QVERIFY(ending.outcome.error.isEmpty());
    QVERIFY(ending.cancelled);
    QVERIFY(!ending.running);
    QVERIFY(!QFile::exists(cancelled));
    QCOMPARE(QDir(dir.path()).entryList(QDir::Files).size(), 0); // no temporary file left either

    // The model rebuilt under the export (a seek back resets the store): stopped, no file.
    const QString rebuilt = dir.filePath(QStringLiteral("rebuilt.csv"));
    ending = interrupt(rebuilt, [&](ExportJob &) { store.reset(); });
    QVERIFY(ending.sliced);
    QCOMPARE(ending.endings, 1);
    QVERIFY(!ending.cancelled);
    QVERIFY(ending.outcome.end == JobOutcome::End::Failed);
    QVERIFY2(ending.outcome.error.contains(QStringLiteral("rebuilt")), qPrintable(ending.outcome.error));
    QVERIFY(!ending.running);
    QVERIFY(!QFile::exists(rebuilt));

    // A path that cannot be written: a clear error at once.
    ExportJob job(&store, dir.filePath(QStringLiteral("no/such/dir/x.csv")), messages);
    QSignalSpy finished(&job, &ExportJob::finished);
    job.start();
    QCOMPARE(finished.count(), 1);
    const JobOutcome failed = finished.front().at(0).value<JobOutcome>();
    QVERIFY(failed.end == JobOutcome::End::Failed);
    QVERIFY(failed.error.contains(QStringLiteral("cannot write")));

    // Started again while running: the first attempt ends as cancelled, its queued slices never
    // run (stale), and the second one writes the whole file.
    QVERIFY(loadTraceInto(store, QStringLiteral(MAPI_SAMPLE_TRACE)).ok); // the rebuild above emptied it
    const QString twice = dir.filePath(QStringLiteral("twice.csv"));
    ExportJob again(&store, twice, messages);
    again.setSliceMs(0);
    QSignalSpy endings(&again, &ExportJob::finished);
    again.start();
    QVERIFY(QTest::qWaitFor([&] { return again.isRunning(); }, 1000));
    again.start();
    QCOMPARE(endings.count(), 1);
    QVERIFY(endings.front().at(0).value<JobOutcome>().cancelled());
    QVERIFY(QTest::qWaitFor([&] { return endings.count() == 2; }, 30000));
    QVERIFY(endings.at(1).at(0).value<JobOutcome>().ok());
    QFile written(twice);
    QVERIFY(written.open(QIODevice::ReadOnly));
    QBuffer oneGo;
    QVERIFY(oneGo.open(QIODevice::WriteOnly));
    QVERIFY(*writeCsv(store, CsvTable::Messages, oneGo) > 0);
    QCOMPARE(written.readAll(), oneGo.data());
}

// A trace of sent requests (they change no model: any problem in the store is the timeline's),
// about 11 MiB of frames: more than ContentIndex::kMaxFrameBytes in one frame.
// `varyLines`: the lines around the frames change length as a hand-edited or foreign file's
// may (times of more digits, "\r\n" ends, blank lines), so the gaps between frames differ.
// `capture`: lines as the captures of ../shared/captures hold frames, a JSON string in "raw" (the
// timeline reads them back by parsing the line again).
static std::vector<QByteArray> writeRequestTrace(const QString &path, bool oneZstdFrame, bool varyLines = false,
                                                 bool capture = false)
{
    std::vector<QByteArray> frames;
    QByteArray lines = capture ? QByteArray() : encodeHeaderLine(QStringLiteral("ws://127.0.0.1:1/client"), 1000);
    for (int i = 0; i < 11000; ++i) {
        TraceRecord r;
        r.timeMs = varyLines ? 1000 + qint64(i) * 97 : 1000 + i; // 4 digits, then 5, then 6
        r.dir = QStringLiteral("send");
        r.raw = R"({"jsonrpc":"2.0","id":)" + QByteArray::number(i + 1) + R"(,"method":"map/agents/list","params":{"pad":")"
            + QByteArray(900 + i % 200, char('a' + i % 26)) + R"("}})";
        frames.push_back(r.raw);
        QByteArray line = capture ? QByteArray::fromStdString(Json{{"seq", i + 1}, {"dir", "send"}, {"bytes", r.raw.size()},
                                                                  {"raw", r.raw.toStdString()}, {"t", double(r.timeMs) + 0.25}}
                                                                 .dump()) + '\n'
                                  : encodeRecordLine(r);
        if (varyLines && i % 7 == 3)
            line.insert(line.size() - 1, '\r');
        if (varyLines && i % 13 == 5)
            line += '\n';
        if (varyLines && capture && i % 17 == 9)
            line += "{\"a damaged line\"\n"; // skipped by the load; not part of the record before it
        lines += line;
    }
    CompressingWriter out;
    QString error;
    if (!out.open(path, compressionFromPath(path), &error))
        qFatal("%s", qPrintable(error));
    if (oneZstdFrame) {
        out.write(lines); // one write(), one frame (as a foreign tool may write it)
    } else {
        for (qsizetype at = 0; at < lines.size();) { // line by line, as TraceWriter writes
            const qsizetype end = lines.indexOf('\n', at) + 1;
            out.write(lines.constData() + at, end - at);
            at = end;
        }
    }
    out.close();
    return frames;
}

void TestTraceImportExport::timelineReadsFramesBackFromTheFile_data()
{
    QTest::addColumn<QString>("name");
    QTest::addColumn<bool>("oneFrame");
    QTest::addColumn<bool>("readBack"); // from the file; otherwise kept compressed in memory
    QTest::addColumn<bool>("varyLines");
    QTest::addColumn<bool>("capture");
    QTest::newRow("plain") << QStringLiteral("t.jsonl") << false << true << false << false;
    QTest::newRow("plain, lines that vary") << QStringLiteral("v.jsonl") << false << true << true << false;
    QTest::newRow("zstd, as written here") << QStringLiteral("t.jsonl.zst") << false << true << false << false;
    QTest::newRow("zstd, lines that vary") << QStringLiteral("v.jsonl.zst") << false << true << true << false;
    QTest::newRow("zstd, one 11 MiB frame") << QStringLiteral("one.jsonl.zst") << true << false << false << false;
    QTest::newRow("gzip") << QStringLiteral("t.jsonl.gz") << false << false << false << false;
    QTest::newRow("capture") << QStringLiteral("c.ndjson") << false << true << false << true;
    QTest::newRow("capture, lines that vary") << QStringLiteral("cv.ndjson") << false << true << true << true;
    QTest::newRow("capture, zstd") << QStringLiteral("c.ndjson.zst") << false << true << false << true;
    QTest::newRow("capture, gzip") << QStringLiteral("c.ndjson.gz") << false << false << false << true;
}

void TestTraceImportExport::timelineReadsFramesBackFromTheFile()
{
    QFETCH(QString, name);
    QFETCH(bool, oneFrame);
    QFETCH(bool, readBack);
    QFETCH(bool, varyLines);
    QFETCH(bool, capture);
    QTemporaryDir dir;
    const QString path = dir.filePath(name);
    const std::vector<QByteArray> frames = writeRequestTrace(path, oneFrame, varyLines, capture);
    SystemStore store;
    const TraceLoadResult loaded = loadTraceInto(store, path);
    QVERIFY2(loaded.ok, qPrintable(loaded.error));
    const std::shared_ptr<TraceTimeline> timeline = loaded.timeline;
    QCOMPARE(timeline->recordCount(), qint64(frames.size()));
    for (size_t i = 0; i < frames.size(); ++i)
        QCOMPARE(timeline->record(qint64(i)).raw, frames[i]);
    // What it holds: the index, and the frames only when the file cannot give them back.
    const qint64 frameBytes = timeline->frameBytes();
    if (readBack)
        QVERIFY2(qint64(timeline->memoryBytes()) < frameBytes / 20 + 2 * (1 << 20), qPrintable(QString::number(timeline->memoryBytes())));
    QVERIFY(timeline->sourceError().isEmpty());

    // The file changes on disk (same size, a few bytes in the middle of its content).
    {
        QFile file(path);
        QVERIFY(file.open(QIODevice::ReadWrite));
        const qint64 at = file.size() / 2;
        file.seek(at);
        QByteArray middle = file.read(16);
        for (char &c : middle)
            c = char(c ^ 0x5a);
        file.seek(at);
        QCOMPARE(file.write(middle), qint64(middle.size()));
    }
    qint64 unavailable = 0;
    for (size_t i = 0; i < frames.size(); ++i) {
        const TraceRecord back = timeline->record(qint64(i));
        if (back.raw.isEmpty()) { // never a wrong frame: the right one or none
            QCOMPARE(recordDir(back.dir), RecordDir::Other); // replays skip it
            ++unavailable;
        } else {
            QCOMPARE(back.raw, frames[i]);
        }
    }
    if (!readBack) {
        QCOMPARE(unavailable, 0);
        QVERIFY(timeline->sourceError().isEmpty());
        return;
    }
    QVERIFY(unavailable > 0);
    QVERIFY(unavailable < qint64(frames.size()) / 5); // only the records of the changed frame
    QVERIFY2(timeline->sourceError().contains(QStringLiteral("changed on disk")), qPrintable(timeline->sourceError()));
    // A replay over them says so in the store, once per replay.
    ReplayController replay(&store, timeline);
    replay.seek(replay.startMs());
    QCOMPARE(store.problems().size(), size_t(0));
    replay.seek(replay.endMs());
    QCOMPARE(store.problems().size(), size_t(1));
    QCOMPARE(store.problems().front().kind, ProblemKind::TraceUnreadable);
    const QString detail = store.problems().front().detail;
    QVERIFY2(detail.startsWith(QString::number(unavailable) + QStringLiteral(" trace records could not be read back")),
             qPrintable(detail));
    QVERIFY2(detail.contains(path), qPrintable(detail));
}

// The whole content of `path`, read through a DecompressingReader that fills `index` as it goes;
// empty when the read failed.
static QByteArray readIndexed(const QString &path, const std::shared_ptr<ContentIndex> &index)
{
    DecompressingReader in;
    if (!in.open(path, nullptr) || !index->open(path, nullptr))
        return {};
    in.setContentIndex(index);
    QByteArray content;
    QByteArray piece(300 * 1024, Qt::Uninitialized);
    for (qint64 n; (n = in.read(piece.data(), piece.size())) > 0;)
        content.append(piece.constData(), n);
    return in.errorString().isEmpty() ? content : QByteArray();
}

// `size` bytes at `at` read back through `index` as `content` has them (a warning says why not).
static bool readsBack(const ContentIndex &index, const QByteArray &content, qint64 at, qint64 size)
{
    ContentIndex::Cache cache;
    QString error;
    QByteArray back(size, Qt::Uninitialized);
    if (!index.covers(at, size) || !index.read(at, back.size(), back.data(), cache, &error)) {
        qWarning("not read back at %lld: %s", static_cast<long long>(at), qPrintable(error));
        return false;
    }
    return back == content.mid(at, size);
}

void TestTraceImportExport::zstdTracesAreWrittenInSmallFrames()
{
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("frames.jsonl.zst"));
    const std::vector<QByteArray> frames = writeRequestTrace(path, false);
    const auto index = std::make_shared<ContentIndex>();
    const QByteArray content = readIndexed(path, index);
    QVERIFY(!content.isEmpty());
    // Frames end between lines, every MiB or so.
    const qint64 mib = CompressingWriter::kZstdFrameBytes;
    QCOMPARE(qint64(index->frameCount()), (qint64(content.size()) + mib - 1) / mib);
    QCOMPARE(index->completeEnd(), qint64(content.size()));
    // Any range reads back as it was, across frame ends too.
    for (const qint64 at : {qint64(0), mib - 100, qint64(content.size()) / 2, qint64(content.size()) - 500})
        QVERIFY(readsBack(*index, content, at, 500));
    QVERIFY(!index->covers(content.size() - 10, 20)); // past the end
}

// Found by fuzz_decompress: frames of empty raw and RLE blocks that zstd's streaming decoder reads
// (so they were indexed) but its one-shot decoder calls corrupt, so reading them back failed with
// "changed on disk". Four such frames of 199 '#' each.
void TestTraceImportExport::zstdFramesReadBackAsTheStreamDecodedThem()
{
    const QByteArray file = QByteArray::fromHex(
        "28b52ffd005c000000040000000000000000000000000000000000000000000000000000000000000000000000000000"
        "0000003b06002328b52ffd005c3b06002328b52ffd005c3b06002328b52ffd005c3b060023");
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("empty-blocks.zst"));
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly) && f.write(file) == file.size());
    f.close();
    const auto index = std::make_shared<ContentIndex>();
    const QByteArray content = readIndexed(path, index);
    QCOMPARE(content, QByteArray(4 * 199, '#'));
    QCOMPARE(index->completeEnd(), qint64(content.size()));
    for (qint64 at = 0; at < content.size(); at += 199)
        QVERIFY(readsBack(*index, content, at, 199));
}

QTEST_GUILESS_MAIN(TestTraceImportExport)
#include "tst_trace_import_export.moc"
