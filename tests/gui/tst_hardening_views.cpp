// How the views show what issue 16's hardening counts: an action whose answer was lost
// ("unknown"), a gap the server's replay filled only in part, and a message whose recipients went
// past the bound the store names; and the window's status bar when the server says the credential
// expires or stops answering. Each view is grabbed to a PNG in the build folder (actions-unknown.png,
// gaps-partly-recovered.png, inspector-recipients-not-kept.png, credential-expiring.png, server-not-answering.png), looked at.
#include "GuiTestSupport.h"
#include "PictureProbe.h"

#include "MainWindow.h"
#include "controllers/ControlController.h"
#include "dialogs/ActionDialogs.h"
#include "dialogs/ConnectDialog.h"
#include "dialogs/ConnectionProfiles.h"
#include "model/RowLogs.h"
#include "models/ActionModel.h"
#include "pipeline/ProtocolPipeline.h"
#include "panels/ActionsPanel.h"
#include "panels/InspectorPanel.h"
#include "panels/ProblemsPanel.h"
#include "session/InspectorSession.h"
#include "session/SelectionHub.h"

#include <QApplication>
#include <QLineEdit>
#include <QDateTime>
#include <QComboBox>
#include <QDockWidget>
#include <QLabel>
#include <QPlainTextEdit>
#include <QStandardPaths>
#include <QStatusBar>
#include <QTableView>

using namespace mapi;
using namespace mapi::ui;

namespace {

constexpr qint64 kStart = 1790000000000;

} // namespace

