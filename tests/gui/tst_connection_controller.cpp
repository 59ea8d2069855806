// ConnectionController on its own, over a session without a window: its actions follow the
// connection; a token over ws:// goes only when the operator says so (Cancel, the default,
// connects nothing); --observer holds whatever the profile or the operator asks; a new connection
// restarts supervision. The servers are local sockets that never answer. Offscreen; any Qt
// warning fails.
#include "GuiTestSupport.h"

#include "alerts/AlertMonitor.h"
#include "controllers/ConnectionController.h"
#include "controllers/ControlController.h"
#include "session/InspectorSession.h"
#include "session/SelectionHub.h"

#include <QAbstractButton>
#include <QAction>
#include <QApplication>
#include <QMessageBox>
#include <QPushButton>
#include <QSignalSpy>
#include <QTcpServer>
#include <QTimer>
#include <QWidget>
#include <QtTest>

using namespace mapi;
using namespace mapi::ui;

namespace {

struct Fixture
{
    InspectorSession session;
    SelectionHub hub;
    AlertMonitor monitor;
    QWidget window;
    QAction inject, stop, suspend, resume;
    QAction connect{QStringLiteral("Connect")}, disconnect{QStringLiteral("Disconnect")}, renew{QStringLiteral("Renew")},
        observer{QStringLiteral("Observer")};
    ControlController control{&session, &hub, &monitor, {&inject, &stop, &suspend, &resume}, &window};
    ConnectionController connection{&session, &monitor, {&connect, &disconnect, &renew, &observer}, &window};

    Fixture()
    {
        // As the window does: supervision is per connection.
        QObject::connect(&connection, &ConnectionController::connectionStarting, &control, &ControlController::resetForConnection);
        observer.setCheckable(true);
        monitor.setStore(session.store());
    }
};

// Accepts TCP connections and never answers: a connection that stays under way.
struct SilentServer
{
    QTcpServer server;
    SilentServer() { server.listen(QHostAddress::LocalHost); }
    ClientOptions options() const
    {
        ClientOptions o;
        o.url = QUrl(QStringLiteral("ws://127.0.0.1:%1/").arg(server.serverPort()));
        return o;
    }
};

// Answers the next modal question: the button with `objectName`, or Cancel when empty. Returns
// what it asked (title, text) through `asked`.
void answerNextQuestion(const QString &objectName, QString *asked, bool *cancelWasDefault)
{
    auto *poll = new QTimer;
    poll->setInterval(20);
    QObject::connect(poll, &QTimer::timeout, poll, [=] {
        auto *box = qobject_cast<QMessageBox *>(QApplication::activeModalWidget());
        if (!box)
            return;
        poll->stop();
        poll->deleteLater();
        *asked = box->windowTitle() + u'\n' + box->text();
        *cancelWasDefault = box->defaultButton() == box->button(QMessageBox::Cancel);
        QAbstractButton *choice = objectName.isEmpty() ? box->button(QMessageBox::Cancel)
                                                       : box->findChild<QPushButton *>(objectName);
        choice->click();
    });
    poll->start();
}

} // namespace

class ConnectionControllerTest : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void initTestCase() { mapi::test::failOnQtWarnings(); }

    void actionsFollowTheConnection()
    {
        Fixture f;
        QVERIFY(!f.disconnect.isEnabled());
        QVERIFY(!f.renew.isEnabled());
        SilentServer server;
        QVERIFY(f.connection.connectTo(server.options(), false));
        QCOMPARE(f.session.source(), InspectorSession::Source::Live);
        QVERIFY(f.disconnect.isEnabled());
        QVERIFY(!f.renew.isEnabled()); // no credential to renew
        f.disconnect.trigger();
        QTRY_COMPARE(f.session.clientState(), ClientState::Closed);
    }

    void tokenOverPlainWsGoesOnlyWhenTheOperatorSaysSo()
    {
        Fixture f;
        f.window.show();
        SilentServer server;
        ClientOptions options = server.options();
        options.url.setHost(QStringLiteral("192.0.2.7")); // TEST-NET-1, not loopback: the token would travel
        options.auth.method = AuthConfig::Method::Bearer;
        options.auth.credential = QStringLiteral("not-a-real-token");
        QString asked;
        bool cancelWasDefault = false;
        answerNextQuestion(QString(), &asked, &cancelWasDefault);
        QVERIFY(!f.connection.connectTo(options, false));
        QVERIFY2(asked.startsWith(QStringLiteral("Send the token unencrypted?")), qPrintable(asked));
        QVERIFY(cancelWasDefault);
        QCOMPARE(f.session.source(), InspectorSession::Source::None); // nothing started
        answerNextQuestion(QStringLiteral("sendUnencrypted"), &asked, &cancelWasDefault);
        QVERIFY(f.connection.connectTo(options, false));
        QCOMPARE(f.session.source(), InspectorSession::Source::Live);
        QVERIFY(f.renew.isEnabled()); // a credential: it can be renewed
        f.session.disconnectFromServer();
    }

    void forcedObserverHoldsWhateverIsAsked()
    {
        Fixture f;
        f.connection.setForcedObserver(true);
        QVERIFY(f.observer.isChecked());
        QVERIFY(f.session.observerOnly());
        f.observer.setChecked(false); // the operator tries to switch it off
        QVERIFY(f.observer.isChecked());
        QVERIFY(f.session.observerOnly());
        SilentServer server;
        QVERIFY(f.connection.connectTo(server.options(), /*observerOnly=*/false));
        QVERIFY(f.session.observerOnly());
        QVERIFY(f.observer.isChecked());
        f.session.disconnectFromServer();
    }

    void observerActionFollowsTheProfile()
    {
        Fixture f;
        SilentServer server;
        QVERIFY(f.connection.connectTo(server.options(), /*observerOnly=*/true));
        QVERIFY(f.observer.isChecked());
        f.observer.setChecked(false); // not forced: the operator may take control
        QVERIFY(!f.session.observerOnly());
        f.session.disconnectFromServer();
    }

    void aNewConnectionRestartsSupervision()
    {
        Fixture f;
        f.window.show();
        QSignalSpy starting(&f.connection, &ConnectionController::connectionStarting);
        LadderPlan plan;
        plan.enabled = true;
        f.control.ladder().setPlan(AlertKind::Stalled, plan);
        SilentServer server;
        QVERIFY(f.connection.connectTo(server.options(), false));
        QCOMPARE(starting.size(), 1);
        QVERIFY(!f.control.ladder().plan(AlertKind::Stalled).enabled);
        f.session.disconnectFromServer();
        // Cancelled at the question about the token: nothing starts over.
        ClientOptions options = server.options();
        options.url.setHost(QStringLiteral("192.0.2.7"));
        options.auth.method = AuthConfig::Method::Bearer;
        options.auth.credential = QStringLiteral("not-a-real-token");
        f.control.ladder().setPlan(AlertKind::Stalled, plan);
        QString asked;
        bool cancelWasDefault = false;
        answerNextQuestion(QString(), &asked, &cancelWasDefault);
        QVERIFY(!f.connection.connectTo(options, false));
        QCOMPARE(starting.size(), 1);
        QVERIFY(f.control.ladder().plan(AlertKind::Stalled).enabled);
    }
};

QTEST_MAIN(ConnectionControllerTest)
#include "tst_connection_controller.moc"
