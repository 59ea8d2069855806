// Redaction (core/common/Redaction.h): the rule set on the table of secret shapes
// (SecretShapes.h) along every path through the rules (free text, JSON string values, stringified
// JSON, frames that do not parse), the prose and fields it must leave alone, and each way out that
// applies it: trace records of every kind, CSV, the Chrome trace and the connection's error text.
#include "SecretShapes.h"
#include "TestSupport.h"

#include "client/MapClient.h"
#include "common/Redaction.h"
#include "model/SystemStore.h"
#include "pipeline/ProtocolPipeline.h"
#include "trace/ModelExport.h"
#include "trace/TraceRecord.h"

#include <QBuffer>
#include <QElapsedTimer>

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
    void secretShapesLeaveNoTraceRecord_data();
    void secretShapesLeaveNoTraceRecord();
    void proseAndCountersAreKept_data();
    void proseAndCountersAreKept();
    void textRulesExactly_data();
    void textRulesExactly();
    void pathologicalTextStaysLinear();
    void jsonKeepsEverythingButTheSecret();
    void stringifiedJsonIsRedactedInside();
    void bytesThatAreNotUtf8AreKept();
    void everyTraceRecordKindIsRedacted();
    void csvAndChromeTraceAreRedacted();
    void credentialOverPlainWsToARemoteHostIsRefused();
    void parseErrorsDoNotQuoteTheFrame();
    void escapingLevelsMixedSettleInOneCall();
};

void TestRedaction::secretNames_data()
{
    QTest::addColumn<QString>("name");
    QTest::addColumn<bool>("secret");
    for (const char *name : {"token", "Token", "TOKEN", "accessToken", "access_token", "refresh-token", "id_token", "idToken",
                             "apiToken", "api_token", "resumeToken", "x-api-key", "X-Api-Key", "apiKey", "api_key", "API-KEY",
                             "openai_api_key", "client_secret", "clientSecret", "secret", "password", "Password", "db.password",
                             "passwd", "pwd", "credential", "credentials", "authorization", "Proxy-Authorization", "cookie",
                             "Set-Cookie", "private_key", "privateKey", "passphrase", "session_key", "bearer",
                             // Issue 42 item 2b: a secret's word anywhere in a name made of words.
                             "AWS_SECRET_ACCESS_KEY", "aws_secret_access_key", "secretAccessKey", "secret_key", "GITHUB_TOKEN",
                             "GITHUB_TOKEN_V2", "DB_PASSWORD", "db-password-new", "SECRET_KEY_BASE", "OPENAI_API_KEY",
                             "PRIVATE_KEY_PEM", "x-client-secret-value"})
        QTest::addRow("%s", name) << QString::fromLatin1(name) << true;
    for (const char *name : {"tokens", "tokens_used", "tokensUsed", "input_tokens", "output_tokens", "max_tokens", "tokenizer",
                             "tokenCount", "token_type", "secretary", "sessionId", "session", "authorizedBy", "auth", "method",
                             "keyboard", "passwordless", "cookies_enabled", "cost_usd", "",
                             // Counters, and names about a secret rather than of one.
                             "token_budget", "token_count", "MAX_TOKENS", "TOKEN_COUNT", "DB_PASSWORD_FILE",
                             "password_min_length", "AWS_ACCESS_KEY_ID", "secret_name", "keyboard_layout", "password reset requested"})
        QTest::addRow("not %s", name) << QString::fromLatin1(name) << false;
    // Long names: up to 256 characters are names (the limit was 64), longer ones are data.
    QTest::addRow("100 characters") << QString(QString(94, QLatin1Char('a')) + QLatin1String("_token")) << true;
    QTest::addRow("256 characters") << QString(QString(250, QLatin1Char('a')) + QLatin1String("_token")) << true;
    QTest::addRow("not 257 characters") << QString(QString(251, QLatin1Char('a')) + QLatin1String("_token")) << false;
}

void TestRedaction::secretNames()
{
    QFETCH(QString, name);
    QFETCH(bool, secret);
    QCOMPARE(isSecretName(name.toStdString()), secret);
}

// `text` as it reads inside a JSON string, escaped `levels` times (stringified once more per level).
static QByteArray escaped(const QByteArray &text, int levels = 1)
{
    QByteArray out = text;
    for (int i = 0; i < levels; ++i) {
        const QByteArray literal = dump(Json(out.toStdString()));
        out = literal.mid(1, literal.size() - 2);
    }
    return out;
}

