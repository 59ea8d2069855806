// ExportController on its own, over a session without a window: one export action per format,
// waiting for a model; a table written a slice at a time with its start, progress and end said;
// one export at a time (a second is refused, the first still ends well); a path that cannot be
// written fails with a warning; pictures of the views; an incident bundle of the run shown, with
// the replay bar's bookmarks and the selection; nothing to bundle without a run. Offscreen; any
// Qt warning fails.
#include "GuiTestSupport.h"

#include "alerts/AlertMonitor.h"
#include "controllers/ExportController.h"
#include "dialogs/IncidentDialog.h"
#include "panels/TimelinePanel.h"
#include "panels/TopologyPanel.h"
#include "replay/ReplayBar.h"
#include "session/InspectorSession.h"
#include "session/SelectionHub.h"
#include "timeline/TimelineView.h"
#include "topology/TopologyView.h"
#include "trace/TraceTimeline.h"

#include <QAction>
#include <QFile>
#include <QMessageBox>
#include <QSignalSpy>
#include <QTemporaryDir>
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
    ReplayBar *replayBar = new ReplayBar(&window);
    TopologyPanel *topology = new TopologyPanel(&session, &hub, &window);
    TimelinePanel *timeline = new TimelinePanel(&session, &hub, &window);
    QAction exportIncident, compareRuns;
    ExportController exports{&session, &hub, &monitor, replayBar, {topology->view(), timeline->view()},
                             {&exportIncident, &compareRuns}, &window};

    Fixture()
    {
        monitor.setStore(session.store());
        topology->resize(640, 480);
        timeline->resize(640, 240);
    }
    bool loadSample()
    {
        QSignalSpy finished(&session, &InspectorSession::traceLoadFinished);
        session.openTrace(QStringLiteral(MAPI_SAMPLE_TRACE));
        if (!finished.wait(30000) || !finished.first().at(0).toBool())
            return false;
        replayBar->setController(session.replay(), session.tracePath());
        return true;
    }
    // Runs one export to its end: (ok, error).
    std::pair<bool, QString> run(ExportController::Kind kind, const QString &path)
    {
        QSignalSpy finished(&exports, &ExportController::exportFinished);
        exports.exportTo(kind, path);
        if (finished.isEmpty() && !finished.wait(30000))
            return {false, QStringLiteral("never finished")};
        return {finished.first().at(0).toBool(), finished.first().at(1).toString()};
    }
};

} // namespace

