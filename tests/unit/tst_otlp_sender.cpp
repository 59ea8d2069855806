// The OTLP/HTTP sender (core/telemetry/OtlpHttpSender) against a scripted receiver on the
// loopback interface: the endpoint's rules, order and headers, retries after Retry-After, the
// queue's bounds and drain(), answers not retried, partial success, a refused connection,
// redirects not followed; and nothing it reports holds a header value or the endpoint's path.
#include "telemetry/OtlpHttpSender.h"

#include "TestSupport.h"

#include <QElapsedTimer>
#include <QTcpServer>
#include <QTcpSocket>

#include <deque>

using namespace mapi;

namespace {

const QByteArray kSecret = QByteArrayLiteral("k3y-s3cr3t-value-0123");

// Reads one HTTP request per connection (head and a Content-Length body), records it with its
// arrival time, answers with the next scripted answer (then `fallback`) and closes.
class Collector : public QObject
{
public:
    struct Answer
    {
        int status = 200;
        QByteArray headers; // "Name: value\r\n" lines
        QByteArray body;
    };
    struct Request
    {
        QByteArray head; // request line and headers
        QByteArray body;
        qint64 atMs = 0; // since the collector was made

        QByteArray header(const QByteArray &name) const
        {
            for (const QByteArray &line : head.split('\n'))
                if (line.toLower().startsWith(QByteArray(name.toLower() + ':')))
                    return line.mid(name.size() + 1).trimmed();
            return {};
        }
    };
    std::vector<Request> requests;
    std::deque<Answer> script;
    Answer fallback;

    explicit Collector(quint16 port = 0)
    {
        m_clock.start();
        QVERIFY(m_server.listen(QHostAddress::LocalHost, port));
        connect(&m_server, &QTcpServer::newConnection, this, [this] {
            while (QTcpSocket *socket = m_server.nextPendingConnection())
                connect(socket, &QTcpSocket::readyRead, this, [this, socket] { read(socket); });
        });
    }
    QUrl base() const { return QUrl(QStringLiteral("http://127.0.0.1:%1").arg(m_server.serverPort())); }
    std::vector<QByteArray> bodies() const
    {
        std::vector<QByteArray> all;
        for (const Request &r : requests)
            all.push_back(r.body);
        return all;
    }

private:
    void read(QTcpSocket *socket)
    {
        QByteArray &buffer = m_buffers[socket];
        buffer += socket->readAll();
        const qsizetype end = buffer.indexOf("\r\n\r\n");
        if (end < 0)
            return;
        const QByteArray head = buffer.left(end);
        qsizetype length = 0;
        for (const QByteArray &line : head.split('\n'))
            if (line.toLower().startsWith("content-length:"))
                length = line.mid(15).trimmed().toInt();
        if (buffer.size() < end + 4 + length)
            return;
        requests.push_back({head, buffer.mid(end + 4, length), m_clock.elapsed()});
        m_buffers.remove(socket);
        const Answer answer = script.empty() ? fallback : script.front();
        if (!script.empty())
            script.pop_front();
        socket->write("HTTP/1.1 " + QByteArray::number(answer.status) + " X\r\nConnection: close\r\nContent-Length: "
                      + QByteArray::number(answer.body.size()) + "\r\n" + answer.headers + "\r\n" + answer.body);
        socket->disconnectFromHost();
    }

    QTcpServer m_server;
    QElapsedTimer m_clock;
    QHash<QTcpSocket *, QByteArray> m_buffers;
};

OtlpSenderOptions options(const QUrl &endpoint)
{
    OtlpSenderOptions o;
    o.endpoint = endpoint;
    o.headers = {{QByteArrayLiteral("x-api-key"), kSecret}};
    o.initialBackoffMs = 50;
    o.maxBackoffMs = 2000;
    o.timeoutMs = 3000;
    return o;
}

} // namespace

