// Redaction (core/common/Redaction.h): the rule set on a corpus of secret shapes, the prose and
// fields it must leave alone, and each way out that applies it: trace records of every kind, CSV,
// the Chrome trace and the connection's error text.
#include "TestSupport.h"

#include "client/MapClient.h"
#include "common/Redaction.h"
#include "model/SystemStore.h"
#include "pipeline/ProtocolPipeline.h"
#include "trace/ModelExport.h"
#include "trace/TraceRecord.h"

#include <QBuffer>

using namespace mapi;
using mapi_test::dump;

class TestRedaction : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void initTestCase() { mapi_test::installWarningGuard(); }
    void init() { mapi_test::armWarningGuard(); }
    void cleanup() { QCOMPARE(mapi_test::takeWarnings(), QString()); }

    void secretNames_data();
    void secretNames();
    void secretShapesVanishEverywhere_data();
    void secretShapesVanishEverywhere();
    void proseAndCountersAreKept_data();
    void proseAndCountersAreKept();
    void jsonKeepsEverythingButTheSecret();
    void stringifiedJsonIsRedactedInside();
    void bytesThatAreNotUtf8AreKept();
    void everyTraceRecordKindIsRedacted();
    void csvAndChromeTraceAreRedacted();
    void credentialOverPlainWsToARemoteHostIsRefused();
    void parseErrorsDoNotQuoteTheFrame();
};

void TestRedaction::secretNames_data()
{
    QTest::addColumn<QString>("name");
    QTest::addColumn<bool>("secret");
    for (const char *name : {"token", "Token", "TOKEN", "accessToken", "access_token", "refresh-token", "id_token", "idToken",
                             "apiToken", "api_token", "resumeToken", "x-api-key", "X-Api-Key", "apiKey", "api_key", "API-KEY",
                             "openai_api_key", "client_secret", "clientSecret", "secret", "password", "Password", "db.password",
                             "passwd", "pwd", "credential", "credentials", "authorization", "Proxy-Authorization", "cookie",
                             "Set-Cookie", "private_key", "privateKey", "passphrase", "session_key", "bearer"})
        QTest::addRow("%s", name) << QString::fromLatin1(name) << true;
    for (const char *name : {"tokens", "tokens_used", "tokensUsed", "input_tokens", "output_tokens", "max_tokens", "tokenizer",
                             "tokenCount", "token_type", "secretary", "sessionId", "session", "authorizedBy", "auth", "method",
                             "keyboard", "passwordless", "cookies_enabled", "cost_usd", ""})
        QTest::addRow("not %s", name) << QString::fromLatin1(name) << false;
}

void TestRedaction::secretNames()
{
    QFETCH(QString, name);
    QFETCH(bool, secret);
    QCOMPARE(isSecretName(name.toStdString()), secret);
}

