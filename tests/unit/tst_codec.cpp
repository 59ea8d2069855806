// FrameCodec: JSON-RPC 2.0 decoding of one WebSocket text frame, limits, problems that keep
// their frame, and the encoders. Real frames from tests/data are fed through decode as well.
#include "TestSupport.h"

#include "model/SystemStore.h"
#include "protocol/JsonRpc.h"

#include <QJsonArray>

#include <atomic>

using namespace mapi;
using mapi_test::dump;

Q_DECLARE_METATYPE(mapi::ProblemKind)
Q_DECLARE_METATYPE(mapi::MessageKind)

namespace {

// A parser that counts its calls, to prove that refused frames are never parsed.
class CountingParser final : public JsonParser
{
public:
    bool parse(const QByteArray &text, Json &out, QString &error) const override
    {
        ++calls;
        return m_inner.parse(text, out, error);
    }
    const char *name() const override { return "counting"; }
    mutable std::atomic<int> calls{0};

private:
    NlohmannJsonParser m_inner;
};

QByteArray nested(int depth)
{
    return QByteArray(depth, '[') + QByteArray(depth, ']');
}

// Independent view of a frame (QJsonDocument): is it a JSON object naming JSON-RPC 2.0 with a
// string method? Such frames must always decode to a message.
bool looksLikeValidCall(const QByteArray &frame)
{
    QJsonParseError error;
    const QJsonDocument doc = QJsonDocument::fromJson(frame, &error);
    if (error.error != QJsonParseError::NoError || !doc.isObject())
        return false;
    const QJsonObject o = doc.object();
    if (o.value(QStringLiteral("jsonrpc")).toString() != QLatin1String("2.0"))
        return false;
    const QJsonValue params = o.value(QStringLiteral("params"));
    const bool paramsOk = params.isUndefined() || params.isObject() || params.isArray();
    const QJsonValue id = o.value(QStringLiteral("id"));
    const bool idOk = id.isUndefined() || id.isNull() || id.isString()
        || (id.isDouble() && id.toDouble() == double(qint64(id.toDouble())));
    return o.value(QStringLiteral("method")).isString() && paramsOk && idOk;
}

} // namespace

class TestCodec : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void hugeNumbersSaturate();
    void initTestCase() { mapi_test::installWarningGuard(); }
    void init() { mapi_test::armWarningGuard(); }
    void cleanup() { MAPI_NO_WARNINGS(); }
    void cleanupTestCase() { MAPI_NO_WARNINGS(); }

    void decodesMessageKinds_data();
    void decodesMessageKinds();
    void errorKeepsCodeMessageAndData();
    void problemsKeepTheirFrame_data();
    void problemsKeepTheirFrame();
    void errorCodeOutsideIntRangeIsNotTruncated();
    void oversizedFrameIsRefusedUnparsed();
    void tooDeepFrameIsRefusedUnparsed();
    void nestingDepthSkipsStrings_data();
    void nestingDepthSkipsStrings();
    void nestingDepthMatchesByteScan();
    void bracketsInStringsDoNotCountInDecode();
    void keptProblemFrameIsTruncated();
    void encodeRequestRoundTrips_data();
    void encodeRequestRoundTrips();
    void encodeNotificationRoundTrips();
    void realFramesDecodeToExactlyOneOutcome_data();
    void realFramesDecodeToExactlyOneOutcome();
};

