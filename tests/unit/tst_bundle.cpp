// Incident bundles (trace/IncidentBundle.h): the operator's redaction (key names, patterns in
// strings, names and numbers; binary frames left out; bad patterns refused), the range with the
// state at its start, the bundle data read back (and damaged data skipped), and the CLI's bundle
// command (preview, write, stats and state reading the bundle).
#include "TestSupport.h"

#include "trace/CompressedFile.h"
#include "trace/IncidentBundle.h"
#include "trace/TraceLoader.h"
#include "TraceReplayer.h"

#include <QProcess>
#include <QRegularExpression>
#include <QTemporaryDir>

using namespace mapi;
using mapi_test::q;

namespace {

const QString kSample = QStringLiteral(MAPI_SOURCE_DIR "/resources/sample/demo-system.jsonl.zst");

QByteArray readAll(const QString &path)
{
    QByteArray text;
    DecompressingReader reader;
    QString error;
    if (!reader.open(path, &error)) {
        qWarning("%s", qPrintable(error));
        return text;
    }
    char buffer[65536];
    qint64 n = 0;
    while ((n = reader.read(buffer, sizeof buffer)) > 0)
        text.append(buffer, n);
    return text;
}

// The first and last record times of the sample trace.
std::pair<qint64, qint64> sampleSpan()
{
    SystemStore store;
    const TraceLoadResult r = loadTraceInto(store, kSample);
    return {r.stats.firstTimeMs, r.stats.lastTimeMs};
}

std::map<QString, QString> agentStates(const SystemStore &store)
{
    std::map<QString, QString> out;
    for (const Agent &a : store.agents())
        out[a.id] = a.state + (a.unregistered ? QStringLiteral("/gone") : QString());
    return out;
}

// The reference state, made without the bundle code: the records of `path` that `take` (by
// their time) accepts, replayed in order through the plain reader and the live pipeline.
void replayRecords(SystemStore &store, const QString &path, const std::function<bool(qint64)> &take)
{
    mapi::test::TraceReplayer replayer(&store);
    TraceReadStats stats;
    QString error;
    if (!readTrace(path, [&](const TraceRecord &record) {
            if (take(record.timeMs))
                replayer.feed(record);
            return true;
        }, stats, &error))
        qWarning("%s", qPrintable(error));
    store.flushChanges();
}

// What an agent is at a moment, beyond its state: role, parent, scopes, described or not.
std::map<QString, QString> agentShapes(const SystemStore &store)
{
    std::map<QString, QString> out;
    for (const Agent &a : store.agents())
        out[a.id] = QStringList{a.name, a.role, a.parentId, QStringList(a.scopes.begin(), a.scopes.end()).join(u','),
                                a.placeholder ? QStringLiteral("placeholder") : QString()}.join(u'|');
    return out;
}

std::map<QString, QString> scopeShapes(const SystemStore &store)
{
    std::map<QString, QString> out;
    for (const Scope &s : store.scopes())
        out[s.id] = QStringList{s.name, s.parentId, QStringList(s.members.begin(), s.members.end()).join(u','),
                                s.deleted ? QStringLiteral("deleted") : QString()}.join(u'|');
    return out;
}

} // namespace