// Each row: a text holding one secret, the secret, and a part that must stay. Checked as it is
// (a non-JSON frame, a log line), inside a JSON string value, and inside stringified JSON.
void TestRedaction::secretShapesVanishEverywhere_data()
{
    QTest::addColumn<QString>("text");
    QTest::addColumn<QString>("secret");
    QTest::addColumn<QString>("kept");
    const QString jwt = QStringLiteral("eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJvcGVyYXRvciJ9.c2lnbmF0dXJlXzEyMw");
    QTest::newRow("Bearer JWT") << QStringLiteral("Authorization: Bearer %1").arg(jwt) << jwt << QStringLiteral("Authorization: Bearer");
    QTest::newRow("Bearer opaque") << QStringLiteral("sent with bearer abc123def456ghi") << QStringLiteral("abc123def456ghi")
                                   << QStringLiteral("sent with bearer");
    QTest::newRow("Basic") << QStringLiteral("Authorization: Basic dXNlcjpodW50ZXIy") << QStringLiteral("dXNlcjpodW50ZXIy")
                           << QStringLiteral("Basic");
    QTest::newRow("bare JWT") << QStringLiteral("token was %1 then").arg(jwt) << jwt << QStringLiteral(" then");
    QTest::newRow("OpenAI key") << QStringLiteral("using sk-proj-Abc123Def456Ghi789Jkl for the call")
                                << QStringLiteral("sk-proj-Abc123Def456Ghi789Jkl") << QStringLiteral("for the call");
    QTest::newRow("Anthropic key") << QStringLiteral("key sk-ant-api03-XyZ987aBc654dEf321") << QStringLiteral("sk-ant-api03-XyZ987aBc654dEf321")
                                   << QStringLiteral("key ");
    QTest::newRow("GitHub token") << QStringLiteral("clone with ghp_0123456789abcdefghijABCDEFGHIJklmnop now")
                                  << QStringLiteral("ghp_0123456789abcdefghijABCDEFGHIJklmnop") << QStringLiteral(" now");
    QTest::newRow("GitHub fine-grained") << QStringLiteral("github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz")
                                         << QStringLiteral("11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz") << QString();
    QTest::newRow("AWS key id") << QStringLiteral("aws AKIAIOSFODNN7EXAMPLE ok") << QStringLiteral("AKIAIOSFODNN7EXAMPLE")
                                << QStringLiteral(" ok");
    QTest::newRow("Slack") << QStringLiteral("xoxb-123456789012-abcdefABCDEF") << QStringLiteral("123456789012-abcdefABCDEF") << QString();
    QTest::newRow("Google API key") << QStringLiteral("AIzaSyA1234567890abcdefghijklmnopqrstuv") << QStringLiteral("SyA1234567890abcdefghijklmnopqrstuv")
                                    << QString();
    QTest::newRow("PEM") << QStringLiteral("-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA7\n-----END RSA PRIVATE KEY-----\nafter")
                         << QStringLiteral("MIIEpAIBAAKCAQEA7") << QStringLiteral("after");
    QTest::newRow("URL password") << QStringLiteral("postgres://admin:hunter2@db.internal:5432/app") << QStringLiteral("hunter2")
                                  << QStringLiteral("postgres://admin:REDACTED@db.internal:5432/app");
    QTest::newRow("query parameter") << QStringLiteral("GET /v1?access_token=q1w2e3r4t5&page=2") << QStringLiteral("q1w2e3r4t5")
                                     << QStringLiteral("&page=2");
    QTest::newRow("name: value") << QStringLiteral("password: correct-horse-battery") << QStringLiteral("correct-horse-battery")
                                 << QStringLiteral("password: ");
    QTest::newRow("x-api-key header") << QStringLiteral("X-Api-Key: 5f2b9c0e1d") << QStringLiteral("5f2b9c0e1d")
                                      << QStringLiteral("X-Api-Key");
    QTest::newRow("env style") << QStringLiteral("OPENAI_API_KEY=abc-def-123 other=1") << QStringLiteral("abc-def-123")
                               << QStringLiteral("other=1");
    QTest::newRow("quoted pair") << QStringLiteral("{'client_secret': 'cs_live_42'}") << QStringLiteral("cs_live_42")
                                 << QStringLiteral("client_secret");
}

void TestRedaction::secretShapesVanishEverywhere()
{
    QFETCH(QString, text);
    QFETCH(QString, secret);
    QFETCH(QString, kept);
    const QByteArray secretBytes = secret.toUtf8();

    const QString plain = redactSecrets(text);
    QVERIFY2(!plain.contains(secret), qPrintable(plain));
    QVERIFY2(plain.contains(kept), qPrintable(plain));
    QVERIFY2(plain.contains(QLatin1String("REDACTED")), qPrintable(plain));

    // As a string value in a frame: the frame stays valid JSON and only that value changes.
    const Json frame = {{"jsonrpc", "2.0"}, {"method", "map/event"}, {"params", {{"log", text.toStdString()}, {"n", 7}}}};
    const QByteArray inJson = redactSecrets(dump(frame));
    QVERIFY2(!inJson.contains(secretBytes), inJson.constData());
    const Json parsed = Json::parse(inJson.constBegin(), inJson.constEnd(), nullptr, false);
    QVERIFY(parsed.is_object());
    QCOMPARE(QString::fromStdString(parsed["params"]["log"].get<std::string>()), plain);
    QCOMPARE(parsed["params"]["n"], Json(7));

    // Stringified JSON holding it (a payload an agent serialised itself).
    const Json inner = {{"note", text.toStdString()}};
    const Json outer = {{"payload", inner.dump()}};
    const QByteArray nested = redactSecrets(dump(outer));
    QVERIFY2(!nested.contains(secretBytes), nested.constData());
}

