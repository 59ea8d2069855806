// The window's side of "Beyond one desk" items 1–2: a connection profile's OpenTelemetry export
// (its header's value never in the settings), the Connect dialog's check of the receiver's
// address, TelemetryController sending a live model's spans to a receiver and nothing of a past
// being shown (what happened meanwhile sent once back to live), and the window's Prometheus
// metrics with one `system` label per live system. Offscreen, in Qt's test folders; any Qt
// warning fails, except what the OS keychain's absence makes QtKeychain and Qt D-Bus say; any
// message holding the header's value fails whatever it says.
#include "GuiTestSupport.h"

#include "MainWindow.h"
#include "alerts/AlertMonitor.h"
#include "controllers/ConnectionController.h"
#include "controllers/MetricsController.h"
#include "controllers/TelemetryController.h"
#include "dialogs/ConnectDialog.h"
#include "dialogs/ConnectionProfiles.h"
#include "session/InspectorSession.h"
#include "systems/SystemView.h"
#include "telemetry/OtlpHttpSender.h"

#include <QAction>
#include <QApplication>
#include <QComboBox>
#include <QDialogButtonBox>
#include <QElapsedTimer>
#include <QFile>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QRegularExpression>
#include <QSet>
#include <QSettings>
#include <QStandardPaths>
#include <QTcpServer>
#include <QTcpSocket>
#include <QTimer>
#include <QWidget>
#include <QtTest>

#include <memory>
#include <vector>

using namespace mapi;
using namespace mapi::ui;

namespace {

const QString kSecret = QStringLiteral("otlp-k3y-s3cr3t-4711");

// failOnQtWarnings(), except what QtKeychain and Qt D-Bus say of a keychain that is not there
// (CI has none); a message that holds the header's value fails whatever it says.
void failOnWarningsButKeychain()
{
    qInstallMessageHandler([](QtMsgType type, const QMessageLogContext &, const QString &message) {
        if (message.contains(kSecret)) {
            std::fprintf(stderr, "A message held the OpenTelemetry header's value\n");
            std::abort();
        }
        if (type == QtDebugMsg || type == QtInfoMsg)
            return;
        static const char *const tolerated[] = {"XDG_RUNTIME_DIR", "propagateSizeHints", "This plugin does not support",
                                                "keychain",        "dbus",               "d-bus",
                                                "kwallet",         "secret service",     "org.freedesktop"};
        for (const char *t : tolerated)
            if (message.contains(QLatin1String(t), Qt::CaseInsensitive))
                return;
        std::fprintf(stderr, "Qt warning turned into a failure: %s\n", qPrintable(message));
        std::fflush(stderr);
        std::abort();
    });
}

// Ports nothing listens on: servers on :0, all held while picking (so that they differ), then closed.
std::vector<quint16> freePorts(int n)
{
    std::vector<std::unique_ptr<QTcpServer>> held;
    std::vector<quint16> ports;
    for (int i = 0; i < n; ++i) {
        held.push_back(std::make_unique<QTcpServer>());
        if (!held.back()->listen(QHostAddress::LocalHost, 0))
            return {};
        ports.push_back(held.back()->serverPort());
    }
    return ports;
}

ClientOptions nowhere(quint16 port)
{
    ClientOptions o;
    o.url = QUrl(QStringLiteral("ws://127.0.0.1:%1").arg(port)); // refused: the client retries, the source stays live
    return o;
}

// An OTLP/HTTP receiver on the loopback interface (tests/unit/tst_otlp_sender.cpp's Collector,
// answering 200 to everything): one request per connection, kept with its head.
class Receiver : public QObject
{
public:
    struct Request
    {
        QByteArray head;
        QByteArray body;
    };
    std::vector<Request> requests;
    int answerAfterMs = 0; // a slow receiver: each answer waits this long (the request is kept at once)

    Receiver()
    {
        QVERIFY(m_server.listen(QHostAddress::LocalHost, 0));
        connect(&m_server, &QTcpServer::newConnection, this, [this] {
            while (QTcpSocket *socket = m_server.nextPendingConnection()) {
                connect(socket, &QTcpSocket::readyRead, this, [this, socket] { read(socket); });
                connect(socket, &QTcpSocket::disconnected, socket, &QObject::deleteLater);
            }
        });
    }
    QString base() const { return QStringLiteral("http://127.0.0.1:%1").arg(m_server.serverPort()); }

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
        requests.push_back({head, buffer.mid(end + 4, length)});
        m_buffers.remove(socket);
        QTimer::singleShot(answerAfterMs, socket, [socket] {
            socket->write("HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}");
            socket->disconnectFromHost();
        });
    }

