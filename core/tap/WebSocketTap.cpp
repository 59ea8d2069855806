#include "tap/WebSocketTap.h"

#include "alerts/AlertWebhook.h"
#include "tap/TapRecorder.h"

#include <QDateTime>
#include <QNetworkRequest>
#include <QTcpServer>
#include <QTcpSocket>
#include <QTimer>
#include <QUrlQuery>
#include <QWebSocket>
#include <QWebSocketServer>

namespace mapi {

// One participant's connection and its upstream twin.
struct WebSocketTap::Relay
{
    int conn = 0;
    QWebSocket *participant = nullptr;
    QWebSocket *upstream = nullptr;
    QTimer *connectTimer = nullptr;
    bool upstreamOpen = false;
    bool finished = false;
    // A close frame came from that side (Qt says 1000 for a connection that simply dropped:
    // without one, the code is 1006).
    bool participantSentClose = false;
    bool serverSentClose = false;
    // Participant messages waiting for the upstream (binary?, bytes), at most kMaxWaitingBytes.
    QList<std::pair<bool, QByteArray>> waiting;
    qint64 waitingBytes = 0;
};

namespace {

// Headers that belong to one hop's handshake: the upstream handshake makes its own.
bool isHandshakeHeader(const QByteArray &name)
{
    const QByteArray n = name.toLower();
    return n == "host" || n == "upgrade" || n == "connection" || n.startsWith("sec-websocket-") || n == "content-length"
        || n == "origin";
}

// Qt sends close codes 1000–1003, 1007–1011 and 3000–4999 only (QWebSocketProtocol).
bool canSendCloseCode(int code)
{
    return (code >= 1000 && code <= 1003) || (code >= 1007 && code <= 1011) || (code >= 3000 && code <= 4999);
}

// A close frame's reason holds at most 123 bytes of UTF-8: cut on a character's boundary.
QString closeReasonFits(const QString &reason)
{
    QByteArray bytes = reason.toUtf8();
    if (bytes.size() <= 123)
        return reason;
    qsizetype cut = 123;
    while (cut > 0 && (uchar(bytes[cut]) & 0xC0) == 0x80)
        --cut;
    return QString::fromUtf8(bytes.left(cut));
}

QString closeText(int code, const QString &reason)
{
    return reason.isEmpty() ? QStringLiteral("code %1").arg(code) : QStringLiteral("code %1: %2").arg(code).arg(reason);
}

} // namespace

WebSocketTap::WebSocketTap(QObject *parent)
    : QObject(parent)
{
}

WebSocketTap::~WebSocketTap()
{
    stop();
}

QString WebSocketTap::upstreamError(const QUrl &upstream)
{
    if (!upstream.isValid() || upstream.host().isEmpty())
        return tr("not a WebSocket address (ws://HOST:PORT/PATH or wss://…)");
    const QString scheme = upstream.scheme().toLower();
    if (scheme != QLatin1String("ws") && scheme != QLatin1String("wss"))
        return tr("the tap relays WebSocket only (ws:// or wss://), not %1://").arg(scheme);
    if (!upstream.userInfo().isEmpty())
        return tr("put no user name or password in the upstream address: participants send their own");
    if (scheme == QLatin1String("ws") && !AlertWebhook::isLoopbackHost(upstream.host()))
        return tr("plain ws:// to another machine would carry the agents' credentials in clear: "
                  "use wss://, or a server on this machine");
    return QString();
}

QString WebSocketTap::listenError(const QHostAddress &address)
{
    if (address.isNull() || !address.isLoopback())
        return tr("the tap listens on this machine only (127.0.0.1 or ::1): it serves no TLS, and "
                  "participants send their credentials through it");
    return QString();
}

QString WebSocketTap::shownUrl(const QUrl &url)
{
    // Query values may be credentials under any name (?key=, ?ticket=, ?sig=): only the ones
    // that name the participant are kept.
    static const QStringList kept = {QStringLiteral("name"), QStringLiteral("role"), QStringLiteral("agentId"),
                                     QStringLiteral("id"), QStringLiteral("v"), QStringLiteral("version")};
    QUrl shown = url.adjusted(QUrl::RemoveUserInfo);
    if (shown.hasQuery()) {
        QUrlQuery query(shown);
        QList<std::pair<QString, QString>> items = query.queryItems(QUrl::FullyEncoded);
        for (auto &[name, value] : items)
            if (!kept.contains(name, Qt::CaseInsensitive))
                value = QStringLiteral("REDACTED");
        query.setQueryItems(items);
        shown.setQuery(query);
    }
    return shown.toString();
}

QUrl WebSocketTap::upstreamFor(const QUrl &upstream, const QUrl &requestUrl)
{
    QUrl url = upstream;
    QString base = upstream.path();
    while (base.endsWith(QLatin1Char('/')))
        base.chop(1);
    const QString path = requestUrl.path();
    if (!path.isEmpty() && path != QLatin1String("/"))
        url.setPath(base + (path.startsWith(QLatin1Char('/')) ? path : QLatin1Char('/') + path));
    else if (upstream.path().isEmpty())
        url.setPath(QStringLiteral("/"));
    if (requestUrl.hasQuery()) {
        const QString own = upstream.query(QUrl::FullyEncoded);
        const QString theirs = requestUrl.query(QUrl::FullyEncoded);
        url.setQuery(own.isEmpty() ? theirs : own + QLatin1Char('&') + theirs, QUrl::StrictMode);
    }
    return url;
}

bool WebSocketTap::start(const TapOptions &options, QString *error)
{
    stop();
    const auto refuse = [error](const QString &why) {
        if (error)
            *error = why;
        return false;
    };
    if (const QString why = upstreamError(options.upstream); !why.isEmpty())
        return refuse(tr("upstream %1: %2").arg(options.upstream.toString(QUrl::RemoveUserInfo), why));
    if (const QString why = listenError(options.listenAddress); !why.isEmpty())
        return refuse(tr("listen %1: %2").arg(options.listenAddress.toString(), why));
    m_options = options;
    m_counts = {};
    {
        std::lock_guard<std::mutex> lock(m_recorderMutex);
        m_recorder.reset();
    }
    m_server = new QWebSocketServer(QStringLiteral("map-inspector-tap"), QWebSocketServer::NonSecureMode, this);
    // Our own listener, so that every participant's socket sends at once (no Nagle): a relay
    // that waits for the next segment's acknowledgement adds a round trip to every burst.
    m_listener = new QTcpServer(m_server);
    if (!m_listener->listen(options.listenAddress, options.listenPort)) {
        const QString why = m_listener->errorString();
        delete m_server;
        m_server = nullptr;
        m_listener = nullptr;
        return refuse(tr("cannot listen on %1:%2: %3").arg(options.listenAddress.toString()).arg(options.listenPort).arg(why));
    }
    connect(m_listener, &QTcpServer::newConnection, m_server, [this] {
        while (QTcpSocket *socket = m_listener->nextPendingConnection()) {
            socket->setSocketOption(QAbstractSocket::LowDelayOption, 1);
            m_server->handleConnection(socket);
        }
    });
    if (!options.tracePath.isEmpty()) {
        auto recorder = std::make_unique<TapRecorder>();
        recorder->setFollowConnections(m_follow);
        {
            std::lock_guard<std::mutex> lock(m_recorderMutex);
            m_recorder = std::move(recorder);
        }
        connect(m_recorder.get(), &TapRecorder::failed, this, &WebSocketTap::recordingFailed);
        const Json extra = {{"tap", {{"listen", listenUrl().toString().toStdString()}}}};
        QString why;
        if (!m_recorder->open(options.tracePath, options.upstream.toString(QUrl::RemoveUserInfo), extra, options.traceOptions, &why)) {
            {
                std::lock_guard<std::mutex> lock(m_recorderMutex);
                m_recorder.reset();
            }
            delete m_server;
            m_server = nullptr;
            m_listener = nullptr;
            return refuse(tr("cannot write the trace %1: %2").arg(options.tracePath, why));
        }
    }
    connect(m_server, &QWebSocketServer::newConnection, this, &WebSocketTap::accept);
    return true;
}

void WebSocketTap::stop()
{
    if (m_listener)
        m_listener->close(); // no one new
    // Everyone gets a close (1001) and it is recorded, before any socket goes.
    const QList<Relay *> relays = m_relays.values();
    for (Relay *relay : relays)
        finish(relay, QStringLiteral("tap"), QWebSocketProtocol::CloseCodeGoingAway, tr("the tap stopped"));
    if (m_server) {
        // The participants' TCP sockets are the listener's children: they go with it, after the
        // close frames just sent have had time to leave (the caller's event loop turns meanwhile;
        // at the latest with this object).
        releaseServerLater(m_server);
        m_server = nullptr;
        m_listener = nullptr;
    }
    if (m_recorder) {
        m_recorder->close();
        m_counts.recordsWritten = m_recorder->written();
        m_counts.recordsNotWritten = m_recorder->dropped();
    }
}

QUrl WebSocketTap::listenUrl() const
{
    if (!m_listener || !m_listener->isListening())
        return {};
    QUrl url;
    url.setScheme(QStringLiteral("ws"));
    url.setHost(m_listener->serverAddress().toString());
    url.setPort(m_listener->serverPort());
    return url;
}

TapCounts WebSocketTap::counts() const
{
    TapCounts c = m_counts;
    c.open = m_relays.size();
    if (m_recorder) {
        c.recordsWritten = m_recorder->written();
        c.recordsNotWritten = m_recorder->dropped();
    }
    return c;
}

QStringList WebSocketTap::traceFiles() const
{
    return m_recorder ? m_recorder->files() : QStringList();
}

void WebSocketTap::releaseServerLater(QWebSocketServer *server)
{
    QTimer::singleShot(kSocketGraceMs, server, &QObject::deleteLater);
}

void WebSocketTap::record(int conn, RecordDir dir, QByteArray raw, bool binary)
{
    recordAs(conn, recordDirName(dir), std::move(raw), binary);
}

void WebSocketTap::recordAs(int conn, const QString &dir, QByteArray raw, bool binary)
{
    if (!m_recorder)
        return;
    TraceRecord r;
    r.timeMs = QDateTime::currentMSecsSinceEpoch();
    r.dir = dir;
    r.connection = conn;
    r.raw = std::move(raw);
    r.binary = binary;
    m_recorder->post(std::move(r));
}

std::shared_ptr<const TapConnections> WebSocketTap::liveConnections() const
{
    std::lock_guard<std::mutex> lock(m_recorderMutex);
    return m_recorder ? m_recorder->liveConnections() : nullptr;
}

void WebSocketTap::accept()
{
    while (QWebSocket *socket = m_server->nextPendingConnection()) {
        auto *relay = new Relay;
        relay->conn = int(++m_counts.participants);
        relay->participant = socket;
        socket->setParent(this);
        m_relays.insert(relay->conn, relay);
        connect(socket, &QWebSocket::textMessageReceived, this, [this, relay](const QString &text) {
            forward(relay, true, text.toUtf8(), false);
        });
        connect(socket, &QWebSocket::binaryMessageReceived, this, [this, relay](const QByteArray &bytes) {
            forward(relay, true, bytes, true);
        });
        connect(socket, &QWebSocket::aboutToClose, this, [relay] { relay->participantSentClose = true; });
        connect(socket, &QWebSocket::disconnected, this, [this, relay] { sideClosed(relay, true); });
        socket->setOutgoingFrameSize(QWebSocket::maxOutgoingFrameSize()); // a message goes as one frame, as it came
        openUpstream(relay);
    }
}

void WebSocketTap::openUpstream(Relay *relay)
{
    const QNetworkRequest incoming = relay->participant->request();
    const QUrl url = upstreamFor(m_options.upstream, incoming.url());
    QNetworkRequest request(url);
    for (const QByteArray &name : incoming.rawHeaderList())
        if (!isHandshakeHeader(name))
            request.setRawHeader(name, incoming.rawHeader(name));
    relay->upstream = new QWebSocket(relay->participant->origin(), QWebSocketProtocol::VersionLatest, this);
    QWebSocket *up = relay->upstream;
    up->setOutgoingFrameSize(QWebSocket::maxOutgoingFrameSize());
    connect(up, &QWebSocket::aboutToClose, this, [relay] { relay->serverSentClose = true; });
    // A refused handshake (401, 403, 404): Qt 6.4.2 says so and may leave the connection open.
#if QT_VERSION >= QT_VERSION_CHECK(6, 5, 0)
    connect(up, &QWebSocket::errorOccurred, this, [this, relay](QAbstractSocket::SocketError) {
#else
    connect(up, qOverload<QAbstractSocket::SocketError>(&QWebSocket::error), this, [this, relay](QAbstractSocket::SocketError) {
#endif
        if (!relay->upstreamOpen && !relay->finished) {
            ++m_counts.upstreamFailures;
            finish(relay, QStringLiteral("tap"), QWebSocketProtocol::CloseCodeBadOperation,
                   tr("upstream refused: %1").arg(relay->upstream->errorString()));
        }
    });
    connect(up, &QWebSocket::connected, this, [relay] {
        relay->connectTimer->stop();
        relay->upstreamOpen = true;
        // No Nagle towards the server either. QWebSocket does not hand out its socket; Qt makes it
        // a child (a Qt that does not leaves the option as it is: slower, still correct).
        if (auto *socket = relay->upstream->findChild<QAbstractSocket *>())
            socket->setSocketOption(QAbstractSocket::LowDelayOption, 1);
        for (const auto &[binary, bytes] : std::as_const(relay->waiting)) {
            if (binary)
                relay->upstream->sendBinaryMessage(bytes);
            else
                relay->upstream->sendTextMessage(QString::fromUtf8(bytes));
        }
        relay->waiting.clear();
        relay->waitingBytes = 0;
    });
    connect(up, &QWebSocket::textMessageReceived, this, [this, relay](const QString &text) {
        forward(relay, false, text.toUtf8(), false);
    });
    connect(up, &QWebSocket::binaryMessageReceived, this, [this, relay](const QByteArray &bytes) {
        forward(relay, false, bytes, true);
    });
    connect(up, &QWebSocket::disconnected, this, [this, relay] { sideClosed(relay, false); });
    relay->connectTimer = new QTimer(up);
    relay->connectTimer->setSingleShot(true);
    connect(relay->connectTimer, &QTimer::timeout, this, [this, relay] {
        ++m_counts.upstreamFailures;
        finish(relay, QStringLiteral("tap"), QWebSocketProtocol::CloseCodeBadOperation,
               tr("upstream did not open within %1 s").arg(m_options.upstreamConnectTimeoutMs / 1000.0));
    });
    relay->connectTimer->start(m_options.upstreamConnectTimeoutMs);
    // The URL as the participant asked for it: its query may hold a resume token (redacted when written).
    record(relay->conn, RecordDir::Open, shownUrl(url).toUtf8());
    Q_EMIT participantOpened(relay->conn, url);
    up->open(request);
}

void WebSocketTap::forward(Relay *relay, bool toServer, const QByteArray &bytes, bool binary)
{
    if (relay->finished)
        return;
    // Stamped and queued before it is sent: the record's time is the tap's receipt.
    record(relay->conn, toServer ? RecordDir::Send : RecordDir::Recv, bytes, binary);
    if (toServer) {
        ++m_counts.framesToServer;
        m_counts.bytesToServer += bytes.size();
        if (!relay->upstreamOpen) {
            relay->waitingBytes += bytes.size();
            if (relay->waitingBytes > kMaxWaitingBytes) {
                finish(relay, QStringLiteral("tap"), QWebSocketProtocol::CloseCodeBadOperation,
                       tr("more than %1 MiB waited for the upstream to open").arg(kMaxWaitingBytes >> 20));
                return;
            }
            relay->waiting.append({binary, bytes});
            return;
        }
    } else {
        ++m_counts.framesToParticipants;
        m_counts.bytesToParticipants += bytes.size();
    }
    QWebSocket *to = toServer ? relay->upstream : relay->participant;
    if (binary)
        to->sendBinaryMessage(bytes);
    else
        to->sendTextMessage(QString::fromUtf8(bytes));
}

void WebSocketTap::sideClosed(Relay *relay, bool participantSide)
{
    if (relay->finished)
        return;
    QWebSocket *from = participantSide ? relay->participant : relay->upstream;
    if (!participantSide && !relay->upstreamOpen) {
        ++m_counts.upstreamFailures;
        finish(relay, QStringLiteral("tap"), QWebSocketProtocol::CloseCodeBadOperation,
               tr("upstream refused: %1").arg(from->errorString()));
        return;
    }
    const bool closeFrame = participantSide ? relay->participantSentClose : relay->serverSentClose;
    finish(relay, participantSide ? QStringLiteral("participant") : QStringLiteral("server"),
           closeFrame ? int(from->closeCode()) : int(QWebSocketProtocol::CloseCodeAbnormalDisconnection),
           closeFrame ? from->closeReason() : from->errorString());
}

void WebSocketTap::finish(Relay *relay, const QString &by, int code, const QString &reason)
{
    if (relay->finished)
        return;
    relay->finished = true;
    const QString sentReason = closeReasonFits(reason);
    // The side that did not close gets the close: by the tap, both.
    const auto closeSide = [&](QWebSocket *socket) {
        if (!socket || socket->state() == QAbstractSocket::UnconnectedState)
            return;
        if (code == QWebSocketProtocol::CloseCodeAbnormalDisconnection)
            socket->abort(); // no close frame came: none goes
        else if (canSendCloseCode(code))
            socket->close(QWebSocketProtocol::CloseCode(code), sentReason);
        else
            socket->close(QWebSocketProtocol::CloseCodeBadOperation, closeReasonFits(closeText(code, reason)));
    };
    if (by != QLatin1String("participant"))
        closeSide(relay->participant);
    if (by != QLatin1String("server"))
        closeSide(relay->upstream);
    if (!relay->waiting.isEmpty()) { // recorded as sent when they came; they never reached the server
        recordAs(relay->conn, QStringLiteral("note"), QStringLiteral("tap: %1 message(s) of this participant were never delivered: "
                                                             "the upstream was not open").arg(relay->waiting.size()).toUtf8());
        m_counts.undelivered += relay->waiting.size();
    }
    record(relay->conn, RecordDir::Close, QStringLiteral("%1 closed (%2)").arg(by, closeText(code, reason)).toUtf8());
    Q_EMIT participantClosed(relay->conn, by, code, reason);
    m_relays.remove(relay->conn);
    if (relay->connectTimer)
        relay->connectTimer->stop();
    // Nothing of the sockets reaches the relay any more: it can go now. A socket goes once its
    // close has left (disconnected), or after kSocketGraceMs: deleted at once, it would drop
    // what it still holds to send.
    for (QWebSocket *socket : {relay->participant, relay->upstream})
        if (socket) {
            disconnect(socket, nullptr, this, nullptr);
            if (socket->state() == QAbstractSocket::UnconnectedState) {
                socket->deleteLater();
                continue;
            }
            connect(socket, &QWebSocket::disconnected, socket, &QObject::deleteLater);
            QTimer::singleShot(kSocketGraceMs, socket, [socket] {
                socket->abort();
                socket->deleteLater();
            });
        }
    if (relay->connectTimer)
        disconnect(relay->connectTimer, nullptr, this, nullptr);
    delete relay;
}

} // namespace mapi