class TestOtlpSender : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase() { mapi_test::installWarningGuard(); }
    void init() { mapi_test::armWarningGuard(); }
    void cleanup() { MAPI_NO_WARNINGS(); }
    void cleanupTestCase() { MAPI_NO_WARNINGS(); }

    // As OTEL_EXPORTER_OTLP_ENDPOINT: a base, "v1/traces" appended after one '/'.
    void tracesUrl()
    {
        const auto traces = [](const char *endpoint) {
            return OtlpHttpSender::tracesUrl(QUrl(QString::fromLatin1(endpoint))).toString();
        };
        QCOMPARE(traces("http://h:4318"), QStringLiteral("http://h:4318/v1/traces"));
        QCOMPARE(traces("http://h:4318/"), QStringLiteral("http://h:4318/v1/traces"));
        QCOMPARE(traces("https://c.example.com/v1/traces"), QStringLiteral("https://c.example.com/v1/traces"));
        QCOMPARE(traces("http://h:4318/otel"), QStringLiteral("http://h:4318/otel/v1/traces"));
        QCOMPARE(traces("http://h:4318/otel/"), QStringLiteral("http://h:4318/otel/v1/traces"));
    }

    void endpointsAreChecked()
    {
        const auto usable = [](const char *endpoint, bool withHeaders) {
            return OtlpHttpSender::checkEndpoint(QUrl(QString::fromLatin1(endpoint)), withHeaders).isEmpty();
        };
        QVERIFY(usable("https://collector.example.com:4318", true));
        QVERIFY(usable("http://127.0.0.1:4318", true));
        QVERIFY(!usable("http://collector.example.com:4318", true)); // a key in clear over a network
        QVERIFY(usable("http://collector.example.com:4318", false));
        QVERIFY(!usable("https://user:pass@collector.example.com", false));
        QVERIFY(!usable("ftp://collector.example.com", false));
        QVERIFY(!usable("http:///v1/traces", false));
        QVERIFY(!usable("", false));

        // Unusable: off, nothing sent, every request dropped and counted.
        OtlpHttpSender off(options(QUrl(QStringLiteral("http://collector.example.com:4318"))));
        QVERIFY(!off.isOn());
        QVERIFY(!off.enqueue(QByteArrayLiteral("{}"), 4));
        QCOMPARE(off.stats().requestsDropped, qint64(1));
        QCOMPARE(off.stats().spansDropped, qint64(4));
        QVERIFY(!off.stats().lastError.isEmpty());
        QVERIFY(!off.stats().lastError.contains(QString::fromLatin1(kSecret)));
        // A header that would split the request turns it off as well.
        OtlpSenderOptions injected = options(QUrl(QStringLiteral("http://127.0.0.1:9")));
        injected.headers = {{QByteArrayLiteral("x-api-key"), QByteArrayLiteral("a\r\nX-Other: 1")}};
        QVERIFY(!OtlpHttpSender(injected).isOn());
    }

    void deliversInOrderWithHeaders()
    {
        Collector collector;
        OtlpHttpSender sender(options(collector.base()));
        QSignalSpy delivered(&sender, &OtlpHttpSender::delivered);
        const std::vector<QByteArray> bodies = {QByteArrayLiteral(R"({"resourceSpans":[{"n":1}]})"),
                                                QByteArrayLiteral(R"({"resourceSpans":[{"n":2}]})"),
                                                QByteArrayLiteral(R"({"resourceSpans":[{"n":3}]})")};
        for (size_t i = 0; i < bodies.size(); ++i)
            QVERIFY(sender.enqueue(bodies[i], qint64(i) + 1));
        QTRY_COMPARE(sender.stats().requestsSent, qint64(3));
        QCOMPARE(collector.bodies(), bodies);
        for (const Collector::Request &r : collector.requests) {
            QVERIFY2(r.head.startsWith("POST /v1/traces HTTP/1.1"), r.head.constData());
            QCOMPARE(r.header("Content-Type"), QByteArray("application/json"));
            QCOMPARE(r.header("x-api-key"), kSecret);
            QVERIFY(r.header("User-Agent").startsWith("map-inspector/"));
        }
        const OtlpHttpSender::Stats stats = sender.stats();
        QCOMPARE(stats.spansSent, qint64(6));
        QCOMPARE(stats.queuedRequests, 0);
        QCOMPARE(stats.queuedBytes, qsizetype(0));
        QCOMPARE(stats.requestsDropped + stats.requestsFailed + stats.retries, qint64(0));
        QVERIFY(stats.lastSuccessMs > 0);
        QVERIFY(sender.isIdle());
        QCOMPARE(delivered.count(), 3);
        for (const QList<QVariant> &d : delivered) {
            QVERIFY(d.at(0).toBool());
            QVERIFY(!d.at(1).toString().contains(QString::fromLatin1(kSecret)));
        }

        // Idle: drained() on the next event-loop turn, not within drain(); then enqueue() drops.
        QSignalSpy drained(&sender, &OtlpHttpSender::drained);
        sender.drain(1000);
        QCOMPARE(drained.count(), 0);
        QTRY_COMPARE(drained.count(), 1);
        QVERIFY(!sender.enqueue(QByteArrayLiteral("{}"), 1));
        QCOMPARE(sender.stats().requestsDropped, qint64(1));
    }

    // 503 with Retry-After: 1, twice: the head waits a second each time (the backoff alone
    // would be ~50 ms), nothing is lost, the order is kept.
    void retriesAfterRetryAfter()
    {
        Collector collector;
        const Collector::Answer busy{503, QByteArrayLiteral("Retry-After: 1\r\n"), {}};
        collector.script = {busy, busy};
        OtlpHttpSender sender(options(collector.base()));
        QVERIFY(sender.enqueue(QByteArrayLiteral("first"), 1));
        QVERIFY(sender.enqueue(QByteArrayLiteral("second"), 2));
        QTRY_COMPARE(sender.stats().requestsSent, qint64(2));
        const std::vector<QByteArray> expected = {"first", "first", "first", "second"};
        QCOMPARE(collector.bodies(), expected);
        const OtlpHttpSender::Stats stats = sender.stats();
        QCOMPARE(stats.retries, qint64(2));
        QCOMPARE(stats.spansSent, qint64(3));
        QCOMPARE(stats.requestsDropped + stats.requestsFailed, qint64(0));
        QVERIFY(stats.lastError.contains(QStringLiteral("503")));
        const std::vector<Collector::Request> &r = collector.requests;
        QVERIFY2(r[1].atMs - r[0].atMs >= 900, qPrintable(QString::number(r[1].atMs - r[0].atMs)));
        QVERIFY2(r[2].atMs - r[1].atMs >= 900, qPrintable(QString::number(r[2].atMs - r[1].atMs)));
    }

    // Full: the new request is dropped, what is queued keeps its order; drain() ends with what is
    // left counted as dropped. The bound in bytes.
    void boundedQueueAndDrain()
    {
        Collector collector;
        collector.fallback.status = 503;
        OtlpSenderOptions o = options(collector.base());
        o.maxQueuedRequests = 3;
        o.maxBackoffMs = 100;
        OtlpHttpSender sender(o);
        QSignalSpy drained(&sender, &OtlpHttpSender::drained);
        qint64 droppedSpans = 0;
        for (int i = 0; i < 10; ++i) {
            const bool queued = sender.enqueue("body-" + QByteArray::number(i), i + 1);
            QCOMPARE(queued, i < 3);
            if (!queued)
                droppedSpans += i + 1;
        }
        QCOMPARE(sender.stats().requestsDropped, qint64(7));
        QCOMPARE(sender.stats().spansDropped, droppedSpans);
        QCOMPARE(sender.stats().queuedRequests, 3);
        QTRY_VERIFY(sender.stats().retries >= 1);
        for (const QByteArray &body : collector.bodies())
            QCOMPARE(body, QByteArray("body-0")); // the head is retried, never passed

        QElapsedTimer clock;
        clock.start();
        sender.drain(300);
        QTRY_COMPARE(drained.count(), 1);
        QVERIFY2(clock.elapsed() < 2000, qPrintable(QString::number(clock.elapsed())));
        const OtlpHttpSender::Stats stats = sender.stats();
        QCOMPARE(stats.requestsDropped, qint64(10));
        QCOMPARE(stats.spansDropped, qint64(55));
        QCOMPARE(stats.queuedRequests, 0);
        QCOMPARE(stats.queuedBytes, qsizetype(0));
        QCOMPARE(stats.requestsSent + stats.requestsFailed, qint64(0));
        QVERIFY(sender.isIdle());
        QVERIFY(!sender.enqueue(QByteArrayLiteral("late"), 5));
        QCOMPARE(sender.stats().spansDropped, qint64(60));
        QTest::qWait(200);
        QCOMPARE(drained.count(), 1);

        // In bytes: a body alone larger than the bound is dropped, and one that would pass it.
        o.maxQueuedBytes = 10;
        OtlpHttpSender bytes(o);
        QVERIFY(!bytes.enqueue(QByteArray(11, 'a'), 1));
        QVERIFY(bytes.enqueue(QByteArray(6, 'b'), 1));
        QVERIFY(!bytes.enqueue(QByteArray(5, 'c'), 1));
        QVERIFY(bytes.enqueue(QByteArray(4, 'd'), 1));
        QCOMPARE(bytes.stats().queuedBytes, qsizetype(10));
        QCOMPARE(bytes.stats().requestsDropped, qint64(2));
    }

    // A 400 is not retried: dropped, counted, and the next request still goes.
    void failureIsNotRetried()
    {
        Collector collector;
        collector.script = {Collector::Answer{400, {}, QByteArrayLiteral(R"({"code":3,"message":"bad"})")}};
        OtlpHttpSender sender(options(collector.base()));
        QSignalSpy delivered(&sender, &OtlpHttpSender::delivered);
        QVERIFY(sender.enqueue(QByteArrayLiteral("bad"), 3));
        QVERIFY(sender.enqueue(QByteArrayLiteral("good"), 4));
        QTRY_COMPARE(sender.stats().requestsSent, qint64(1));
        const OtlpHttpSender::Stats stats = sender.stats();
        QCOMPARE(stats.requestsFailed, qint64(1));
        QCOMPARE(stats.spansDropped, qint64(3));
        QCOMPARE(stats.spansSent, qint64(4));
        QCOMPARE(stats.retries, qint64(0));
        QCOMPARE(collector.bodies(), (std::vector<QByteArray>{"bad", "good"}));
        QVERIFY(stats.lastError.contains(QStringLiteral("400")));
        QVERIFY(stats.lastError.contains(collector.base().authority()));
        QVERIFY(!stats.lastError.contains(QStringLiteral("/v1/traces")));
        QVERIFY(!stats.lastError.contains(QString::fromLatin1(kSecret)));
        QCOMPARE(delivered.at(0).at(0).toBool(), false);
        QCOMPARE(delivered.at(1).at(0).toBool(), true);
    }

    // rejectedSpans is an int64: a string or a number in OTLP JSON.
    void partialSuccessIsCounted()
    {
        Collector collector;
        const QByteArray json = QByteArrayLiteral("Content-Type: application/json\r\n");
        collector.script = {
            {200, json, QByteArrayLiteral(R"({"partialSuccess":{"rejectedSpans":3}})")},
            {200, json, QByteArrayLiteral(R"({"partialSuccess":{"rejectedSpans":"2","errorMessage":"x"}})")},
            {200, json, QByteArrayLiteral(R"({"partialSuccess":{}})")}};
        OtlpHttpSender sender(options(collector.base()));
        for (int i = 0; i < 3; ++i)
            QVERIFY(sender.enqueue("request-" + QByteArray::number(i), 5));
        QTRY_COMPARE(sender.stats().requestsSent, qint64(3));
        QCOMPARE(sender.stats().spansRejected, qint64(5));
        QCOMPARE(sender.stats().spansSent, qint64(15));
        QCOMPARE(sender.stats().lastError, QStringLiteral("x"));

        // The receiver's message is a way out like any other: redacted and cut.
        const QByteArray message = "refused Authorization: Bearer sk-live-4f9a8b7c6d5e4f3a2b1c " + QByteArray(500, 'y');
        const QByteArray partial = "{\"partialSuccess\":{\"rejectedSpans\":\"1\",\"errorMessage\":\"" + message
            + "\"}}";
        collector.script = {{200, json, partial}};
        QVERIFY(sender.enqueue(QByteArrayLiteral("request-3"), 5));
        QTRY_COMPARE(sender.stats().requestsSent, qint64(4));
        const QString error = sender.stats().lastError;
        QCOMPARE(sender.stats().spansRejected, qint64(6));
        QVERIFY2(!error.contains(QStringLiteral("sk-live-4f9a8b7c6d5e4f3a2b1c")), qPrintable(error));
        QVERIFY2(error.startsWith(QStringLiteral("refused")), qPrintable(error));
        QVERIFY(error.size() <= OtlpHttpSender::kMaxErrorChars);
    }

    // Nobody listening: retried with backoff, kept at the head, and sent once a receiver comes.
    void refusedConnectionIsRetried()
    {
        quint16 closedPort = 0;
        {
            QTcpServer probe;
            QVERIFY(probe.listen(QHostAddress::LocalHost));
            closedPort = probe.serverPort();
        }
        OtlpSenderOptions o = options(QUrl(QStringLiteral("http://127.0.0.1:%1/otlp-s3cr3t-path").arg(closedPort)));
        o.initialBackoffMs = 20;
        o.maxBackoffMs = 40;
        OtlpHttpSender sender(o);
        QSignalSpy delivered(&sender, &OtlpHttpSender::delivered);
        QVERIFY(sender.enqueue(QByteArrayLiteral("kept"), 2));
#ifdef Q_OS_WIN
        constexpr qint64 kRetries = 1; // a refused loopback connection takes ~2 s there (SYN retries)
#else
        constexpr qint64 kRetries = 2;
#endif
        QTRY_VERIFY(sender.stats().retries > kRetries);
        const OtlpHttpSender::Stats stats = sender.stats();
        QCOMPARE(stats.queuedRequests, 1);
        QCOMPARE(stats.requestsSent + stats.requestsDropped + stats.requestsFailed + stats.spansDropped, qint64(0));
        QVERIFY2(stats.lastError.contains(QStringLiteral("127.0.0.1:%1").arg(closedPort)), qPrintable(stats.lastError));
        QVERIFY(!stats.lastError.contains(QString::fromLatin1(kSecret)));
        QVERIFY(!stats.lastError.contains(QStringLiteral("s3cr3t-path")));
        for (const QList<QVariant> &d : delivered) {
            QVERIFY(!d.at(0).toBool());
            QVERIFY(!d.at(1).toString().contains(QString::fromLatin1(kSecret)));
            QVERIFY(!d.at(1).toString().contains(QStringLiteral("s3cr3t-path")));
        }

        Collector late(closedPort);
        QTRY_COMPARE(sender.stats().requestsSent, qint64(1));
        QCOMPARE(late.bodies(), std::vector<QByteArray>{QByteArrayLiteral("kept")});
        QVERIFY(late.requests[0].head.startsWith("POST /otlp-s3cr3t-path/v1/traces HTTP/1.1"));
    }

    // A 307 is not followed (the key must not travel to another host): a failure, and the
    // redirect's target receives nothing.
    void redirectIsNotFollowed()
    {
        Collector elsewhere;
        Collector redirecting;
        const QByteArray location = "Location: " + elsewhere.base().toString().toUtf8() + "/v1/traces\r\n";
        redirecting.fallback = {307, location, {}};
        OtlpHttpSender sender(options(redirecting.base()));
        QSignalSpy delivered(&sender, &OtlpHttpSender::delivered);
        QVERIFY(sender.enqueue(QByteArrayLiteral("once"), 2));
        QTRY_COMPARE(sender.stats().requestsFailed, qint64(1));
        QTest::qWait(100);
        QCOMPARE(redirecting.requests.size(), size_t(1));
        QCOMPARE(elsewhere.requests.size(), size_t(0));
        const OtlpHttpSender::Stats stats = sender.stats();
        QCOMPARE(stats.spansDropped, qint64(2));
        QCOMPARE(stats.requestsSent + stats.retries, qint64(0));
        QVERIFY(stats.lastError.contains(QStringLiteral("307")));
        QVERIFY(!stats.lastError.contains(QString::fromLatin1(kSecret)));
        QCOMPARE(delivered.count(), 1);
        QCOMPARE(delivered.at(0).at(0).toBool(), false);
    }
};

QTEST_GUILESS_MAIN(TestOtlpSender)
#include "tst_otlp_sender.moc"