void TestCodec::decodesMessageKinds_data()
{
    QTest::addColumn<QByteArray>("frame");
    QTest::addColumn<MessageKind>("kind");
    QTest::addColumn<QByteArray>("expectedId"); // JSON text of the id, empty when absent
    QTest::addColumn<QString>("method");

    QTest::newRow("request, integer id")
        << QByteArray(R"({"jsonrpc":"2.0","id":7,"method":"map/agents/list","params":{"role":"x"}})")
        << MessageKind::Request << QByteArray("7") << QStringLiteral("map/agents/list");
    QTest::newRow("request, string id")
        << QByteArray(R"({"jsonrpc":"2.0","id":"string-id-1","method":"map/agents/list","params":{}})")
        << MessageKind::Request << QByteArray(R"("string-id-1")") << QStringLiteral("map/agents/list");
    QTest::newRow("request, null id")
        << QByteArray(R"({"jsonrpc":"2.0","id":null,"method":"map/agents/list"})") << MessageKind::Request
        << QByteArray("null") << QStringLiteral("map/agents/list");
    QTest::newRow("request, array params")
        << QByteArray(R"({"jsonrpc":"2.0","id":1,"method":"sum","params":[1,2]})") << MessageKind::Request
        << QByteArray("1") << QStringLiteral("sum");
    QTest::newRow("notification")
        << QByteArray(R"({"jsonrpc":"2.0","method":"map/event","params":{"event":{}}})") << MessageKind::Notification
        << QByteArray() << QStringLiteral("map/event");
    QTest::newRow("result, integer id")
        << QByteArray(R"({"jsonrpc":"2.0","id":3,"result":{"agents":[]}})") << MessageKind::Result << QByteArray("3")
        << QString();
    QTest::newRow("result, string id")
        << QByteArray(R"({"jsonrpc":"2.0","id":"abc","result":null})") << MessageKind::Result
        << QByteArray(R"("abc")") << QString();
    QTest::newRow("result, null id")
        << QByteArray(R"({"jsonrpc":"2.0","id":null,"result":{"agents":[]}})") << MessageKind::Result
        << QByteArray("null") << QString();
    QTest::newRow("error")
        << QByteArray(R"({"jsonrpc":"2.0","id":9,"error":{"code":-32601,"message":"Method not found: map/inject"}})")
        << MessageKind::Error << QByteArray("9") << QString();
}

void TestCodec::decodesMessageKinds()
{
    QFETCH(QByteArray, frame);
    QFETCH(MessageKind, kind);
    QFETCH(QByteArray, expectedId);
    QFETCH(QString, method);

    const FrameCodec codec;
    const DecodeOutcome out = codec.decode(frame, 42);
    QVERIFY2(out.ok(), out.problem ? qPrintable(out.problem->detail) : "no message");
    QVERIFY(!out.problem);
    QCOMPARE(out.message->kind, kind);
    QCOMPARE(out.message->method, method);

    const Json doc = Json::parse(frame.toStdString());
    if (expectedId.isEmpty()) {
        QVERIFY(!doc.contains("id"));
    } else {
        const Json id = Json::parse(expectedId.toStdString());
        QCOMPARE(out.message->id.type(), id.type()); // int stays int, string stays string, null stays null
        QCOMPARE(out.message->id, id);
    }
    if (kind == MessageKind::Request || kind == MessageKind::Notification)
        QCOMPARE(out.message->params, doc.value("params", Json()));
    if (kind == MessageKind::Result)
        QCOMPARE(out.message->result, doc.at("result"));
}

void TestCodec::errorKeepsCodeMessageAndData()
{
    const QByteArray frame =
        R"({"jsonrpc":"2.0","id":4,"error":{"code":4001,"message":"Rate limit exceeded","data":{"retryAfterMs":250}}})";
    const DecodeOutcome out = FrameCodec().decode(frame);
    QVERIFY(out.ok());
    QCOMPARE(out.message->kind, MessageKind::Error);
    QCOMPARE(out.message->error.code, 4001);
    QCOMPARE(out.message->error.message, QStringLiteral("Rate limit exceeded"));
    QCOMPARE(out.message->error.data, Json({{"retryAfterMs", 250}}));

    const DecodeOutcome noData = FrameCodec().decode(R"({"jsonrpc":"2.0","id":4,"error":{"code":-32603,"message":"x"}})");
    QVERIFY(noData.ok());
    QVERIFY(noData.message->error.data.is_null());
}