// Whether `out` still holds `secret`, as it is or escaped once or twice.
static bool leaks(const QByteArray &out, const QByteArray &secret)
{
    return out.contains(secret) || out.contains(escaped(secret)) || out.contains(escaped(secret, 2));
}

// The rows of SecretShapes.h: a text holding one secret, the secret, and a part that must stay.
static void addSecretShapeRows()
{
    QTest::addColumn<QString>("text");
    QTest::addColumn<QString>("secret");
    QTest::addColumn<QString>("kept");
    for (const mapi_test::SecretShape &row : mapi_test::secretShapes())
        QTest::newRow(row.name.c_str()) << QString::fromStdString(row.text) << QString::fromStdString(row.secret)
                                        << QString::fromStdString(row.kept);
}

void TestRedaction::secretShapesVanishEverywhere_data()
{
    addSecretShapeRows();
}

// Every path through the rules: free text, a JSON string value, stringified JSON, and a frame
// that does not parse (the text escaped once in it, or twice inside stringified JSON).
void TestRedaction::secretShapesVanishEverywhere()
{
    QFETCH(QString, text);
    QFETCH(QString, secret);
    QFETCH(QString, kept);
    const QByteArray secretBytes = secret.toUtf8();
    const QByteArray keptBytes = kept.toUtf8();

    // Free text (a log line, a close reason, a note, a frame that is not JSON).
    const QString plain = redactSecrets(text);
    QVERIFY2(!plain.contains(secret), qPrintable(plain));
    QVERIFY2(plain.contains(kept), qPrintable(plain));
    QVERIFY2(plain.contains(QLatin1String("REDACTED")), qPrintable(plain));

    // As a string value in a frame: the frame stays valid JSON and only that value changes.
    const Json frame = {{"jsonrpc", "2.0"}, {"method", "map/event"}, {"params", {{"log", text.toStdString()}, {"n", 7}}}};
    const QByteArray inJson = redactSecrets(dump(frame));
    QVERIFY2(!leaks(inJson, secretBytes), inJson.constData());
    const Json parsed = Json::parse(inJson.constBegin(), inJson.constEnd(), nullptr, false);
    QVERIFY(parsed.is_object());
    QCOMPARE(QString::fromStdString(parsed["params"]["log"].get<std::string>()), plain);
    QCOMPARE(parsed["params"]["n"], Json(7));

    // Stringified JSON holding it (a payload an agent serialised itself).
    const Json inner = {{"note", text.toStdString()}};
    const Json outer = {{"payload", inner.dump()}};
    const QByteArray nested = redactSecrets(dump(outer));
    QVERIFY2(!leaks(nested, secretBytes), nested.constData());

    // A frame nlohmann rejects (cut short) falls back to the text rules: they read the secret
    // behind one level of escaping and behind two (stringified JSON inside the broken frame).
    const QByteArray once = "{\"jsonrpc\":\"2.0\",\"method\":\"map/event\",\"params\":{\"log\":"
        + dump(Json(text.toStdString())) + ",\"n\":7";
    QVERIFY(!Json::accept(once.constBegin(), once.constEnd()));
    const QByteArray brokenOnce = redactSecrets(once);
    QVERIFY2(!leaks(brokenOnce, secretBytes), brokenOnce.constData());
    QVERIFY2(brokenOnce.contains(escaped(keptBytes)), brokenOnce.constData());
    const QByteArray twice = "{\"jsonrpc\":\"2.0\",\"params\":{\"payload\":" + dump(Json(inner.dump())) + ",\"n\":";
    QVERIFY(!Json::accept(twice.constBegin(), twice.constEnd()));
    const QByteArray brokenTwice = redactSecrets(twice);
    QVERIFY2(!leaks(brokenTwice, secretBytes), brokenTwice.constData());
    QVERIFY2(brokenTwice.contains(escaped(keptBytes, 2)), brokenTwice.constData());
}

void TestRedaction::secretShapesLeaveNoTraceRecord_data()
{
    addSecretShapeRows();
}

