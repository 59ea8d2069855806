// ControlController on its own, over a session without a window: the control actions wait for a
// connection and a selection and say why; the confirmation's caution after a server went deaf
// following one of our actions; automatic supervision acts only on a live system and starts
// over with each connection. Offscreen; any Qt warning fails.
#include "GuiTestSupport.h"

#include "alerts/AlertMonitor.h"
#include "controllers/ControlController.h"
#include "model/SystemStore.h"
#include "pipeline/ProtocolPipeline.h"
#include "session/InspectorSession.h"
#include "session/SelectionHub.h"

#include <QAction>
#include <QSignalSpy>
#include <QWidget>
#include <QtTest>

using namespace mapi;
using namespace mapi::ui;

namespace {

constexpr qint64 kStart = 1790000000000;

struct Fixture
{
    InspectorSession session;
    SelectionHub hub;
    AlertMonitor monitor;
    QWidget window;
    QAction inject{QStringLiteral("Inject")}, stop{QStringLiteral("Stop")}, suspend{QStringLiteral("Suspend")},
        resume{QStringLiteral("Resume")};
    ControlController control{&session, &hub, &monitor, {&inject, &stop, &suspend, &resume}, &window};

    Fixture() { monitor.setStore(session.store()); }
    QList<QAction *> actions() { return {&inject, &stop, &suspend, &resume}; }
};

} // namespace

class ControlControllerTest : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void initTestCase() { mapi::test::failOnQtWarnings(); }

    void actionsWaitForAConnectionAndSayWhy()
    {
        Fixture f;
        const QString blocked = f.session.actionBlockedReason();
        QVERIFY(!blocked.isEmpty()); // nothing is connected
        for (QAction *a : f.actions()) {
            QVERIFY(!a->isEnabled());
            QCOMPARE(a->toolTip(), blocked);
        }
        f.hub.selectAgents({QStringLiteral("a-1")}); // a selection alone is not enough
        for (QAction *a : f.actions())
            QVERIFY(!a->isEnabled());
        // Triggered anyway (a shortcut racing the state): nothing opens, nothing is sent.
        QSignalSpy started(&f.control, &ControlController::actionsStarted);
        f.stop.trigger();
        QCOMPARE(started.size(), 0);
        QVERIFY(f.session.store()->actions().empty());
    }

    void cautionAfterTheServerWentDeafFollowingOurAction()
    {
        Fixture f;
        QVERIFY(f.control.controlNote(QStringLiteral("map/inject")).isEmpty());
        SystemStore *store = f.session.store();
        ProtocolPipeline pipeline;
        store->apply(pipeline.connectionOpened(QStringLiteral("ws://127.0.0.1:1"), kStart));
        ConnectionInfo connected;
        connected.sessionId = QStringLiteral("s-1");
        connected.handshake = true;
        connected.timeMs = kStart;
        store->apply(connected);
        // What the client says when it gives up on a silent server right after our own send.
        const QString reason = ProtocolPipeline::kServerSilent
            + QStringLiteral("the server is not answering since 2026-11-28T12:00:05.000Z: no answer to map/agents/list within "
                             "6.0 s, 0.2 s after our map/send");
        store->apply(pipeline.connectionClosed(reason, kStart + 11000));
        store->flushChanges();
        const QString note = f.control.controlNote(QStringLiteral("map/inject"));
        QVERIFY2(note.startsWith(QLatin1String("Careful: this server stopped answering")) && note.contains(QLatin1String("after our map/send")),
                 qPrintable(note));
    }

    void supervisionActsOnlyLiveAndStartsOverWithEachConnection()
    {
        Fixture f;
        LadderPlan plan;
        plan.enabled = true;
        plan.nudgeAfterMs = 0;
        f.control.ladder().setPlan(AlertKind::Failed, plan);
        QVERIFY(f.control.ladder().anyEnabled());
        Alert failed;
        failed.kind = AlertKind::Failed;
        failed.agents = {QStringLiteral("a-1")};
        failed.cachedKey = failed.key();
        Q_EMIT f.monitor.alertsChanged({AlertChange{failed, true, kStart}});
        f.control.runLadder();
        QVERIFY(f.session.store()->actions().empty()); // no live system: nothing is sent
        f.control.resetForConnection(false);
        QVERIFY(!f.control.ladder().anyEnabled());     // a new connection enables nothing by itself
    }
};

QTEST_MAIN(ControlControllerTest)
#include "tst_control_controller.moc"
