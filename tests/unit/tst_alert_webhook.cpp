// The alert webhook (core/alerts/AlertWebhook) against a small HTTP receiver on the loopback
// interface: what is posted (the watch line's JSON, the bearer token), what is not (alerts below
// the severity, clearings of alerts never posted), order, failures counted with words that
// hold no secret, redirects not followed, the queue's bound.
#include "alerts/AlertWebhook.h"

#include "TestSupport.h"

#include <QTcpServer>
#include <QTcpSocket>

using namespace mapi;

namespace {

// Accepts connections, reads one HTTP request per connection (headers and a Content-Length
// body) and answers with `status` (0: never answers).
class Receiver : public QObject
{
public:
    struct Request
    {
        QByteArray head; // request line and headers
        QByteArray body;
    };
    std::vector<Request> requests;
    int status = 200;
    QByteArray location; // for 3xx answers
    qint64 bodyBytes = 0; // the answer's body, that many bytes of 'x'

    Receiver()
    {
        QVERIFY(m_server.listen(QHostAddress::LocalHost));
        connect(&m_server, &QTcpServer::newConnection, this, [this] {
            while (QTcpSocket *socket = m_server.nextPendingConnection())
                connect(socket, &QTcpSocket::readyRead, this, [this, socket] { read(socket); });
        });
    }
    QString url(const QString &path) const
    {
        return QStringLiteral("http://127.0.0.1:%1%2").arg(m_server.serverPort()).arg(path);
    }
    quint16 port() const { return m_server.serverPort(); }

private:
    void read(QTcpSocket *socket)
    {
        QByteArray &buffer = m_buffers[socket];
        buffer += socket->readAll();
        const int end = buffer.indexOf("\r\n\r\n");
        if (end < 0)
            return;
        const QByteArray head = buffer.left(end);
        int length = 0;
        for (const QByteArray &line : head.split('\n'))
            if (line.toLower().startsWith("content-length:"))
                length = line.mid(15).trimmed().toInt();
        if (buffer.size() < end + 4 + length)
            return;
        requests.push_back({head, buffer.mid(end + 4, length)});
        m_buffers.remove(socket);
        if (status == 0)
            return;
        QByteArray answer = "HTTP/1.1 " + QByteArray::number(status) + " X\r\nContent-Length: " + QByteArray::number(bodyBytes)
            + "\r\nConnection: close\r\n";
        if (!location.isEmpty())
            answer += "Location: " + location + "\r\n";
        socket->write(answer + "\r\n");
        const QByteArray chunk(1 << 20, 'x');
        for (qint64 left = bodyBytes; left > 0; left -= chunk.size())
            socket->write(chunk.constData(), std::min<qint64>(left, chunk.size()));
        socket->disconnectFromHost();
    }

    QTcpServer m_server;
    QHash<QTcpSocket *, QByteArray> m_buffers;
};

AlertChange change(AlertKind kind, AlertSeverity severity, const QString &agent, bool raised)
{
    Alert a;
    a.kind = kind;
    a.severity = severity;
    a.agents = {agent};
    a.sinceMs = 1000;
    a.reason = QStringLiteral("%1 needs attention").arg(agent);
    a.evidence = {QStringLiteral("agent:") + agent};
    return AlertChange{a, raised, 2000};
}

QByteArray header(const QByteArray &head, const QByteArray &name)
{
    for (const QByteArray &line : head.split('\n'))
        if (line.toLower().startsWith(QByteArray(name.toLower() + ":")))
            return line.mid(name.size() + 1).trimmed();
    return {};
}

} // namespace

