// The window's side of traces: open (progress, damaged files, unknown formats), the replay bar
// driving the one store through time, bookmarks, the embedded sample trace, and File → Export.
// Offscreen; any Qt warning fails the test.
#include "GuiTestSupport.h"
#include "PictureProbe.h"

#include "MainWindow.h"
#include "controllers/ExportController.h"
#include "controllers/TraceController.h"
#include "alerts/AlertMonitor.h"
#include "models/ProblemModel.h"
#include "dialogs/IncidentDialog.h"
#include "dialogs/RunDiffDialog.h"
#include "model/CausalChains.h"
#include "replay/ReplayBar.h"
#include "session/InspectorSession.h"
#include "session/SelectionHub.h"
#include "style/Theme.h"
#include "trace/TraceLoader.h"
#include "trace/TraceTimeline.h"

#include <QAction>
#include <QApplication>
#include <QComboBox>
#include <QFile>
#include <QImage>
#include <QLabel>
#include <QPushButton>
#include <QRegularExpression>
#include <QTreeWidget>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QMessageBox>
#include <QSlider>
#include <QTableView>
#include <QStandardPaths>
#include <QProgressBar>
#include <QTemporaryDir>
#include <QToolButton>
#include <QtTest>

using namespace mapi;

namespace {

const QString kCapture = QStringLiteral(MAPI_TEST_DATA "/scenario-deliver.ndjson");

// Opens `path` in the window and waits for the load to end.
bool openAndWait(ui::MainWindow &window, const QString &path)
{
    if (!window.traces()->openTrace(path))
        return false;
    return QTest::qWaitFor([&] { return !window.session()->isLoadingTrace(); }, 10000);
}

int liveAgents(const SystemStore &store)
{
    int n = 0;
    for (const Agent &a : store.agents())
        n += a.placeholder ? 0 : 1;
    return n;
}

void closeWarningBoxes(ui::MainWindow &window)
{
    qDeleteAll(window.findChildren<QMessageBox *>());
}

} // namespace

