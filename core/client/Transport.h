// The byte pipe under MapClient: a WebSocket, a launched process's stdin/stdout or a local socket
// (NDJSON, StreamTransports.h); a fake in tests.
#pragma once

#include <QByteArray>
#include <QObject>
#include <QUrl>

class QWebSocket;

namespace mapi {

class Transport : public QObject
{
    Q_OBJECT
public:
    using QObject::QObject;
    ~Transport() override = default;

    virtual void open(const QUrl &url) = 0;
    // Closes at once; closed() follows (possibly synchronously).
    virtual void abort() = 0;
    virtual void sendText(const QByteArray &utf8) = 0;
    virtual bool isOpen() const = 0;
    // Whether the client may open it again by itself after a drop. A launched process is started
    // again only when the operator asks.
    virtual bool reopensByItself() const { return true; }
    // Where the text frame being delivered came from, said in problems about it ("line 12 of the
    // process's output"); empty where frames have no place to name (a WebSocket).
    virtual QString frameOrigin() const { return {}; }

Q_SIGNALS:
    void opened();
    void closed(const QString &reason);
    void textReceived(const QByteArray &utf8);
    void binaryReceived(const QByteArray &data);
    // An error the operator must see, e.g. a TLS certificate that does not validate.
    void errorOccurred(const QString &message);
    // A launched process's standard error, a line at a time (cut at kMaxDiagnosticLineBytes).
    void diagnosticLine(const QByteArray &line);
    // A stream line longer than a frame may be: dropped, its number and length said.
    void lineDropped(qint64 lineNumber, qint64 bytes);
};

// QWebSocket-backed transport. TLS errors are never ignored: they are reported and the
// connection fails.
class WebSocketTransport final : public Transport
{
    Q_OBJECT
public:
    // `maxIncomingBytes`: frames above this close the socket (memory guard). Keep it above the
    // codec's frame limit so oversized frames reach the codec and are counted, not fatal.
    explicit WebSocketTransport(qint64 maxIncomingBytes = 256 * 1024 * 1024, QObject *parent = nullptr);
    ~WebSocketTransport() override;

    void open(const QUrl &url) override;
    void abort() override;
    void sendText(const QByteArray &utf8) override;
    bool isOpen() const override;

private:
    QWebSocket *m_socket = nullptr;
    bool m_reportedClose = true;
};

// Removes credentials (user info and query values such as tokens) from a URL for display,
// logs and traces; a launch command (stdio:) goes through the text rules (an argument can be a
// token).
QString redactedUrl(const QUrl &url);

} // namespace mapi
