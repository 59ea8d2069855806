// MetricsServer (core/telemetry) over real loopback sockets: the routes and their headers, the
// bound on the request head, the bound on connections (those within it still answered), the
// deadline for a head, and the listen address syntax (parseListen, isLoopback).
#include "telemetry/MetricsServer.h"

#include "TestSupport.h"

#include <QTcpSocket>

#include <memory>
#include <vector>

using namespace mapi;

namespace {

// One HTTP exchange over a real socket: connects, writes, collects until the server closes.
struct Client
{
    explicit Client(quint16 port)
    {
        QObject::connect(&socket, &QTcpSocket::readyRead, &socket, [this] { received += socket.readAll(); });
        socket.connectToHost(QHostAddress::LocalHost, port);
    }
    bool connected() const { return socket.state() == QAbstractSocket::ConnectedState; }
    bool closed() const { return socket.state() == QAbstractSocket::UnconnectedState; }
    QTcpSocket socket;
    QByteArray received;
};

void exchange(quint16 port, const QByteArray &request, QByteArray *answer)
{
    Client client(port);
    QTRY_VERIFY_WITH_TIMEOUT(client.connected(), 5000);
    client.socket.write(request);
    QTRY_VERIFY_WITH_TIMEOUT(client.closed(), 5000);
    if (client.socket.isOpen() && client.socket.bytesAvailable() > 0) // a closed device must not be read: a warning
        client.received += client.socket.readAll();
    *answer = client.received;
}

QByteArray header(const QByteArray &answer, const QByteArray &name)
{
    const QByteArray head = answer.left(answer.indexOf("\r\n\r\n"));
    for (const QByteArray &line : head.split('\n'))
        if (line.toLower().startsWith(QByteArray(name.toLower() + ':')))
            return line.mid(name.size() + 1).trimmed();
    return {};
}

QByteArray body(const QByteArray &answer)
{
    const qsizetype end = answer.indexOf("\r\n\r\n");
    return end < 0 ? QByteArray() : answer.mid(end + 4);
}

} // namespace