void TestCodec::problemsKeepTheirFrame_data()
{
    QTest::addColumn<QByteArray>("frame");
    QTest::addColumn<ProblemKind>("kind");

    QTest::newRow("invalid JSON: truncated") << QByteArray(R"({"jsonrpc":"2.0","id":100,"method":"map/agents/list")")
                                             << ProblemKind::InvalidJson;
    QTest::newRow("invalid JSON: prose") << QByteArray("this is not json") << ProblemKind::InvalidJson;
    QTest::newRow("invalid JSON: empty frame") << QByteArray() << ProblemKind::InvalidJson;
    QTest::newRow("invalid UTF-8 inside a string")
        << QByteArray("{\"jsonrpc\":\"2.0\",\"method\":\"map/event\",\"params\":{\"name\":\"a\xff" "b\"}}")
        << ProblemKind::InvalidJson;
    QTest::newRow("invalid UTF-8: overlong encoding")
        << QByteArray("{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":\"\xc0\xaf\"}") << ProblemKind::InvalidJson;
    QTest::newRow("batch (JSON array)") << QByteArray(R"([{"jsonrpc":"2.0","id":103,"method":"map/agents/list"}])")
                                        << ProblemKind::NotJsonRpc;
    QTest::newRow("bare number") << QByteArray("42") << ProblemKind::NotJsonRpc;
    QTest::newRow("bare string") << QByteArray(R"("map/event")") << ProblemKind::NotJsonRpc;
    QTest::newRow("missing jsonrpc") << QByteArray(R"({"id":101,"method":"map/agents/list"})") << ProblemKind::NotJsonRpc;
    QTest::newRow("jsonrpc 1.0") << QByteArray(R"({"jsonrpc":"1.0","id":102,"method":"map/agents/list"})")
                                 << ProblemKind::NotJsonRpc;
    QTest::newRow("jsonrpc as a number") << QByteArray(R"({"jsonrpc":2.0,"id":1,"method":"x"})")
                                         << ProblemKind::NotJsonRpc;
    QTest::newRow("method not a string") << QByteArray(R"({"jsonrpc":"2.0","id":1,"method":17})") << ProblemKind::WrongType;
    QTest::newRow("method null") << QByteArray(R"({"jsonrpc":"2.0","method":null})") << ProblemKind::WrongType;
    QTest::newRow("params a string") << QByteArray(R"({"jsonrpc":"2.0","method":"x","params":"p"})")
                                     << ProblemKind::WrongType;
    QTest::newRow("id an object") << QByteArray(R"({"jsonrpc":"2.0","id":{"a":1},"result":{}})") << ProblemKind::WrongType;
    QTest::newRow("id fractional") << QByteArray(R"({"jsonrpc":"2.0","id":1.5,"result":{}})") << ProblemKind::WrongType;
    QTest::newRow("error.code a string")
        << QByteArray(R"({"jsonrpc":"2.0","id":1,"error":{"code":"-32601","message":"x"}})") << ProblemKind::WrongType;
    QTest::newRow("error.code fractional")
        << QByteArray(R"({"jsonrpc":"2.0","id":1,"error":{"code":-32601.5,"message":"x"}})") << ProblemKind::WrongType;
    QTest::newRow("error.code missing") << QByteArray(R"({"jsonrpc":"2.0","id":1,"error":{"message":"x"}})")
                                        << ProblemKind::WrongType;
    QTest::newRow("error not an object") << QByteArray(R"({"jsonrpc":"2.0","id":1,"error":"boom"})")
                                         << ProblemKind::WrongType;
    QTest::newRow("result and error") << QByteArray(R"({"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1,"message":"x"}})")
                                      << ProblemKind::NotJsonRpc;
    QTest::newRow("response without id") << QByteArray(R"({"jsonrpc":"2.0","result":{"agents":[]}})")
                                         << ProblemKind::NotJsonRpc;
    QTest::newRow("error response without id")
        << QByteArray(R"({"jsonrpc":"2.0","error":{"code":-32700,"message":"Parse error"}})") << ProblemKind::NotJsonRpc;
    QTest::newRow("neither result nor error") << QByteArray(R"({"jsonrpc":"2.0","id":104})") << ProblemKind::NotJsonRpc;
}