void TestRedaction::proseAndCountersAreKept_data()
{
    QTest::addColumn<QByteArray>("text");
    QTest::newRow("bearer in prose") << QByteArray("the agent was the bearer of bad news");
    QTest::newRow("basic in prose") << QByteArray("a basic functionality check");
    QTest::newRow("token in prose") << QByteArray("token bucket refilled: token=null");
    QTest::newRow("time zone") << QByteArray("Asia/Tokyo, AKIA is not a key alone");
    QTest::newRow("task ids") << QByteArray("task-0123456789abcdef risk-assessment-2026 desk-lamp");
    QTest::newRow("URL without password") << QByteArray("see https://example.org/a?b=c and ws://127.0.0.1:8080");
    QTest::newRow("seed 003 usage") << QByteArray(R"({"resource_usage":{"tokens_used":1520,"cost_usd":0.42},"input_tokens":3})");
    QTest::newRow("booleans and null") << QByteArray(R"({"hasToken":true,"password":null,"apiKey":false})");
    QTest::newRow("already redacted") << QByteArray(R"({"token":"REDACTED","x":"password=REDACTED"})");
    QTest::newRow("non-JSON frame") << QByteArray("hello, this frame is not JSON: {oops");
}

void TestRedaction::proseAndCountersAreKept()
{
    QFETCH(QByteArray, text);
    QCOMPARE(redactSecrets(text), text);
}

void TestRedaction::jsonKeepsEverythingButTheSecret()
{
    // Odd spacing, key order and escapes survive byte for byte around the one value replaced.
    const QByteArray frame = R"({ "z" : 1, "auth" : {"method":"bearer", "x-api-key" : {"nested":[1,2]}}, "a":"\u00e9\/" })";
    QCOMPARE(redactSecrets(frame), QByteArray(R"({ "z" : 1, "auth" : {"method":"bearer", "x-api-key" : "REDACTED"}, "a":"\u00e9\/" })"));
    // An escaped name is still a name.
    QCOMPARE(redactSecrets(QByteArray(R"({"tok\u0065n":"t1"})")), QByteArray(R"({"tok\u0065n":"REDACTED"})"));
    // Numbers under a secret name go too (a numeric PIN is a secret).
    QCOMPARE(redactSecrets(QByteArray(R"({"pwd":1234})")), QByteArray(R"({"pwd":"REDACTED"})"));
    // The Json overload.
    const Json params = {{"agentId", "a1"}, {"headers", {{"Authorization", "Bearer zz9_zz9_zz9"}}}};
    const Json clean = redactSecrets(params);
    QCOMPARE(clean["agentId"], Json("a1"));
    QCOMPARE(clean["headers"]["Authorization"], Json("REDACTED"));
}

void TestRedaction::stringifiedJsonIsRedactedInside()
{
    const Json inner = {{"apiToken", "tok-77"}, {"keep", "me"}, {"deeper", Json({{"client_secret", "cs9"}}).dump()}};
    const QByteArray frame = dump(Json{{"payload", inner.dump()}});
    const QByteArray clean = redactSecrets(frame);
    QVERIFY2(!clean.contains("tok-77") && !clean.contains("cs9"), clean.constData());
    const Json back = Json::parse(Json::parse(clean.toStdString())["payload"].get<std::string>());
    QCOMPARE(back["keep"], Json("me"));
    QCOMPARE(back["apiToken"], Json("REDACTED"));
}

