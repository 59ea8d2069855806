// The redaction of frames on their way into a trace or the journal (redactSecrets): secrets at
// any depth and in every capture go, frames without one stay byte for byte, a frame cut inside a
// secret loses its start too, and deep frames do not crash it. (Split from tst_trace; the text
// rules and the table of secret shapes: tst_redaction.)
#include "TestSupport.h"

#include "common/Redaction.h"
#include "trace/Trace.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

using namespace mapi;
using mapi_test::CaptureRecord;
using mapi_test::dump;
using mapi_test::s;

namespace {

// Keys whose values are secrets (case-insensitive), as an independent oracle.
bool isSecretKey(const QString &key)
{
    static const QStringList keys = {QStringLiteral("credential"), QStringLiteral("token"), QStringLiteral("resumetoken"),
                                     QStringLiteral("apikey"), QStringLiteral("api_key"), QStringLiteral("password"),
                                     QStringLiteral("secret"), QStringLiteral("accesstoken"), QStringLiteral("refreshtoken"),
                                     QStringLiteral("authorization"), QStringLiteral("access_token"),
                                     QStringLiteral("refresh_token"), QStringLiteral("resume_token")};
    return keys.contains(key.toLower());
}

bool hasSecretValue(const QJsonValue &v)
{
    if (v.isObject()) {
        const QJsonObject o = v.toObject();
        for (auto it = o.begin(); it != o.end(); ++it)
            if ((isSecretKey(it.key()) && !it.value().isNull()) || hasSecretValue(it.value()))
                return true;
    } else if (v.isArray()) {
        for (const QJsonValue &item : v.toArray())
            if (hasSecretValue(item))
                return true;
    }
    return false;
}

bool hasSecretValue(const QByteArray &frame)
{
    const QJsonDocument doc = QJsonDocument::fromJson(frame);
    return doc.isObject() ? hasSecretValue(doc.object()) : doc.isArray() ? hasSecretValue(doc.array()) : false;
}

// The expected result of redaction: the same document with every non-null secret value
// replaced by "REDACTED".
QJsonValue redactedCopy(const QJsonValue &v)
{
    if (v.isObject()) {
        QJsonObject o = v.toObject();
        for (auto it = o.begin(); it != o.end(); ++it)
            it.value() = (isSecretKey(it.key()) && !it.value().isNull()) ? QJsonValue(QStringLiteral("REDACTED"))
                                                                         : redactedCopy(it.value());
        return o;
    }
    if (v.isArray()) {
        QJsonArray a;
        for (const QJsonValue &item : v.toArray())
            a.append(redactedCopy(item));
        return a;
    }
    return v;
}

} // namespace

class TestFrameRedaction : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase() { mapi_test::installWarningGuard(); }
    void init() { mapi_test::armWarningGuard(); }
    void cleanup() { MAPI_NO_WARNINGS(); }
    void cleanupTestCase() { MAPI_NO_WARNINGS(); }

    void redactsResumeTokenInSessionDisconnected();
    void redactsCredentialInConnect();
    void redactsAtAnyDepth();
    void leavesFramesWithoutSecretsByteIdentical_data();
    void leavesFramesWithoutSecretsByteIdentical();
    void capturesAreFullyRedacted();
    void deepFrameWithSecretWordDoesNotCrash();
};

void TestFrameRedaction::redactsResumeTokenInSessionDisconnected()
{
    const Json inner = mapi_test::innerEvent(QStringLiteral("01EVT"), QStringLiteral("session.disconnected"), 1795251944729,
                                             {{"sessionId", "01SESS"}, {"resumeToken", "resume_01M7YNNF8SFJZ9SS9KEQ5N8GZK"}},
                                             {{"sessionId", "01SESS"}});
    const QByteArray frame = mapi_test::eventFrame(QStringLiteral("sub-1"), 474, inner);
    const QByteArray clean = redactSecrets(frame);
    QVERIFY(!clean.contains("resume_01M7YNNF8SFJZ9SS9KEQ5N8GZK"));
    Json expected = Json::parse(frame.toStdString());
    expected["params"]["event"]["data"]["resumeToken"] = "REDACTED";
    QCOMPARE(Json::parse(clean.toStdString()), expected); // everything else unchanged
}

void TestFrameRedaction::redactsCredentialInConnect()
{
    const QByteArray frame = mapi_test::requestFrame(
        1, QStringLiteral("map/connect"),
        {{"protocolVersion", 1}, {"participantType", "client"}, {"auth", {{"method", "api-key"}, {"credential", "sk-live-123"}}}});
    const QByteArray clean = redactSecrets(frame);
    QVERIFY(!clean.contains("sk-live-123"));
    const Json j = Json::parse(clean.toStdString());
    QCOMPARE(j.at("params").at("auth").at("credential"), Json("REDACTED"));
    QCOMPARE(j.at("params").at("auth").at("method"), Json("api-key"));
    QCOMPARE(j.at("method"), Json("map/connect"));
    QCOMPARE(j.at("id"), Json(1));

    // map/authenticate and map/auth/refresh, as sent in the methods tour.
    const QByteArray auth = R"({"jsonrpc":"2.0","id":137,"method":"map/authenticate","params":{"method":"bearer","credential":"x"}})";
    QCOMPARE(Json::parse(redactSecrets(auth).toStdString()).at("params").at("credential"), Json("REDACTED"));
}