class TestBundle : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase() { mapi_test::installWarningGuard(); }
    void init() { mapi_test::armWarningGuard(); }
    void cleanup() { MAPI_NO_WARNINGS(); }

    void keyNamesAndPatternsReplaceEverywhere()
    {
        ErrorOr<BundleRedactor> made = BundleRedactor::make({QStringLiteral("Email"), QStringLiteral(" "), QStringLiteral("email")},
                                                            {QStringLiteral("acme-\\d+"), QStringLiteral("4111\\d{12}")});
        QVERIFY(made);
        BundleRedactor r = *made;
        QCOMPARE(r.keyNameCount(), 1); // trimmed, empty dropped, case folded
        QCOMPARE(r.patternCount(), 2);
        Json frame = {{"params",
                       {{"deep", Json::array({Json{{"EMAIL", "a@b.c"}, {"note", "acme-12 and acme-7"}}})},
                        {"acme-99", "key named by the pattern"},
                        {"card", 4111222233334444LL},
                        {"n", 42},
                        {"again", "acme-12"},
                        {"text", Json{{"email", "c@d.e"}, {"id", "acme-7"}}.dump()}}}};
        QVERIFY(r.redact(frame));
        const Json &p = frame["params"];
        auto pseudonym = [](const Json &value) {
            return value.is_string() && QRegularExpression(QStringLiteral("^REDACTED-\\d+$")).match(QString::fromStdString(value.get<std::string>())).hasMatch();
        };
        QVERIFY(pseudonym(p["deep"][0]["EMAIL"]));
        // One pseudonym per text: the same text alike everywhere, two texts apart.
        const QStringList parts = QString::fromStdString(p["deep"][0]["note"].get<std::string>()).split(QStringLiteral(" and "));
        QCOMPARE(parts.size(), 2);
        QVERIFY(pseudonym(Json(parts[0].toStdString())) && pseudonym(Json(parts[1].toStdString())));
        QVERIFY(parts[0] != parts[1]);
        QCOMPARE(QString::fromStdString(p["again"].get<std::string>()), parts[0]);
        QVERIFY(!p.contains("acme-99"));
        int renamed = 0;
        for (auto it = p.begin(); it != p.end(); ++it)
            renamed += pseudonym(Json(it.key())) && it.value() == Json("key named by the pattern") ? 1 : 0;
        QCOMPARE(renamed, 1);
        QVERIFY(pseudonym(p["card"])); // a number that matches
        QCOMPARE(p["n"], Json(42));
        // JSON inside a string: key names and patterns reach into it, and it stays JSON.
        const Json inner = Json::parse(p["text"].get<std::string>());
        QVERIFY(pseudonym(inner["email"]));
        QCOMPARE(QString::fromStdString(inner["id"].get<std::string>()), parts[1]);
        QCOMPARE(r.counts().perKeyName, (std::vector<qint64>{2}));
        QCOMPARE(r.counts().perPattern, (std::vector<qint64>{5, 1}));
        QCOMPARE(r.counts().total(), qint64(8));

        // Numbers are kept when asked (the bundle's own times).
        Json times = {{"t", 4111222233334444LL}};
        QVERIFY(!r.redact(times, false));
        QString text = QStringLiteral("id acme-12");
        QVERIFY(r.redact(text));
        QCOMPARE(text, QStringLiteral("id ") + parts[0]);
        // Patterns are named by their number in errors, never spelled.
        const ErrorOr<BundleRedactor> bad = BundleRedactor::make({}, {QStringLiteral("ok"), QString(), QStringLiteral("sk-secret(")});
        QVERIFY(!bad);
        QVERIFY2(bad.error().startsWith(QLatin1String("Pattern 3 ")), qPrintable(bad.error()));
        QVERIFY(!bad.error().contains(QLatin1String("sk-secret")));
        const ErrorOr<BundleRedactor> numbered = BundleRedactor::make({}, {QStringLiteral("a"), QString(), QStringLiteral("b")});
        QCOMPARE(numbered->patternNumbers(), (std::vector<int>{1, 3}));
    }

    void badPatternsAreRefusedWithTheReason()
    {
        const ErrorOr<BundleRedactor> bad = BundleRedactor::make({}, {QStringLiteral("(unclosed")});
        QVERIFY(!bad);
        QVERIFY2(bad.error().contains(QLatin1String("missing closing parenthesis")), qPrintable(bad.error()));
        const ErrorOr<BundleRedactor> empty = BundleRedactor::make({}, {QStringLiteral("x*")});
        QVERIFY(!empty);
        QVERIFY(empty.error().contains(QLatin1String("empty")));
        QStringList many;
        for (int i = 0; i <= kMaxBundlePatterns; ++i)
            many << QStringLiteral("p%1").arg(i);
        QVERIFY(!BundleRedactor::make({}, many));
    }

    // The range: every message in it is there, none before it; the agents at its end are those of
    // the source at that time (the state before the start is kept).
    void rangeKeepsTheStateAtItsStart()
    {
        const auto [first, last] = sampleSpan();
        const qint64 from = first + (last - first) / 3, to = first + 2 * (last - first) / 3;
        QTemporaryDir dir;
        const QString out = dir.filePath(QStringLiteral("b.incident.jsonl.zst"));
        BundleOptions options;
        options.fromMs = from;
        options.toMs = to;
        const BundleResult r = writeIncidentBundle(kSample, out, options);
        QVERIFY2(r.ok(), qPrintable(r.error));
        QVERIFY(r.recordsLeftOutBeforeFrom > 100);
        QVERIFY(!QFile::exists(out + QStringLiteral(".part")));

        SystemStore bundle, source;
        QVERIFY(loadTraceInto(bundle, out).ok);
        // The reference: the source's records up to `to`, replayed without the bundle code.
        replayRecords(source, kSample, [to = to](qint64 t) { return t <= to; });
        QCOMPARE(agentStates(bundle), agentStates(source));
        QVERIFY(bundle.agents().size() > 10);

        // The state at `from`: the bundle's records before it (what it kept of the context) give
        // the agents and scopes the source's records before `from` give, without their messages.
        SystemStore bundleAtFrom, sourceAtFrom;
        replayRecords(bundleAtFrom, out, [from = from](qint64 t) { return t < from; });
        replayRecords(sourceAtFrom, kSample, [from = from](qint64 t) { return t < from; });
        QVERIFY(sourceAtFrom.agents().size() > 10);
        QVERIFY(sourceAtFrom.messages().keptCount() > 50); // the history the bundle leaves out
        QCOMPARE(bundleAtFrom.messages().keptCount(), size_t(0));
        QCOMPARE(agentStates(bundleAtFrom), agentStates(sourceAtFrom));
        QCOMPARE(agentShapes(bundleAtFrom), agentShapes(sourceAtFrom));
        QCOMPARE(scopeShapes(bundleAtFrom), scopeShapes(sourceAtFrom));
        QCOMPARE(agentShapes(bundle), agentShapes(source));
        QCOMPARE(scopeShapes(bundle), scopeShapes(source));

        qint64 inRange = 0;
        for (size_t m = source.messages().firstRow(); m < source.messages().size(); ++m)
            if (source.messages().timestampMs(m) >= from) {
                ++inRange;
                QVERIFY2(bundle.messages().find(source.messages().id(m)) >= 0, qPrintable(source.messages().id(m)));
            }
        QVERIFY(inRange > 50);
        QCOMPARE(qint64(bundle.messages().keptCount()), inRange);
        QCOMPARE(bundle.problems().size(), source.problems().size()); // no unmatched responses made
        // The event numbers left out are said ("skip" records): no gap in delivery is made up.
        QCOMPARE(source.counters().gaps, qint64(0));
        QCOMPARE(bundle.counters().gaps, qint64(0));
    }

    // A secret given as a pattern leaves no byte of it in the file; the note, bookmarks and
    // selection go through the same rules; the rules themselves are not written.
    void redactionReachesEveryPartAndIsNotWritten()
    {
        QTemporaryDir dir;
        const QString out = dir.filePath(QStringLiteral("b.jsonl.zst"));
        const QByteArray sample = readAll(kSample);
        QVERIFY(sample.contains("\"content\""));
        SystemStore store;
        QVERIFY(loadTraceInto(store, kSample).ok);
        const QString agentId = store.agents().front().id; // an id that is in many frames
        BundleOptions options;
        options.redactKeyNames = {QStringLiteral("CONTENT")};
        options.redactPatterns = {QRegularExpression::escape(agentId)};
        options.content.note = QStringLiteral("look at %1 first").arg(agentId);
        options.content.bookmarks = {{sampleSpan().first + 10, QStringLiteral("start %1").arg(agentId), QStringLiteral("n")}};
        options.content.selectedAgents = {agentId};
        options.content.alerts = Json::array({{{"alert", "failed"}, {"agentId", agentId.toStdString()}, {"since", 5}}});
        options.content.pictures = {{QStringLiteral("topology"), QByteArray("\x89PNG fake bytes", 15), 10, 20}};
        options.content.createdAtMs = 1234;
        const BundleResult r = writeIncidentBundle(kSample, out, options);
        QVERIFY2(r.ok(), qPrintable(r.error));
        QVERIFY(r.redaction.perKeyName[0] > 0);
        QVERIFY(r.redaction.perPattern[0] > 10);
        const BundleResult preview = writeIncidentBundle(kSample, QString(), options);
        QCOMPARE(preview.redaction.perPattern, r.redaction.perPattern);
        QCOMPARE(preview.recordsWritten, r.recordsWritten);

        const QByteArray text = readAll(out);
        QVERIFY(!text.contains(agentId.toUtf8()));
        QVERIFY(!text.contains("\"content\":{") && !text.contains("\"content\":\"h"));

        TraceReadStats stats;
        QString error;
        QVERIFY(readTrace(out, [](const TraceRecord &) { return true; }, stats, &error));
        QCOMPARE(stats.badLineCount, qint64(0));
        const std::optional<IncidentInfo> info = incidentFromHeader(stats.header);
        QVERIFY(info);
        // The agent's pseudonym, the same in the data as in the frames.
        SystemStore bundle;
        QVERIFY(loadTraceInto(bundle, out).ok);
        QCOMPARE(bundle.agentRow(agentId), -1);
        QString pseudonym;
        for (const Agent &a : bundle.agents())
            if (a.id.startsWith(QLatin1String("REDACTED-")))
                pseudonym = a.id;
        QVERIFY(!pseudonym.isEmpty());
        QCOMPARE(bundle.agents().size(), store.agents().size()); // no two agents merged
        QCOMPARE(info->content.note, QStringLiteral("look at %1 first").arg(pseudonym));
        QCOMPARE(info->content.bookmarks.size(), 1);
        QCOMPARE(info->content.bookmarks[0].title, QStringLiteral("start %1").arg(pseudonym));
        QCOMPARE(info->content.selectedAgents, QStringList{pseudonym});
        QCOMPARE(jsonString(info->content.alerts.at(0), "agentId"), pseudonym);
        QCOMPARE(info->content.alerts.at(0)["since"], Json(5)); // numbers of the bundle data kept
        QCOMPARE(int(info->content.pictures.size()), 1);
        QCOMPARE(info->content.pictures[0].png, QByteArray("\x89PNG fake bytes", 15));
        QCOMPARE(info->content.createdAtMs, qint64(1234));
        QCOMPARE(info->keyNamesUsed, 1);
        QCOMPARE(info->patternsUsed, 1);
        QVERIFY(info->replacements > r.redaction.total()); // the records' and the bundle data's
        QCOMPARE(info->damagedMembers, 0);
        QCOMPARE(info->source, QStringLiteral("demo-system.jsonl.zst"));
        QCOMPARE(r.dataReplacements, qint64(4)); // note, bookmark, selection, alert
    }

    // Every agent id redacted (a pattern of their shape), and the subscription id by key name:
    // the agents stay apart, and the skip records name the subscription as the frames do (no
    // gap appears).
    void redactedIdsStayDistinctAndConsistent()
    {
        QTemporaryDir dir;
        const QString out = dir.filePath(QStringLiteral("b.jsonl.zst"));
        const auto [first, last] = sampleSpan();
        BundleOptions options;
        options.fromMs = first + 20000;
        options.redactPatterns = {QStringLiteral("01[0-9A-HJKMNP-TV-Z]{24}")}; // ULIDs: every id of the official server
        options.redactKeyNames = {QStringLiteral("subscriptionId")};
        const BundleResult r = writeIncidentBundle(kSample, out, options);
        QVERIFY2(r.ok(), qPrintable(r.error));
        QVERIFY(r.redaction.perPattern[0] > 1000);
        QVERIFY(r.redaction.perKeyName[0] > 100);
        SystemStore source, bundle;
        QVERIFY(loadTraceInto(source, kSample).ok);
        QVERIFY(loadTraceInto(bundle, out).ok);
        QCOMPARE(bundle.agents().size(), source.agents().size());
        QVERIFY(!readAll(out).contains("01M8343ZPVEF2ZXXNV867JXBKD"));
        QCOMPARE(bundle.counters().gaps, qint64(0));
        QVERIFY(readAll(out).contains("\"dir\":\"skip\""));
    }

    // A request left out before the range whose answer comes in it: the answer goes too (it would
    // read as unmatched); the bundle cannot replace its source.
    void answersToLeftOutRequestsAndSamePath()
    {
        QTemporaryDir dir;
        const QString in = dir.filePath(QStringLiteral("in.jsonl"));
        QFile f(in);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(encodeHeaderLine(QStringLiteral("ws://h"), 1000));
        f.write(encodeRecordLine({1000, QStringLiteral("open"), 1, "ws://h", false, Json()}));
        f.write(encodeRecordLine({1001, QStringLiteral("send"), 1, R"({"jsonrpc":"2.0","id":7,"method":"map/send","params":{"to":"a","payload":1}})", false, Json()}));
        f.write(encodeRecordLine({2001, QStringLiteral("recv"), 1, R"({"jsonrpc":"2.0","id":7,"result":{"messageId":"m"}})", false, Json()}));
        f.write(encodeRecordLine({2002, QStringLiteral("send"), 1, R"({"jsonrpc":"2.0","id":8,"method":"map/agents/list","params":{}})", false, Json()}));
        f.write(encodeRecordLine({2003, QStringLiteral("recv"), 1, R"({"jsonrpc":"2.0","id":8,"result":{"agents":[]}})", false, Json()}));
        f.close();
        BundleOptions options;
        options.fromMs = 2000;
        const QString out = dir.filePath(QStringLiteral("out.jsonl"));
        const BundleResult r = writeIncidentBundle(in, out, options);
        QVERIFY2(r.ok(), qPrintable(r.error));
        QCOMPARE(r.recordsLeftOutBeforeFrom, qint64(2));
        QCOMPARE(r.recordsWritten, qint64(3));
        SystemStore store;
        QVERIFY(loadTraceInto(store, out).ok);
        QCOMPARE(store.counters().problems, qint64(0));

        const BundleResult same = writeIncidentBundle(in, in, options);
        QCOMPARE(same.failure, BundleResult::Failure::BadOptions);
        QVERIFY(readAll(in).contains("map/send")); // untouched
        // A failed write leaves an existing target as it was.
        const QByteArray before = readAll(out);
        options.fromMs = 5;
        options.toMs = 1; // refused before anything is written
        QVERIFY(!writeIncidentBundle(in, out, options).ok());
        QCOMPARE(readAll(out), before);
    }

    // Issue 42 item 5: a hostile trace left out before the range (120,000 requests never
    // answered, 12,000 subscriptions each with a message event) does not grow the bundle's memory
    // of it without end: past 100,000 requests and 10,000 subscriptions it is forgotten, counted,
    // and the bundle is still written whole; the answer to a remembered request is still left out.
    void contextOfALeftOutFloodIsBounded()
    {
        QTemporaryDir dir;
        const QString in = dir.filePath(QStringLiteral("flood.jsonl"));
        QFile f(in);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(encodeHeaderLine(QStringLiteral("ws://h"), 1000));
        f.write(encodeRecordLine({1000, QStringLiteral("open"), 1, "ws://h", false, Json()}));
        for (int i = 0; i < 120000; ++i)
            f.write(encodeRecordLine({1001, QStringLiteral("send"), 1,
                                      "{\"jsonrpc\":\"2.0\",\"id\":" + QByteArray::number(i)
                                          + ",\"method\":\"map/send\",\"params\":{\"to\":\"a\",\"payload\":1}}",
                                      false, Json()}));
        for (int i = 0; i < 12000; ++i)
            f.write(encodeRecordLine({1002, QStringLiteral("recv"), 1,
                                      "{\"jsonrpc\":\"2.0\",\"method\":\"map/event\",\"params\":{\"subscriptionId\":\"s" + QByteArray::number(i)
                                          + "\",\"sequenceNumber\":1,\"eventId\":\"e" + QByteArray::number(i)
                                          + "\",\"timestamp\":1002,\"event\":{\"id\":\"e" + QByteArray::number(i)
                                          + "\",\"type\":\"message.sent\",\"timestamp\":1002,\"data\":{\"message\":{\"id\":\"m" + QByteArray::number(i)
                                          + "\",\"from\":\"a\",\"to\":\"b\",\"payload\":1}}}}}",
                                      false, Json()}));
        // In the range: the answer to the newest request (remembered), then one event.
        f.write(encodeRecordLine({2001, QStringLiteral("recv"), 1, "{\"jsonrpc\":\"2.0\",\"id\":119999,\"result\":{\"messageId\":\"m\"}}", false, Json()}));
        f.write(encodeRecordLine({2002, QStringLiteral("send"), 1, "{\"jsonrpc\":\"2.0\",\"id\":\"x\",\"method\":\"map/agents/list\",\"params\":{}}", false, Json()}));
        f.close();
        BundleOptions options;
        options.fromMs = 2000;
        const QString out = dir.filePath(QStringLiteral("out.jsonl"));
        const BundleResult r = writeIncidentBundle(in, out, options);
        QVERIFY2(r.ok(), qPrintable(r.error));
        QCOMPARE(r.contextForgotten, qint64(20000 + 2000));
        QCOMPARE(r.recordsLeftOutBeforeFrom, qint64(120000 + 12000 + 1));
        QVERIFY(!readAll(out).contains("\"id\":119999"));
        QVERIFY(readAll(out).contains("map/agents/list"));
    }

    // The subscription id redacted by key name alone: the skip records carry its pseudonym too
    // (no raw id left, no gap); a later pattern does not eat a pseudonym's number.
    void keyNamesReachSkipRecordsAndPseudonymsStay()
    {
        QTemporaryDir dir;
        const QString out = dir.filePath(QStringLiteral("b.jsonl.zst"));
        const auto [first, last] = sampleSpan();
        Q_UNUSED(last);
        BundleOptions options;
        options.fromMs = first + 20000;
        options.redactKeyNames = {QStringLiteral("subscriptionId")};
        options.redactPatterns = {QStringLiteral("\\d+")};
        const BundleResult r = writeIncidentBundle(kSample, out, options);
        QVERIFY2(r.ok(), qPrintable(r.error));
        const QByteArray text = readAll(out);
        QVERIFY(!text.contains("01M8343ZPVEF2ZXXNV867JXBKD"));
        QVERIFY(!text.contains("REDACTED-REDACTED"));
        QVERIFY(text.contains("\"dir\":\"skip\""));
        SystemStore bundle;
        QVERIFY(loadTraceInto(bundle, out).ok);
        QCOMPARE(bundle.counters().gaps, qint64(0));
    }

    // Nesting deeper than the parser is trusted with (a hostile frame, or JSON in a string): no
    // crash; a frame that cannot be searched is left out when rules apply, a string is kept as text.
    void deepNestingIsLeftOutNotParsed()
    {
        QTemporaryDir dir;
        const QString in = dir.filePath(QStringLiteral("deep.jsonl"));
        QFile f(in);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(encodeHeaderLine(QStringLiteral("ws://h"), 1000));
        const QByteArray deep = QByteArray(100000, '[') + QByteArray(100000, ']');
        f.write(encodeRecordLine({1001, QStringLiteral("recv"), 1, "{\"jsonrpc\":\"2.0\",\"method\":\"x\",\"params\":" + deep + "}", false, Json()}));
        const Json inString = {{"jsonrpc", "2.0"}, {"method", "y"}, {"params", {{"text", deep.toStdString()}, {"password2", "k"}}}};
        f.write(encodeRecordLine({1002, QStringLiteral("recv"), 1, QByteArray::fromStdString(inString.dump()), false, Json()}));
        f.close();
        BundleOptions options;
        options.redactKeyNames = {QStringLiteral("password2")};
        const QString out = dir.filePath(QStringLiteral("out.jsonl"));
        const BundleResult r = writeIncidentBundle(in, out, options);
        QVERIFY2(r.ok(), qPrintable(r.error));
        QCOMPARE(r.redaction.binaryFramesLeftOut, qint64(1)); // the deep frame
        QCOMPARE(r.recordsWritten, qint64(1));
        QCOMPARE(r.redaction.perKeyName[0], qint64(1));
        QVERIFY(!readAll(out).contains("\"k\""));
        options.fromMs = 5000; // before the range: classified without parsing the deep frame
        QVERIFY(writeIncidentBundle(in, QString(), options).ok());
    }

    void binaryFramesAreLeftOutWhenRedacting()
    {
        QTemporaryDir dir;
        const QString in = dir.filePath(QStringLiteral("in.jsonl"));
        QFile f(in);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(encodeHeaderLine(QStringLiteral("ws://h"), 1000));
        f.write(encodeRecordLine({1000, QStringLiteral("open"), 1, "ws://h", false, Json()}));
        f.write(encodeRecordLine({1001, QStringLiteral("recv"), 1, QByteArray("\x01\x02secret-77\x03", 12), true, Json()}));
        f.write(encodeRecordLine({1002, QStringLiteral("recv"), 1, "not json secret-77", false, Json()}));
        f.write(encodeRecordLine({1003, QStringLiteral("close"), 1, "closed by secret-77", false, Json()}));
        f.close();
        BundleOptions options;
        options.redactPatterns = {QStringLiteral("secret-\\d+")};
        const QString out = dir.filePath(QStringLiteral("out.jsonl"));
        const BundleResult r = writeIncidentBundle(in, out, options);
        QVERIFY(r.ok());
        QCOMPARE(r.redaction.binaryFramesLeftOut, qint64(1));
        QCOMPARE(r.recordsWritten, qint64(3));
        QCOMPARE(r.redaction.perPattern, (std::vector<qint64>{2}));
        QVERIFY(!readAll(out).contains("secret-77"));
        // Without rules, binary frames stay.
        QCOMPARE(writeIncidentBundle(in, out, BundleOptions()).recordsWritten, qint64(4));
    }

    void damagedBundleDataIsSkippedAndCounted()
    {
        const Json header = Json::parse(R"({"format":"map-inspector-trace","bundle":{"note":7,"from":"x","to":5,
            "bookmarks":[{"t":"a"},{"t":3,"title":"ok"},5],"selection":{"agents":["a",1]},"alerts":[1,{"alert":"loop"}],
            "redaction":"no"},"bundlePictures":[{"data":"!!!not base64"},{"view":"x"},{"data":"aGVsbG8=","view":"v"}]})");
        const std::optional<IncidentInfo> info = incidentFromHeader(header);
        QVERIFY(info);
        QCOMPARE(info->content.note, QString());
        QVERIFY(!info->fromMs);
        QCOMPARE(info->toMs, std::optional<qint64>(5));
        QCOMPARE(info->content.bookmarks.size(), 1);
        QCOMPARE(info->content.selectedAgents, QStringList{QStringLiteral("a")});
        QCOMPARE(info->content.alerts.size(), size_t(1));
        QCOMPARE(int(info->content.pictures.size()), 1);
        QCOMPARE(info->content.pictures[0].png, QByteArray("hello"));
        QCOMPARE(info->damagedMembers, 1 + 1 + 2 + 1 + 1 + 2);
        QVERIFY(!incidentFromHeader(Json::parse(R"({"format":"map-inspector-trace"})")));
        QVERIFY(!incidentFromHeader(Json::array()));
    }

    void badOptionsAreRefused()
    {
        BundleOptions options;
        options.fromMs = 10;
        options.toMs = 5;
        QCOMPARE(writeIncidentBundle(kSample, QString(), options).failure, BundleResult::Failure::BadOptions);
        options.toMs.reset();
        options.redactPatterns = {QStringLiteral("[")};
        QCOMPARE(writeIncidentBundle(kSample, QString(), options).failure, BundleResult::Failure::BadOptions);
        QCOMPARE(writeIncidentBundle(QStringLiteral("/nonexistent/x.jsonl"), QString(), BundleOptions()).failure,
                 BundleResult::Failure::InputUnreadable);
    }

    void cliBundlePreviewWriteAndRead()
    {
        QTemporaryDir dir;
        const QString out = dir.filePath(QStringLiteral("i.incident.jsonl.zst"));
        const auto [first, last] = sampleSpan();
        auto run = [](const QStringList &args, QByteArray *stdOut = nullptr) {
            QProcess p;
            p.start(QStringLiteral(MAPI_CLI_PATH), args);
            p.waitForFinished(60000);
            if (stdOut)
                *stdOut = p.readAllStandardOutput();
            return p.exitCode();
        };
        const QStringList common = {QStringLiteral("--trace"), kSample, QStringLiteral("--from"), QString::number(first + 20000),
                                    QStringLiteral("--to"), QString::number(last - 10000), QStringLiteral("--redact"),
                                    QStringLiteral("planner"), QStringLiteral("--redact-key"), QStringLiteral("content"),
                                    QStringLiteral("--note"), QStringLiteral("the planner stalls")};
        QByteArray text;
        QCOMPARE(run(QStringList{QStringLiteral("bundle"), QStringLiteral("--preview")} + common, &text), 0);
        const Json preview = Json::parse(text.toStdString());
        QVERIFY(!QFile::exists(out));
        QVERIFY(preview["records"].get<qint64>() > 100);
        QVERIFY(preview["patterns"][0]["replacements"].get<qint64>() > 0);
        QVERIFY(!text.contains("planner")); // the pattern is named by its number only

        QCOMPARE(run(QStringList{QStringLiteral("bundle"), QStringLiteral("--out"), out} + common, &text), 0);
        const Json written = Json::parse(text.toStdString());
        QCOMPARE(written["records"], preview["records"]);
        QVERIFY(written["alerts"].get<int>() >= 1);
        QCOMPARE(preview["alerts"], written["alerts"]); // the preview counts what the bundle holds
        QVERIFY(QFile::exists(out));
        QVERIFY(!QFile::exists(out + QStringLiteral(".slice.jsonl.zst")));
        QVERIFY(!readAll(out).contains("planner"));

        QCOMPARE(run({QStringLiteral("stats"), QStringLiteral("--trace"), out}, &text), 0);
        const Json stats = Json::parse(text.toStdString());
        QVERIFY(QRegularExpression(QStringLiteral("^the REDACTED-\\d+ stalls$"))
                    .match(QString::fromStdString(stats["bundle"]["note"].get<std::string>())).hasMatch());
        QVERIFY(stats["bundle"]["alerts"].get<qint64>() >= 1); // the sample's failed agent
        QCOMPARE(run({QStringLiteral("state"), QStringLiteral("--trace"), out}, &text), 0);
        QVERIFY(Json::parse(text.toStdString())["agents"].size() > 10);

        QCOMPARE(run({QStringLiteral("bundle"), QStringLiteral("--trace"), kSample, QStringLiteral("--out"), out,
                      QStringLiteral("--redact"), QStringLiteral("(")}),
                 1);
        QCOMPARE(run({QStringLiteral("bundle"), QStringLiteral("--trace"), dir.filePath(QStringLiteral("none")), QStringLiteral("--preview")}), 6);
    }
};

QTEST_GUILESS_MAIN(TestBundle)
#include "tst_bundle.moc"
