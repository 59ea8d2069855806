// A TCP proxy between a MAP client and a server that can break the client's connection in each
// way a connection dies (tst_cli_drops: the CLI; tst_window_reconnect: the window).
#pragma once

#include <QTcpServer>
#include <QTcpSocket>
#include <QTimer>
#include <QUrl>

#include <memory>
#include <utility>
#include <vector>

#ifdef Q_OS_LINUX
#include <sys/socket.h>
#endif

namespace mapi::test {

enum class Drop { None, BadUtf8, CloseFrame, Reset, Silence };

// A TCP proxy between a client and the server that forwards a WebSocket connection's bytes and can
// break the newest connection. The server's frames are unmasked, so the proxy splits that
// direction into whole frames and injects its own only between two of them.
class DropProxy : public QObject
{
public:
    explicit DropProxy(const QUrl &upstream)
        : m_upstream(upstream)
    {
        m_server.listen(QHostAddress::LocalHost, 0);
        connect(&m_server, &QTcpServer::newConnection, this, [this] {
            while (QTcpSocket *down = m_server.nextPendingConnection())
                accept(down);
        });
    }
    // The links' sockets go first, without signalling: their lambdas point into m_links.
    ~DropProxy() override
    {
        for (const std::unique_ptr<Link> &link : m_links) {
            link->up->disconnect();
            link->down->disconnect();
            delete link->down; // and its child, the upstream socket
        }
    }
    QString url() const { return QStringLiteral("ws://127.0.0.1:%1/").arg(m_server.serverPort()); }
    int connections() const { return int(m_links.size()); }
    // Server frames forwarded to the newest connection so far.
    int framesForwarded() const { return m_links.empty() ? 0 : m_links.back()->frames; }

    void breakNewest(Drop how)
    {
        Link &link = *m_links.back();
        switch (how) {
        case Drop::None:
            break;
        case Drop::BadUtf8: // a text frame of 4 bytes that are no UTF-8
            link.down->write(QByteArray::fromHex("8104fffefdfc"));
            break;
        case Drop::CloseFrame: // "going away" (1001), as a server that shuts down says it
            link.down->write(QByteArray::fromHex("880203e9"));
            QTimer::singleShot(500, link.down, [&link] { link.down->disconnectFromHost(); link.up->abort(); });
            break;
        case Drop::Reset:
#ifdef Q_OS_LINUX
            {
                const linger resetOnClose{1, 0}; // close() then sends RST, not FIN
                ::setsockopt(int(link.down->socketDescriptor()), SOL_SOCKET, SO_LINGER, &resetOnClose, sizeof resetOnClose);
            }
#endif
            link.down->abort();
            link.up->abort();
            break;
        case Drop::Silence: // the socket stays open; nothing more comes from the server
            link.silent = true;
            break;
        }
    }

private:
    struct Link
    {
        QTcpSocket *down = nullptr;
        QTcpSocket *up = nullptr;
        QByteArray toUp;       // the client's bytes until the server's socket is connected
        QByteArray fromServer; // server bytes not yet forwarded (an incomplete frame)
        bool upgraded = false; // the HTTP upgrade answer went through: frames follow
        bool silent = false;
        int frames = 0;
    };

    void accept(QTcpSocket *down)
    {
        m_links.push_back(std::make_unique<Link>());
        Link *link = m_links.back().get();
        link->down = down;
        link->up = new QTcpSocket(down);
        connect(link->up, &QTcpSocket::connected, this, [link] { link->up->write(std::exchange(link->toUp, {})); });
        connect(down, &QTcpSocket::readyRead, this, [link] {
            const QByteArray bytes = link->down->readAll();
            if (link->up->state() == QAbstractSocket::ConnectedState)
                link->up->write(bytes);
            else
                link->toUp += bytes;
        });
        connect(link->up, &QTcpSocket::readyRead, this, [this, link] { fromServer(*link); });
        connect(down, &QTcpSocket::disconnected, link->up, [link] { link->up->disconnectFromHost(); });
        connect(link->up, &QTcpSocket::disconnected, down, [link] { link->down->disconnectFromHost(); });
        link->up->connectToHost(m_upstream.host(), quint16(m_upstream.port()));
    }

    void fromServer(Link &link)
    {
        link.fromServer += link.up->readAll();
        if (!link.upgraded) {
            const qsizetype end = link.fromServer.indexOf("\r\n\r\n");
            if (end < 0)
                return;
            link.down->write(link.fromServer.left(end + 4));
            link.fromServer.remove(0, end + 4);
            link.upgraded = true;
        }
        for (;;) { // whole frames only
            const QByteArray &b = link.fromServer;
            if (b.size() < 2)
                return;
            qint64 length = quint8(b[1]) & 0x7f;
            qsizetype header = 2;
            if (length == 126) {
                if (b.size() < 4)
                    return;
                length = (quint8(b[2]) << 8) | quint8(b[3]);
                header = 4;
            } else if (length == 127) {
                if (b.size() < 10)
                    return;
                length = 0;
                for (int i = 2; i < 10; ++i)
                    length = (length << 8) | quint8(b[i]);
                header = 10;
            }
            if (b.size() < header + length)
                return;
            if (!link.silent) {
                link.down->write(b.left(header + qsizetype(length)));
                ++link.frames;
            }
            link.fromServer.remove(0, header + qsizetype(length));
        }
    }

    QUrl m_upstream;
    QTcpServer m_server;
    std::vector<std::unique_ptr<Link>> m_links;
};

} // namespace mapi::test