class TestMetricsServer : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase() { mapi_test::installWarningGuard(); }
    void init() { mapi_test::armWarningGuard(); }
    void cleanup() { MAPI_NO_WARNINGS(); }
    void cleanupTestCase() { MAPI_NO_WARNINGS(); }

    void serverRoutes()
    {
        MetricsServer server;
        const QByteArray metricsText = "# HELP mapi_x x\n# TYPE mapi_x gauge\nmapi_x 1\n";
        bool healthy = true;
        server.setMetricsProvider([&metricsText] { return metricsText; });
        server.setHealthProvider([&healthy] { return std::pair<bool, QString>(healthy, QStringLiteral("not live: reconnecting")); });
        QString error;
        QVERIFY2(server.listen(QHostAddress::LocalHost, 0, &error), qPrintable(error));
        QVERIFY(server.port() != 0);
        const quint16 port = server.port();
        QByteArray answer;

        exchange(port, "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n", &answer);
        QVERIFY2(answer.startsWith("HTTP/1.1 200 "), answer.constData());
        QCOMPARE(header(answer, "Content-Type"), QByteArray("text/plain; version=0.0.4; charset=utf-8"));
        QCOMPARE(header(answer, "Content-Length"), QByteArray::number(metricsText.size()));
        QCOMPARE(header(answer, "Connection"), QByteArray("close"));
        QCOMPARE(body(answer), metricsText);

        exchange(port, "GET /metrics?name[]=mapi_x HTTP/1.0\r\n\r\n", &answer);
        QVERIFY2(answer.startsWith("HTTP/1.1 200 "), answer.constData());

        exchange(port, "HEAD /metrics HTTP/1.1\r\nHost: x\r\n\r\n", &answer);
        QVERIFY2(answer.startsWith("HTTP/1.1 200 "), answer.constData());
        QCOMPARE(header(answer, "Content-Length"), QByteArray::number(metricsText.size()));
        QVERIFY(answer.endsWith("\r\n\r\n")); // no body

        exchange(port, "GET /healthz HTTP/1.1\r\n\r\n", &answer);
        QVERIFY2(answer.startsWith("HTTP/1.1 200 "), answer.constData());
        QCOMPARE(body(answer), QByteArray("ok\n"));
        healthy = false;
        exchange(port, "GET /healthz HTTP/1.1\r\n\r\n", &answer);
        QVERIFY2(answer.startsWith("HTTP/1.1 503 "), answer.constData());
        QVERIFY(body(answer).contains("reconnecting"));

        exchange(port, "GET /nope HTTP/1.1\r\n\r\n", &answer);
        QVERIFY2(answer.startsWith("HTTP/1.1 404 "), answer.constData());
        QCOMPARE(header(answer, "Content-Length"), QByteArray::number(body(answer).size()));

        exchange(port, "POST /metrics HTTP/1.1\r\nContent-Length: 5\r\n\r\nhello", &answer);
        QVERIFY2(answer.startsWith("HTTP/1.1 405 "), answer.constData());
        QCOMPARE(header(answer, "Allow"), QByteArray("GET, HEAD"));

        exchange(port, "GARBAGE\r\n\r\n", &answer);
        QVERIFY2(answer.startsWith("HTTP/1.1 400 "), answer.constData());

        exchange(port, "GET /metrics HTTP/1.1\r\nX-Pad: " + QByteArray(9 * 1024, 'a') + "\r\n\r\n", &answer);
        QVERIFY2(answer.startsWith("HTTP/1.1 431 "), answer.left(200).constData());
        QCOMPARE(header(answer, "Connection"), QByteArray("close"));

        QCOMPARE(server.stats().requestsServed, qint64(7));
        QCOMPARE(server.stats().requestsRefused, qint64(2));
        QTRY_COMPARE_WITH_TIMEOUT(server.openConnections(), 0, 5000);
    }

    // Past the bound, connections are closed as they come; those within it are answered.
    void connectionsAreBounded()
    {
        MetricsServer server;
        server.setHeadDeadlineMs(30000); // idle on purpose: only the bound may close them here
        QVERIFY(server.listen(QHostAddress::LocalHost, 0));
        std::vector<std::unique_ptr<Client>> clients;
        for (int i = 0; i < 20; ++i) {
            clients.push_back(std::make_unique<Client>(server.port()));
            if (i < MetricsServer::kMaxConnections) {
                QTRY_COMPARE_WITH_TIMEOUT(server.openConnections(), i + 1, 5000);
            } else {
                QTRY_COMPARE_WITH_TIMEOUT(server.stats().connectionsOverBound, qint64(i + 1 - MetricsServer::kMaxConnections), 5000);
                QTRY_VERIFY_WITH_TIMEOUT(clients.back()->closed(), 5000);
            }
        }
        QCOMPARE(server.openConnections(), MetricsServer::kMaxConnections);
        QCOMPARE(server.stats().requestsRefused, qint64(4));
        for (int i = 0; i < MetricsServer::kMaxConnections; ++i) {
            QTRY_VERIFY_WITH_TIMEOUT(clients[size_t(i)]->connected(), 5000);
            clients[size_t(i)]->socket.write("GET /healthz HTTP/1.1\r\n\r\n");
        }
        for (int i = 0; i < MetricsServer::kMaxConnections; ++i) {
            QTRY_VERIFY_WITH_TIMEOUT(clients[size_t(i)]->closed(), 5000);
            QVERIFY2(clients[size_t(i)]->received.startsWith("HTTP/1.1 200 "), clients[size_t(i)]->received.constData());
        }
        QCOMPARE(server.stats().requestsServed, qint64(MetricsServer::kMaxConnections));
    }

    void silentConnectionsAreClosedAtTheDeadline()
    {
        MetricsServer server;
        server.setHeadDeadlineMs(300);
        QVERIFY(server.listen(QHostAddress::LocalHost, 0));
        Client silent(server.port());
        Client partial(server.port());
        QTRY_VERIFY_WITH_TIMEOUT(silent.connected() && partial.connected(), 5000);
        partial.socket.write("GET /metrics HTTP/1.1\r\nHost: x\r\n"); // never ends its head
        QTRY_VERIFY_WITH_TIMEOUT(silent.closed() && partial.closed(), 5000);
        QVERIFY(silent.received.isEmpty());
        QVERIFY(partial.received.isEmpty());
        QCOMPARE(server.stats().requestsRefused, qint64(2));
        QCOMPARE(server.openConnections(), 0);
    }

    void listenAddresses_data()
    {
        QTest::addColumn<QString>("spec");
        QTest::addColumn<QString>("address"); // empty: refused
        QTest::addColumn<int>("port");
        QTest::addColumn<bool>("loopback");
        QTest::newRow("ipv4") << QStringLiteral("127.0.0.1:9464") << QStringLiteral("127.0.0.1") << 9464 << true;
        QTest::newRow("ipv6") << QStringLiteral("[::1]:9464") << QStringLiteral("::1") << 9464 << true;
        QTest::newRow("localhost") << QStringLiteral("localhost:9464") << QStringLiteral("127.0.0.1") << 9464 << true;
        QTest::newRow("LOCALHOST") << QStringLiteral("LOCALHOST:80") << QStringLiteral("127.0.0.1") << 80 << true;
        QTest::newRow("port only") << QStringLiteral(":9464") << QStringLiteral("127.0.0.1") << 9464 << true;
        QTest::newRow("spaces around") << QStringLiteral(" 127.0.0.1:9464 ") << QStringLiteral("127.0.0.1") << 9464 << true;
        QTest::newRow("any free port") << QStringLiteral("127.0.0.1:0") << QStringLiteral("127.0.0.1") << 0 << true;
        QTest::newRow("all ipv4") << QStringLiteral("0.0.0.0:9464") << QStringLiteral("0.0.0.0") << 9464 << false;
        QTest::newRow("all ipv6") << QStringLiteral("[::]:9464") << QStringLiteral("::") << 9464 << false;
        QTest::newRow("lan") << QStringLiteral("192.168.1.10:9100") << QStringLiteral("192.168.1.10") << 9100 << false;
        for (const char *bad : {"", "9464", "127.0.0.1", "127.0.0.1:", ":", "127.0.0.1:65536", "127.0.0.1:-1", "127.0.0.1:+80",
                                "127.0.0.1:94 64", "127.0.0.1:abc", "::1:9464", "[::1]", "[::1]9464", "[::1:9464",
                                "[127.0.0.1]:9464", "example.com:9464", "[]:9464", "127.0.0.1:123456"})
            QTest::newRow(bad[0] ? bad : "empty") << QString::fromLatin1(bad) << QString() << 0 << false;
    }

    void listenAddresses()
    {
        QFETCH(QString, spec);
        QFETCH(QString, address);
        QFETCH(int, port);
        QFETCH(bool, loopback);
        const auto parsed = MetricsServer::parseListen(spec);
        if (address.isEmpty()) {
            QVERIFY2(!parsed, qPrintable(spec));
            QVERIFY(!parsed.error().isEmpty());
            return;
        }
        QVERIFY2(parsed, qPrintable(parsed.error()));
        QCOMPARE(parsed->first.toString(), address);
        QCOMPARE(int(parsed->second), port);
        QCOMPARE(MetricsServer::isLoopback(parsed->first), loopback);
    }

    void loopbackAddresses()
    {
        for (const char *yes : {"127.0.0.1", "127.1.2.3", "::1", "::ffff:127.0.0.1"})
            QVERIFY2(MetricsServer::isLoopback(QHostAddress(QString::fromLatin1(yes))), yes);
        for (const char *no : {"0.0.0.0", "::", "10.0.0.1", "::ffff:10.0.0.1", "128.0.0.1"})
            QVERIFY2(!MetricsServer::isLoopback(QHostAddress(QString::fromLatin1(no))), no);
    }
};

QTEST_GUILESS_MAIN(TestMetricsServer)
#include "tst_metrics_server.moc"
