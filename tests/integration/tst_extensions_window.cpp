// The window against the official MAPServer with its extensions on
// (tools/demo-system/extensions-demo.mjs): the Conversations and Agent work docks appear, the
// conversations equal the server's (the one made before the window connected too), a
// checkpoint's content is fetched inline and streamed (reassembled, checked), the agent's files
// are listed and read, and the timeline marks turns and checkpoints on their agents' lanes.
// Screenshots of each view go to $MAPI_TEST_SHOTS when set (docs/screenshots), looked at.
#include "DemoSystem.h"

#include "MainWindow.h"
#include "controllers/ConnectionController.h"
#include "models/AgentWorkModels.h"
#include "panels/AgentWorkPanel.h"
#include "panels/ConversationsPanel.h"
#include "panels/TimelinePanel.h"
#include "session/InspectorSession.h"
#include "session/SelectionHub.h"
#include "timeline/TimelineView.h"

#include <QApplication>
#include <QDir>
#include <QDockWidget>
#include <QJsonArray>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QStandardPaths>
#include <QTableView>
#include <QTabWidget>
#include <QTreeWidget>
#include <QtTest>

using namespace mapi;
using namespace mapi::test;

namespace {

const QString kDemo = QStringLiteral(MAPI_SOURCE_DIR "/tools/demo-system/extensions-demo.mjs");

void shoot(QWidget *widget, const char *name)
{
    if (const QString shots = qEnvironmentVariable("MAPI_TEST_SHOTS"); !shots.isEmpty())
        QVERIFY(widget->grab().save(QDir(shots).filePath(QLatin1String(name))));
}

// The row of `table` whose column `column` reads `text` (-1: none).
int rowWith(QTableView *table, int column, const QString &text)
{
    for (int r = 0; r < table->model()->rowCount(); ++r)
        if (table->model()->index(r, column).data().toString() == text)
            return r;
    return -1;
}

// The row of `table` whose `role` data is `value` (-1: none).
int rowWithData(QTableView *table, int role, const QString &value)
{
    for (int r = 0; r < table->model()->rowCount(); ++r)
        if (table->model()->index(r, 0).data(role).toString() == value)
            return r;
    return -1;
}

int columnNamed(QTableView *table, const QString &title)
{
    for (int c = 0; c < table->model()->columnCount(); ++c)
        if (table->model()->headerData(c, Qt::Horizontal).toString() == title)
            return c;
    return -1;
}

void selectRow(QTableView *table, int row)
{
    table->setCurrentIndex(table->model()->index(row, 0));
    table->selectRow(row);
}

} // namespace

