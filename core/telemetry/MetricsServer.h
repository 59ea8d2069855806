// A small HTTP/1.1 responder for Prometheus: GET /metrics and GET /healthz, nothing else.
//
// Why our own: Qt 6.4's QHttpServer is a technology preview and Debian 12 does not ship it; what
// a scraper needs (one GET, one answer, close) is a page of code on QTcpServer, and keeping it
// this small keeps what a hostile peer can reach small too.
//
// Routes (the target's query string, if any, is ignored):
//   GET|HEAD /metrics  200, Content-Type: text/plain; version=0.0.4; charset=utf-8, the metrics
//                      provider's text (HEAD: the same headers, no body); 503 without a provider
//   GET|HEAD /healthz  200 "ok\n", or 503 with the health provider's reason (redacted: a way out,
//                      common/Redaction.h); 200 without a provider (the process answers)
//   another path       404
//   another method     405 with Allow: GET, HEAD (on any path)
//   a request line that is not `METHOD SP target SP HTTP/1.x`   400
// Every answer has Content-Length and Connection: close, and the connection is closed once it
// is written: one request per connection, no keep-alive, no pipelining.
//
// Hostile input, bounded:
//   - the request head (request line, headers and the blank line) is at most kMaxHeadBytes:
//     past it 431 and close;
//   - a connection has headDeadlineMs() (default kHeadDeadlineMs) to send its head, and as long
//     again to take its answer; past either it is aborted;
//   - at most maxConnections() (default kMaxConnections) at once: past it a new connection is
//     closed as soon as it is accepted;
//   - a request body is never read: bytes after the head are discarded as they arrive, and the
//     connection closes after the answer. Each connection buffers at most kReadBufferBytes.
// Memory: at most maxConnections() × (kReadBufferBytes + the answer) at any time.
//
// Listening: any address given explicitly is accepted (0.0.0.0 exposes the metrics to the
// network: agent names and ids, a system's URL without its credentials); callers default to
// loopback (parseListen(":9464") is 127.0.0.1) and may warn when !isLoopback().
// Thread: the thread it lives in (the main thread in the CLI). The providers are called there,
// synchronously, while a request is answered.
#pragma once

#include "common/ErrorOr.h"

#include <QByteArray>
#include <QHash>
#include <QHostAddress>
#include <QObject>
#include <QString>

#include <functional>
#include <utility>

class QTcpServer;
class QTcpSocket;
class QTimer;

namespace mapi {

class MetricsServer : public QObject
{
    Q_OBJECT
public:
    static constexpr qsizetype kMaxHeadBytes = 8 * 1024;
    static constexpr int kHeadDeadlineMs = 5000;
    static constexpr int kMaxConnections = 16;
    static constexpr qint64 kReadBufferBytes = 16 * 1024; // what Qt buffers of one connection's input
    static constexpr const char *kMetricsContentType = "text/plain; version=0.0.4; charset=utf-8";

    // What the server did so far.
    struct Stats
    {
        // Requests read whole and answered by a route: 200, 503, 404, 405.
        qint64 requestsServed = 0;
        // Connections ended without such an answer: a malformed request line (400), a head too
        // large (431), the deadline passed, or over the connection bound (closed at once).
        qint64 requestsRefused = 0;
        qint64 connectionsOverBound = 0; // of requestsRefused: closed because maxConnections() were open
    };

    explicit MetricsServer(QObject *parent = nullptr);
    ~MetricsServer() override;

    // "127.0.0.1:9464", "[::1]:9464", "localhost:9464" (127.0.0.1), ":9464" (127.0.0.1), or any
    // other address written out ("0.0.0.0:9464", "[::]:9464"). The port is required (0: any free
    // port; port() says which after listen()). Names other than localhost are refused, never
    // resolved: an address is what the operator meant to expose. An IPv6 address goes in brackets.
    static ErrorOr<std::pair<QHostAddress, quint16>> parseListen(const QString &spec);
    // 127.0.0.0/8, ::1, or an IPv4-mapped 127.x address.
    static bool isLoopback(const QHostAddress &address);

    // Starts listening; false with `error` set (when given) if it cannot. Listening again first
    // closes what was open.
    bool listen(const QHostAddress &address, quint16 port, QString *error = nullptr);
    bool isListening() const;
    // Stops listening and aborts the open connections.
    void close();
    // The port listened on (the real one after listen() with port 0); 0 when not listening.
    quint16 port() const;
    QHostAddress address() const;

    void setMetricsProvider(std::function<QByteArray()> provider) { m_metrics = std::move(provider); }
    // {true, _}: healthy (200 "ok"); {false, reason}: 503 with the reason.
    void setHealthProvider(std::function<std::pair<bool, QString>()> provider) { m_health = std::move(provider); }

    // Tests: a shorter deadline, a smaller bound. Apply to connections accepted afterwards.
    void setHeadDeadlineMs(int ms) { m_headDeadlineMs = ms; }
    int headDeadlineMs() const { return m_headDeadlineMs; }
    void setMaxConnections(int connections) { m_maxConnections = connections; }
    int maxConnections() const { return m_maxConnections; }

    const Stats &stats() const { return m_stats; }
    int openConnections() const { return int(m_connections.size()); }

private:
    struct Connection
    {
        QByteArray head;       // what came of the head so far
        QTimer *deadline = nullptr; // a child of the socket
        bool answered = false; // the answer is written: what comes now is discarded
    };
    struct Answer
    {
        int status = 200;
        QByteArray contentType = "text/plain; charset=utf-8";
        QByteArray body;
        QByteArray extraHeaders; // whole lines, each ending in \r\n
        bool headOnly = false;   // HEAD: Content-Length of the body, not the body
    };

    void onNewConnection();
    void onReadyRead(QTcpSocket *socket);
    void onDeadline(QTcpSocket *socket);
    // Routes a complete head (without its blank line).
    Answer route(const QByteArray &head, bool *served) const;
    void answer(QTcpSocket *socket, const Answer &answer);
    // Forgets `socket` and deletes it later; idempotent.
    void drop(QTcpSocket *socket);
    static QByteArray reasonPhrase(int status);
    // The end of the head (the index after its blank line) within `buffer`, or -1.
    static qsizetype headEnd(const QByteArray &buffer);

    QTcpServer *m_server = nullptr;
    QHash<QTcpSocket *, Connection> m_connections;
    std::function<QByteArray()> m_metrics;
    std::function<std::pair<bool, QString>()> m_health;
    int m_headDeadlineMs = kHeadDeadlineMs;
    int m_maxConnections = kMaxConnections;
    Stats m_stats;
};

} // namespace mapi