void TestCodec::problemsKeepTheirFrame()
{
    QFETCH(QByteArray, frame);
    QFETCH(ProblemKind, kind);

    const DecodeOutcome out = FrameCodec().decode(frame, 1234);
    QVERIFY2(!out.message, "a broken frame must not decode to a message");
    QVERIFY(out.problem);
    QCOMPARE(problemKindName(out.problem->kind), problemKindName(kind));
    QCOMPARE(out.problem->frame, frame);
    QCOMPARE(out.problem->timeMs, qint64(1234));
    QVERIFY(!out.problem->detail.isEmpty());
}

void TestCodec::errorCodeOutsideIntRangeIsNotTruncated()
{
    // 4294934695 == 2^32 - 32601: truncated to int it reads as -32601 ("method not found"),
    // which would make the client grey out a feature the server never refused.
    const QByteArray frame = R"({"jsonrpc":"2.0","id":1,"error":{"code":4294934695,"message":"odd server"}})";
    const DecodeOutcome out = FrameCodec().decode(frame);
    const bool readAsMethodNotFound = out.message && out.message->error.code == -32601;
    // known bug, reported: JsonRpc.cpp:158 reads error.code with get<int>() after only checking
    // is_number_integer(), so integers outside int range are silently truncated.
    QEXPECT_FAIL("", "known bug, reported: error.code outside int range is truncated (JsonRpc.cpp:158)", Continue);
    QVERIFY(!readAsMethodNotFound);
}

void TestCodec::oversizedFrameIsRefusedUnparsed()
{
    auto parser = std::make_shared<CountingParser>();
    CodecLimits limits;
    limits.maxFrameBytes = 64;
    const FrameCodec codec(limits, parser);

    QByteArray atLimit = R"({"jsonrpc":"2.0","id":1,"result":")";
    atLimit += QByteArray(64 - atLimit.size() - 2, 'x') + "\"}";
    QCOMPARE(atLimit.size(), 64);
    QVERIFY(codec.decode(atLimit).ok());
    QCOMPARE(parser->calls.load(), 1);

    QByteArray over = atLimit;
    over.insert(over.size() - 2, 'y');
    QCOMPARE(over.size(), 65);
    const DecodeOutcome out = codec.decode(over, 7);
    QVERIFY(!out.message);
    QVERIFY(out.problem);
    QCOMPARE(out.problem->kind, ProblemKind::OversizedFrame);
    QCOMPARE(out.problem->frame, over);
    QCOMPARE(parser->calls.load(), 1); // not parsed

    // Oversized wins even over other defects (it is checked before anything is looked at).
    const DecodeOutcome garbage = codec.decode(QByteArray(1000, '{'));
    QCOMPARE(garbage.problem->kind, ProblemKind::OversizedFrame);
    QCOMPARE(parser->calls.load(), 1);
}

void TestCodec::tooDeepFrameIsRefusedUnparsed()
{
    auto parser = std::make_shared<CountingParser>();
    CodecLimits limits;
    limits.maxNestingDepth = 4;
    const FrameCodec codec(limits, parser);

    // depth 4 exactly: {"params":[[[ ]]]} is object(1) + 3 arrays = 4
    const QByteArray ok = R"({"jsonrpc":"2.0","method":"m","params":[[[1]]]})";
    QCOMPARE(FrameCodec::nestingDepth(ok, 100), 4);
    QVERIFY(codec.decode(ok).ok());
    QCOMPARE(parser->calls.load(), 1);

    const QByteArray deep = R"({"jsonrpc":"2.0","method":"m","params":[[[[1]]]]})";
    const DecodeOutcome out = codec.decode(deep, 5);
    QVERIFY(!out.message);
    QCOMPARE(out.problem->kind, ProblemKind::TooDeep);
    QCOMPARE(out.problem->frame, deep);
    QCOMPARE(parser->calls.load(), 1); // not parsed

    // The default limit protects against stack exhaustion with absurd nesting.
    const DecodeOutcome absurd = FrameCodec().decode(nested(100000));
    QCOMPARE(absurd.problem->kind, ProblemKind::TooDeep);
}