class TestAlertWebhook : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase() { mapi_test::installWarningGuard(); }

    void addressesAreChecked()
    {
        QVERIFY(AlertWebhook::checkUrl(QUrl(QStringLiteral("https://hooks.example.com/services/T0/B0/secret"))).isEmpty());
        QVERIFY(!AlertWebhook::checkUrl(QUrl(QStringLiteral("ftp://example.com/x"))).isEmpty());
        QVERIFY(!AlertWebhook::checkUrl(QUrl(QStringLiteral("https://user:pass@example.com/x"))).isEmpty());
        QVERIFY(!AlertWebhook::checkUrl(QUrl(QStringLiteral("https:///x"))).isEmpty());
        QVERIFY(!AlertWebhook::checkUrl(QUrl(QStringLiteral("not an address"))).isEmpty());
        // A token crosses no network in clear: https, or this machine.
        QVERIFY(!AlertWebhook::checkUrl(QUrl(QStringLiteral("http://hooks.example.com/x")), QStringLiteral("tok")).isEmpty());
        QVERIFY(AlertWebhook::checkUrl(QUrl(QStringLiteral("http://hooks.example.com/x"))).isEmpty());
        QVERIFY(AlertWebhook::checkUrl(QUrl(QStringLiteral("http://127.0.0.1:9/x")), QStringLiteral("tok")).isEmpty());
        QVERIFY(AlertWebhook::checkUrl(QUrl(QStringLiteral("https://hooks.example.com/x")), QStringLiteral("tok")).isEmpty());
        // What is said of an address keeps out its path and query (often the key).
        QCOMPARE(AlertWebhook::describe(QUrl(QStringLiteral("https://hooks.example.com/services/T0/B0/secret?k=v"))),
                 QStringLiteral("https://hooks.example.com:443"));
        AlertWebhook off;
        off.setTarget(QUrl(QStringLiteral("ftp://example.com/x")), QString(), AlertSeverity::Info);
        QVERIFY(!off.isOn());
        off.offer({change(AlertKind::Loop, AlertSeverity::Critical, QStringLiteral("a"), true)});
        QCOMPARE(off.queued(), 0);
    }

    // "This machine", for a token over plain http, is every spelling of loopback: localhost in
    // any case, 127.0.0.0/8 (not only 127.0.0.1), ::1 bracketed or not. Another name or address
    // is not, and neither is a name that only starts like localhost.
    void loopbackIsEverySpellingOfThisMachine_data()
    {
        QTest::addColumn<QString>("url");
        QTest::addColumn<bool>("loopback");
        QTest::newRow("127.0.0.1") << QStringLiteral("http://127.0.0.1:9/x") << true;
        QTest::newRow("127.0.0.2") << QStringLiteral("http://127.0.0.2:9/x") << true;
        QTest::newRow("127.255.255.254") << QStringLiteral("http://127.255.255.254/x") << true;
        QTest::newRow("[::1]") << QStringLiteral("http://[::1]:9/x") << true;
        QTest::newRow("localhost") << QStringLiteral("http://localhost:9/x") << true;
        QTest::newRow("LocalHost") << QStringLiteral("http://LocalHost:9/x") << true;
        QTest::newRow("10.0.0.1") << QStringLiteral("http://10.0.0.1:9/x") << false;
        QTest::newRow("128.0.0.1") << QStringLiteral("http://128.0.0.1/x") << false;
        QTest::newRow("0.0.0.0") << QStringLiteral("http://0.0.0.0:9/x") << false;
        QTest::newRow("[::2]") << QStringLiteral("http://[::2]:9/x") << false;
        QTest::newRow("localhost.example.com") << QStringLiteral("http://localhost.example.com/x") << false;
        QTest::newRow("a name") << QStringLiteral("http://hooks.example.com/x") << false;
    }

    void loopbackIsEverySpellingOfThisMachine()
    {
        QFETCH(QString, url);
        QFETCH(bool, loopback);
        const QUrl address(url);
        QCOMPARE(AlertWebhook::isLoopbackHost(address.host()), loopback);
        QCOMPARE(AlertWebhook::checkUrl(address, QStringLiteral("tok")).isEmpty(), loopback);
        QVERIFY(AlertWebhook::checkUrl(address).isEmpty()); // without a token, plain http is fine anywhere
    }

    void bracketedAddressIsLoopback()
    {
        QVERIFY(AlertWebhook::isLoopbackHost(QStringLiteral("[::1]")));
        QVERIFY(AlertWebhook::isLoopbackHost(QStringLiteral("::1")));
        QVERIFY(!AlertWebhook::isLoopbackHost(QStringLiteral("[]")));
        QVERIFY(!AlertWebhook::isLoopbackHost(QString()));
    }

    void postsRaisedAndClearedInOrderWithTheToken()
    {
        Receiver receiver;
        AlertWebhook hook;
        QSignalSpy delivered(&hook, &AlertWebhook::delivered);
        hook.setTarget(QUrl(receiver.url(QStringLiteral("/hook/s3cr3t-path"))), QStringLiteral("tok-123"), AlertSeverity::Warning);
        const AlertChange loop = change(AlertKind::Loop, AlertSeverity::Warning, QStringLiteral("a"), true);
        const AlertChange quiet = change(AlertKind::Stalled, AlertSeverity::Info, QStringLiteral("b"), true);
        const AlertChange failed = change(AlertKind::Failed, AlertSeverity::Critical, QStringLiteral("c"), true);
        hook.offer({loop, quiet, failed});
        AlertChange loopCleared = loop;
        loopCleared.raised = false;
        AlertChange quietCleared = quiet;
        quietCleared.raised = false;
        hook.offer({quietCleared, loopCleared});
        QTRY_COMPARE(delivered.count(), 3);
        QCOMPARE(hook.sent(), 3);
        QCOMPARE(hook.failed(), 0);
        QCOMPARE(receiver.requests.size(), size_t(3));
        const Json expected[] = {alertChangeToJson(loop), alertChangeToJson(failed), alertChangeToJson(loopCleared)};
        for (size_t i = 0; i < 3; ++i) {
            const Receiver::Request &r = receiver.requests[i];
            QVERIFY(r.head.startsWith("POST /hook/s3cr3t-path HTTP/1.1"));
            QCOMPARE(header(r.head, "Authorization"), QByteArray("Bearer tok-123"));
            QCOMPARE(header(r.head, "Content-Type"), QByteArray("application/json"));
            QCOMPARE(Json::parse(r.body.toStdString()), expected[i]);
        }
        QCOMPARE(Json::parse(receiver.requests[2].body.toStdString())["state"], Json("cleared"));
        // What is reported names the receiver, never the path.
        for (const QList<QVariant> &d : delivered) {
            QVERIFY(d.at(0).toBool());
            QVERIFY(!d.at(1).toString().contains(QStringLiteral("s3cr3t")));
        }
    }

    // Issue 42 item 2a: an alert's reason that quotes an agent's error text goes out redacted.
    void bodiesAreRedacted()
    {
        Receiver receiver;
        AlertWebhook hook;
        QSignalSpy delivered(&hook, &AlertWebhook::delivered);
        hook.setTarget(QUrl(receiver.url(QStringLiteral("/hook"))), QString(), AlertSeverity::Info);
        AlertChange leaky = change(AlertKind::Failed, AlertSeverity::Critical, QStringLiteral("a"), true);
        leaky.alert.reason = QStringLiteral("ERROR report: upstream refused Authorization: Bearer sk-live-4f9a8b7c6d5e4f3a2b1c");
        hook.offer({leaky});
        QTRY_COMPARE(delivered.count(), 1);
        const QByteArray body = receiver.requests.at(0).body;
        QVERIFY2(!body.contains("sk-live-4f9a8b7c6d5e4f3a2b1c"), body.constData());
        QVERIFY2(body.contains("upstream refused"), body.constData()); // the rest is kept
    }

    // After new rules (or a view of the past) the detectors raise again what still holds: not
    // sent twice; what is gone and whose clearing was never seen is sent as cleared.
    void raisedOnceAndReconciled()
    {
        Receiver receiver;
        AlertWebhook hook;
        QSignalSpy delivered(&hook, &AlertWebhook::delivered);
        hook.setTarget(QUrl(receiver.url(QStringLiteral("/hook"))), QString(), AlertSeverity::Info);
        const AlertChange a = change(AlertKind::Loop, AlertSeverity::Warning, QStringLiteral("a"), true);
        const AlertChange b = change(AlertKind::Budget, AlertSeverity::Warning, QStringLiteral("b"), true);
        hook.offer({a, b});
        hook.offer({a}); // raised again: already said
        QTRY_COMPARE(delivered.count(), 2);
        hook.reconcile({{a.alert.key(), a.alert}}, 5000); // b is no longer open
        QTRY_COMPARE(delivered.count(), 3);
        const Json last = Json::parse(receiver.requests.back().body.toStdString());
        QCOMPARE(last["state"], Json("cleared"));
        QCOMPARE(last["alert"], Json("budget"));
        QCOMPARE(last["at"], Json(5000));
        hook.reconcile({{a.alert.key(), a.alert}}, 6000); // nothing more to say
        QTest::qWait(200);
        QCOMPARE(delivered.count(), 3);
        QCOMPARE(receiver.requests.size(), size_t(3));
    }

    void failuresAreCountedWithoutSecrets()
    {
        Receiver receiver;
        receiver.status = 500;
        AlertWebhook hook;
        QSignalSpy delivered(&hook, &AlertWebhook::delivered);
        hook.setTarget(QUrl(receiver.url(QStringLiteral("/hook/s3cr3t-path?key=k3y"))), QString(), AlertSeverity::Info);
        hook.sendTest();
        QTRY_COMPARE(delivered.count(), 1);
        QCOMPARE(delivered.at(0).at(0).toBool(), false);
        QCOMPARE(hook.failed(), 1);
        QVERIFY2(hook.lastError().contains(QStringLiteral("500")), qPrintable(hook.lastError()));
        QVERIFY(!hook.lastError().contains(QStringLiteral("s3cr3t")) && !hook.lastError().contains(QStringLiteral("k3y")));
        QVERIFY(header(receiver.requests[0].head, "Authorization").isEmpty()); // no token set: none sent
        QCOMPARE(Json::parse(receiver.requests[0].body.toStdString())["alert"], Json("test"));

        // A redirect is not followed (a token must not travel to another host): one request, a failure.
        Receiver redirecting;
        redirecting.status = 302;
        redirecting.location = receiver.url(QStringLiteral("/elsewhere")).toUtf8();
        hook.setTarget(QUrl(redirecting.url(QStringLiteral("/hook"))), QStringLiteral("tok"), AlertSeverity::Info);
        hook.sendTest();
        QTRY_COMPARE(delivered.count(), 2);
        QCOMPARE(delivered.at(1).at(0).toBool(), false);
        QVERIFY(delivered.at(1).at(1).toString().contains(QStringLiteral("302")));
        QCOMPARE(redirecting.requests.size(), size_t(1));
        QCOMPARE(receiver.requests.size(), size_t(1));

        // Nobody listening: refused, counted, and the next one still goes.
        quint16 closedPort = 0;
        {
            QTcpServer probe;
            QVERIFY(probe.listen(QHostAddress::LocalHost));
            closedPort = probe.serverPort();
        }
        hook.setTarget(QUrl(QStringLiteral("http://127.0.0.1:%1/hook/s3cr3t").arg(closedPort)), QString(), AlertSeverity::Info);
        hook.sendTest();
        QTRY_COMPARE(delivered.count(), 3);
        QCOMPARE(delivered.at(2).at(0).toBool(), false);
        QVERIFY(!delivered.at(2).at(1).toString().contains(QStringLiteral("s3cr3t")));
        QCOMPARE(hook.failed(), 3);
    }

    // An answer with a large body (64 MiB) is read to its end and dropped: the POST counts as
    // delivered and the queue goes on.
    void aLargeAnswerIsDropped()
    {
        Receiver receiver;
        receiver.bodyBytes = qint64(64) << 20;
        AlertWebhook hook;
        QSignalSpy delivered(&hook, &AlertWebhook::delivered);
        hook.setTarget(QUrl(receiver.url(QStringLiteral("/hook"))), QString(), AlertSeverity::Info);
        hook.sendTest();
        QTRY_COMPARE_WITH_TIMEOUT(delivered.count(), 1, 20000);
        QVERIFY(delivered.at(0).at(0).toBool());
        QCOMPARE(hook.sent(), 1);
    }

    void theQueueIsBounded()
    {
        Receiver receiver;
        receiver.status = 0; // never answers: the first POST stays in flight
        AlertWebhook hook;
        hook.setTarget(QUrl(receiver.url(QStringLiteral("/hook"))), QString(), AlertSeverity::Info);
        std::vector<AlertChange> many;
        for (int i = 0; i < 150; ++i)
            many.push_back(change(AlertKind::Loop, AlertSeverity::Warning, QStringLiteral("agent-%1").arg(i), true));
        hook.offer(many);
        QCOMPARE(hook.queued(), AlertWebhook::kMaxQueued);
        QCOMPARE(hook.dropped(), qint64(150 - 1 - AlertWebhook::kMaxQueued));
        // Turning it off empties the queue.
        hook.setTarget(QUrl(), QString(), AlertSeverity::Info);
        QVERIFY(!hook.isOn());
        QCOMPARE(hook.queued(), 0);
        QCOMPARE(hook.queuedBytes(), 0);
    }

    // Issue 42 item 5: an alert's reason can quote an agent's error text of any size. A body
    // carries at most 4,096 characters of it, and the queue's bytes stay bounded.
    void theQueueIsBoundedInBytes()
    {
        Receiver receiver;
        receiver.status = 0; // never answers: the first POST stays in flight, the rest wait
        AlertWebhook hook;
        hook.setTarget(QUrl(receiver.url(QStringLiteral("/hook"))), QString(), AlertSeverity::Info);
        std::vector<AlertChange> huge;
        for (int i = 0; i < 60; ++i) {
            AlertChange c = change(AlertKind::Failed, AlertSeverity::Critical, QStringLiteral("agent-%1").arg(i), true);
            c.alert.reason = QString(2 * 1024 * 1024, QLatin1Char('e')); // 2 M characters of error text
            for (int e = 0; e < 1000; ++e)
                c.alert.evidence << QStringLiteral("message:m-%1").arg(e);
            huge.push_back(c);
        }
        hook.offer(huge);
        QCOMPARE(hook.queued(), 59); // one in flight, none dropped: each body is small
        QCOMPARE(hook.dropped(), 0);
        QVERIFY2(hook.queuedBytes() < 59 * 8 * 1024, qPrintable(QString::number(hook.queuedBytes())));
        QVERIFY(hook.queuedBytes() <= AlertWebhook::kMaxQueuedBytes);
    }
};

QTEST_GUILESS_MAIN(TestAlertWebhook)
#include "tst_alert_webhook.moc"
