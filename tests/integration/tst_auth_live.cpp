// Authentication against the official MAP server (demo system with --auth), TLS certificate
// validation, and secrets kept out of output and traces.
#include "DemoSystem.h"

#include "client/MapClient.h"

#include <QFile>
#include <QProcess>
#include <QSslCertificate>
#include <QSslConfiguration>
#include <QSslKey>
#include <QTemporaryDir>
#include <QWebSocketServer>
#include <QtTest>

using namespace mapi;
using namespace mapi::test;

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

    // A wss:// server whose certificate does not validate is an error the operator sees,
    // never silently accepted.
    void badCertificateIsRefused()
    {
        QTemporaryDir dir;
        const QString key = dir.filePath(QStringLiteral("key.pem"));
        const QString cert = dir.filePath(QStringLiteral("cert.pem"));
        QProcess openssl;
        openssl.setProcessChannelMode(QProcess::MergedChannels);
        openssl.start(QStringLiteral("openssl"),
                      {QStringLiteral("req"), QStringLiteral("-x509"), QStringLiteral("-newkey"), QStringLiteral("rsa:2048"),
                       QStringLiteral("-nodes"), QStringLiteral("-keyout"), key, QStringLiteral("-out"), cert,
                       QStringLiteral("-days"), QStringLiteral("1"), QStringLiteral("-subj"), QStringLiteral("/CN=127.0.0.1")});
        if (!openssl.waitForFinished(30000) || openssl.exitCode() != 0)
            QSKIP("openssl is not available to make a self-signed certificate");
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