void TestCodec::nestingDepthSkipsStrings_data()
{
    QTest::addColumn<QByteArray>("text");
    QTest::addColumn<int>("limit");
    QTest::addColumn<int>("depth");

    QTest::newRow("flat scalar") << QByteArray("42") << 10 << 0;
    QTest::newRow("empty object") << QByteArray("{}") << 10 << 1;
    QTest::newRow("three arrays") << QByteArray("[[[]]]") << 10 << 3;
    QTest::newRow("siblings do not add") << QByteArray("[[],[],{}]") << 10 << 2;
    QTest::newRow("brackets in a string") << QByteArray(R"({"a":"[[[[{{{{"})") << 10 << 1;
    QTest::newRow("escaped quote keeps the string open") << QByteArray(R"({"a":"\"[[[[","b":1})") << 10 << 1;
    QTest::newRow("escaped backslash closes the string") << QByteArray(R"({"a":"\\","b":[[1]]})") << 10 << 3;
    QTest::newRow("three backslashes and a quote") << QByteArray(R"({"a":"\\\"[[","b":1})") << 10 << 1;
    QTest::newRow("unterminated string") << QByteArray(R"([[{"a":"[[[[)") << 10 << 3;
    QTest::newRow("brackets in a key") << QByteArray(R"({"[[[":{"}}}":1}})") << 10 << 2;
    QTest::newRow("stops early above the limit") << nested(50) << 5 << 6;
    QTest::newRow("exactly at the limit") << nested(5) << 5 << 5;
}

void TestCodec::nestingDepthSkipsStrings()
{
    QFETCH(QByteArray, text);
    QFETCH(int, limit);
    QFETCH(int, depth);
    QCOMPARE(FrameCodec::nestingDepth(text, limit), depth);
}

void TestCodec::nestingDepthMatchesByteScan()
{
    // nestingDepth skips strings with memchr; a plain byte-by-byte scan is the reference.
    const auto reference = [](const QByteArray &text, int limit) {
        int depth = 0;
        int maxDepth = 0;
        bool inString = false;
        bool escaped = false;
        for (const char c : text) {
            if (inString) {
                if (escaped)
                    escaped = false;
                else if (c == '\\')
                    escaped = true;
                else if (c == '"')
                    inString = false;
                continue;
            }
            if (c == '"')
                inString = true;
            else if (c == '[' || c == '{')
                maxDepth = std::max(maxDepth, ++depth);
            else if (c == ']' || c == '}')
                --depth;
            if (maxDepth > limit)
                return limit + 1;
        }
        return maxDepth;
    };
    const char alphabet[] = {'"', '\\', '[', ']', '{', '}', 'a', ':'};
    quint32 seed = 12345;
    for (int round = 0; round < 20000; ++round) {
        QByteArray text;
        const int length = 1 + round % 40;
        for (int i = 0; i < length; ++i) {
            seed = seed * 1664525u + 1013904223u;
            text.append(alphabet[(seed >> 16) % sizeof(alphabet)]);
        }
        const int limit = 1 + round % 6;
        if (FrameCodec::nestingDepth(text, limit) != reference(text, limit))
            QFAIL(qPrintable(QStringLiteral("differs on %1 (limit %2): %3 instead of %4")
                                 .arg(QString::fromLatin1(text)).arg(limit)
                                 .arg(FrameCodec::nestingDepth(text, limit)).arg(reference(text, limit))));
    }
}

void TestCodec::bracketsInStringsDoNotCountInDecode()
{
    CodecLimits limits;
    limits.maxNestingDepth = 2;
    const FrameCodec codec(limits);
    const QByteArray frame = R"({"jsonrpc":"2.0","method":"map/event","params":{"text":"[[[[[[{{{{{{ \" ]]]"}})";
    const DecodeOutcome out = codec.decode(frame);
    QVERIFY2(out.ok(), out.problem ? qPrintable(out.problem->detail) : "");
    QCOMPARE(out.message->params.at("text").get<std::string>(), std::string("[[[[[[{{{{{{ \" ]]]"));
}

void TestCodec::keptProblemFrameIsTruncated()
{
    const qsizetype keep = ProtocolProblem::kMaxKeptProblemBytes;
    // Invalid JSON well above the kept size: the problem keeps exactly the first kMax bytes.
    QByteArray big = "{\"jsonrpc\":\"2.0\",\"garbage\":";
    while (big.size() < keep * 2 + 17)
        big += "0123456789abcdef";
    const DecodeOutcome invalid = FrameCodec().decode(big);
    QVERIFY(invalid.problem);
    QCOMPARE(invalid.problem->kind, ProblemKind::InvalidJson);
    QCOMPARE(invalid.problem->frame.size(), keep);
    QCOMPARE(invalid.problem->frame, big.left(keep));

    // Also for refused frames, and for a frame just one byte above the kept size.
    CodecLimits limits;
    limits.maxFrameBytes = keep;
    const QByteArray oneMore(keep + 1, 'x');
    const DecodeOutcome over = FrameCodec(limits).decode(oneMore);
    QCOMPARE(over.problem->kind, ProblemKind::OversizedFrame);
    QCOMPARE(over.problem->frame.size(), keep);

    // A short broken frame is kept whole.
    const DecodeOutcome small = FrameCodec().decode("{oops");
    QCOMPARE(small.problem->frame, QByteArray("{oops"));
}

void TestCodec::encodeRequestRoundTrips_data()
{
    QTest::addColumn<QByteArray>("idJson");
    QTest::addColumn<QString>("method");
    QTest::addColumn<QByteArray>("paramsJson");
    QTest::addColumn<QByteArray>("expectedParamsJson");

    QTest::newRow("integer id, object params") << QByteArray("12") << QStringLiteral("map/subscribe")
                                               << QByteArray(R"({"filter":{}})") << QByteArray(R"({"filter":{}})");
    QTest::newRow("string id") << QByteArray(R"("req-1")") << QStringLiteral("map/agents/list") << QByteArray("{}")
                               << QByteArray("{}");
    QTest::newRow("null params become {}") << QByteArray("3") << QStringLiteral("map/scopes/list") << QByteArray("null")
                                           << QByteArray("{}");
    QTest::newRow("text with newlines and unicode")
        << QByteArray("4") << QStringLiteral("map/send")
        << QByteArray(R"({"to":{"agent":"a"},"payload":{"text":"line 1\nline 2 — ünïcødé 🚀"}})")
        << QByteArray(R"({"to":{"agent":"a"},"payload":{"text":"line 1\nline 2 — ünïcødé 🚀"}})");
}

void TestCodec::encodeRequestRoundTrips()
{
    QFETCH(QByteArray, idJson);
    QFETCH(QString, method);
    QFETCH(QByteArray, paramsJson);
    QFETCH(QByteArray, expectedParamsJson);

    const Json id = Json::parse(idJson.toStdString());
    const QByteArray frame = FrameCodec::encodeRequest(id, method, Json::parse(paramsJson.toStdString()));
    QVERIFY2(!frame.contains('\n'), "one frame = one line, no raw newline");
    QVERIFY(!frame.endsWith(' '));

    // Independently parsed: a JSON-RPC 2.0 request object.
    const QJsonObject o = QJsonDocument::fromJson(frame).object();
    QCOMPARE(o.value(QStringLiteral("jsonrpc")).toString(), QStringLiteral("2.0"));
    QCOMPARE(o.value(QStringLiteral("method")).toString(), method);
    QVERIFY(o.value(QStringLiteral("params")).isObject());

    const DecodeOutcome back = FrameCodec().decode(frame);
    QVERIFY(back.ok());
    QCOMPARE(back.message->kind, MessageKind::Request);
    QCOMPARE(back.message->id, id);
    QCOMPARE(back.message->method, method);
    QCOMPARE(back.message->params, Json::parse(expectedParamsJson.toStdString()));
}

void TestCodec::encodeNotificationRoundTrips()
{
    const QByteArray frame =
        FrameCodec::encodeNotification(QStringLiteral("map/subscribe.ack"), Json{{"subscriptionId", "s"}, {"upToSequence", 3}});
    QVERIFY(!frame.contains('\n'));
    QVERIFY(!QJsonDocument::fromJson(frame).object().contains(QStringLiteral("id")));
    const DecodeOutcome back = FrameCodec().decode(frame);
    QVERIFY(back.ok());
    QCOMPARE(back.message->kind, MessageKind::Notification);
    QCOMPARE(back.message->method, QStringLiteral("map/subscribe.ack"));
    QCOMPARE(back.message->params.at("upToSequence").get<int>(), 3);
}

void TestCodec::realFramesDecodeToExactlyOneOutcome_data()
{
    QTest::addColumn<QByteArray>("frame");
    int rows = 0;
    for (const QString &file : {QStringLiteral("errors.ndjson"), QStringLiteral("methods-tour.ndjson")}) {
        const auto records = mapi_test::readCapture(mapi_test::dataPath(file));
        QVERIFY2(!records.isEmpty(), qPrintable(file));
        for (const auto &r : records) {
            if (r.dir != QLatin1String("send") && r.dir != QLatin1String("recv"))
                continue;
            QTest::addRow("%s:%d %s", qPrintable(file), r.line, qPrintable(r.dir)) << r.raw;
            ++rows;
        }
    }
    QVERIFY(rows > 600);
}

void TestCodec::realFramesDecodeToExactlyOneOutcome()
{
    QFETCH(QByteArray, frame);
    const DecodeOutcome out = FrameCodec().decode(frame, 1);
    QVERIFY2(out.message.has_value() != out.problem.has_value(), "exactly one of message / problem");
    if (looksLikeValidCall(frame))
        QVERIFY2(out.ok(), out.problem ? qPrintable(out.problem->detail) : "");
    if (out.problem)
        QCOMPARE(out.problem->frame, frame.left(ProtocolProblem::kMaxKeptProblemBytes));
    const QJsonDocument independent = QJsonDocument::fromJson(frame);
    if (independent.isNull())
        QCOMPARE(out.problem->kind, ProblemKind::InvalidJson);
}

// Numbers a hostile peer sends where integers are expected (found by reading what the fuzzers
// would reach): 1e300 cast to an integer was undefined behaviour; now it saturates.
void TestCodec::hugeNumbersSaturate()
{
    constexpr qint64 max = std::numeric_limits<qint64>::max();
    constexpr qint64 min = std::numeric_limits<qint64>::min();
    QCOMPARE(saturatedInt(1e300), max);
    QCOMPARE(saturatedInt(-1e300), min);
    QCOMPARE(saturatedInt(9223372036854775808.0), max);
    QCOMPARE(saturatedInt(std::numeric_limits<double>::quiet_NaN()), qint64(0));
    QCOMPARE(saturatedInt(std::numeric_limits<double>::infinity()), max);
    QCOMPARE(saturatedInt(-2.9), qint64(-2));
    QCOMPARE(saturatedInt(1795000000000.7), qint64(1795000000000));
    const Json frame = Json::parse(R"({"timestamp":1e300,"sequenceNumber":-1e300,"t":2.5})");
    QCOMPARE(jsonInt(frame, "timestamp"), max);
    QCOMPARE(jsonInt(frame, "sequenceNumber"), min);
    QCOMPARE(jsonInt(frame, "t"), qint64(2));

    // Through the whole live path: an event stamped 1e300 with sequence number 1e300.
    SystemStore store;
    mapi_test::Wire wire(store);
    wire.registerAgent(QStringLiteral("a"), QStringLiteral("a"));
    wire.receive(R"({"jsonrpc":"2.0","method":"map/event","params":{"subscriptionId":"sub-1","sequenceNumber":1e300,)"
                 R"("eventId":"e-huge","timestamp":1e300,"event":{"type":"agent.heartbeat","timestamp":1e300,"id":"e-huge",)"
                 R"("source":{"agentId":"a"},"data":{}}}})");
    QVERIFY(store.counters().eventsApplied >= 2);
    QVERIFY(store.now() < 4'000'000'000'000); // "now" did not jump to the end of time
}

QTEST_GUILESS_MAIN(TestCodec)
#include "tst_codec.moc"