void TestRedaction::bytesThatAreNotUtf8AreKept()
{
    QByteArray text("\xff\xfe password=s3cr3t \xc3\xa9 \x85\xa0 end");
    const QByteArray clean = redactSecrets(text);
    QVERIFY(!clean.contains("s3cr3t"));
    QCOMPARE(clean, QByteArray("\xff\xfe password=REDACTED \xc3\xa9 \x85\xa0 end"));
}

void TestRedaction::everyTraceRecordKindIsRedacted()
{
    const char *secret = "s3cret-0123456789";
    auto line = [](const QString &dir, const QByteArray &raw, bool binary = false, const Json &extra = Json()) {
        TraceRecord r;
        r.timeMs = 1;
        r.dir = dir;
        r.raw = raw;
        r.binary = binary;
        r.extra = extra;
        return encodeRecordLine(r);
    };
    // A frame that is not JSON, a binary frame, a close reason, a note.
    for (const QByteArray &l : {line(QStringLiteral("recv"), QByteArray("Authorization: Bearer ") + secret),
                                line(QStringLiteral("recv"), QByteArray("token=") + secret, true),
                                line(QStringLiteral("close"), QByteArray("bye, password=") + secret),
                                line(QStringLiteral("note"), QByteArray("api_key: ") + secret)}) {
        QVERIFY2(!l.contains(secret) && !QByteArray::fromBase64(l).contains(secret), l.constData());
        const Json parsed = Json::parse(l.constBegin(), l.constEnd(), nullptr, false);
        QVERIFY(parsed.is_object());
        const std::string raw = parsed.value("raw", std::string());
        QVERIFY(raw.find(secret) == std::string::npos);
        QVERIFY(QByteArray::fromBase64(QByteArray::fromStdString(raw)).indexOf(secret) < 0);
    }
    // An operator action record: its parameters, note and detail.
    ActionUpdate update;
    update.step = ActionUpdate::Step::Created;
    update.action.id = QStringLiteral("act-1");
    update.action.kind = ActionKind::Inject;
    update.action.method = QStringLiteral("map/inject");
    update.action.params = {{"agentId", "a1"}, {"content", {{"apiToken", secret}}}};
    update.action.note = QStringLiteral("retried with Bearer %1").arg(QLatin1String(secret));
    const QByteArray action = line(QStringLiteral("action"), {}, false, actionUpdateToJson(update));
    QVERIFY2(!action.contains(secret), action.constData());
    QVERIFY(action.contains("\"agentId\":\"a1\""));
    // The header (server information may carry a key).
    const QByteArray header = encodeHeaderLine(QStringLiteral("ws://h"), 1, {{"server", {{"apiKey", secret}}}});
    QVERIFY2(!header.contains(secret), header.constData());
}

void TestRedaction::csvAndChromeTraceAreRedacted()
{
    SystemStore store;
    mapi_test::Wire wire(store);
    wire.registerAgent(QStringLiteral("a1"), QStringLiteral("planner"), {}, {{"apiKey", "meta-secret-42"}});
    wire.registerAgent(QStringLiteral("a2"), QStringLiteral("coder"));
    wire.message(QStringLiteral("m1"), QStringLiteral("a1"), "a2",
                 {{"text", "use Bearer tok_0123456789abcdef"}, {"creds", {{"password", "pw-0000"}}}});
    for (const CsvTable table : {CsvTable::Agents, CsvTable::Messages}) {
        QBuffer buffer;
        QVERIFY(buffer.open(QIODevice::WriteOnly));
        QVERIFY(writeCsv(store, table, buffer).value() > 0);
        for (const char *secret : {"meta-secret-42", "tok_0123456789abcdef", "pw-0000"})
            QVERIFY2(!buffer.data().contains(secret), buffer.data().constData());
    }
    QBuffer chrome;
    QVERIFY(chrome.open(QIODevice::WriteOnly));
    QVERIFY(writeChromeTrace(store, chrome));
    for (const char *secret : {"meta-secret-42", "tok_0123456789abcdef", "pw-0000"})
        QVERIFY2(!chrome.data().contains(secret), secret);
    QVERIFY(QJsonDocument::fromJson(chrome.data()).isObject());
}