class TestHardeningViews : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase()
    {
        QStandardPaths::setTestModeEnabled(true); // the window's settings in a test folder
        QApplication::setOrganizationName(QStringLiteral("MAP Inspector tests"));
        mapi::test::failOnQtWarnings();
    }

    void windowSaysWhenTheCredentialExpires()
    {
        ui::MainWindow window;
        window.resize(1200, 700);
        window.show();
        // What the session says on map/auth/expiring (tst_auth_live drives it from a real server).
        Q_EMIT window.session()->credentialExpiring(kStart + 240000, 240000);
        const QString message = window.statusBar()->currentMessage();
        QCOMPARE(message, QStringLiteral("The server says the credential expires in 4 minute(s): File → Renew credential…"));
        QTest::qWait(50); // the status bar lays out and paints the message
        // Drawn: the message, at the status bar's left, up to its first permanent widget.
        const QImage shot = mapi::test::picture(&window);
        QVERIFY(shot.save(QStringLiteral("credential-expiring.png")));
        QStatusBar *bar = window.statusBar();
        int right = bar->width();
        for (const QWidget *w : bar->findChildren<QWidget *>(QString(), Qt::FindDirectChildrenOnly))
            if (w->isVisible() && w->x() > 0)
                right = std::min(right, w->x());
        QString why;
        QVERIFY2(mapi::test::inkSpansText(shot, mapi::test::rectIn(&window, bar, QRect(0, 0, right, bar->height())).adjusted(0, 2, 0, -2),
                                          message, bar->font(), &why),
                 qPrintable(why));
    }

    // Issue 40: a server that stopped answering is said in the status bar, with the time it last
    // answered and, in the tooltip, the whole sentence; a later handshake (it answers again)
    // takes it away.
    void windowSaysTheServerStoppedAnswering()
    {
        ui::MainWindow window;
        window.resize(1200, 700);
        window.show();
        SystemStore *store = window.session()->store();
        ProtocolPipeline pipeline;
        store->apply(pipeline.connectionOpened(QStringLiteral("ws://127.0.0.1:1"), kStart));
        ConnectionInfo connected;
        connected.sessionId = QStringLiteral("s-1");
        connected.handshake = true;
        connected.timeMs = kStart;
        store->apply(connected);
        const QDateTime lastAnswer = QDateTime::fromMSecsSinceEpoch(kStart + 5000).toUTC(); // as MapClient writes it
        const QString reason = ProtocolPipeline::kServerSilent
            + QStringLiteral("the server is not answering since %1: no answer to map/agents/list within 6.0 s, 0.2 s after our "
                             "map/send (a known failure of servers built on the SDK's stock WebSocket adapter when one "
                             "request emits two events)")
                  .arg(lastAnswer.toString(Qt::ISODateWithMs));
        store->apply(pipeline.connectionClosed(reason, kStart + 11000));
        ConnectionInfo reconnecting; // the client's state changes carry its session id too: not a handshake
        reconnecting.state = QStringLiteral("backoff");
        reconnecting.sessionId = QStringLiteral("s-1");
        reconnecting.timeMs = kStart + 12000;
        store->apply(reconnecting);
        store->flushChanges();
        auto *label = window.findChild<QLabel *>(QStringLiteral("silenceLabel"));
        QVERIFY(label);
        QVERIFY(label->isVisible());
        QCOMPARE(label->text(), QStringLiteral("⚠ not answering since %1").arg(lastAnswer.toLocalTime().toString(QStringLiteral("HH:mm:ss"))));
        QVERIFY(label->toolTip().contains(QStringLiteral("no answer to map/agents/list")));
        // Before the operator repeats an action: the caution, with the action it followed.
        QVERIFY2(window.control()->controlNote(QStringLiteral("map/inject")).contains(QStringLiteral("Careful: this server stopped answering"))
                     && window.control()->controlNote(QStringLiteral("map/inject")).contains(QStringLiteral("after our map/send")),
                 qPrintable(window.control()->controlNote(QStringLiteral("map/inject"))));
        QTest::qWait(50);
        // Drawn: the label's text, in its red.
        const QImage shot = mapi::test::picture(&window);
        QVERIFY(shot.save(QStringLiteral("server-not-answering.png")));
        QString why;
        QVERIFY2(mapi::test::labelDrawn(shot, &window, label, &why, 8), qPrintable(why));
        QVERIFY(mapi::test::shareOf(shot, mapi::test::rectIn(&window, label), QColor(0xd0, 0x31, 0x2d), 40) > 0.02);
        // The next handshake: answering again.
        connected.timeMs = kStart + 20000;
        store->apply(connected);
        store->flushChanges();
        QVERIFY(!label->isVisible());
    }

    // Issue 41 item 4: Alt+N brings its panel forward (shown, raised, focused); pressed again it
    // stays, never hides.
    void altNumberBringsItsPanelForward()
    {
        ui::MainWindow window;
        window.resize(1200, 700);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        QDockWidget *tasks = window.dock(QStringLiteral("tasksDock"));
        QDockWidget *timeline = window.dock(QStringLiteral("timelineDock"));
        QVERIFY(tasks && timeline);
        tasks->hide();
        timeline->raise();
        QAction *show = window.findChild<QAction *>(QStringLiteral("tasksDockShow"));
        QVERIFY(show);
        QCOMPARE(show->shortcut(), QKeySequence(Qt::ALT | Qt::Key_5));
        for (int press = 0; press < 2; ++press) {
            show->trigger();
            QVERIFY(tasks->isVisible());
            QVERIFY(!tasks->visibleRegion().isEmpty()); // in front of the tab it shares with the timeline
            QTRY_COMPARE(QApplication::focusWidget(), static_cast<QWidget *>(tasks->findChild<QLineEdit *>(QStringLiteral("taskFilter")))); // typing filters
        }
        QVERIFY(window.findChild<QAction *>(QStringLiteral("tasksDockToggle"))->shortcut().isEmpty());
    }

    void actionsPanelCountsAnswersLost()
    {
        InspectorSession session;
        SelectionHub hub;
        ActionsPanel panel(&session, &hub);
        panel.resize(900, 200);
        SystemStore &store = *session.store();
        ActionUpdate created;
        created.step = ActionUpdate::Step::Created;
        created.action.id = QStringLiteral("act-1");
        created.action.kind = ActionKind::Stop;
        created.action.agentId = QStringLiteral("worker-7");
        created.action.method = QStringLiteral("map/agents/stop");
        created.timeMs = kStart;
        store.apply(ModelInput(created));
        ActionUpdate lost;
        lost.step = ActionUpdate::Step::AnswerLost;
        lost.action.id = QStringLiteral("act-1");
        lost.action.detail = QStringLiteral("connection lost before the answer");
        lost.timeMs = kStart + 500;
        store.apply(ModelInput(lost));
        store.flushChanges();
        auto *summary = panel.findChild<QLabel *>(QStringLiteral("actionsSummary"));
        QVERIFY2(summary->text().contains(QStringLiteral("1 unknown (answer lost: may have taken effect)")), qPrintable(summary->text()));
        auto *table = panel.findChild<QTableView *>();
        QCOMPARE(table->model()->rowCount(), 1);
        // Drawn: the summary, the action's row (its cells that fit, the target's name among them).
        const QImage shot = mapi::test::picture(&panel);
        QVERIFY(shot.save(QStringLiteral("actions-unknown.png")));
        QString why;
        QVERIFY2(mapi::test::labelDrawn(shot, &panel, summary, &why), qPrintable(why));
        QVERIFY2(mapi::test::rowDrawn(shot, &panel, table, 0, &why) >= 3, qPrintable(why));
        QVERIFY2(mapi::test::cellDrawn(shot, &panel, table, table->model()->index(0, ActionModel::TargetColumn), &why), qPrintable(why));
    }

    void gapsTableSaysPartlyRecovered()
    {
        InspectorSession session;
        SelectionHub hub;
        ProblemsPanel panel(&session, &hub);
        panel.resize(900, 300);
        GapInput gap;
        gap.gap.kind = Gap::Kind::Sequence;
        gap.gap.timeMs = kStart;
        gap.gap.fromSequence = 101;
        gap.gap.toSequence = 180;
        gap.gap.detail = QStringLiteral("the replay stopped at its bound before the gap was filled");
        gap.gap.partial = true;
        session.store()->apply(ModelInput(gap));
        session.store()->flushChanges();
        auto *gaps = panel.findChild<QTableView *>(QStringLiteral("gapsTable"));
        QVERIFY(gaps);
        QCOMPARE(gaps->model()->rowCount(), 1);
        bool found = false;
        for (int c = 0; c < gaps->model()->columnCount(); ++c)
            found = found || gaps->model()->index(0, c).data().toString() == QStringLiteral("partly recovered");
        QVERIFY(found);
        // Drawn: the gap's row, "partly recovered" in its cell.
        panel.show();
        QVERIFY(QTest::qWaitForWindowExposed(&panel));
        const QImage shot = mapi::test::picture(&panel);
        QVERIFY(shot.save(QStringLiteral("gaps-partly-recovered.png")));
        QString why;
        QVERIFY(gaps->isVisible());
        QVERIFY2(mapi::test::rowDrawn(shot, &panel, gaps, 0, &why) >= 2, qPrintable(why));
        for (int c = 0; c < gaps->model()->columnCount(); ++c)
            if (gaps->model()->index(0, c).data().toString() == QStringLiteral("partly recovered"))
                QVERIFY2(mapi::test::cellDrawn(shot, &panel, gaps, gaps->model()->index(0, c), &why), qPrintable(why));
    }

    void inspectorCountsRecipientsNotKept()
    {
        InspectorSession session;
        SelectionHub hub;
        InspectorPanel panel(&session, &hub);
        panel.resize(900, 400);
        mapi::test::FrameFeed feed(session.store(), kStart);
        feed.agent("coordinator", "coordinator", kStart);
        Json everyone = Json::array();
        const int recipients = MessageLog::kMaxRecipients + 5;
        for (int i = 0; i < recipients; ++i)
            everyone.push_back("agent-" + std::to_string(100000 + i));
        feed.send("coordinator", everyone, "BROADCAST", {{"announcement", "maintenance at noon"}}, kStart + 1000);
        session.store()->flushChanges();
        QCOMPARE(session.store()->messages().size(), size_t(1));
        QCOMPARE(session.store()->messages()[0].recipientsNotKept, qint64(5));
        hub.focus(SelectionHub::Kind::Message, QStringLiteral("0"));
        auto *header = panel.findChild<QLabel *>(QStringLiteral("inspectorHeader"));
        // Three named, then the other 9,997 kept and the 5 not kept, counted together.
        QVERIFY2(header->text().contains(QStringLiteral("%1 more").arg(recipients - 3)), qPrintable(header->text()));
        // Drawn: the header's line (rich text: its ink, across more than a third of it, a line high).
        const QImage shot = mapi::test::picture(&panel);
        QVERIFY(shot.save(QStringLiteral("inspector-recipients-not-kept.png")));
        const QRect headerRect = mapi::test::rectIn(&panel, header);
        const QRect ink = mapi::test::inkBounds(shot, headerRect, mapi::test::commonColor(shot, headerRect));
        QVERIFY2(ink.width() > headerRect.width() / 3 && ink.height() >= header->fontMetrics().ascent() / 2,
                 qPrintable(QStringLiteral("ink %1×%2 in %3×%4").arg(ink.width()).arg(ink.height()).arg(headerRect.width()).arg(headerRect.height())));
    }

    // Issue 41 item 9: Ctrl+I, then typing, writes the message (the targets list takes no focus);
    // File shows Save session's shortcut.
    void injectTakesTypingAndSaveSessionHasAShortcut()
    {
        InspectorSession session;
        mapi::test::FrameFeed feed(session.store(), kStart);
        feed.agent("worker-3", "worker", kStart);
        session.store()->flushChanges();
        InjectDialog dialog(session.store(), {session.store()->agents().front().id}, QString());
        dialog.show();
        QVERIFY(QTest::qWaitForWindowExposed(&dialog));
        QTest::keyClicks(QApplication::focusWidget(), QStringLiteral("write tests first"));
        auto *message = dialog.findChild<QPlainTextEdit *>(QStringLiteral("injectMessage"));
        QCOMPARE(message->toPlainText(), QStringLiteral("write tests first"));
        dialog.reject();

        ui::MainWindow window;
        QCOMPARE(window.action(QStringLiteral("saveSession"))->shortcut(), QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_S));
        QVERIFY(!window.action(QStringLiteral("saveSession"))->shortcut().isEmpty());
    }

    // Issue 41 item 9: the Connect dialog comes with the profile used last preselected and filled.
    void connectDialogPreselectsTheLastProfile()
    {
        ConnectionProfiles::upsert({QStringLiteral("staging"), QStringLiteral("ws://127.0.0.1:4321"), QStringLiteral("none"), true});
        ConnectionProfiles::setLastProfile(QStringLiteral("staging"));
        {
            ConnectDialog dialog;
            QCOMPARE(dialog.findChild<QComboBox *>(QStringLiteral("profile"))->currentText(), QStringLiteral("staging"));
            QCOMPARE(dialog.options().url, QUrl(QStringLiteral("ws://127.0.0.1:4321")));
            QVERIFY(dialog.observerOnly());
        }
        ConnectionProfiles::setLastProfile(QString()); // a new profile last time: nothing preselected
        {
            ConnectDialog dialog;
            QCOMPARE(dialog.findChild<QComboBox *>(QStringLiteral("profile"))->currentIndex(), 0);
        }
        ConnectionProfiles::remove(QStringLiteral("staging"));
    }
};

QTEST_MAIN(TestHardeningViews)
#include "tst_hardening_views.moc"
