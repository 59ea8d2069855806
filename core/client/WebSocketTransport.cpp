#include "client/Transport.h"

#include "common/Redaction.h"

#include <QSslError>
#include <QUrlQuery>
#include <QWebSocket>

namespace mapi {

WebSocketTransport::WebSocketTransport(qint64 maxIncomingBytes, QObject *parent)
    : Transport(parent)
    , m_socket(new QWebSocket(QString(), QWebSocketProtocol::VersionLatest, this))
{
    m_socket->setMaxAllowedIncomingMessageSize(quint64(maxIncomingBytes));
    m_socket->setMaxAllowedIncomingFrameSize(quint64(maxIncomingBytes));
    connect(m_socket, &QWebSocket::connected, this, [this] {
        m_reportedClose = false;
        Q_EMIT opened();
    });
    connect(m_socket, &QWebSocket::disconnected, this, [this] {
        if (m_reportedClose)
            return;
        m_reportedClose = true;
        QString reason = m_socket->closeReason();
        if (reason.isEmpty())
            reason = QStringLiteral("socket closed (code %1)").arg(int(m_socket->closeCode()));
        Q_EMIT closed(reason);
    });
    connect(m_socket, &QWebSocket::textMessageReceived, this,
            [this](const QString &text) { Q_EMIT textReceived(text.toUtf8()); });
    connect(m_socket, &QWebSocket::binaryMessageReceived, this,
            [this](const QByteArray &data) { Q_EMIT binaryReceived(data); });
#ifndef QT_NO_SSL
    connect(m_socket, &QWebSocket::sslErrors, this, [this](const QList<QSslError> &errors) {
        QStringList texts;
        for (const QSslError &e : errors)
            texts << e.errorString();
        // Never ignoreSslErrors(): a certificate that does not validate is the operator's call
        // to fix on the server side, not ours to accept silently.
        Q_EMIT errorOccurred(QStringLiteral("TLS certificate rejected: %1").arg(texts.join(QStringLiteral("; "))));
    });
#endif
#if QT_VERSION >= QT_VERSION_CHECK(6, 5, 0)
    constexpr auto errorSignal = &QWebSocket::errorOccurred;
#else
    constexpr auto errorSignal = qOverload<QAbstractSocket::SocketError>(&QWebSocket::error);
#endif
    connect(m_socket, errorSignal, this, [this](QAbstractSocket::SocketError) {
        if (m_socket->state() == QAbstractSocket::UnconnectedState && m_reportedClose) {
            // Failed before it ever opened: report as a close so the client backs off.
            Q_EMIT closed(m_socket->errorString());
        }
    });
}

WebSocketTransport::~WebSocketTransport()
{
    m_reportedClose = true;
}

void WebSocketTransport::open(const QUrl &url)
{
    m_reportedClose = true;
    m_socket->open(url);
}

void WebSocketTransport::abort()
{
    m_socket->abort();
    if (!m_reportedClose) {
        m_reportedClose = true;
        Q_EMIT closed(QStringLiteral("closed by client"));
    }
}

void WebSocketTransport::sendText(const QByteArray &utf8)
{
    m_socket->sendTextMessage(QString::fromUtf8(utf8));
}

bool WebSocketTransport::isOpen() const
{
    return m_socket->state() == QAbstractSocket::ConnectedState;
}

QString redactedUrl(const QUrl &url)
{
    if (url.scheme() == QLatin1String("stdio")) // a command line: its arguments can hold a token
        return QStringLiteral("stdio:") + redactSecrets(url.path(QUrl::FullyDecoded));
    QUrl copy = url;
    copy.setUserInfo(QString());
    if (copy.hasQuery()) {
        QUrlQuery query(copy);
        const auto items = query.queryItems();
        QUrlQuery clean;
        for (const auto &item : items)
            clean.addQueryItem(item.first, QStringLiteral("REDACTED"));
        copy.setQuery(clean);
    }
    return copy.toString();
}

} // namespace mapi
