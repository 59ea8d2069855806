// The window's recordings and saved sessions against the official MAP server (demo system,
// extended mode): File → Record on the running connection, the journal that serves live frames,
// "Save session as" whole and as a range, each replayed into the window and compared with the
// live model. Any Qt warning fails the test.
#include "WindowLiveSupport.h"

#include "alerts/AlertMonitor.h"
#include "trace/Trace.h"

#include <QDir>
#include <QFile>
#include <QSignalSpy>
#include <QTemporaryDir>

#include <algorithm>

using namespace mapi;
using namespace mapi::test;

class WindowRecordingTest : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void initTestCase()
    {
        QApplication::setOrganizationName(QStringLiteral("MAP Inspector tests"));
        qInstallMessageHandler(failOnWarnings);
    }

    // File → Record on a running live connection: nothing reconnects and nothing of the operator's
    // picture goes (the model and every open alert stay); the trace begins with the session's
    // history from its first frame, then the live frames; opened in the window, its replay equals
    // the live model (agents with states, parents, scopes; scopes with members; events,
    // messages and tasks counted).
    void recordKeepsTheConnectionAndReplaysEqualToLive()
    {
        DemoProcess demo;
        QVERIFY2(demo.start(QStringLiteral("extended"), 0, kDemoOptions), qPrintable(demo.error()));
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("live.jsonl.zst"));

        ui::MainWindow window;
        connectAndFill(window, demo.url());
        if (QTest::currentTestFailed())
            return;
        const SystemStore *store = window.session()->store();
        const size_t eventsBefore = store->events().size();
        const QString sessionBefore = store->connection().sessionId;
        const std::string serverName = store->connection().serverName.toStdString();
        QVERIFY(!serverName.empty());
        QStringList alertsBefore;
        for (const auto &[id, alert] : window.alertMonitor()->openAlerts())
            alertsBefore << id;
        QString error;
        QVERIFY2(window.traces()->startRecording(path, &error), qPrintable(error));
        QVERIFY(window.action(QStringLiteral("record"))->isChecked());
        QVERIFY2(window.session()->recordingNote().contains(QLatin1String("nothing was reconnected")),
                 qPrintable(window.session()->recordingNote()));
        QCOMPARE(window.session()->clientState(), ClientState::Live);
        QVERIFY(store->events().size() >= eventsBefore); // the model was not started over
        QStringList alertsAfter;
        for (const auto &[id, alert] : window.alertMonitor()->openAlerts())
            alertsAfter << id;
        QCOMPARE(alertsAfter, alertsBefore); // nor were the alerts
        QTRY_VERIFY_WITH_TIMEOUT(store->events().size() >= eventsBefore + 40, 20000); // live frames go on
        QCOMPARE(store->connection().sessionId, sessionBefore); // the same connection

        QSignalSpy finished(window.session(), &InspectorSession::recordingFinished);
        window.session()->disconnectFromServer();
        QTRY_COMPARE_WITH_TIMEOUT(finished.size(), 1, 10000);
        QVERIFY(finished.first().at(2).toString().isEmpty());
        // Every input the worker made before it closed is applied: its last one says "closed".
        QTRY_COMPARE_WITH_TIMEOUT(store->connection().state, QStringLiteral("closed"), 10000);
        const Json live = modelState(*store);
        QVERIFY(live["agents"].size() >= 20);

        // One connection in the trace, from its handshake: the history, then the live frames.
        int opens = 0;
        bool handshakeFirst = false;
        {
            TraceFileReader reader;
            QVERIFY2(reader.open(path, &error), qPrintable(error));
            TraceRecord r;
            bool sawSend = false;
            while (reader.next(r)) {
                opens += recordDir(r.dir) == RecordDir::Open;
                if (recordDir(r.dir) == RecordDir::Send && !sawSend) {
                    sawSend = true;
                    handshakeFirst = r.raw.contains("map/connect");
                }
            }
            QCOMPARE(reader.stats().header.value("server", Json::object()).value("name", ""), serverName); // said before it began
        }
        QCOMPARE(opens, 1);
        QVERIFY(handshakeFirst);

        QVERIFY(window.traces()->openTrace(path));
        QTRY_VERIFY_WITH_TIMEOUT(!window.session()->isLoadingTrace(), 20000);
        QVERIFY(window.session()->replay());
        QCOMPARE(window.session()->traceStats().badLineCount, 0);
        const Json replayed = modelState(*store);
        QCOMPARE(QString::fromStdString(replayed["agents"].dump()), QString::fromStdString(live["agents"].dump()));
        QCOMPARE(QString::fromStdString(replayed["scopes"].dump()), QString::fromStdString(live["scopes"].dump()));
        for (const char *count : {"events", "messages", "tasks", "gaps", "problems", "duplicates"})
            QVERIFY2(replayed["counts"][count] == live["counts"][count],
                     qPrintable(QStringLiteral("%1: replayed %2, live %3")
                                    .arg(QLatin1String(count), QString::fromStdString(replayed["counts"][count].dump()),
                                         QString::fromStdString(live["counts"][count].dump()))));
        window.close();
    }

    // A live session journals from its first frame: the inspector's frame text for a live
    // event is read back from the journal (no frame is kept in memory), "Save session as"
    // writes everything from the first frame (the handshake and snapshot, before the command)
    // as a trace whose replay equals the live model, and the journal's folder goes when the
    // session is replaced.
    void journalServesFramesAndSaveSessionReplaysLive()
    {
        DemoProcess demo;
        QVERIFY2(demo.start(QStringLiteral("extended"), 0, kDemoOptions), qPrintable(demo.error()));
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("saved.jsonl.zst"));

        ui::MainWindow window;
        connectAndFill(window, demo.url());
        if (QTest::currentTestFailed())
            return;
        const SystemStore *store = window.session()->store();
        const QString folder = window.session()->journalFolder();
        QVERIFY(QDir(folder).exists());
        QVERIFY(window.action(QStringLiteral("saveSession"))->isEnabled());

        // Frames come from the journal: none is kept with its event.
        const size_t row = store->events().size() - 1;
        QVERIFY(store->events().keptFrame(row).isEmpty());
        QVERIFY(store->events().journalRef(row).isValid());
        const QByteArray frame = store->eventFrame(int(row));
        QVERIFY(frame.contains(store->events().eventId(row).toUtf8()));

        QSignalSpy saved(window.session(), &InspectorSession::sessionSaved);
        window.session()->disconnectFromServer();
        QTRY_VERIFY_WITH_TIMEOUT(window.session()->clientState() == ClientState::Closed, 10000);
        QTRY_COMPARE_WITH_TIMEOUT(store->connection().state, QStringLiteral("closed"), 10000); // its last input: all applied
        QString error;
        QVERIFY2(window.session()->saveSessionAs(path, &error), qPrintable(error));
        QTRY_COMPARE_WITH_TIMEOUT(saved.size(), 1, 10000);
        QVERIFY2(saved.first().at(0).toBool(), qPrintable(saved.first().at(2).toString()));
        const Json live = modelState(*store);

        // A time range of it: the frames received in the range, and before it only requests and
        // socket records (the context later responses need).
        QList<qint64> received;
        {
            TraceFileReader reader;
            QVERIFY2(reader.open(path, &error), qPrintable(error));
            TraceRecord r;
            while (reader.next(r))
                if (recordDir(r.dir) == RecordDir::Recv)
                    received << r.timeMs;
        }
        QVERIFY(received.size() > 100);
        const qint64 from = received[received.size() / 2];
        const qint64 to = received[received.size() * 3 / 4];
        const qint64 inRange = std::count_if(received.begin(), received.end(), [&](qint64 t) { return t >= from && t <= to; });
        const QString rangePath = dir.filePath(QStringLiteral("range.jsonl.zst"));
        QVERIFY2(window.session()->saveSessionAs(rangePath, &error, from, to), qPrintable(error));
        QTRY_COMPARE_WITH_TIMEOUT(saved.size(), 2, 10000);
        QVERIFY2(saved.at(1).at(0).toBool(), qPrintable(saved.at(1).at(2).toString()));
        {
            TraceFileReader reader;
            QVERIFY2(reader.open(rangePath, &error), qPrintable(error));
            TraceRecord r;
            qint64 recv = 0;
            while (reader.next(r)) {
                QVERIFY(r.timeMs <= to);
                if (recordDir(r.dir) == RecordDir::Recv) {
                    QVERIFY(r.timeMs >= from);
                    ++recv;
                }
            }
            QCOMPARE(recv, inRange);
            QVERIFY(!QFile::exists(rangePath + QStringLiteral(".journal-copy.jsonl.zst"))); // the copy went
        }

        QVERIFY(window.traces()->openTrace(path));
        QTRY_VERIFY_WITH_TIMEOUT(!window.session()->isLoadingTrace(), 20000);
        QVERIFY(!QDir(folder).exists()); // the live session's journal went with it
        QCOMPARE(window.session()->traceStats().badLineCount, 0);
        const Json replayed = modelState(*store);
        QCOMPARE(QString::fromStdString(replayed["agents"].dump()), QString::fromStdString(live["agents"].dump()));
        for (const char *count : {"events", "messages", "tasks"})
            QVERIFY2(replayed["counts"][count] == live["counts"][count],
                     qPrintable(QStringLiteral("%1: replayed %2, live %3")
                                    .arg(QLatin1String(count), QString::fromStdString(replayed["counts"][count].dump()),
                                         QString::fromStdString(live["counts"][count].dump()))));
        window.close();
    }

};

QTEST_MAIN(WindowRecordingTest)
#include "tst_window_recording.moc"
