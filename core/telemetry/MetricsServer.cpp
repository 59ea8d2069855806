#include "telemetry/MetricsServer.h"

#include "common/Redaction.h"

#include <QTcpServer>
#include <QTcpSocket>
#include <QTimer>

#include <cstring>

namespace mapi {

namespace {

// RFC 9110 token characters (a method is a token).
bool isTokenChar(char c)
{
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'))
        return true;
    return c != 0 && std::strchr("!#$%&'*+-.^_`|~", c) != nullptr;
}

bool hasControlOrSpace(QByteArrayView text)
{
    for (char c : text)
        if (uchar(c) <= 0x20 || uchar(c) == 0x7f)
            return true;
    return false;
}

QString hostPort(const QHostAddress &address, quint16 port)
{
    const QString host = address.protocol() == QAbstractSocket::IPv6Protocol ? QLatin1Char('[') + address.toString() + QLatin1Char(']')
                                                                              : address.toString();
    return host + QLatin1Char(':') + QString::number(port);
}

} // namespace

MetricsServer::MetricsServer(QObject *parent)
    : QObject(parent)
    , m_server(new QTcpServer(this))
{
    connect(m_server, &QTcpServer::newConnection, this, &MetricsServer::onNewConnection);
}

MetricsServer::~MetricsServer()
{
    close(); // before ~QObject deletes the sockets: their last signals must not reach a half-destroyed server
}

ErrorOr<std::pair<QHostAddress, quint16>> MetricsServer::parseListen(const QString &spec)
{
    const QString text = spec.trimmed();
    if (text.isEmpty())
        return Failure{QStringLiteral("no address: give host:port (127.0.0.1:9464, [::1]:9464, :9464)")};
    QString host;
    QString portText;
    const bool bracketed = text.startsWith(QLatin1Char('['));
    if (bracketed) {
        const qsizetype end = text.indexOf(QLatin1Char(']'));
        if (end < 0)
            return Failure{QStringLiteral("%1: no ']' after the IPv6 address").arg(text)};
        host = text.mid(1, end - 1);
        const QString rest = text.mid(end + 1);
        if (!rest.startsWith(QLatin1Char(':')))
            return Failure{QStringLiteral("%1: a port is required ([::1]:9464)").arg(text)};
        portText = rest.mid(1);
    } else {
        const qsizetype colon = text.lastIndexOf(QLatin1Char(':'));
        if (colon < 0)
            return Failure{QStringLiteral("%1: a port is required (127.0.0.1:9464, :9464)").arg(text)};
        host = text.left(colon);
        if (host.contains(QLatin1Char(':')))
            return Failure{QStringLiteral("%1: an IPv6 address is written in brackets ([::1]:9464)").arg(text)};
        portText = text.mid(colon + 1);
    }

    if (portText.isEmpty())
        return Failure{QStringLiteral("%1: a port is required").arg(text)};
    if (portText.size() > 5)
        return Failure{QStringLiteral("%1: %2 is not a port (0-65535)").arg(text, portText)};
    for (const QChar c : portText)
        if (c.unicode() < u'0' || c.unicode() > u'9') // ASCII digits only: no sign, no spaces
            return Failure{QStringLiteral("%1: %2 is not a port (0-65535)").arg(text, portText)};
    const uint port = portText.toUInt();
    if (port > 65535)
        return Failure{QStringLiteral("%1: %2 is not a port (0-65535)").arg(text, portText)};

    QHostAddress address;
    if (!bracketed && (host.isEmpty() || host.compare(QLatin1String("localhost"), Qt::CaseInsensitive) == 0)) {
        address = QHostAddress(QHostAddress::LocalHost); // one address, not whatever "localhost" resolves to
    } else {
        // Names are not resolved: what is exposed must be what the operator wrote.
        if (!address.setAddress(host))
            return Failure{QStringLiteral("%1: %2 is not an IP address (only localhost is taken as a name)").arg(text, host)};
        if (bracketed != (address.protocol() == QAbstractSocket::IPv6Protocol))
            return Failure{QStringLiteral("%1: brackets are for IPv6 addresses only").arg(text)};
    }
    return std::pair<QHostAddress, quint16>(address, quint16(port));
}

bool MetricsServer::isLoopback(const QHostAddress &address)
{
    bool v4 = false;
    const quint32 ip = address.toIPv4Address(&v4); // also an IPv4-mapped IPv6 address (::ffff:127.0.0.1)
    if (v4)
        return (ip >> 24) == 127;
    return address.isLoopback();
}

bool MetricsServer::listen(const QHostAddress &address, quint16 port, QString *error)
{
    close();
    if (m_server->listen(address, port))
        return true;
    if (error)
        *error = QStringLiteral("cannot listen on %1: %2").arg(hostPort(address, port), m_server->errorString());
    return false;
}

bool MetricsServer::isListening() const
{
    return m_server->isListening();
}

void MetricsServer::close()
{
    m_server->close();
    const QList<QTcpSocket *> sockets = m_connections.keys();
    for (QTcpSocket *socket : sockets) {
        drop(socket);   // no signal of it reaches this any more
        socket->abort();
    }
}

quint16 MetricsServer::port() const
{
    return m_server->isListening() ? m_server->serverPort() : 0;
}

QHostAddress MetricsServer::address() const
{
    return m_server->serverAddress();
}

void MetricsServer::onNewConnection()
{
    while (QTcpSocket *socket = m_server->nextPendingConnection()) {
        if (m_connections.size() >= m_maxConnections) {
            // Over the bound: closed before anything is read, so that idle connections cannot
            // hold more than the bound's memory and descriptors.
            ++m_stats.requestsRefused;
            ++m_stats.connectionsOverBound;
            socket->abort();
            socket->deleteLater();
            continue;
        }
        // Qt reads at most this much ahead of us: a peer that streams cannot grow the buffer.
        socket->setReadBufferSize(kReadBufferBytes);
        Connection connection;
        connection.deadline = new QTimer(socket);
        connection.deadline->setSingleShot(true);
        connection.deadline->setInterval(m_headDeadlineMs);
        connect(connection.deadline, &QTimer::timeout, this, [this, socket] { onDeadline(socket); });
        connect(socket, &QTcpSocket::readyRead, this, [this, socket] { onReadyRead(socket); });
        connect(socket, &QTcpSocket::disconnected, this, [this, socket] { drop(socket); });
        connection.deadline->start();
        m_connections.insert(socket, connection);
    }
}

qsizetype MetricsServer::headEnd(const QByteArray &buffer)
{
    // The blank line that ends the head: CRLF CRLF, or bare LF LF (RFC 9112 lets a recipient
    // take a lone LF as a line end; some hand-written scrapers send them).
    const qsizetype crlf = buffer.indexOf("\n\r\n");
    const qsizetype lf = buffer.indexOf("\n\n");
    if (crlf < 0 && lf < 0)
        return -1;
    if (lf >= 0 && (crlf < 0 || lf < crlf))
        return lf + 2;
    return crlf + 3;
}

void MetricsServer::onReadyRead(QTcpSocket *socket)
{
    const auto it = m_connections.find(socket);
    if (it == m_connections.end()) {
        socket->readAll();
        return;
    }
    Connection &connection = *it;
    if (connection.answered) {
        socket->readAll(); // a body, or a second request: never read, only discarded
        return;
    }
    connection.head += socket->readAll();
    // RFC 9112 2.2: empty lines before the request line are ignored.
    qsizetype skip = 0;
    while (skip < connection.head.size() && (connection.head.at(skip) == '\r' || connection.head.at(skip) == '\n'))
        ++skip;
    if (skip > 0)
        connection.head.remove(0, skip);

    const qsizetype end = headEnd(connection.head);
    if ((end < 0 && connection.head.size() > kMaxHeadBytes) || end > kMaxHeadBytes) {
        ++m_stats.requestsRefused;
        Answer tooLarge;
        tooLarge.status = 431;
        tooLarge.body = "request head larger than " + QByteArray::number(kMaxHeadBytes) + " bytes\n";
        answer(socket, tooLarge); // `connection` may be gone after this
        return;
    }
    if (end < 0)
        return; // more to come, within the deadline
    bool served = false;
    const Answer routed = route(connection.head.left(end), &served);
    ++(served ? m_stats.requestsServed : m_stats.requestsRefused);
    answer(socket, routed);
}

MetricsServer::Answer MetricsServer::route(const QByteArray &head, bool *served) const
{
    *served = false;
    Answer out;
    const auto bad = [&out](const QByteArray &why) {
        out.status = 400;
        out.body = why + '\n';
        return out;
    };
    const QList<QByteArray> lines = head.split('\n');
    QByteArray requestLine = lines.value(0);
    if (requestLine.endsWith('\r'))
        requestLine.chop(1);
    const QList<QByteArray> parts = requestLine.split(' ');
    if (parts.size() != 3 || parts[0].isEmpty() || parts[1].isEmpty())
        return bad("malformed request line");
    const QByteArray &method = parts[0];
    const QByteArray &target = parts[1];
    const QByteArray &version = parts[2];
    for (char c : method)
        if (!isTokenChar(c))
            return bad("malformed method");
    if (hasControlOrSpace(target))
        return bad("malformed target");
    if (version != "HTTP/1.1" && version != "HTTP/1.0")
        return bad("HTTP/1.0 or HTTP/1.1 only");
    // Header lines: name ":" value, the name a token (no space before the colon: RFC 9112 5.1,
    // nor an obsolete folded line). Their values are not used.
    for (qsizetype i = 1; i < lines.size(); ++i) {
        QByteArray line = lines[i];
        if (line.endsWith('\r'))
            line.chop(1);
        if (line.isEmpty())
            continue; // the blank line that ends the head
        const qsizetype colon = line.indexOf(':');
        if (colon <= 0)
            return bad("malformed header line");
        for (qsizetype k = 0; k < colon; ++k)
            if (!isTokenChar(line.at(k)))
                return bad("malformed header name");
    }

    *served = true;
    if (method != "GET" && method != "HEAD") { // methods are case-sensitive (RFC 9110 9.1)
        out.status = 405;
        out.extraHeaders = "Allow: GET, HEAD\r\n";
        out.body = "only GET and HEAD\n";
        return out;
    }
    out.headOnly = method == "HEAD";

    // origin-form "/metrics?x", or absolute-form "http://host:port/metrics" (RFC 9112 3.2.2).
    QByteArray path = target;
    const QByteArray lower = target.toLower();
    if (lower.startsWith("http://") || lower.startsWith("https://")) {
        const qsizetype slash = path.indexOf('/', path.indexOf("//") + 2);
        path = slash < 0 ? QByteArray("/") : path.mid(slash);
    }
    if (const qsizetype query = path.indexOf('?'); query >= 0)
        path.truncate(query);
    if (const qsizetype fragment = path.indexOf('#'); fragment >= 0)
        path.truncate(fragment);

    if (path == "/metrics") {
        if (!m_metrics) {
            out.status = 503;
            out.body = "no metrics yet\n";
            return out;
        }
        out.contentType = kMetricsContentType;
        out.body = m_metrics();
        return out;
    }
    if (path == "/healthz") {
        const std::pair<bool, QString> health = m_health ? m_health() : std::pair<bool, QString>(true, QString());
        if (health.first) {
            out.body = "ok\n";
        } else {
            out.status = 503;
            // A way out of the process: the reason may quote a server's words.
            const QString reason = health.second.isEmpty() ? QStringLiteral("unhealthy") : redactSecrets(health.second);
            out.body = reason.toUtf8() + '\n';
        }
        return out;
    }
    out.status = 404;
    out.body = "not found: /metrics and /healthz only\n";
    return out;
}

QByteArray MetricsServer::reasonPhrase(int status)
{
    switch (status) {
    case 200: return "OK";
    case 400: return "Bad Request";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 431: return "Request Header Fields Too Large";
    case 503: return "Service Unavailable";
    default: break;
    }
    return "Status";
}

void MetricsServer::answer(QTcpSocket *socket, const Answer &answer)
{
    const auto it = m_connections.find(socket);
    if (it == m_connections.end())
        return;
    it->answered = true;
    if (socket->state() != QAbstractSocket::ConnectedState) { // the peer went meanwhile
        drop(socket);
        return;
    }
    socket->readAll(); // what came after the head: unread, so that closing does not reset the answer
    QByteArray out;
    out.reserve(160 + answer.extraHeaders.size() + (answer.headOnly ? 0 : answer.body.size()));
    out += "HTTP/1.1 " + QByteArray::number(answer.status) + ' ' + reasonPhrase(answer.status) + "\r\n";
    out += "Content-Type: " + answer.contentType + "\r\n";
    out += "Content-Length: " + QByteArray::number(answer.body.size()) + "\r\n";
    out += "Connection: close\r\n";
    out += answer.extraHeaders;
    out += "\r\n";
    if (!answer.headOnly)
        out += answer.body;
    // The peer has as long again to take the answer; past it, abort (a reader that never reads
    // must not hold a connection of the bound).
    it->deadline->start(m_headDeadlineMs);
    socket->write(out);
    socket->flush();
    // Closes once the bytes are written (at once when flush() took them all): `disconnected`
    // then drops the socket, possibly before this returns.
    socket->disconnectFromHost();
}

void MetricsServer::onDeadline(QTcpSocket *socket)
{
    const auto it = m_connections.find(socket);
    if (it == m_connections.end())
        return;
    if (!it->answered)
        ++m_stats.requestsRefused;
    drop(socket);
    socket->abort();
}

void MetricsServer::drop(QTcpSocket *socket)
{
    const auto it = m_connections.find(socket);
    if (it == m_connections.end())
        return;
    if (it->deadline)
        it->deadline->stop();
    m_connections.erase(it);
    socket->disconnect(this);
    socket->deleteLater();
}

} // namespace mapi
