// Authentication against the official MAP server (demo system with --auth), TLS certificate
// validation, and secrets kept out of output and traces.
#include "DemoSystem.h"

#include "client/MapClient.h"

#include <QDateTime>
#include <QFile>
#include <QMessageAuthenticationCode>
#include <QProcess>
#include <QSslCertificate>
#include <QSslConfiguration>
#include <QSslKey>
#include <QTemporaryDir>
#include <QWebSocketServer>
#include <QtTest>

using namespace mapi;
using namespace mapi::test;

// A JSON Web Token signed with HMAC-SHA256, as the official server's JWTAuthenticator verifies.
QByteArray hs256Jwt(const char *secret, qint64 expiresAtS)
{
    const auto part = [](const QByteArray &json) {
        return json.toBase64(QByteArray::Base64UrlEncoding | QByteArray::OmitTrailingEquals);
    };
    const QByteArray signedPart = part(R"({"alg":"HS256","typ":"JWT"})") + '.'
        + part(QByteArray(R"({"sub":"operator","exp":)") + QByteArray::number(expiresAtS) + '}');
    const QByteArray signature = QMessageAuthenticationCode::hash(signedPart, QByteArray(secret), QCryptographicHash::Sha256);
    return signedPart + '.' + part(signature);
}

class AuthLiveTest : public QObject
{
    Q_OBJECT
private:
    static constexpr const char *kSecret = "s3cret-api-key-7f2a";

private Q_SLOTS:
    void apiKeyInConnect_data()
    {
        QTest::addColumn<QString>("method");
        QTest::newRow("api-key") << QStringLiteral("api-key");
        QTest::newRow("bearer") << QStringLiteral("bearer");
    }
    void apiKeyInConnect()
    {
        QFETCH(QString, method);
        DemoProcess demo;
        QVERIFY2(demo.start(QStringLiteral("stock"), 0, {QStringLiteral("--agents"), QStringLiteral("6"), QStringLiteral("--auth"), method,
                                                          QStringLiteral("--credential"), QLatin1String(kSecret)}),
                 qPrintable(demo.error()));
        qputenv("MAPI_TEST_TOKEN", kSecret);
        qputenv("MAPI_WRONG_TOKEN", "not-the-key");

        // Right credential: connected, state printed, the secret nowhere in the output.
        const CliResult ok = runCli({QStringLiteral("state"), QStringLiteral("--url"), demo.url(), QStringLiteral("--token-env"),
                                     QStringLiteral("MAPI_TEST_TOKEN"), QStringLiteral("--auth"), method});
        QCOMPARE(ok.exitCode, 0);
        QVERIFY(ok.json()["agents"].size() >= 1);
        QVERIFY(!ok.out.contains(kSecret));
        QVERIFY(!ok.err.contains(kSecret));

        // No credential: exit 3, one clear line naming the methods the server accepts.
        const CliResult none = runCli({QStringLiteral("state"), QStringLiteral("--url"), demo.url()});
        QCOMPARE(none.exitCode, 3);
        QVERIFY2(none.err.contains("requires authentication"), none.err.constData());
        QCOMPARE(none.err.count('\n'), 1);

        // Wrong credential: exit 3, refused.
        const CliResult wrong = runCli({QStringLiteral("state"), QStringLiteral("--url"), demo.url(), QStringLiteral("--token-env"),
                                        QStringLiteral("MAPI_WRONG_TOKEN"), QStringLiteral("--auth"), method});
        QCOMPARE(wrong.exitCode, 3);
        QVERIFY2(wrong.err.contains("refused") || wrong.err.contains("failed"), wrong.err.constData());
        QVERIFY(!wrong.err.contains("not-the-key"));

        // A recorded trace carries no secret.
        QTemporaryDir dir;
        const QString trace = dir.filePath(QStringLiteral("auth.jsonl"));
        const CliResult rec = runCli({QStringLiteral("record"), QStringLiteral("--url"), demo.url(), QStringLiteral("--token-env"),
                                      QStringLiteral("MAPI_TEST_TOKEN"), QStringLiteral("--auth"), method, QStringLiteral("--duration"),
                                      QStringLiteral("2"), QStringLiteral("--out"), trace});
        QCOMPARE(rec.exitCode, 0);
        QFile file(trace);
        QVERIFY(file.open(QIODevice::ReadOnly));
        const QByteArray content = file.readAll();
        QVERIFY(content.contains("map/connect"));
        QVERIFY(content.contains("REDACTED"));
        QVERIFY(!content.contains(kSecret));
    }

