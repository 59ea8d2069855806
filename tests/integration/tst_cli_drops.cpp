// An observation survives drops: `map-inspector-cli state --url URL --duration S` against the
// official MAP server behind a proxy that breaks the connection part-way, in each of the ways a
// connection dies (a text frame that is not UTF-8, a close frame, a reset, silence). The CLI
// reconnects within its duration, reads the model again, prints the whole model with the drop
// listed, and exits with 8 (an incomplete observation); with no drop it exits with 0.
#include "DemoSystem.h"

#include <QElapsedTimer>
#include <QProcess>
#include <QTcpServer>
#include <QTcpSocket>
#include <QUrl>
#include <QtTest>

#include <memory>
#include <vector>

#ifdef Q_OS_LINUX
#include <sys/socket.h>
#endif

using namespace mapi;
using namespace mapi::test;

namespace {

enum class Drop { None, BadUtf8, CloseFrame, Reset, Silence };

// A TCP proxy between the CLI and the server that forwards a WebSocket connection's bytes and can
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

} // namespace

class CliDropsTest : public QObject
{
    Q_OBJECT
private:
    DemoProcess m_demo;

private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY2(m_demo.start(QStringLiteral("stock"), 0, {QStringLiteral("--agents"), QStringLiteral("10"), QStringLiteral("--rate"), QStringLiteral("20")}),
                 qPrintable(m_demo.error()));
        QTRY_VERIFY_WITH_TIMEOUT(demoHttp(m_demo.url(), QStringLiteral("/view")).value("agents", Json::array()).size() >= 8, 30000);
    }

    void observationSurvivesTheDrop_data()
    {
        QTest::addColumn<int>("drop");
        QTest::addColumn<int>("durationS");
        QTest::addColumn<QString>("reason"); // a word the drop's reason must hold ("": any)
        QTest::newRow("no drop") << int(Drop::None) << 5 << QString();
        QTest::newRow("a text frame that is not UTF-8") << int(Drop::BadUtf8) << 8 << QStringLiteral("UTF-8");
        QTest::newRow("a close frame") << int(Drop::CloseFrame) << 8 << QString();
        QTest::newRow("a reset") << int(Drop::Reset) << 8 << QString();
        // Detected by the client's probe: 4 s of silence, then 6 s without an answer.
        QTest::newRow("silence") << int(Drop::Silence) << 24 << QString();
    }

    void observationSurvivesTheDrop()
    {
        QFETCH(int, drop);
        QFETCH(int, durationS);
        QFETCH(QString, reason);
        QVERIFY(!demoHttp(m_demo.url(), QStringLiteral("/control/activity"), true).is_null());
        DropProxy proxy{QUrl(m_demo.url())};
        QProcess cli;
        cli.start(QStringLiteral(MAPI_CLI_PATH),
                  {QStringLiteral("state"), QStringLiteral("--url"), proxy.url(), QStringLiteral("--duration"), QString::number(durationS)});
        QVERIFY(cli.waitForStarted());
        // Live, with events flowing, before the drop.
        QTRY_VERIFY_WITH_TIMEOUT(proxy.framesForwarded() >= 40, 15000);
        if (Drop(drop) != Drop::None) {
            proxy.breakNewest(Drop(drop));
            QTRY_VERIFY_WITH_TIMEOUT(proxy.connections() == 2, 20000); // reconnected
            QTRY_VERIFY_WITH_TIMEOUT(proxy.framesForwarded() >= 5, 10000);
        }
        // The server stops changing, so that the model printed at the end can equal its view.
        QVERIFY(!demoHttp(m_demo.url(), QStringLiteral("/control/quiesce"), true).is_null());
        QTRY_VERIFY_WITH_TIMEOUT(cli.state() == QProcess::NotRunning, (durationS + 30) * 1000);
        const Json view = demoHttp(m_demo.url(), QStringLiteral("/view"));
        const QByteArray err = cli.readAllStandardError();
        QCOMPARE(cli.exitStatus(), QProcess::NormalExit);
        const QByteArray out = cli.readAllStandardOutput();
        const Json state = Json::parse(out.constBegin(), out.constEnd(), nullptr, false);
        QVERIFY2(state.is_object(), err.constData());

        const Json &observation = state["observation"];
        QVERIFY2(observation.is_object(), out.left(400).constData());
        QCOMPARE(observation["durationS"].get<double>(), double(durationS));
        const QString diff = diffStateWithView(state, view);
        QVERIFY2(diff.isEmpty(), qPrintable(diff)); // the whole model, as the server knows it
        if (Drop(drop) == Drop::None) {
            QVERIFY2(cli.exitCode() == 0, err.constData());
            QCOMPARE(observation["complete"].get<bool>(), true);
            QCOMPARE(observation["drops"].size(), size_t(0));
            return;
        }
        QVERIFY2(cli.exitCode() == 8, err.constData()); // the observation says it is incomplete
        QCOMPARE(observation["complete"].get<bool>(), false);
        QCOMPARE(observation["drops"].size(), size_t(1));
        const Json &dropped = observation["drops"][0];
        QVERIFY(dropped["backAt"].is_string()); // reconnected within the duration
        const QString why = QString::fromStdString(dropped["reason"].get<std::string>());
        QVERIFY2(!why.isEmpty() && why.contains(reason), qPrintable(why));
        bool reconnectGap = false; // the model lists the gap the drop made
        for (const Json &gap : state["gaps"])
            reconnectGap |= gap.value("kind", "") == "reconnect";
        QVERIFY2(reconnectGap, state["gaps"].dump().c_str());
        QVERIFY2(err.contains("connection lost") && err.contains("connection back") && err.contains("incomplete"), err.constData());
    }

    void cleanup()
    {
        demoHttp(m_demo.url(), QStringLiteral("/control/activity"), true);
    }
};

QTEST_GUILESS_MAIN(CliDropsTest)
#include "tst_cli_drops.moc"