class ReplayWindowTest : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void initTestCase()
    {
        QStandardPaths::setTestModeEnabled(true); // settings, cache (sample copy) in test folders
        QApplication::setOrganizationName(QStringLiteral("MAP Inspector tests"));
        mapi::test::failOnQtWarnings();
    }

    void openShowsTheBarAndTheWholeTrace()
    {
        ui::MainWindow window;
        window.show();
        QVERIFY(openAndWait(window, kCapture));
        QVERIFY(window.replayBar()->isVisible());
        QVERIFY(window.session()->replay());
        const SystemStore &store = *window.session()->store();
        QVERIFY(liveAgents(store) > 0);
        // The position starts at the end: the model is the whole trace.
        QCOMPARE(window.session()->replay()->positionMs(), window.session()->replay()->endMs());
        QVERIFY(!window.findChild<QToolButton *>(QStringLiteral("traceDamageButton"))->isVisible());
        QVERIFY(window.action(QStringLiteral("exportChromeTrace"))->isEnabled());
        QVERIFY(!window.action(QStringLiteral("record"))->isEnabled()); // a trace is not a connection
        QVERIFY(window.alertMonitor()->isRunning()); // the detectors, paused while it loaded, run again
    }

    void barActionsMoveTheStoreThroughTime()
    {
        ui::MainWindow window;
        window.show();
        QVERIFY(openAndWait(window, kCapture));
        ReplayController *replay = window.session()->replay();
        const SystemStore &store = *window.session()->store();
        const int agentsAtEnd = liveAgents(store);
        const qint64 eventsAtEnd = store.counters().eventsApplied;

        window.action(QStringLiteral("replayToStart"))->trigger();
        QCOMPARE(replay->positionMs(), replay->startMs());
        QVERIFY(store.counters().eventsApplied < eventsAtEnd);
        QVERIFY(liveAgents(store) < agentsAtEnd);

        // A step applies the next record that changes the model; a step back undoes it.
        const qint64 before = replay->recordsApplied();
        const qint64 eventsBefore = store.counters().eventsApplied;
        const int agentsBefore = liveAgents(store);
        window.action(QStringLiteral("replayStepForward"))->trigger();
        const qint64 afterStep = replay->recordsApplied();
        QVERIFY(afterStep > before);
        window.action(QStringLiteral("replayStepBack"))->trigger();
        QVERIFY(replay->recordsApplied() < afterStep);
        QCOMPARE(store.counters().eventsApplied, eventsBefore);
        QCOMPARE(liveAgents(store), agentsBefore);

        // The scrubber seeks (coalesced while dragged): half way lands between start and end.
        auto *scrubber = window.replayBar()->findChild<QSlider *>();
        QVERIFY(scrubber);
        scrubber->setValue((scrubber->minimum() + scrubber->maximum()) / 2);
        QVERIFY(QTest::qWaitFor([&] { return replay->positionMs() > replay->startMs(); }, 3000));
        QVERIFY(replay->positionMs() < replay->endMs());

        // Speed 100× from the start plays to the end and stops there with the whole model back.
        auto *speed = window.replayBar()->findChild<QComboBox *>(QStringLiteral("replaySpeed"));
        speed->setCurrentIndex(speed->count() - 1);
        QCOMPARE(replay->speed(), 100.0);
        window.action(QStringLiteral("replayToStart"))->trigger();
        window.action(QStringLiteral("replayPlayPause"))->trigger();
        QVERIFY(replay->isPlaying());
        QVERIFY(QTest::qWaitFor([&] { return !replay->isPlaying(); }, 20000));
        QCOMPARE(replay->positionMs(), replay->endMs());
        QCOMPARE(store.counters().eventsApplied, eventsAtEnd);
        QCOMPARE(liveAgents(store), agentsAtEnd);
        // Rebuilt events keep no frame of their own: the store reads it from the trace's
        // timeline on demand (the inspector), and it is the frame that carried the event.
        QVERIFY(!store.events().empty());
        const int last = int(store.events().size()) - 1;
        QVERIFY(store.events().keptFrame(0).isEmpty());
        QVERIFY(store.events().keptFrame(size_t(last)).isEmpty());
        QVERIFY(store.eventFrame(0).contains(store.events().eventId(0).toUtf8()));
        QVERIFY(store.eventFrame(last).contains(store.events().eventId(size_t(last)).toUtf8()));
    }

    // Issue 41 item 9: the media buttons are drawn in the theme's button text colour (the
    // style's standard icons are black, nearly invisible on the dark theme).
    void mediaButtonsFollowTheTheme()
    {
        ui::ReplayBar bar;
        const auto glyphLightness = [&bar] {
            const QAction *play = bar.findChild<QAction *>(QStringLiteral("replayPlayPause"));
            const QImage image = play->icon().pixmap(QSize(16, 16), QIcon::Normal).toImage();
            return image.pixelColor(8, 8).lightness(); // inside the triangle
        };
        ui::applyTheme(ui::Theme::Dark);
        QApplication::processEvents();
        const int onDark = glyphLightness();
        ui::applyTheme(ui::Theme::Light);
        QApplication::processEvents();
        const int onLight = glyphLightness();
        QVERIFY2(onDark > 180 && onLight < 80, qPrintable(QStringLiteral("lightness %1 on dark, %2 on light").arg(onDark).arg(onLight)));
    }

    void incidentFileNameIsSuggested()
    {
        const qint64 end = QDateTime(QDate(2026, 11, 28), QTime(7, 12)).toMSecsSinceEpoch();
        QCOMPARE(ui::suggestedIncidentFileName(QStringLiteral("/tmp/runs/demo.jsonl.zst"), QString(), end),
                 QStringLiteral("incident-demo-20261128-0712.incident.jsonl.zst"));
        QCOMPARE(ui::suggestedIncidentFileName(QString(), QStringLiteral("ws://127.0.0.1:8080/map"), end),
                 QStringLiteral("incident-127.0.0.1-8080-20261128-0712.incident.jsonl.zst"));
        QCOMPARE(ui::suggestedIncidentFileName(QStringLiteral("C:/x/a b?.incident.jsonl.zst"), QString(), end),
                 QStringLiteral("incident-a-b-20261128-0712.incident.jsonl.zst"));
    }

    void bookmarksAreKeptNextToTheTrace()
    {
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("copy.ndjson"));
        QVERIFY(QFile::copy(kCapture, path));
        {
            ui::MainWindow window;
            QVERIFY(openAndWait(window, path));
            ReplayController *replay = window.session()->replay();
            replay->seek(replay->startMs() + (replay->endMs() - replay->startMs()) / 3);
            QVERIFY(window.replayBar()->addBookmark(QStringLiteral("first task"), QStringLiteral("worker 2 accepts")));
            QVERIFY(QFile::exists(bookmarksPath(path)));
        }
        ui::MainWindow window;
        QVERIFY(openAndWait(window, path));
        QCOMPARE(window.replayBar()->bookmarks().size(), 1);
        const Bookmark b = window.replayBar()->bookmarks().first();
        QCOMPARE(b.title, QStringLiteral("first task"));
        QCOMPARE(b.note, QStringLiteral("worker 2 accepts"));
        window.replayBar()->jumpToBookmark(0);
        QCOMPARE(window.session()->replay()->positionMs(), b.timeMs);
    }

    void damagedFileLoadsTheRestAndSaysWhichLines()
    {
        QFile in(kCapture);
        QVERIFY(in.open(QIODevice::ReadOnly));
        QList<QByteArray> lines = in.readAll().split('\n');
        while (!lines.isEmpty() && lines.last().isEmpty())
            lines.removeLast();
        QVERIFY(lines.size() > 20);
        lines[9] = "{\"this is\": not json";          // line 10
        lines[14] = QByteArray("\xff\xfe garbage", 10); // line 15
        lines.last().chop(lines.last().size() / 2);   // a truncated last line
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("damaged.ndjson"));
        QFile out(path);
        QVERIFY(out.open(QIODevice::WriteOnly));
        out.write(lines.join('\n'));
        out.close();

        ui::MainWindow window;
        window.show();
        QVERIFY(openAndWait(window, path));
        QVERIFY(window.session()->replay());
        QVERIFY(liveAgents(*window.session()->store()) > 0);
        const TraceReadStats &stats = window.session()->traceStats();
        QVERIFY(stats.badLines.contains(10));
        QVERIFY(stats.badLines.contains(15));
        QVERIFY(stats.badLines.contains(qint64(lines.size())));
        auto *damage = window.findChild<QToolButton *>(QStringLiteral("traceDamageButton"));
        QVERIFY(damage->isVisible());
        QVERIFY2(damage->text().startsWith(QLatin1String("3 bad line")), qPrintable(damage->text()));
        damage->click();
        auto *box = window.findChild<QMessageBox *>(QStringLiteral("warningBox"));
        QVERIFY(box);
        QVERIFY2(box->text().contains(QLatin1String("10, 15")), qPrintable(box->text()));
        closeWarningBoxes(window);
    }

    // Time travel reads frames back from the trace file: if the file changes on disk meanwhile,
    // the rebuilt view lacks those records and the Problems panel says so (never other bytes).
    void aTraceChangedOnDiskIsAProblemNotAWrongView()
    {
        // The sample, recorded again as this version writes traces (frames kept as they are).
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("sample.jsonl.zst"));
        {
            TraceWriter writer;
            QString error;
            QVERIFY2(writer.open(path, QStringLiteral("ws://127.0.0.1:1"), &error), qPrintable(error));
            TraceReadStats stats;
            QVERIFY(readTrace(QStringLiteral(MAPI_SAMPLE_TRACE), [&](const TraceRecord &r) {
                writer.write(r);
                return true;
            }, stats, &error));
            writer.close();
        }
        ui::MainWindow window;
        window.resize(1400, 900);
        window.show();
        QVERIFY(openAndWait(window, path));
        const SystemStore &store = *window.session()->store();
        QCOMPARE(store.problems().size(), size_t(0));
        const qint64 eventsAtEnd = store.counters().eventsApplied;
        {
            QFile file(path);
            QVERIFY(file.open(QIODevice::ReadWrite));
            file.seek(file.size() / 2);
            QCOMPARE(file.write(QByteArray(64, '\0')), qint64(64));
        }
        window.action(QStringLiteral("replayToStart"))->trigger();
        window.action(QStringLiteral("replayToEnd"))->trigger();
        QVERIFY(QTest::qWaitFor([&] { return !store.problems().empty(); }, 5000));
        QVERIFY(store.counters().eventsApplied < eventsAtEnd); // what is unreadable is not shown
        const ProtocolProblem &problem = store.problems().back();
        QCOMPARE(problem.kind, ProblemKind::TraceUnreadable);
        QVERIFY2(problem.detail.contains(QLatin1String("changed on disk")), qPrintable(problem.detail));
        auto *button = window.findChild<QToolButton *>(QStringLiteral("problemsButton"));
        QTRY_VERIFY(button->text().startsWith(QLatin1String("1 problem")));
        button->click();
        auto *table = window.findChild<QTableView *>(QStringLiteral("problemsTable"));
        QVERIFY(table && table->isVisible());
        QTRY_COMPARE(table->model()->rowCount(), 1);
        QCOMPARE(table->model()->index(0, ui::ProblemModel::KindColumn).data().toString(), QStringLiteral("trace-unreadable"));
        // Drawn: the problem's kind in its cell of the table on screen.
        {
            QString why;
            QTRY_VERIFY2(mapi::test::cellDrawn(mapi::test::picture(&window), &window, table,
                                               table->model()->index(0, ui::ProblemModel::KindColumn), &why),
                         qPrintable(why));
        }
        const QString shots = qEnvironmentVariable("MAPI_REPLAY_PNG_DIR"); // to look at it
        if (!shots.isEmpty()) {
            QTest::qWait(1500); // the panels settle after the rebuild
            window.grab().save(shots + QStringLiteral("/trace-changed-on-disk.png"));
        }
    }

    void unknownFormatIsRefusedClearly()
    {
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("notes.txt"));
        QFile out(path);
        QVERIFY(out.open(QIODevice::WriteOnly));
        out.write("just some notes\nnothing here is JSON\n");
        out.close();

        ui::MainWindow window;
        window.show();
        QVERIFY(openAndWait(window, path));
        QCOMPARE(window.session()->source(), InspectorSession::Source::None);
        QVERIFY(!window.replayBar()->isVisible());
        auto *box = window.findChild<QMessageBox *>(QStringLiteral("warningBox"));
        QVERIFY(box);
        // The error names the formats that are understood.
        QVERIFY2(box->text().contains(QLatin1String("capture"), Qt::CaseInsensitive), qPrintable(box->text()));
        closeWarningBoxes(window);

        QVERIFY(!window.traces()->openTrace(dir.filePath(QStringLiteral("missing.jsonl"))));
        box = window.findChild<QMessageBox *>(QStringLiteral("warningBox"));
        QVERIFY(box && box->text().contains(QLatin1String("does not exist")));
        closeWarningBoxes(window);
    }

    void cancelStopsTheLoadAndLeavesNothingHalfOpen()
    {
        // A large file (the capture 100 times over: ~78,000 lines) so the load is still running
        // when Cancel is clicked.
        QFile in(kCapture);
        QVERIFY(in.open(QIODevice::ReadOnly));
        const QByteArray capture = in.readAll();
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("large.ndjson"));
        QFile out(path);
        QVERIFY(out.open(QIODevice::WriteOnly));
        for (int i = 0; i < 100; ++i)
            out.write(capture);
        out.close();

        ui::MainWindow window;
        window.show();
        QVERIFY(window.traces()->openTrace(path));
        QVERIFY(window.session()->isLoadingTrace());
        auto *cancel = window.findChild<QToolButton *>(QStringLiteral("traceLoadCancel"));
        QVERIFY(cancel && cancel->isVisible());
        cancel->click();
        QVERIFY(QTest::qWaitFor([&] { return !window.session()->isLoadingTrace(); }, 10000));
        QCOMPARE(window.session()->source(), InspectorSession::Source::None);
        QVERIFY(!window.session()->replay());
        QVERIFY(!window.replayBar()->isVisible());
        QVERIFY(!cancel->isVisible());
        QCOMPARE(window.session()->store()->agents().size(), size_t(0));
        QVERIFY(!window.findChild<QMessageBox *>(QStringLiteral("warningBox"))); // cancelling is no error
    }

    void sampleTraceShowsAWholeSystem()
    {
        ui::MainWindow window;
        window.show();
        QVERIFY(window.traces()->openSampleTrace());
        QVERIFY(QTest::qWaitFor([&] { return !window.session()->isLoadingTrace(); }, 20000));
        QVERIFY(window.session()->replay());
        const SystemStore &store = *window.session()->store();
        QVERIFY2(liveAgents(store) >= 40, qPrintable(QString::number(liveAgents(store))));
        QVERIFY(store.messages().size() > 100);
        QVERIFY(!store.tasks().empty());
        QCOMPARE(window.session()->traceStats().badLineCount, 0);
    }

    // File → Compare with another run: the sample trace against its first half (cut by the
    // same code as convert --to): different, the first divergence named, its agents selected in
    // the window; against itself: equal.
    void compareRunsDialog()
    {
        const QString sample = QStringLiteral(MAPI_SOURCE_DIR "/resources/sample/demo-system.jsonl.zst");
        QTemporaryDir dir;
        const QString half = dir.filePath(QStringLiteral("half.jsonl.zst"));
        QVERIFY(writeTraceSlice(sample, half, std::nullopt, qint64(1795401348102)).failure == TraceSlice::Failure::None);
        ui::MainWindow window;
        window.resize(1200, 800);
        window.show();
        QVERIFY(openAndWait(window, sample));

        ui::RunDiffDialog *dialog = window.exports()->compareRuns(half);
        QSignalSpy compared(dialog, &ui::RunDiffDialog::compared);
        dialog->compare();
        QVERIFY(QTest::qWaitFor([&] { return compared.count() == 1; }, 30000));
        QCOMPARE(compared.front().at(0).toBool(), true);
        QVERIFY(dialog->result()["equal"] == Json(false));
        auto *verdict = dialog->findChild<QLabel *>(QStringLiteral("verdict"));
        auto *first = dialog->findChild<QLabel *>(QStringLiteral("firstDivergence"));
        QVERIFY(verdict && verdict->text().contains(QLatin1String("differ")));
        QVERIFY(first && first->text().startsWith(QLatin1String("First divergence at")));
        // The tree: the counts first, with the message counts of both runs.
        QTreeWidget *tree = dialog->tree();
        QVERIFY(tree->topLevelItem(0)->text(0).startsWith(QLatin1String("Counts")));
        bool messagesRow = false;
        for (int i = 0; i < tree->topLevelItem(0)->childCount(); ++i) {
            const QTreeWidgetItem *row = tree->topLevelItem(0)->child(i);
            if (row->text(0) == QLatin1String("messages")) {
                messagesRow = true;
                QCOMPARE(row->text(1), QString::number(window.session()->store()->messages().size()));
                QVERIFY(row->text(2).toLongLong() < row->text(1).toLongLong());
            }
        }
        QVERIFY(messagesRow);
        // "Select its agents": the divergence's agents of run A, selected in the window.
        QPushButton *select = nullptr;
        for (QPushButton *b : dialog->findChildren<QPushButton *>())
            if (b->text().contains(QLatin1String("Select its agents")))
                select = b;
        QVERIFY(select && select->isEnabled());
        select->click();
        const QStringList selected = window.selection()->selectedAgents();
        QCOMPARE(selected.size(), 2);
        for (const QString &id : selected)
            QVERIFY(window.session()->store()->agent(id));

        // Against itself.
        dialog->setOtherTrace(sample);
        dialog->compare();
        QVERIFY(QTest::qWaitFor([&] { return compared.count() == 2; }, 30000));
        QVERIFY(dialog->result()["equal"] == Json(true));
        QVERIFY(verdict->text().contains(QLatin1String("equal")));
        dialog->close();
    }

    // The causal chain of a message: the inspector's Chain tab lists its causes and effects, the
    // hub publishes the chain (the timeline and topology light it up), Alt+arrows walk it.
    // File → Export incident…: preview counts, a bundle written with pictures drawn from the
    // redacted bundle; opened, it brings its bookmarks, selection and pictures back; a deep link
    // goes to its time and agent.
    void incidentBundleAndDeepLink()
    {
        const QString sample = QStringLiteral(MAPI_SOURCE_DIR "/resources/sample/demo-system.jsonl.zst");
        QTemporaryDir dir;
        const QString trace = dir.filePath(QStringLiteral("run.jsonl.zst"));
        QVERIFY(QFile::copy(sample, trace));
        ui::MainWindow window;
        window.resize(1200, 800);
        window.show();
        QVERIFY(openAndWait(window, trace));
        ReplayController *replay = window.session()->replay();
        QVERIFY(replay);
        const qint64 from = replay->startMs() + 15000, to = replay->endMs() - 5000;
        replay->seek(from + 2000);
        QVERIFY(window.replayBar()->addBookmark(QStringLiteral("stall"), QStringLiteral("the planner waits")));
        const SystemStore *store = window.session()->store();
        QString agent;
        for (const Agent &a : store->agents())
            if (!a.unregistered && a.name.contains(QLatin1String("planner"), Qt::CaseInsensitive))
                agent = a.id;
        QVERIFY(!agent.isEmpty());
        window.selection()->selectAgents({agent});

        ui::IncidentDialog *dialog = window.exports()->exportIncident();
        QVERIFY(dialog);
        dialog->setRange(from, to);
        dialog->setNote(QStringLiteral("the planner stalls after the handoff"));
        dialog->setRedaction({QStringLiteral("content")}, {QStringLiteral("handoff")});
        QSignalSpy previewed(dialog, &ui::IncidentDialog::previewed);
        dialog->preview();
        QVERIFY(QTest::qWaitFor([&] { return previewed.count() == 1; }, 30000));
        QCOMPARE(previewed.front().at(0).toBool(), true);
        QVERIFY2(dialog->previewText().contains(QLatin1String("pattern <code>handoff</code>")), qPrintable(dialog->previewText()));
        QVERIFY(dialog->lastResult().redaction.perKeyName.at(0) > 0);
        QVERIFY(dialog->lastResult().recordsLeftOutBeforeFrom > 0);

        const QString bundle = dir.filePath(QStringLiteral("b.incident.jsonl.zst"));
        QSignalSpy exported(dialog, &ui::IncidentDialog::exported);
        auto contents = [](const QString &path) {
            QFile f(path);
            return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
        };
        const QByteArray traceBefore = contents(trace);
        QVERIFY(!traceBefore.isEmpty());
        dialog->exportTo(trace); // the run's own file: refused, untouched
        QCOMPARE(exported.size(), 1);
        QCOMPARE(exported.takeFirst().at(0).toBool(), false);
        QCOMPARE(contents(trace), traceBefore);
        dialog->exportTo(bundle);
        QVERIFY(QTest::qWaitFor([&] { return exported.count() == 1; }, 60000));
        QVERIFY2(exported.front().at(0).toBool(), qPrintable(exported.front().at(1).toString()));
        QVERIFY(!QFile::exists(bundle + QStringLiteral(".slice.jsonl.zst")));
        dialog->close();

        // Opened in a window of its own: the bundle's bookmark, selection and pictures.
        ui::MainWindow second;
        second.resize(1200, 800);
        second.show();
        QVERIFY(openAndWait(second, bundle));
        QVERIFY(second.traces()->openIncident());
        const IncidentInfo &info = *second.traces()->openIncident();
        QVERIFY2(QRegularExpression(QStringLiteral("^the planner stalls after the REDACTED-\\d+$")).match(info.content.note).hasMatch(),
                 qPrintable(info.content.note));
        QCOMPARE(int(info.content.pictures.size()), 3);
        for (const BundlePicture &picture : info.content.pictures) {
            QImage image;
            QVERIFY(image.loadFromData(picture.png, "PNG"));
            QVERIFY(image.width() > 500 && image.height() > 300);
        }
        // Seeking replays the records again, skip records included: no gap is made up.
        ReplayController *bundleReplay = second.session()->replay();
        QVERIFY(bundleReplay);
        QCOMPARE(second.session()->store()->counters().gaps, qint64(0));
        bundleReplay->seek(bundleReplay->startMs() + (bundleReplay->endMs() - bundleReplay->startMs()) / 2);
        bundleReplay->seek(bundleReplay->endMs());
        QCOMPARE(second.session()->store()->counters().gaps, qint64(0));
        QCOMPARE(second.replayBar()->bookmarks().size(), 1);
        QCOMPARE(second.replayBar()->bookmarks().front().title, QStringLiteral("stall"));
        QCOMPARE(second.selection()->selectedAgents(), QStringList{agent});
        auto *infoDialog = second.findChild<ui::IncidentInfoDialog *>();
        QVERIFY(infoDialog && infoDialog->isVisible());
        QCOMPARE(infoDialog->pictureCount(), 3);
        // Issue 41 item 9: a picture opens at full size.
        auto *thumbnail = infoDialog->findChild<QToolButton *>(QStringLiteral("incidentPicture-topology"));
        QVERIFY(thumbnail);
        thumbnail->click();
        auto *full = infoDialog->findChild<QLabel *>(QStringLiteral("incidentPictureFull"));
        QVERIFY(full && full->isVisible());
        QCOMPARE(full->pixmap().width(), 1400);
        // Nothing a pattern matched is left in the records.
        TraceReadStats readStats;
        QString readError;
        qint64 records = 0, matches = 0;
        QVERIFY(readTrace(bundle, [&](const TraceRecord &r) { ++records; matches += r.raw.contains("handoff") ? 1 : 0; return true; },
                          readStats, &readError));
        QVERIFY(records > 100);
        QCOMPARE(matches, qint64(0));

        // A deep link to the first window's trace: its time and agent.
        DeepLink link;
        link.file = trace;
        link.timeMs = from + 5000;
        link.agentId = agent;
        window.selection()->selectAgents({});
        QVERIFY(window.traces()->openDeepLink(makeDeepLink(link)));
        QCOMPARE(window.session()->replay()->positionMs(), from + 5000);
        QCOMPARE(window.selection()->selectedAgents(), QStringList{agent});
        QCOMPARE(parseDeepLink(window.traces()->deepLinkHere())->timeMs, std::optional<qint64>(from + 5000));
        QVERIFY(!window.traces()->openDeepLink(QStringLiteral("map-inspector://open?file=relative.jsonl")));
    }

    void causalChainInTheInspector()
    {
        const QString sample = QStringLiteral(MAPI_SOURCE_DIR "/resources/sample/demo-system.jsonl.zst");
        ui::MainWindow window;
        window.resize(1200, 800);
        window.show();
        QVERIFY(openAndWait(window, sample));
        const SystemStore &store = *window.session()->store();
        CausalChains chains(store);
        chains.update();
        int row = -1;
        for (size_t r = 0; r < store.messages().size() && row < 0; ++r)
            if (chains.causeOf(int(r)) >= 0 && chains.effectsOf(int(r)).size() >= 1 && chains.effectsOf(chains.causeOf(int(r))).size() >= 2)
                row = int(r);
        QVERIFY(row >= 0);
        const int cause = chains.causeOf(row);
        const std::vector<int> siblings = chains.effectsOf(cause);

        window.selection()->focus(ui::SelectionHub::Kind::Message, QString::number(row));
        auto *tree = window.findChild<QTreeWidget *>(QStringLiteral("chainTree"));
        QVERIFY(tree);
        const size_t causes = chains.chainTo(row).size() - 1;
        QCOMPARE(tree->topLevelItemCount(), int(causes) + 1);
        QTreeWidgetItem *focused = tree->topLevelItem(int(causes));
        QCOMPARE(focused->data(0, Qt::UserRole).toInt(), row);
        QVERIFY(focused->font(0).bold());
        QCOMPARE(focused->childCount(), int(chains.effectsOf(row).size()));
        QCOMPARE(tree->topLevelItem(int(causes) - 1)->data(0, Qt::UserRole).toInt(), cause);
        const std::vector<int> &published = window.selection()->chain();
        QVERIFY(window.selection()->inChain(row) && window.selection()->inChain(cause)
                && window.selection()->inChain(chains.effectsOf(row).front()));
        QCOMPARE(published[causes], row); // causal order: the causes, then it

        // Walking: Alt+Up to the cause, Alt+Down to its first effect, Alt+Right to the next.
        window.action(QStringLiteral("goToCause"))->trigger();
        QCOMPARE(window.selection()->focusKey(), QString::number(cause));
        window.action(QStringLiteral("goToEffect"))->trigger();
        QCOMPARE(window.selection()->focusKey(), QString::number(siblings.front()));
        window.action(QStringLiteral("goToNextSibling"))->trigger();
        QCOMPARE(window.selection()->focusKey(), QString::number(siblings[1]));
        window.action(QStringLiteral("goToPreviousSibling"))->trigger();
        QCOMPARE(window.selection()->focusKey(), QString::number(siblings[0]));
        // Activating an entry of the tab inspects that message.
        QTreeWidgetItem *first = tree->topLevelItem(0);
        const QString firstKey = QString::number(first->data(0, Qt::UserRole).toInt());
        emit tree->itemActivated(first, 0);
        QTRY_COMPARE(window.selection()->focusKey(), firstKey);
        // An agent has no chain: the hub's is cleared.
        window.selection()->focus(ui::SelectionHub::Kind::Agent, store.agents().front().id);
        QVERIFY(window.selection()->chain().empty());
    }

    void exportsParseAndCount()
    {
        ui::MainWindow window;
        window.resize(1200, 800);
        window.show();
        QVERIFY(openAndWait(window, kCapture));
        const SystemStore &store = *window.session()->store();
        QTemporaryDir dir;
        QString error;
        // Exports run in slices: exportFinished() says when one ended, and how.
        auto exportTo = [&window, &error](ui::ExportController::Kind kind, const QString &path) {
            QSignalSpy finished(window.exports(), &ui::ExportController::exportFinished);
            auto *progress = window.findChild<QProgressBar *>(QStringLiteral("exportProgress"));
            QAction *exportAction = window.action(QStringLiteral("exportMessagesCsv"));
            window.exports()->exportTo(kind, path);
            const bool sliced = kind == ui::ExportController::Kind::ChromeTrace || kind == ui::ExportController::Kind::AgentsCsv;
            if (sliced && finished.isEmpty()) {
                // Written in slices: the status bar shows it, and no second export starts meanwhile.
                if (!window.exports()->isExporting() || !progress || !progress->isVisible() || exportAction->isEnabled())
                    return false;
            }
            if (!QTest::qWaitFor([&] { return finished.count() == 1; }, 20000))
                return false;
            if (window.exports()->isExporting() || progress->isVisible() || !exportAction->isEnabled())
                return false;
            error = finished.front().at(1).toString();
            return finished.front().at(0).toBool();
        };

        const QString chrome = dir.filePath(QStringLiteral("all.json"));
        QVERIFY2(exportTo(ui::ExportController::Kind::ChromeTrace, chrome), qPrintable(error));
        QFile f(chrome);
        QVERIFY(f.open(QIODevice::ReadOnly));
        QJsonParseError parseError;
        const QJsonDocument doc = QJsonDocument::fromJson(f.readAll(), &parseError);
        QCOMPARE(parseError.error, QJsonParseError::NoError);
        const QJsonArray all = doc.object().value(QStringLiteral("traceEvents")).toArray();
        QVERIFY(!all.isEmpty());

        // With agents selected: only what concerns them, so fewer events.
        QString worker;
        for (const Agent &a : store.agents())
            if (!a.placeholder && a.role == QLatin1String("worker"))
                worker = a.id;
        QVERIFY(!worker.isEmpty());
        window.selection()->selectAgents({worker});
        const QString some = dir.filePath(QStringLiteral("some.json"));
        QVERIFY2(exportTo(ui::ExportController::Kind::ChromeTrace, some), qPrintable(error));
        QFile g(some);
        QVERIFY(g.open(QIODevice::ReadOnly));
        const QJsonArray selected = QJsonDocument::fromJson(g.readAll()).object().value(QStringLiteral("traceEvents")).toArray();
        QVERIFY(!selected.isEmpty());
        QVERIFY(selected.size() < all.size());

        // OpenTelemetry: every agent is an invoke_agent span, every message an event; the file
        // opens again as the same agents and messages.
        const QString otlp = dir.filePath(QStringLiteral("run.otlp.json"));
        QVERIFY2(exportTo(ui::ExportController::Kind::OpenTelemetry, otlp), qPrintable(error));
        {
            SystemStore back;
            const TraceLoadResult r = loadTraceInto(back, otlp);
            QVERIFY2(r.ok, qPrintable(r.error));
            QCOMPARE(r.stats.format, QStringLiteral("otlp"));
            QCOMPARE(back.agents().size(), store.agents().size());
            QCOMPARE(back.messages().size(), store.messages().size());
            QCOMPARE(back.tasks().size(), store.tasks().size());
        }

        const QString csv = dir.filePath(QStringLiteral("agents.csv"));
        QVERIFY2(exportTo(ui::ExportController::Kind::AgentsCsv, csv), qPrintable(error));
        QFile c(csv);
        QVERIFY(c.open(QIODevice::ReadOnly));
        const QList<QByteArray> rows = c.readAll().trimmed().split('\n');
        QCOMPARE(qsizetype(rows.size()), qsizetype(store.agents().size()) + 1); // header + one row per agent

        const QString png = dir.filePath(QStringLiteral("topology.png"));
        QVERIFY2(exportTo(ui::ExportController::Kind::TopologyPicture, png), qPrintable(error));
        QImage image(png);
        QVERIFY(!image.isNull());
        QVERIFY(image.width() > 100 && image.height() > 100);

        const QString svg = dir.filePath(QStringLiteral("timeline.svg"));
        QVERIFY2(exportTo(ui::ExportController::Kind::TimelinePicture, svg), qPrintable(error));
        QFile s(svg);
        QVERIFY(s.open(QIODevice::ReadOnly));
        const QByteArray svgText = s.readAll();
        QVERIFY(svgText.contains("<svg"));
        QVERIFY(svgText.contains("<path") || svgText.contains("<polyline") || svgText.contains("<line"));

        QVERIFY(!exportTo(ui::ExportController::Kind::AgentsCsv, dir.filePath(QStringLiteral("no/such/dir/a.csv"))));
        QVERIFY(!error.isEmpty());
    }
};

QTEST_MAIN(ReplayWindowTest)
#include "tst_replay.moc"