void TestFrameRedaction::redactsAtAnyDepth()
{
    const Json frame = {{"jsonrpc", "2.0"},
                        {"id", 5},
                        {"result", {{"list", {{{"deep", {{"apiKey", "k1"}}}}, {{"Authorization", "Bearer t"}}}},
                                    {"nested", {{"a", {{"b", {{"c", {{"token", "t3"}, {"keep", "me"}}}}}}}}},
                                    {"refresh_token", {{"an", "object"}}},
                                    {"password", nullptr},
                                    {"tokens", 5}}}};
    const QByteArray clean = redactSecrets(dump(frame));
    const Json j = Json::parse(clean.toStdString());
    QCOMPARE(j["result"]["list"][0]["deep"]["apiKey"], Json("REDACTED"));
    QCOMPARE(j["result"]["list"][1]["Authorization"], Json("REDACTED"));
    QCOMPARE(j["result"]["nested"]["a"]["b"]["c"]["token"], Json("REDACTED"));
    QCOMPARE(j["result"]["nested"]["a"]["b"]["c"]["keep"], Json("me"));
    QCOMPARE(j["result"]["refresh_token"], Json("REDACTED"));
    QVERIFY(j["result"]["password"].is_null()); // nothing to hide
    QCOMPARE(j["result"]["tokens"], Json(5));   // not a secret key
    QCOMPARE(QJsonDocument::fromJson(clean).object(),
             redactedCopy(QJsonDocument::fromJson(dump(frame)).object()).toObject());
    for (const char *secret : {"k1", "Bearer t", "t3", "an\""})
        QVERIFY2(!clean.contains(secret), secret);
}

void TestFrameRedaction::leavesFramesWithoutSecretsByteIdentical_data()
{
    QTest::addColumn<QByteArray>("frame");
    QTest::newRow("word 'token' in a value, odd spacing")
        << QByteArray(R"({ "jsonrpc" : "2.0", "method":"map/event", "params" : {"text":"a token bucket", "n": 1.50}} )");
    QTest::newRow("secret key with null value") << QByteArray(R"({"jsonrpc":"2.0","id":1,"result":{"token":null}})");
    QTest::newRow("key order and escapes") << QByteArray(R"({"z":1,"a":"\u00e9\/","secretary":"not a secret"})");
    int rows = 0;
    for (const QString &file : {QStringLiteral("methods-tour.ndjson"), QStringLiteral("scenario-testserver.ndjson")}) {
        for (const CaptureRecord &r : mapi_test::readCapture(mapi_test::dataPath(file))) {
            if ((r.dir == QLatin1String("send") || r.dir == QLatin1String("recv")) && !hasSecretValue(r.raw) && rows < 400) {
                QTest::addRow("%s:%d", qPrintable(file), r.line) << r.raw;
                ++rows;
            }
        }
    }
}

void TestFrameRedaction::leavesFramesWithoutSecretsByteIdentical()
{
    QFETCH(QByteArray, frame);
    QCOMPARE(redactSecrets(frame), frame);
    // A frame cut inside a secret's value: what came before the cut is the secret's start.
    const QByteArray cut("{\"credential\": \"oops");
    QCOMPARE(redactSecrets(cut), QByteArray("{\"credential\": \"REDACTED"));
}

void TestFrameRedaction::capturesAreFullyRedacted()
{
    int redacted = 0;
    for (const char *file : {"scenario-basic.ndjson", "errors.ndjson", "methods-tour.ndjson", "scenario-deliver.ndjson"}) {
        for (const CaptureRecord &r : mapi_test::readCapture(mapi_test::dataPath(QString::fromUtf8(file)))) {
            if (r.dir != QLatin1String("send") && r.dir != QLatin1String("recv"))
                continue;
            if (!hasSecretValue(r.raw))
                continue;
            const QByteArray clean = redactSecrets(r.raw);
            QVERIFY2(clean != r.raw, qPrintable(QStringLiteral("%1:%2").arg(QString::fromUtf8(file)).arg(r.line)));
            QVERIFY(!clean.contains("resume_01"));
            // Only the secret values differ.
            const QJsonObject o = QJsonDocument::fromJson(clean).object();
            QVERIFY(!o.isEmpty());
            QCOMPARE(o, redactedCopy(QJsonDocument::fromJson(r.raw).object()).toObject());
            ++redacted;
        }
    }
    QVERIFY2(redacted >= 10, qPrintable(QString::number(redacted))); // session.disconnected events, disconnect results, auth
}

void TestFrameRedaction::deepFrameWithSecretWordDoesNotCrash()
{
    // A hostile or broken peer can send absurdly nested JSON. The codec refuses it unparsed
    // (TooDeep), but the trace writer redacts every frame first. Run in a child process.
    const int rc = mapi_test::runIsolated([] {
        const int depth = 200000;
        const QByteArray frame = QByteArray(depth, '[') + R"({"token":"x"})" + QByteArray(depth, ']');
        const QByteArray out = redactSecrets(frame);
        return out.isEmpty() ? 1 : 0;
    });
    // Redaction scans the text without recursion: deep nesting cannot overflow the stack.
    QCOMPARE(rc, 0);
}

QTEST_GUILESS_MAIN(TestFrameRedaction)
#include "tst_frame_redaction.moc"