// One way out, every row: each kind of trace record (the journal and saved sessions write these).
void TestRedaction::secretShapesLeaveNoTraceRecord()
{
    QFETCH(QString, text);
    QFETCH(QString, secret);
    const QByteArray secretBytes = secret.toUtf8();
    const std::string value = text.toStdString();
    auto line = [](const char *dir, const QByteArray &raw, bool binary = false, const Json &extra = Json()) {
        TraceRecord r;
        r.timeMs = 1;
        r.dir = QString::fromLatin1(dir);
        r.raw = raw;
        r.binary = binary;
        r.extra = extra;
        return encodeRecordLine(r);
    };
    const QByteArray frame = dump(Json{{"jsonrpc", "2.0"}, {"method", "map/event"}, {"params", {{"log", value}}}});
    const QByteArray lines[] = {
        line("recv", text.toUtf8()),                       // a text frame (JSON or not)
        line("recv", frame),                               // a string value in a frame
        line("recv", frame.left(frame.size() - 2)),        // a frame cut short: the text rules
        line("send", text.toUtf8(), true),                 // a binary frame (base64)
        line("close", text.toUtf8()),                      // a close reason
        line("note", text.toUtf8()),                       // a note
        line("action", {}, false, Json{{"params", {{"log", value}}}}),
        encodeHeaderLine(QStringLiteral("ws://h"), 1, {{"server", {{"motd", value}}}}),
    };
    for (const QByteArray &l : lines) {
        QVERIFY2(!leaks(l, secretBytes), l.constData());
        const Json parsed = Json::parse(l.constBegin(), l.constEnd(), nullptr, false);
        QVERIFY2(parsed.is_object(), l.constData());
        if (parsed.value("encoding", std::string()) == "base64") {
            const QByteArray decoded = QByteArray::fromBase64(QByteArray::fromStdString(parsed.value("raw", std::string())));
            QVERIFY2(!leaks(decoded, secretBytes), decoded.constData());
        }
    }
}

void TestRedaction::proseAndCountersAreKept_data()
{
    QTest::addColumn<QByteArray>("text");
    for (const mapi_test::HarmlessText &row : mapi_test::harmlessTexts())
        QTest::newRow(row.name.c_str()) << QByteArray::fromStdString(row.text);
}

// No over-redaction: as text, as a string value in a frame, and in a frame that does not parse.
void TestRedaction::proseAndCountersAreKept()
{
    QFETCH(QByteArray, text);
    QCOMPARE(redactSecrets(text), text);
    const QByteArray frame = dump(Json{{"params", {{"log", text.toStdString()}}}});
    QCOMPARE(redactSecrets(frame), frame);
    const QByteArray broken = "{\"params\":{\"log\":" + dump(Json(text.toStdString())) + ",\"n\":";
    QCOMPARE(redactSecrets(broken), broken);
}

