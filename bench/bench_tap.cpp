// The passive tap's added latency (issue 43 item 5: at most 1 ms at p99 at 10,000 frames/s).
//
//   bench_tap [--rate FRAMES_PER_S] [--seconds S] [--rounds N] [--no-record]
//
// An echo server (its own thread) answers every text message with the same bytes; a client (the
// main thread) sends MAP event frames of about 450 bytes at the rate, each with its number, and
// times each one's round trip. Rounds alternate: straight to the echo server, then through a
// WebSocketTap (its own thread) that records both directions into a .jsonl.zst trace, as
// `map-inspector-cli tap --out` does. Through the tap a frame crosses it twice (there and back),
// so at 10,000 frames/s the tap relays 20,000 messages a second. Reported per path: round-trip
// percentiles; then the tap's added latency at each percentile (tap minus direct). The rate is
// kept by a 1 ms timer sending what is due (bursts of about rate/1000 frames). The echo server's
// sockets send at once (TCP_NODELAY), as a MAP server on Node.js does (the ws package sets it):
// with Nagle's algorithm on the server's side, a relay that forwards each message as it comes
// makes the server wait for an acknowledgement before its second answer of a burst (~1.2 ms).
#include "tap/WebSocketTap.h"

#include <QCoreApplication>
#include <QElapsedTimer>
#include <QTcpServer>
#include <QTcpSocket>
#include <QTemporaryDir>
#include <QThread>
#include <QTimer>
#include <QWebSocket>
#include <QWebSocketServer>

#include <algorithm>
#include <cstdio>
#include <vector>

using namespace mapi;

namespace {

class EchoServer : public QObject
{
public:
    QUrl start()
    {
        moveToThread(&m_thread);
        m_thread.start();
        quint16 port = 0;
        QMetaObject::invokeMethod(this, [this, &port] {
            m_server = new QWebSocketServer(QStringLiteral("echo"), QWebSocketServer::NonSecureMode, this);
            // As MAP servers on Node.js (the ws package) do: no Nagle on the server's sockets.
            auto *listener = new QTcpServer(m_server);
            listener->listen(QHostAddress::LocalHost, 0);
            port = listener->serverPort();
            connect(listener, &QTcpServer::newConnection, this, [this, listener] {
                while (QTcpSocket *socket = listener->nextPendingConnection()) {
                    socket->setSocketOption(QAbstractSocket::LowDelayOption, 1);
                    m_server->handleConnection(socket);
                }
            });
            connect(m_server, &QWebSocketServer::newConnection, this, [this] {
                QWebSocket *s = m_server->nextPendingConnection();
                s->setParent(this);
                connect(s, &QWebSocket::textMessageReceived, s, [s](const QString &t) { s->sendTextMessage(t); });
            });
        }, Qt::BlockingQueuedConnection);
        return QUrl(QStringLiteral("ws://127.0.0.1:%1").arg(port));
    }
    void stop()
    {
        QMetaObject::invokeMethod(this, [this] { qDeleteAll(children()); }, Qt::BlockingQueuedConnection);
        m_thread.quit();
        m_thread.wait();
    }

private:
    QThread m_thread;
    QWebSocketServer *m_server = nullptr;
};

struct Percentiles
{
    double p50 = 0, p90 = 0, p99 = 0, p999 = 0, max = 0;
    qint64 lost = 0;
};

double at(const std::vector<double> &sorted, double q)
{
    if (sorted.empty())
        return 0;
    return sorted[std::min(sorted.size() - 1, size_t(q * double(sorted.size())))];
}

// Sends `rate` frames a second for `seconds` to `url`; the round trips in milliseconds.
Percentiles measure(const QUrl &url, int rate, double seconds)
{
    QWebSocket socket;
    QEventLoop wait;
    QObject::connect(&socket, &QWebSocket::connected, &wait, &QEventLoop::quit);
    QTimer::singleShot(5000, &wait, &QEventLoop::quit);
    socket.open(url);
    wait.exec();
    if (socket.state() != QAbstractSocket::ConnectedState) {
        std::fprintf(stderr, "cannot connect to %s\n", qPrintable(url.toString()));
        return {};
    }
    const qint64 total = qint64(rate * seconds);
    std::vector<qint64> sentAt(size_t(total), -1);
    std::vector<double> rtt;
    rtt.reserve(size_t(total));
    QElapsedTimer clock;
    clock.start();
    const QString head = QStringLiteral(
        "{\"jsonrpc\":\"2.0\",\"method\":\"map/event\",\"params\":{\"subscriptionId\":\"sub-1\",\"sequence\":");
    const QString tail = QStringLiteral(
        ",\"event\":{\"id\":\"01JD4M8K7Q2W3E4R5T6Y7U8I9O\",\"type\":\"message_sent\",\"timestamp\":1795252123458,"
        "\"data\":{\"message\":{\"id\":\"msg-01JD4M8K7Q2W3E4R5T6Y7U8I9P\",\"from\":\"agent-planner-1\",\"to\":{\"agent\":"
        "\"agent-coder-2\"},\"timestamp\":1795252123458,\"payload\":{\"type\":\"task\",\"text\":\"Refactor the parser "
        "and keep the public interface\"}}}}}}");
    QObject::connect(&socket, &QWebSocket::textMessageReceived, &socket, [&](const QString &text) {
        const qsizetype at = text.indexOf(QLatin1String("\"sequence\":"));
        const qint64 seq = at < 0 ? -1 : QStringView(text).mid(at + 11, text.indexOf(QLatin1Char(','), at) - at - 11).toLongLong();
        if (seq >= 0 && seq < total && sentAt[size_t(seq)] >= 0)
            rtt.push_back(double(clock.nsecsElapsed() - sentAt[size_t(seq)]) / 1e6);
    });
    qint64 sent = 0;
    QTimer tick;
    tick.setTimerType(Qt::PreciseTimer);
    QObject::connect(&tick, &QTimer::timeout, &socket, [&] {
        const qint64 due = std::min(total, qint64(double(clock.nsecsElapsed()) / 1e9 * rate));
        for (; sent < due; ++sent) {
            sentAt[size_t(sent)] = clock.nsecsElapsed();
            socket.sendTextMessage(head + QString::number(sent) + tail);
        }
    });
    tick.start(1);
    QEventLoop run;
    QTimer done;
    QObject::connect(&done, &QTimer::timeout, &run, [&] {
        if (qint64(rtt.size()) >= total || clock.elapsed() > qint64(seconds * 1000) + 5000)
            run.quit();
    });
    done.start(50);
    run.exec();
    socket.close();
    Percentiles p;
    p.lost = total - qint64(rtt.size());
    std::sort(rtt.begin(), rtt.end());
    p.p50 = at(rtt, 0.50);
    p.p90 = at(rtt, 0.90);
    p.p99 = at(rtt, 0.99);
    p.p999 = at(rtt, 0.999);
    p.max = rtt.empty() ? 0 : rtt.back();
    return p;
}

void print(const char *name, const Percentiles &p)
{
    std::printf("| %s | %.3f | %.3f | %.3f | %.3f | %.3f | %lld |\n", name, p.p50, p.p90, p.p99, p.p999, p.max,
                static_cast<long long>(p.lost));
}

} // namespace

