// TraceController on its own, over a session without a window: a file that cannot be read is
// refused with a warning and loads nothing; a trace loads with its progress said and the replay
// bar attached; a link to it goes to its time and agent, and says what it cannot find; a damaged
// trace says which lines it lost; recording and saving wait for a live connection. Offscreen;
// any Qt warning fails.
#include "GuiTestSupport.h"

#include "alerts/AlertMonitor.h"
#include "common/DeepLink.h"
#include "controllers/TraceController.h"
#include "replay/ReplayBar.h"
#include "session/InspectorSession.h"
#include "session/SelectionHub.h"
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
    QAction openTrace, openSample, record, saveSession, saveRange, timeTravel, backToLive, incidentInfo, copyLink;
    TraceController traces{&session, &hub, &monitor, replayBar,
                           {&openTrace, &openSample, &record, &saveSession, &saveRange, &timeTravel, &backToLive,
                            &incidentInfo, &copyLink},
                           &window};
    QList<std::pair<bool, bool>> loading; // loadingChanged, in order
    QStringList messages;                 // statusMessage, in order

    Fixture()
    {
        record.setCheckable(true);
        monitor.setStore(session.store());
        QObject::connect(&traces, &TraceController::loadingChanged, &window,
                         [this](bool on, bool cancellable) { loading.append({on, cancellable}); });
        QObject::connect(&traces, &TraceController::statusMessage, &window, [this](const QString &text) { messages << text; });
    }
    bool load(const QString &path)
    {
        QSignalSpy finished(&session, &InspectorSession::traceLoadFinished);
        if (!traces.openTrace(path))
            return false;
        return finished.wait(30000) && finished.first().at(0).toBool();
    }
    QString warningText() const
    {
        const auto *box = window.findChild<QMessageBox *>(QStringLiteral("warningBox"));
        return box ? box->windowTitle() + u'\n' + box->text() : QString();
    }
};

} // namespace

class TraceControllerTest : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void initTestCase() { mapi::test::failOnQtWarnings(); }

    void aFileThatCannotBeReadIsRefused()
    {
        Fixture f;
        QVERIFY(!f.traces.openTrace(QStringLiteral("/nonexistent/run.jsonl.zst")));
        QVERIFY2(f.warningText().contains(QLatin1String("does not exist")), qPrintable(f.warningText()));
        QVERIFY(f.loading.isEmpty());
        QCOMPARE(f.session.source(), InspectorSession::Source::None);
    }

    void aTraceLoadsAndTheReplayBarIsAttached()
    {
        Fixture f;
        QVERIFY(!f.copyLink.isEnabled());
        QSignalSpy recent(&f.traces, &TraceController::recentTracesChanged);
        QVERIFY(f.load(QStringLiteral(MAPI_SAMPLE_TRACE)));
        QCOMPARE(f.loading.size(), 2);
        QCOMPARE(f.loading.first(), std::make_pair(true, true)); // a trace load can be cancelled
        QCOMPARE(f.loading.last(), std::make_pair(false, false));
        QCOMPARE(recent.size(), 1);
        QVERIFY(f.replayBar->isVisibleTo(&f.window));
        QVERIFY(f.session.replay());
        QVERIFY(f.copyLink.isEnabled());
        QVERIFY(!f.record.isEnabled()); // a trace is not recorded
        QVERIFY(!f.saveSession.isEnabled());
        QVERIFY(!f.timeTravel.isEnabled());
        QVERIFY(f.traces.traceDamageSummary().isEmpty());
        QString error;
        QVERIFY(!f.traces.startRecording(QDir::temp().filePath(QStringLiteral("never.jsonl")), &error));
        QVERIFY(!error.isEmpty());
        // The link here names the file and the replay position.
        const ErrorOr<DeepLink> here = parseDeepLink(f.traces.deepLinkHere());
        QVERIFY(here);
        QCOMPARE(QFileInfo(here->file), QFileInfo(QStringLiteral(MAPI_SAMPLE_TRACE)));
        QCOMPARE(*here->timeMs, f.session.replay()->positionMs());
    }

    void aLinkGoesToItsTimeAndAgent()
    {
        Fixture f;
        QVERIFY(f.load(QStringLiteral(MAPI_SAMPLE_TRACE)));
        ReplayController *replay = f.session.replay();
        QVERIFY(!f.session.store()->agents().empty());
        const QString agent = f.session.store()->agents().front().id;
        DeepLink link;
        link.file = QStringLiteral(MAPI_SAMPLE_TRACE);
        link.timeMs = (replay->startMs() + replay->endMs()) / 2;
        link.agentId = agent;
        QVERIFY(f.traces.openDeepLink(makeDeepLink(link))); // already open: only goes there
        QCOMPARE(replay->positionMs(), *link.timeMs);
        QCOMPARE(f.hub.selectedAgents(), QStringList{agent});
        QCOMPARE(f.hub.focusKey(), agent);
        link.agentId = QStringLiteral("no-such-agent");
        QVERIFY(f.traces.openDeepLink(makeDeepLink(link)));
        QVERIFY2(f.messages.last().contains(QLatin1String("agent no-such-agent")) && f.messages.last().contains(QLatin1String("not in this trace")),
                 qPrintable(f.messages.last()));
        QVERIFY(!f.traces.openDeepLink(QStringLiteral("map-inspector://nonsense")));
        QVERIFY(f.warningText().startsWith(QLatin1String("Cannot open link")));
    }

    void aDamagedTraceSaysWhichLinesItLost()
    {
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("damaged.ndjson"));
        QFile source(QStringLiteral(MAPI_TEST_DATA "/scenario-basic.ndjson"));
        QVERIFY(source.open(QIODevice::ReadOnly));
        QByteArray text = source.readAll();
        const int lines = int(text.count('\n'));
        text += "{\"this is\": not json\n";
        QFile out(path);
        QVERIFY(out.open(QIODevice::WriteOnly));
        out.write(text);
        out.close();
        Fixture f;
        QVERIFY(f.load(path));
        QCOMPARE(f.traces.traceDamageSummary(), QStringLiteral("1 bad line(s)")); // no translation loaded: the source text
        f.traces.reportTraceDamage();
        const QString report = f.warningText();
        QVERIFY2(report.startsWith(QLatin1String("Damaged trace")) && report.contains(QString::number(lines + 1)), qPrintable(report));
    }
};

QTEST_MAIN(TraceControllerTest)
#include "tst_trace_controller.moc"