    // map/auth/expiring: the official server warns about five minutes before a JWT's `exp`; the
    // CLI reads --token-file again and sends the renewed token with map/auth/refresh.
    void credentialRenewedFromTokenFileWhenItExpires()
    {
        DemoProcess demo;
        QVERIFY2(demo.start(QStringLiteral("stock"), 0, {QStringLiteral("--agents"), QStringLiteral("3"), QStringLiteral("--auth"),
                                                          QStringLiteral("bearer"), QStringLiteral("--credential"),
                                                          QLatin1String(kSecret), QStringLiteral("--auth-check-ms"), QStringLiteral("250")}),
                 qPrintable(demo.error()));
        QTemporaryDir dir;
        const QString tokenFile = dir.filePath(QStringLiteral("token"));
        auto writeToken = [&tokenFile](const QByteArray &token) {
            QFile f(tokenFile);
            return f.open(QIODevice::WriteOnly | QIODevice::Truncate) && f.write(token + '\n') > 0;
        };
        const qint64 nowS = QDateTime::currentSecsSinceEpoch();
        // Inside the five-minute window six seconds from now: time for the CLI to connect first.
        const QByteArray first = hs256Jwt(kSecret, nowS + 300 + 6);
        const QByteArray renewed = hs256Jwt(kSecret, nowS + 3600);
        QVERIFY(writeToken(first));

        const auto sessionsConnected = [&demo] {
            return demoHttp(demo.url(), QStringLiteral("/stats")).value("byType", Json::object()).value("session.connected", 0);
        };
        // The demo's own agents are registered (their connections made) before the count is taken.
        QTRY_VERIFY_WITH_TIMEOUT(demoHttp(demo.url(), QStringLiteral("/view")).value("agents", Json::array()).size() >= 3, 10000);
        const int before = sessionsConnected();
        QProcess cli;
        cli.start(QStringLiteral(MAPI_CLI_PATH), {QStringLiteral("state"), QStringLiteral("--url"), demo.url(), QStringLiteral("--token-file"),
                                                  tokenFile, QStringLiteral("--duration"), QStringLiteral("12")});
        QVERIFY(cli.waitForStarted(10000));
        // The CLI reads the file once it starts; the renewed token is written after its first
        // connection's session appears on the server.
        QTRY_VERIFY_WITH_TIMEOUT(sessionsConnected() > before, 5000);
        QVERIFY(writeToken(renewed));
        QVERIFY(cli.waitForFinished(40000));
        const QByteArray err = cli.readAllStandardError();
        QCOMPARE(cli.exitCode(), 0);
        QVERIFY2(err.contains("sent the new one from"), err.constData());
        QVERIFY2(err.contains("the server accepted the new credential"), err.constData());
        QVERIFY(!err.contains(first) && !err.contains(renewed) && !cli.readAllStandardOutput().contains(renewed));
    }

    // A wss:// server whose certificate does not validate is an error the operator sees,
    // never silently accepted.
    void badCertificateIsRefused()
    {
        // A self-signed certificate for 127.0.0.1, valid until 2126, made for this test only
        // (tests/data/tls: no tool needed to run it, so it never skips).
        const QString key = QStringLiteral(MAPI_TEST_DATA "/tls/self-signed-test-only.key.pem");
        const QString cert = QStringLiteral(MAPI_TEST_DATA "/tls/self-signed-test-only.cert.pem");
        QFile keyFile(key), certFile(cert);
        QVERIFY(keyFile.open(QIODevice::ReadOnly) && certFile.open(QIODevice::ReadOnly));
        QSslConfiguration tls = QSslConfiguration::defaultConfiguration();
        tls.setPrivateKey(QSslKey(keyFile.readAll(), QSsl::Rsa));
        tls.setLocalCertificate(QSslCertificate(certFile.readAll()));
        QWebSocketServer server(QStringLiteral("self-signed"), QWebSocketServer::SecureMode);
        server.setSslConfiguration(tls);
        QVERIFY(server.listen(QHostAddress::LocalHost, 0));

        ClientOptions options;
        options.url = QUrl(QStringLiteral("wss://127.0.0.1:%1").arg(server.serverPort()));
        MapClient client(options);
        QString fatal;
        connect(&client, &MapClient::fatalError, this, [&](ClientFailure, const QString &message) { fatal = message; });
        client.start();
        QTRY_VERIFY_WITH_TIMEOUT(!fatal.isEmpty(), 10000);
        QVERIFY2(fatal.contains(QLatin1String("certificate")), qPrintable(fatal));
        QCOMPARE(client.state(), ClientState::Failed);
        QTest::qWait(1500);
        QCOMPARE(client.state(), ClientState::Failed); // no reconnect loop against a bad certificate
    }
};

QTEST_GUILESS_MAIN(AuthLiveTest)
#include "tst_auth_live.moc"