void TestRedaction::credentialOverPlainWsToARemoteHostIsRefused()
{
    ClientOptions o;
    o.auth.method = AuthConfig::Method::Bearer;
    o.auth.credential = QStringLiteral("t");
    auto inClear = [&o](const char *url) {
        o.url = QUrl(QString::fromLatin1(url));
        return credentialTravelsInClear(o);
    };
    QVERIFY(inClear("ws://agents.example.org:8080"));
    QVERIFY(inClear("ws://10.0.0.7:8080"));
    QVERIFY(inClear("WS://[2001:db8::1]:80"));
    QVERIFY(!inClear("wss://agents.example.org"));
    QVERIFY(!inClear("ws://localhost:8080"));
    QVERIFY(!inClear("ws://127.0.0.1:8080"));
    QVERIFY(!inClear("ws://127.8.9.10"));
    QVERIFY(!inClear("ws://[::1]:8080"));
    o.auth.method = AuthConfig::Method::None;
    QVERIFY(!inClear("ws://agents.example.org"));
    // Issue 42 item 2d: a credential in the URL itself counts as one.
    QVERIFY(inClear("ws://agents.example.org:8080/map?token=abc123"));
    QVERIFY(inClear("ws://agents.example.org:8080/map?x=1&api_key=k-9"));
    QVERIFY(inClear("ws://operator:hunter2@agents.example.org/"));
    QVERIFY(!inClear("ws://agents.example.org:8080/map?room=ops")); // not a secret's name
    QVERIFY(!inClear("wss://agents.example.org/map?token=abc123"));
    QVERIFY(!inClear("ws://127.0.0.1:8080/map?token=abc123"));

    // The client refuses before opening anything, and says why.
    o.auth.method = AuthConfig::Method::Bearer;
    o.url = QUrl(QStringLiteral("ws://192.0.2.1:9"));
    MapClient client(o);
    QList<std::pair<ClientFailure, QString>> failures;
    QObject::connect(&client, &MapClient::fatalError, [&failures](ClientFailure f, const QString &m) { failures.append({f, m}); });
    client.start();
    QCOMPARE(failures.size(), 1);
    QCOMPARE(failures[0].first, ClientFailure::CredentialInClear);
    QVERIFY(failures[0].second.contains(QLatin1String("unencrypted")));
    QCOMPARE(client.state(), ClientState::Failed);
}

// Issue 42 item 2c: a frame that does not parse is a problem whose text says where it broke,
// never what it read there (nlohmann quotes the last bytes it read: a piece of a secret).
void TestRedaction::parseErrorsDoNotQuoteTheFrame()
{
    const QByteArray broken = "{\"jsonrpc\":\"2.0\",\"method\":\"map/event\",\"params\":{\"token\":\"hunter2-SECRET-8d7f6e5c,}}";
    QString error;
    Json out;
    QVERIFY(!NlohmannJsonParser().parse(broken, out, error));
    QVERIFY2(!error.contains(QLatin1String("hunter2")), qPrintable(error));
    QVERIFY2(error.contains(QLatin1String("column")), qPrintable(error)); // where it broke is still said
    ProtocolPipeline pipeline;
    const InterpretedFrame f = pipeline.frameReceived(broken, 1000);
    int problems = 0;
    for (const ModelInput &in : f.inputs)
        if (const auto *p = std::get_if<ProblemInput>(&in)) {
            ++problems;
            QVERIFY2(!p->problem.detail.contains(QLatin1String("hunter2")), qPrintable(p->problem.detail));
        }
    QCOMPARE(problems, 1);
}

QTEST_GUILESS_MAIN(TestRedaction)
#include "tst_redaction.moc"