class ExtensionsWindowTest : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase()
    {
        QStandardPaths::setTestModeEnabled(true);
        QApplication::setOrganizationName(QStringLiteral("MAP Inspector tests"));
    }

    void windowShowsWhatTheServerKeeps()
    {
        Launcher demo;
        QVERIFY(demo.start(QStringLiteral(MAPI_NODE), kDemo,
                           {QStringLiteral("--port"), QString::number(freePort()), QStringLiteral("--wait-clients"), QStringLiteral("1"),
                            QStringLiteral("--duration"), QStringLiteral("120")}));
        const QJsonObject ready = demo.waitFor(QStringLiteral("ready"), 30000);
        QVERIFY(!ready.isEmpty());

        ui::MainWindow window;
        window.resize(1500, 950);
        window.show();
        ClientOptions options;
        options.url = QUrl(ready.value(QStringLiteral("url")).toString());
        window.connection()->connectTo(options, true); // an observer: it reads, and changes nothing
        const QJsonObject done = demo.waitFor(QStringLiteral("trafficDone"), 60000);
        QVERIFY(!done.isEmpty());
        const QJsonObject server = done.value(QStringLiteral("server")).toObject();
        const QString bobId = done.value(QStringLiteral("agents")).toObject().value(QStringLiteral("bob")).toObject()
                                  .value(QStringLiteral("id")).toString();

        // The docks appear (the server advertises mail and workspace) and fill.
        QDockWidget *conversationsDock = window.dock(QStringLiteral("conversationsDock"));
        QDockWidget *workDock = window.dock(QStringLiteral("workDock"));
        QTRY_VERIFY_WITH_TIMEOUT(conversationsDock->isVisible(), 10000);
        QTRY_VERIFY_WITH_TIMEOUT(workDock->isVisible(), 10000);
        const SystemStore *store = window.session()->store();
        QTRY_COMPARE_WITH_TIMEOUT(qsizetype(store->conversations().conversations().size()),
                                  server.value(QStringLiteral("mailList")).toObject().value(QStringLiteral("conversations")).toArray().size(),
                                  10000);
        QTRY_COMPARE_WITH_TIMEOUT(qsizetype(store->checkpoints().checkpoints().size()),
                                  server.value(QStringLiteral("trajectoryList")).toObject().value(QStringLiteral("checkpoints")).toArray().size(),
                                  10000);

        // Conversations: the history-only one is listed; "Fix login bug" reads in order.
        conversationsDock->raise();
        auto *conversations = conversationsDock->findChild<QTableView *>(QStringLiteral("conversationsTable"));
        QVERIFY(conversations);
        const int subject = columnNamed(conversations, QStringLiteral("Subject"));
        QVERIFY(rowWith(conversations, subject, QStringLiteral("Earlier incident")) >= 0);
        const int fix = rowWith(conversations, subject, QStringLiteral("Fix login bug"));
        QVERIFY(fix >= 0);
        selectRow(conversations, fix);
        auto *turns = conversationsDock->findChild<QTableView *>(QStringLiteral("turnsTable"));
        QTRY_COMPARE(turns->model()->rowCount(), 5);
        const int participant = columnNamed(turns, QStringLiteral("Participant"));
        QVERIFY(rowWith(turns, participant, QStringLiteral("carol")) >= 0); // her session was seen registering
        QVERIFY(rowWith(turns, columnNamed(turns, QStringLiteral("Text")), QStringLiteral("Looks good to me.")) >= 0);
        selectRow(turns, 1);
        QTest::qWait(100);
        shoot(&window, "conversations-window.png");
        conversationsDock->setFloating(true); // the panel at a size that shows it whole
        conversationsDock->resize(1300, 720);
        QTest::qWait(100);
        shoot(conversationsDock, "conversations-live.png");
        conversationsDock->setFloating(false);

        // Agent work: bob's checkpoints; an inline content, then a streamed one.
        window.session(); // (the selection is the window's)
        workDock->raise();
        auto *work = workDock->findChild<ui::AgentWorkPanel *>();
        QVERIFY(work);
        work->setAgentId(bobId);
        auto *checkpoints = workDock->findChild<QTableView *>(QStringLiteral("checkpointsTable"));
        QTRY_COMPARE(checkpoints->model()->rowCount(), 3);
        const int label = columnNamed(checkpoints, QStringLiteral("Label"));
        auto *fetch = workDock->findChild<QPushButton *>(QStringLiteral("fetchCheckpointContent"));
        auto *text = workDock->findChild<QPlainTextEdit *>(QStringLiteral("checkpointContentText"));
        selectRow(checkpoints, rowWith(checkpoints, label, QStringLiteral("reproduced bug")));
        QTRY_VERIFY(fetch->isEnabled());
        fetch->click();
        QTRY_VERIFY_WITH_TIMEOUT(text->toPlainText().contains(QStringLiteral("Reproduce BUG-17")), 10000);
        selectRow(checkpoints, rowWith(checkpoints, label, QStringLiteral("fix committed")));
        QTRY_VERIFY(fetch->isEnabled());
        fetch->click();
        // Streamed: three chunks, put together and checked against the SHA-256 the server sent.
        QTRY_VERIFY_WITH_TIMEOUT(text->toPlainText().size() > 10000, 15000);
        QVERIFY2(!workDock->findChild<QLabel *>(QStringLiteral("checkpointContentStatus"))->text().contains(QStringLiteral("did not arrive")),
                 qPrintable(workDock->findChild<QLabel *>(QStringLiteral("checkpointContentStatus"))->text()));
        workDock->setFloating(true);
        workDock->resize(1100, 720);
        QTest::qWait(100);
        shoot(workDock, "checkpoint-content.png");

        // Files: list the root, open src/, read src/login.ts.
        auto *tabs = workDock->findChild<QTabWidget *>(QStringLiteral("agentWorkTabs"));
        tabs->setCurrentIndex(1);
        auto *files = workDock->findChild<QTableView *>(QStringLiteral("workspaceFiles"));
        workDock->findChild<QPushButton *>(QStringLiteral("workspaceList"))->click();
        QTRY_VERIFY2_WITH_TIMEOUT(files->model()->rowCount() >= 3,
                                  qPrintable(workDock->findChild<QLabel *>(QStringLiteral("workspaceStatus"))->text() + u" | "
                                             + workDock->findChild<QLabel *>(QStringLiteral("workspaceReason"))->text()),
                                  10000);
        const int pathRole = ui::WorkspaceFileModel::PathRole;
        const QModelIndex src = files->model()->index(rowWithData(files, pathRole, QStringLiteral("src")), 0);
        QVERIFY(src.isValid());
        emit files->doubleClicked(src);
        QTRY_VERIFY_WITH_TIMEOUT(rowWithData(files, pathRole, QStringLiteral("src/login.ts")) >= 0, 10000);
        emit files->doubleClicked(files->model()->index(rowWithData(files, pathRole, QStringLiteral("src/login.ts")), 0));
        auto *fileText = workDock->findChild<QPlainTextEdit *>(QStringLiteral("workspaceFileText"));
        QTRY_VERIFY_WITH_TIMEOUT(fileText->toPlainText().contains(QStringLiteral("login")), 10000);
        shoot(workDock, "workspace-files.png");

        // ACP: bob's session with the IDE, each request answered, the transcript readable.
        tabs->setCurrentIndex(2);
        auto *acp = workDock->findChild<QTreeWidget *>(QStringLiteral("acpStreams"));
        QVERIFY(acp);
        QCOMPARE(acp->topLevelItemCount(), 1);
        QTreeWidgetItem *stream = acp->topLevelItem(0);
        int requests = 0, answered = 0;
        for (int i = 0; i < stream->childCount(); ++i)
            if (stream->child(i)->text(0).startsWith(QLatin1String("request "))) {
                ++requests;
                answered += stream->child(i)->text(3) != QLatin1String("waiting");
            }
        QCOMPARE(requests, 3);
        QCOMPARE(answered, 3);
        acp->setCurrentItem(stream);
        const QString transcript = workDock->findChild<QPlainTextEdit *>(QStringLiteral("acpTranscript"))->toPlainText();
        QVERIFY2(transcript.contains(QStringLiteral("the fix is one line")) && transcript.contains(QStringLiteral("Read src/login.ts")),
                 qPrintable(transcript));
        acp->expandAll();
        shoot(workDock, "acp-sessions.png");

        // The timeline: bob's lane carries his checkpoints and turns.
        auto *timeline = window.findChild<ui::TimelineView *>();
        QVERIFY(timeline);
        window.dock(QStringLiteral("timelineDock"))->raise();
        timeline->showAll();
        QTest::qWait(200);
        shoot(&window, "timeline-work-marks.png");
    }
};

QTEST_MAIN(ExtensionsWindowTest)
#include "tst_extensions_window.moc"