// What exactly goes and what stays, for the shapes of issue 42 item 2b.
void TestRedaction::textRulesExactly_data()
{
    QTest::addColumn<QByteArray>("text");
    QTest::addColumn<QByteArray>("expected");
    const QByteArray longName = QByteArray(94, 'a') + QByteArray("_token");
    const QByteArray tooLongName = QByteArray(294, 'a') + QByteArray("_token"); // 300 characters: data, not a name
    QTest::newRow("Authorization: Token") << QByteArray("Authorization: Token abcdef0123456789")
                                          << QByteArray("Authorization: Token REDACTED");
    QTest::newRow("any scheme word") << QByteArray("Proxy-Authorization: Digest username=bob")
                                     << QByteArray("Proxy-Authorization: Digest REDACTED");
    QTest::newRow("escaped JSON") << QByteArray(R"(ERROR {\"api_key\":\"sk-123\"} at 12:00)")
                                  << QByteArray(R"(ERROR {\"api_key\":\"REDACTED\"} at 12:00)");
    QTest::newRow("escaped twice") << QByteArray(R"(ERROR {\\\"password\\\":\\\"pw\\\",\\\"user\\\":\\\"bob\\\"})")
                                   << QByteArray(R"(ERROR {\\\"password\\\":\\\"REDACTED\\\",\\\"user\\\":\\\"bob\\\"})");
    QTest::newRow("environment") << QByteArray("AWS_SECRET_ACCESS_KEY=abc/def+ghi region=eu")
                                 << QByteArray("AWS_SECRET_ACCESS_KEY=REDACTED region=eu");
    QTest::newRow("header array") << QByteArray(R"(["X-Api-Key","k-123"])") << QByteArray(R"(["X-Api-Key","REDACTED"])");
    QTest::newRow("header arrays in JSON")
        << QByteArray(R"({"headers":[["X-Api-Key", "k-1"],["Accept","*/*"]],"o":{"a":"token","b":"c"}})")
        << QByteArray(R"({"headers":[["X-Api-Key", "REDACTED"],["Accept","*/*"]],"o":{"a":"token","b":"c"}})");
    QTest::newRow("tuples") << QByteArray(R"(headers [("x-auth-token", "abc"), ("accept", "json")])")
                            << QByteArray(R"(headers [("x-auth-token", "REDACTED"), ("accept", "json")])");
    QTest::newRow("100-character name") << QByteArray(longName + "=v1") << QByteArray(longName + "=REDACTED");
    QTest::newRow("300-character name") << QByteArray(tooLongName + "=v1") << QByteArray(tooLongName + "=v1");
    QTest::newRow("escaped name") << QByteArray(R"(tok\u0065n=t0k)") << QByteArray(R"(tok\u0065n=REDACTED)");
    QTest::newRow("broken frame, nested")
        << QByteArray(R"({"params":{"payload":"{\"token\":\"nt-1\",\"x\":\"{\\\"password\\\":\\\"pw\\\"}\"}","n":)")
        << QByteArray(R"({"params":{"payload":"{\"token\":\"REDACTED\",\"x\":\"{\\\"password\\\":\\\"REDACTED\\\"}\"}","n":)");
    QTest::newRow("frame cut after the secret") << QByteArray(R"({"token":"abc","x":"cut-in-the-midd)")
                                                << QByteArray(R"({"token":"REDACTED","x":"cut-in-the-midd)");
    QTest::newRow("object under a secret name, broken")
        << QByteArray(R"({"credentials":{"user":"bob","password":"pw1"},"x":1)")
        << QByteArray(R"({"credentials":{"user":"bob","password":"REDACTED"},"x":1)");
    QTest::newRow("quoted value with blanks") << QByteArray(R"(password: "a b c" rest)")
                                              << QByteArray(R"(password: "REDACTED" rest)");
    QTest::newRow("prose with a comma") << QByteArray("enter your password, then click")
                                        << QByteArray("enter your password, then click");
    QTest::newRow("a value, not a pair") << QByteArray(R"({"a":"token","b":"c")") << QByteArray(R"({"a":"token","b":"c")");
}

void TestRedaction::textRulesExactly()
{
    QFETCH(QByteArray, text);
    QFETCH(QByteArray, expected);
    QCOMPARE(redactSecrets(text), expected);
}

// The text rules read each value a bounded number of times and never backtrack far: texts made to
// make a re-reading or backtracking matcher quadratic take milliseconds (the bound is generous for
// sanitizer builds; quadratic behaviour would take minutes).
void TestRedaction::pathologicalTextStaysLinear()
{
    for (const char *unit : {"a:http://a:", "\"x\":\"", R"(\"x\":\")", "['token',", "password=", R"(\\\")", "a=b=c=",
                             "Authorization: Token ", R"(tok\u0065n)", "-----BEGIN PRIVATE KEY-----", R"(\"token\",\")"}) {
        QByteArray text("token "); // a hint: the rules run
        while (text.size() < 256 * 1024)
            text.append(unit);
        text.append('{'); // never JSON
        QElapsedTimer timer;
        timer.start();
        const QByteArray out = redactSecrets(text);
        QVERIFY2(timer.elapsed() < 10000, unit);
        QVERIFY(!out.isEmpty());
    }
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

// fuzz_operator_inputs found it (tests/fuzz/README.md): a header pair whose value holds escaped
// JSON with a secret name of its own. The first pass of the text rules read the header's value as
// a member's name (a ':' follows its closing quote) and kept it; a second pass took it. One call
// now gives what two give, and the header's value goes.
void TestRedaction::escapingLevelsMixedSettleInOneCall()
{
    const QByteArray text = QByteArrayLiteral(R"(["X-Api-key","K-abcdefghij\R {\"api_key\":":ZZZZZZZZZZZZ")");
    const QByteArray once = redactSecrets(text);
    QCOMPARE(redactSecrets(once), once);
    QVERIFY2(!once.contains("K-abcdefghij"), once.constData());
}

QTEST_GUILESS_MAIN(TestRedaction)
#include "tst_redaction.moc"