    QTcpServer m_server;
    QHash<QTcpSocket *, QByteArray> m_buffers;
};

// How often each map.message event's map.message.id came, over every request's body.
QHash<QString, int> messageIds(const std::vector<Receiver::Request> &requests)
{
    QHash<QString, int> ids;
    std::function<void(const Json &)> walk = [&](const Json &j) {
        if (j.is_array()) {
            for (const Json &e : j)
                walk(e);
            return;
        }
        if (!j.is_object())
            return;
        if (j.value("name", std::string()) == "map.message" && j.contains("attributes"))
            for (const Json &a : j.at("attributes"))
                if (a.is_object() && a.value("key", std::string()) == "map.message.id")
                    ++ids[QString::fromStdString(a.value("value", Json::object()).value("stringValue", std::string()))];
        for (const auto &[key, value] : j.items())
            walk(value);
    };
    for (const Receiver::Request &r : requests)
        walk(Json::parse(r.body.toStdString(), nullptr, false));
    return ids;
}

// One GET on 127.0.0.1:port, answered by a server in this thread: the event loop runs meanwhile.
QByteArray httpGet(quint16 port, const QByteArray &path)
{
    QTcpSocket socket;
    QByteArray answer;
    QObject::connect(&socket, &QTcpSocket::readyRead, &socket, [&] { answer += socket.readAll(); });
    socket.connectToHost(QHostAddress::LocalHost, port);
    if (!QTest::qWaitFor([&] { return socket.state() == QAbstractSocket::ConnectedState; }, 5000))
        return {};
    socket.write("GET " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
    if (!QTest::qWaitFor([&] { return socket.state() == QAbstractSocket::UnconnectedState; }, 5000)) // Connection: close
        return {};
    answer += socket.readAll();
    return answer;
}

} // namespace