class ExportControllerTest : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void initTestCase() { mapi::test::failOnQtWarnings(); }

    void oneActionPerFormatWaitingForAModel()
    {
        Fixture f;
        QStringList names;
        for (QAction *a : f.exports.exportActions()) {
            names << a->objectName();
            QVERIFY(!a->isEnabled());
        }
        QCOMPARE(names.size(), 10);
        QVERIFY(names.contains(QStringLiteral("exportAgentsCsv")) && names.contains(QStringLiteral("exportTopologyPicture")));
        QVERIFY(!f.exportIncident.isEnabled());
        QVERIFY(!f.exports.exportIncident()); // nothing shown: nothing to bundle
        QVERIFY(f.loadSample());
        for (QAction *a : f.exports.exportActions())
            QVERIFY(a->isEnabled());
        QVERIFY(f.exportIncident.isEnabled());
    }

    void aTableIsWrittenInSlicesAndSaysSo()
    {
        Fixture f;
        QVERIFY(f.loadSample());
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("agents.csv"));
        QSignalSpy started(&f.exports, &ExportController::exportStarted);
        const auto [ok, error] = f.run(ExportController::Kind::AgentsCsv, path);
        QVERIFY2(ok, qPrintable(error));
        QCOMPARE(started.size(), 1);
        QVERIFY(!f.exports.isExporting());
        QFile file(path);
        QVERIFY(file.open(QIODevice::ReadOnly));
        const QByteArray csv = file.readAll();
        QVERIFY(csv.startsWith("id,name,role,state,health"));
        for (const Agent &agent : f.session.store()->agents())
            QVERIFY2(csv.contains(agent.id.toUtf8()), qPrintable(agent.id));
    }

    void oneExportAtATime()
    {
        Fixture f;
        QVERIFY(f.loadSample());
        QTemporaryDir dir;
        QSignalSpy finished(&f.exports, &ExportController::exportFinished);
        f.exports.exportTo(ExportController::Kind::MessagesCsv, dir.filePath(QStringLiteral("messages.csv")));
        QVERIFY(f.exports.isExporting());
        for (QAction *a : f.exports.exportActions())
            QVERIFY(!a->isEnabled()); // one at a time
        f.exports.exportTo(ExportController::Kind::AgentsCsv, dir.filePath(QStringLiteral("agents.csv")));
        QCOMPARE(finished.size(), 1); // refused at once
        QVERIFY(!finished.first().at(0).toBool());
        QVERIFY(finished.first().at(1).toString().contains(QLatin1String("Another export is still running")));
        QVERIFY(!QFile::exists(dir.filePath(QStringLiteral("agents.csv"))));
        QVERIFY(finished.wait(30000));
        QVERIFY(finished.last().at(0).toBool()); // the first one ends well
        QVERIFY(QFile::exists(dir.filePath(QStringLiteral("messages.csv"))));
        for (QAction *a : f.exports.exportActions())
            QVERIFY(a->isEnabled());
    }

    void aPathThatCannotBeWrittenFails()
    {
        Fixture f;
        QVERIFY(f.loadSample());
        QTemporaryDir dir;
        const auto [ok, error] = f.run(ExportController::Kind::TasksCsv, dir.filePath(QStringLiteral("no/such/dir/tasks.csv")));
        QVERIFY(!ok);
        QVERIFY(!error.isEmpty());
        const auto *box = f.window.findChild<QMessageBox *>(QStringLiteral("warningBox"));
        QVERIFY(box);
        QCOMPARE(box->windowTitle(), QStringLiteral("Export failed"));
    }

    void picturesOfTheViews()
    {
        Fixture f;
        f.window.resize(800, 600);
        f.window.show(); // the views are laid out: pictured at their size on screen
        QVERIFY(QTest::qWaitForWindowExposed(&f.window));
        QVERIFY(f.loadSample());
        QTemporaryDir dir;
        const QString svg = dir.filePath(QStringLiteral("topology.svg"));
        auto [ok, error] = f.run(ExportController::Kind::TopologyPicture, svg);
        QVERIFY2(ok, qPrintable(error));
        QFile file(svg);
        QVERIFY(file.open(QIODevice::ReadOnly));
        QVERIFY(file.readAll().contains("<svg"));
        const QString png = dir.filePath(QStringLiteral("timeline.png"));
        std::tie(ok, error) = f.run(ExportController::Kind::TimelinePicture, png);
        QVERIFY2(ok, qPrintable(error));
        const QImage image(png);
        QVERIFY(!image.isNull());
        QCOMPARE(image.width(), int(f.timeline->view()->viewport()->width() * f.timeline->view()->devicePixelRatioF()));
        QVERIFY(image.width() >= 300);
    }

    void anIncidentCarriesTheBookmarksAndSelection()
    {
        Fixture f;
        QVERIFY(f.loadSample());
        const QString agent = f.session.store()->agents().front().id;
        f.hub.selectAgents({agent});
        QVERIFY(f.replayBar->adoptBookmarks({Bookmark{f.session.replay()->startMs() + 1000, QStringLiteral("here"), QString()}}));
        IncidentDialog *dialog = f.exports.exportIncident();
        QVERIFY(dialog);
        QCOMPARE(dialog->context().selectedAgents, QStringList{agent});
        QCOMPARE(dialog->context().bookmarks.size(), 1);
        QCOMPARE(dialog->context().tracePath, f.session.tracePath());
        QCOMPARE(dialog->context().endMs, f.session.replay()->endMs());
        dialog->close();
    }
};

QTEST_MAIN(ExportControllerTest)
#include "tst_export_controller.moc"