int main(int argc, char **argv)
{
    QCoreApplication app(argc, argv);
    int rate = 10000;
    double seconds = 10;
    int rounds = 3;
    bool recordTrace = true;
    const QStringList args = app.arguments();
    for (qsizetype i = 1; i < args.size(); ++i) {
        if (args[i] == QLatin1String("--rate") && i + 1 < args.size())
            rate = args[++i].toInt();
        else if (args[i] == QLatin1String("--seconds") && i + 1 < args.size())
            seconds = args[++i].toDouble();
        else if (args[i] == QLatin1String("--rounds") && i + 1 < args.size())
            rounds = args[++i].toInt();
        else if (args[i] == QLatin1String("--no-record"))
            recordTrace = false;
    }
    EchoServer echo;
    const QUrl echoUrl = echo.start();

    QTemporaryDir dir;
    QThread tapThread;
    auto *tap = new WebSocketTap;
    tap->moveToThread(&tapThread);
    tapThread.start();
    TapOptions options;
    options.upstream = echoUrl;
    if (recordTrace)
        options.tracePath = dir.filePath(QStringLiteral("tap.jsonl.zst"));
    QUrl tapUrl;
    QMetaObject::invokeMethod(tap, [&] {
        QString error;
        if (tap->start(options, &error))
            tapUrl = tap->listenUrl();
        else
            std::fprintf(stderr, "tap: %s\n", qPrintable(error));
    }, Qt::BlockingQueuedConnection);
    if (tapUrl.isEmpty())
        return 1;

    std::printf("%d frames/s for %.0f s, %d rounds each, trace %s; round trip in ms\n\n", rate, seconds, rounds,
                recordTrace ? "recorded (.jsonl.zst)" : "off");
    std::printf("| path | p50 | p90 | p99 | p99.9 | max | lost |\n|---|---|---|---|---|---|---|\n");
    std::vector<Percentiles> direct, tapped;
    for (int r = 0; r < rounds; ++r) {
        direct.push_back(measure(echoUrl, rate, seconds));
        print("direct", direct.back());
        tapped.push_back(measure(tapUrl, rate, seconds));
        print("through the tap", tapped.back());
    }
    // The medians of the rounds, and the difference.
    const auto median = [](std::vector<Percentiles> v, double Percentiles::*field) {
        std::sort(v.begin(), v.end(), [field](const Percentiles &a, const Percentiles &b) { return a.*field < b.*field; });
        return v[v.size() / 2].*field;
    };
    std::printf("\nadded by the tap (median of the rounds, tap minus direct): p50 %.3f ms, p90 %.3f ms, p99 %.3f ms, p99.9 %.3f ms\n",
                median(tapped, &Percentiles::p50) - median(direct, &Percentiles::p50),
                median(tapped, &Percentiles::p90) - median(direct, &Percentiles::p90),
                median(tapped, &Percentiles::p99) - median(direct, &Percentiles::p99),
                median(tapped, &Percentiles::p999) - median(direct, &Percentiles::p999));
    QMetaObject::invokeMethod(tap, [&] {
        tap->stop();
        const TapCounts c = tap->counts();
        std::printf("tap: %lld messages relayed, %lld records written, %lld not written\n",
                    static_cast<long long>(c.framesToServer + c.framesToParticipants), static_cast<long long>(c.recordsWritten),
                    static_cast<long long>(c.recordsNotWritten));
        delete tap;
    }, Qt::BlockingQueuedConnection);
    tapThread.quit();
    tapThread.wait();
    echo.stop();
    return 0;
}
