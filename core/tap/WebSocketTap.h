// A passive tap: a transparent WebSocket relay that MAP participants (agents, clients) connect
// through on their way to the server, recording both directions of every connection into one
// trace (TapRecorder), a connection number per participant.
//
//   participant ──ws──▶ tap (listens on this machine) ──ws:// or wss://──▶ upstream MAP server
//
// What it forwards, and what it cannot:
//  - Every WebSocket message as it came: a text message's bytes (each side checks UTF-8, as every
//    WebSocket endpoint must) and a binary message's bytes. A message sent in fragments is
//    forwarded whole (Qt reassembles it); pings and pongs end at each hop.
//  - The participant's request path and query are appended to the upstream's path
//    (upstream ws://h:p + participant /agent?name=x → ws://h:p/agent?name=x). Its handshake headers
//    go upstream (Authorization, Cookie, X-Api-Key …), except the handshake's own (Host, Upgrade,
//    Connection, Sec-WebSocket-*, Content-Length); its Origin goes as the upstream's origin.
//    Subprotocols are not negotiated (MAP defines none).
//  - Closing: the code and reason of one side's close go to the other, and into the trace. A
//    connection that dropped without a close frame is 1006 and aborts the other connection, so it
//    sees 1006 too. What Qt reports is what goes on: it takes a close frame with a code it counts
//    invalid (1004, 1012–2999: 1012 "service restart" among them) as a protocol error (1002), and
//    one without a code as 1000. A reason is cut to the 123 bytes a close frame holds.
//  - A message goes on in one frame, whatever its size (Qt would cut it at 512 KiB).
//  - The handshake with the participant is complete before the upstream answers (Qt accepts
//    first): its messages wait, at most kMaxWaitingBytes, until the upstream is open; an upstream
//    that refuses or does not open within the connect timeout closes the participant with 1011.
//
// Safety: it listens on loopback only (it serves no TLS, and participants send their credentials
// through it), and refuses an upstream that would carry them over plain ws:// to another machine
// (upstreamError()).
//
// Thread: the thread it lives in (it may be moved to a worker before start()); every socket is
// there. The relay only stamps, forwards and queues records: redaction, encoding and writing are
// the recorder's, in its own thread, so a slow disk never delays a frame.
#pragma once

#include "tap/TapConnections.h"
#include "trace/Trace.h"

#include <QHash>
#include <QHostAddress>
#include <QObject>
#include <QUrl>

#include <memory>
#include <mutex>

class QTcpServer;
class QWebSocket;
class QWebSocketServer;

namespace mapi {

class TapRecorder;

struct TapOptions
{
    QHostAddress listenAddress = QHostAddress::LocalHost;
    quint16 listenPort = 0;            // 0: chosen by the system (listenUrl() says which)
    QUrl upstream;                     // ws:// or wss://, credentials in it are refused
    QString tracePath;                 // empty: relay without recording
    TraceWriterOptions traceOptions;   // rotation, compression level
    int upstreamConnectTimeoutMs = 10000;
};

struct TapCounts
{
    qint64 participants = 0;     // connections accepted since start (the last connection number)
    qint64 open = 0;             // relayed right now
    qint64 framesToServer = 0;   // messages forwarded participant → server
    qint64 framesToParticipants = 0;
    qint64 bytesToServer = 0;
    qint64 bytesToParticipants = 0;
    qint64 upstreamFailures = 0; // participants closed because the upstream did not open
    qint64 undelivered = 0;      // messages that waited for an upstream that never opened (recorded as sent, and said in a note)
    qint64 recordsWritten = 0;   // by the recorder (read while it runs: approximate)
    qint64 recordsNotWritten = 0; // dropped because the disk fell behind (TapRecorder's bound)
};

class WebSocketTap : public QObject
{
    Q_OBJECT
public:
    // Participant messages held until the upstream opens (per connection).
    static constexpr qint64 kMaxWaitingBytes = 16 << 20;
    // How long a closed socket may take to send what it still holds before it is dropped.
    static constexpr int kSocketGraceMs = 2000;

    explicit WebSocketTap(QObject *parent = nullptr);
    ~WebSocketTap() override;

    // Why `upstream` cannot be tapped (empty: it can): not ws:// or wss://, user info in it, or
    // plain ws:// to a host that is not this machine (agents' credentials would travel in clear).
    static QString upstreamError(const QUrl &upstream);
    // Why the tap cannot listen there (empty: it can): an address that is not loopback.
    static QString listenError(const QHostAddress &address);
    // The upstream URL for a participant that asked for `requestUrl` (its path and query).
    static QUrl upstreamFor(const QUrl &upstream, const QUrl &requestUrl);
    // A participant's URL as the trace and the CLI show it: no user info, and every query value
    // but the ones naming the participant (name, role, agentId, id, v, version) REDACTED.
    static QString shownUrl(const QUrl &url);

    // Listens, and opens the trace when asked. false: `error` says why (nothing is left open).
    bool start(const TapOptions &options, QString *error);
    // Closes every participant and upstream (1001, going away), records it, and closes the trace
    // (written out before this returns).
    void stop();

    QUrl listenUrl() const;
    TapCounts counts() const;
    // Follow who did what as it happens (TapConnections, built by the recorder's thread, not the
    // relay's), for a window that shows a running tap: set before start(), with a trace to write.
    // liveConnections(): the latest picture (at most TapRecorder::kPublishMs old), from any thread.
    void setFollowConnections(bool on) { m_follow = on; }
    std::shared_ptr<const TapConnections> liveConnections() const;
    QStringList traceFiles() const; // the trace's parts so far (empty when not recording)

Q_SIGNALS:
    // `conn`: the participant's connection number in the trace (from 1).
    void participantOpened(int conn, const QUrl &upstreamUrl);
    // `by`: "participant", "server" or "tap"; `code` the WebSocket close code (1006: no close frame).
    void participantClosed(int conn, const QString &by, int code, const QString &reason);
    void recordingFailed(const QString &error);

private:
    struct Relay;
    void accept();
    void openUpstream(Relay *relay);
    void forward(Relay *relay, bool toServer, const QByteArray &bytes, bool binary);
    void sideClosed(Relay *relay, bool participantSide);
    void finish(Relay *relay, const QString &by, int code, const QString &reason);
    void record(int conn, RecordDir dir, QByteArray raw, bool binary = false);
    void recordAs(int conn, const QString &dir, QByteArray raw, bool binary = false);
    static void releaseServerLater(QWebSocketServer *server);

    TapOptions m_options;
    QWebSocketServer *m_server = nullptr; // upgrades the listener's sockets (handleConnection)
    QTcpServer *m_listener = nullptr;     // a child of m_server
    QHash<int, Relay *> m_relays;
    TapCounts m_counts;
    std::unique_ptr<TapRecorder> m_recorder;
    bool m_follow = false;
    mutable std::mutex m_recorderMutex; // m_recorder is set and reset under it (liveConnections())
};

} // namespace mapi