class WindowTelemetryTest : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void initTestCase()
    {
        QStandardPaths::setTestModeEnabled(true);
        QApplication::setOrganizationName(QStringLiteral("MAP Inspector tests"));
        failOnWarningsButKeychain();
    }
    void init() { QSettings().clear(); } // this test's own settings file (test mode)

    // (a) A profile's export round-trips through the settings; its header's value does not go there.
    void profileKeepsTheHeaderValueOutOfTheSettings()
    {
        const QString name = QStringLiteral("telemetry staging");
        ConnectionProfile p;
        p.name = name;
        p.url = QStringLiteral("ws://127.0.0.1:4321");
        p.otlpEndpoint = QStringLiteral("http://127.0.0.1:4318");
        p.otlpHeaderName = QStringLiteral("x-api-key");
        ConnectionProfiles::upsert(p);
        QVector<ConnectionProfile> loaded = ConnectionProfiles::load();
        QCOMPARE(loaded.size(), 1);
        QCOMPARE(loaded.front().otlpEndpoint, p.otlpEndpoint);
        QCOMPARE(loaded.front().otlpHeaderName, p.otlpHeaderName);

        // Through the Connect dialog, the value typed: the profile is saved, the value is not.
        {
            ConnectDialog dialog;
            QCOMPARE(dialog.findChild<QComboBox *>(QStringLiteral("profile"))->currentIndex(), 0); // none used last: a new one
            dialog.findChild<QLineEdit *>(QStringLiteral("profileName"))->setText(name);
            dialog.setUrl(QStringLiteral("ws://127.0.0.1:4321"));
            dialog.findChild<QLineEdit *>(QStringLiteral("otlpEndpoint"))->setText(QStringLiteral("http://127.0.0.1:4318/otel"));
            dialog.findChild<QLineEdit *>(QStringLiteral("otlpHeaderName"))->setText(QStringLiteral("x-api-key"));
            dialog.findChild<QLineEdit *>(QStringLiteral("otlpHeaderValue"))->setText(kSecret);
            QCOMPARE(dialog.otlp().headerValue, kSecret);
            dialog.accept();
            QCOMPARE(dialog.result(), int(QDialog::Accepted));
        }
        QTest::qWait(200); // the keychain's jobs answer (or say there is no keychain)
        loaded = ConnectionProfiles::load();
        QCOMPARE(loaded.size(), 1);
        QCOMPARE(loaded.front().otlpEndpoint, QStringLiteral("http://127.0.0.1:4318/otel"));
        QCOMPARE(loaded.front().otlpHeaderName, QStringLiteral("x-api-key"));
        QSettings settings;
        settings.sync();
        for (const QString &key : settings.allKeys())
            QVERIFY2(!settings.value(key).toString().contains(kSecret), qPrintable(key));
        QFile file(settings.fileName()); // a file here (Windows keeps settings in the registry)
        if (file.open(QIODevice::ReadOnly)) {
            const QByteArray text = file.readAll();
            QVERIFY(text.contains("otlpEndpoint"));
            QVERIFY(!text.contains(kSecret.toUtf8()));
        }

        // Loaded again, the dialog shows the address and the header's name, never the value's text.
        {
            ConnectDialog dialog;
            QCOMPARE(dialog.findChild<QComboBox *>(QStringLiteral("profile"))->currentText(), name);
            QCOMPARE(dialog.findChild<QLineEdit *>(QStringLiteral("otlpEndpoint"))->text(), QStringLiteral("http://127.0.0.1:4318/otel"));
            QCOMPARE(dialog.findChild<QLineEdit *>(QStringLiteral("otlpHeaderName"))->text(), QStringLiteral("x-api-key"));
            QCOMPARE(dialog.findChild<QLineEdit *>(QStringLiteral("otlpHeaderValue"))->echoMode(), QLineEdit::Password);
        }
        ConnectionProfiles::remove(name); // its keychain entries too
        QTest::qWait(100);
    }

    // (b) The receiver's address is checked as typed: a key over plain http to another host is refused.
    void connectDialogChecksTheReceiver()
    {
        ConnectDialog dialog;
        dialog.setUrl(QStringLiteral("ws://127.0.0.1:4321"));
        auto *endpoint = dialog.findChild<QLineEdit *>(QStringLiteral("otlpEndpoint"));
        auto *message = dialog.findChild<QLabel *>(QStringLiteral("otlpMessage"));
        QPushButton *connectButton = dialog.findChild<QDialogButtonBox *>()->button(QDialogButtonBox::Ok);
        QVERIFY(endpoint && message && connectButton);
        QVERIFY(connectButton->isEnabled()); // no export: nothing to check

        dialog.findChild<QLineEdit *>(QStringLiteral("otlpHeaderName"))->setText(QStringLiteral("x-api-key"));
        dialog.findChild<QLineEdit *>(QStringLiteral("otlpHeaderValue"))->setText(kSecret);
        endpoint->setText(QStringLiteral("http://example.com"));
        QVERIFY(!connectButton->isEnabled());
        QVERIFY(!message->isHidden());
        QCOMPARE(message->text(), OtlpHttpSender::checkEndpoint(QUrl(QStringLiteral("http://example.com")), true));
        QVERIFY(!message->text().isEmpty());
        QVERIFY(!message->text().contains(kSecret));
        // MAPI_SCREENSHOT_DIR: the dialog as the operator sees it refusing the address (looked at by hand).
        if (const QString dir = qEnvironmentVariable("MAPI_SCREENSHOT_DIR"); !dir.isEmpty()) {
            dialog.show();
            QVERIFY(QTest::qWaitForWindowExposed(&dialog));
            QVERIFY(dialog.grab().save(dir + QStringLiteral("/connect-otlp.png")));
        }
        dialog.accept(); // Enter while it is wrong: refused as well
        QVERIFY(dialog.result() != int(QDialog::Accepted));

        endpoint->setText(QStringLiteral("http://127.0.0.1:4318"));
        QVERIFY(connectButton->isEnabled());
        QVERIFY(message->isHidden());
        QCOMPARE(dialog.otlp().endpoint, QStringLiteral("http://127.0.0.1:4318"));
        QCOMPARE(dialog.otlp().headerName, QStringLiteral("x-api-key"));

        // A value without a name, a name without a value: said, Connect disabled.
        dialog.findChild<QLineEdit *>(QStringLiteral("otlpHeaderName"))->clear();
        QVERIFY(!connectButton->isEnabled());
        dialog.findChild<QLineEdit *>(QStringLiteral("otlpHeaderName"))->setText(QStringLiteral("x-api-key"));
        dialog.findChild<QLineEdit *>(QStringLiteral("otlpHeaderValue"))->clear();
        QVERIFY(!connectButton->isEnabled());
        QVERIFY(message->text().contains(QLatin1String("x-api-key")));
    }

    // (c) Spans reach the receiver; while the store shows the past nothing is fed; back to live,
    // what happened meanwhile goes, and nothing goes twice.
    void controllerSendsTheLiveModelAndNotThePast()
    {
        Receiver receiver;
        QWidget window;
        InspectorSession session;
        AlertMonitor monitor;
        monitor.setStore(session.store());
        TelemetryController telemetry(&session, &monitor, &window);
        telemetry.setIntervalMs(100);
        telemetry.setNextConnection({receiver.base(), QStringLiteral("x-api-key"), kSecret});
        session.connectTo(nowhere(freePorts(1).at(0)), false);
        QVERIFY(telemetry.isExporting());
        QCOMPARE(telemetry.stateNote(), QStringLiteral("OTLP"));

        mapi::test::fillFromCapture(*session.store());
        // Every message row of the store, once each (a message the capture repeats is a row each).
        QHash<QString, int> expected;
        const MessageLog &log = session.store()->messages();
        for (size_t row = log.firstRow(); row < log.size(); ++row)
            ++expected[log.id(row)];
        QVERIFY(!expected.isEmpty());
        telemetry.flush();
        QTRY_VERIFY_WITH_TIMEOUT(telemetry.stats().spansSent > 0 && telemetry.stats().queuedRequests == 0, 10000);
        QCOMPARE(messageIds(receiver.requests), expected);
        for (const Receiver::Request &r : receiver.requests) {
            QVERIFY2(r.head.startsWith("POST /v1/traces "), r.head.constData());
            bool keyed = false;
            for (const QByteArray &line : r.head.split('\n'))
                keyed = keyed || (line.toLower().startsWith("x-api-key:") && line.mid(10).trimmed() == kSecret.toUtf8());
            QVERIFY(keyed);
        }
        const QString said = telemetry.statusText();
        QVERIFY2(said.contains(receiver.base()), qPrintable(said));
        QVERIFY(!said.contains(kSecret));

        // The past, as InspectorSession's time travel does it: the live model swapped out into
        // the background (where it goes on: a new agent and its message), the past loaded into
        // the store (the same capture: sent again, every id would come twice).
        SystemStore background;
        background.swapContents(*session.store());
        telemetry.setViewingPast(true);
        QCOMPARE(telemetry.stateNote(), QStringLiteral("OTLP paused"));
        const size_t requestsBefore = receiver.requests.size();
        mapi::test::fillFromCapture(*session.store());
        constexpr qint64 kLater = 1795252300000;
        mapi::test::FrameFeed live(&background, kLater);
        live.agent("late-agent", "late", kLater);
        live.send("late-agent", "late-agent", "note", {{"text", "while the past was shown"}}, kLater + 10);
        background.flushChanges();
        telemetry.flush();
        QTest::qWait(500); // five intervals
        QCOMPARE(receiver.requests.size(), requestsBefore);

        // Back to live: the live model swapped back, the batcher not reset.
        session.store()->swapContents(background);
        telemetry.setViewingPast(false);
        telemetry.flush();
        QTRY_VERIFY_WITH_TIMEOUT(messageIds(receiver.requests).contains(QStringLiteral("m1")), 10000);
        QTRY_COMPARE_WITH_TIMEOUT(telemetry.stats().queuedRequests, 0, 10000);
        expected.insert(QStringLiteral("m1"), 1);
        QCOMPARE(messageIds(receiver.requests), expected); // the past's rows not again, the meanwhile's once

        // The connection ends: the last batch and the drain; the counters stay for the overview.
        session.disconnectFromServer();
        QVERIFY(telemetry.isFinished());
        QVERIFY(telemetry.statusText().contains(QLatin1String("sent to")));
        QTRY_COMPARE_WITH_TIMEOUT(telemetry.stats().queuedRequests, 0, 5000); // drained
        QCOMPARE(telemetry.stats().spansDropped, qint64(0));
        QVERIFY(telemetry.stateNote().isEmpty());
    }

    // (e) Quitting: the window waits for the export's last spans (a receiver answering after
    // 800 ms), then closes by itself; everything the store held arrived, once. A second close
    // while it waits closes at once.
    void windowWaitsForTheLastSpansBeforeClosing()
    {
        Receiver receiver;
        receiver.answerAfterMs = 800;
        ui::MainWindow window;
        window.show();
        SystemView *system = window.systemForNewSource();
        QVERIFY(system->connection()->connectTo(nowhere(freePorts(1).at(0)), false, {receiver.base(), {}, {}}));
        QVERIFY(system->telemetry()->isExporting());
        mapi::test::fillFromCapture(*system->session()->store());
        QHash<QString, int> expected;
        const MessageLog &log = system->session()->store()->messages();
        for (size_t row = log.firstRow(); row < log.size(); ++row)
            ++expected[log.id(row)];
        QVERIFY(!expected.isEmpty());

        QElapsedTimer clock;
        clock.start();
        QVERIFY(!window.close()); // the close waits: the last batch is on its way
        QVERIFY(window.isVisible());
        QVERIFY(system->telemetry()->isDraining());
        // MAPI_SCREENSHOT_DIR: the window while it waits, its status bar saying why (looked at by hand).
        if (const QString dir = qEnvironmentVariable("MAPI_SCREENSHOT_DIR"); !dir.isEmpty())
            QVERIFY(window.grab().save(dir + QStringLiteral("/quit-waits-for-otlp.png")));
        QTRY_VERIFY_WITH_TIMEOUT(!window.isVisible(), 5000);
        QVERIFY2(clock.elapsed() >= 700, qPrintable(QString::number(clock.elapsed())));
        QCOMPARE(messageIds(receiver.requests), expected);

        // The operator insists: a receiver that never answers, a second close goes at once.
        Receiver deaf;
        deaf.answerAfterMs = 60000;
        ui::MainWindow second;
        second.show();
        SystemView *other = second.systemForNewSource();
        QVERIFY(other->connection()->connectTo(nowhere(freePorts(1).at(0)), false, {deaf.base(), {}, {}}));
        mapi::test::fillFromCapture(*other->session()->store());
        QVERIFY(!second.close());
        QVERIFY(second.isVisible());
        QVERIFY(second.close());
        QVERIFY(!second.isVisible());
    }

    // (d) The window's metrics: off by default; on, /metrics on 127.0.0.1 with one `system`
    // label per live system (a trace beside them is not one); off again, and saved.
    void windowServesMetricsOfEveryLiveSystem()
    {
        const std::vector<quint16> ports = freePorts(3);
        QCOMPARE(ports.size(), size_t(3));
        ui::MainWindow window;
        QVERIFY(!window.metrics()->isServing());
        window.systemForNewSource()->connection()->connectTo(nowhere(ports[0]), false);
        window.systemForNewSource()->connection()->connectTo(nowhere(ports[1]), false);
        QVERIFY(window.openTraceBeside(QStringLiteral(MAPI_SAMPLE_TRACE)));
        QCOMPARE(window.systems().size(), 3);
        QTRY_VERIFY_WITH_TIMEOUT(!window.systems().at(2)->session()->isLoadingTrace(), 20000);
        QSet<QString> live;
        for (SystemView *system : window.systems())
            if (system->session()->source() == InspectorSession::Source::Live)
                live.insert(system->session()->sourceLabel());
        QCOMPARE(live.size(), 2);

        window.metrics()->setPort(ports[2]);
        QAction *serve = window.metrics()->serveAction();
        QVERIFY(serve->text().contains(QString::number(ports[2])));
        serve->trigger();
        QVERIFY(window.metrics()->isServing());
        QVERIFY(serve->isChecked());
        QCOMPARE(window.metrics()->listeningPort(), ports[2]);
        QVERIFY(QSettings().value(QStringLiteral("metrics/serve")).toBool());

        const QByteArray answer = httpGet(ports[2], "/metrics");
        QVERIFY2(answer.startsWith("HTTP/1.1 200"), answer.left(200).constData());
        QSet<QString> labels;
        const QRegularExpression system(QStringLiteral("system=\"([^\"]*)\""));
        for (auto it = system.globalMatch(QString::fromUtf8(answer)); it.hasNext();)
            labels.insert(it.next().captured(1));
        QCOMPARE(labels, live);
        QVERIFY(httpGet(ports[2], "/healthz").startsWith("HTTP/1.1 503")); // neither system is live

        serve->trigger();
        QVERIFY(!window.metrics()->isServing());
        QVERIFY(!QSettings().value(QStringLiteral("metrics/serve")).toBool());
        QCOMPARE(QSettings().value(QStringLiteral("metrics/port")).toUInt(), uint(ports[2]));
    }
};

QTEST_MAIN(WindowTelemetryTest)
#include "tst_window_telemetry.moc"
