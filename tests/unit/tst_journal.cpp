// The live session's journal (core/session/SessionJournal.h): what is written reads back
// byte for byte (from the open frame and from disk), each part is a trace, retention drops the
// oldest parts and says so, a failing disk keeps frames in a bounded memory ring and journaling
// resumes, and a killed session's journal is found and reads as a trace.
#include "session/SessionJournal.h"
#include "trace/Trace.h"

#include <QCoreApplication>
#include <QProcess>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QThread>
#include <QtTest>

#include <random>

using namespace mapi;

namespace {

// A map/event frame of about `padding` more bytes, different for each n (so that it compresses
// like traffic, not like a repeated line).
QByteArray frameNumber(qint64 n, int padding = 200)
{
    static std::mt19937 random(7);
    QByteArray noise;
    noise.reserve(padding);
    for (int i = 0; i < padding; ++i)
        noise.append(char('a' + random() % 26));
    return QByteArray(R"({"jsonrpc":"2.0","method":"map/event","params":{"sequenceNumber":)") + QByteArray::number(n)
        + R"(,"eventId":"e)" + QByteArray::number(n) + R"(","event":{"type":"agent.state.changed","note":")" + noise
        + R"("}}})";
}

TraceRecord received(qint64 n, const QByteArray &frame)
{
    return {QDateTime::currentMSecsSinceEpoch() + n % 2, QStringLiteral("recv"), 1, frame, false, Json()};
}

qint64 countRecords(const QString &path)
{
    TraceReadStats stats;
    qint64 n = 0;
    QString error;
    readTrace(path, [&](const TraceRecord &r) { n += r.dir == QLatin1String("recv") ? 1 : 0; return true; }, stats, &error);
    return n;
}

// The child of killedSessionIsOfferedAndReadsAsATrace: journals records until it is killed.
int runJournalChild(const QString &folder)
{
    SessionJournal journal;
    journal.open(folder, QStringLiteral("ws://127.0.0.1:1/child"), nullptr);
    for (qint64 n = 0;; ++n) {
        journal.write(received(n, frameNumber(n)));
        if (n == 500)
            std::printf("ready\n"), std::fflush(stdout);
        if (n % 50 == 0) {
            QCoreApplication::processEvents();
            QThread::msleep(5);
        }
    }
}

} // namespace

class JournalTest : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void initTestCase() { qputenv("MAPI_SESSIONS_DIR", QByteArray()); }

    void framesReadBackFromTheOpenFrameAndFromDisk()
    {
        QTemporaryDir dir;
        SessionJournal journal;
        QVERIFY(journal.open(dir.filePath(QStringLiteral("s")), QStringLiteral("ws://h:1"), nullptr));
        std::vector<std::pair<FrameRef, QByteArray>> written;
        for (qint64 n = 0; n < 12000; ++n) { // about 3 MiB: several frames on disk, one open
            const QByteArray frame = frameNumber(n);
            written.emplace_back(journal.write(received(n, frame)), frame);
        }
        QVERIFY(journal.parts().size() == 1);
        QVERIFY(journal.bytesOnDisk() > 100000); // frames reached the disk before the end
        for (const auto &[ref, frame] : written)
            QCOMPARE(journal.readFrame(ref), frame); // the last ones from the open frame
        journal.flush();
        for (size_t i = 0; i < written.size(); i += 97)
            QCOMPARE(journal.readFrame(written[i].first), written[i].second);
        // Secrets never reach the journal.
        const FrameRef secret = journal.write(received(1, R"({"jsonrpc":"2.0","id":1,"method":"map/connect","params":{"auth":{"token":"hunter2"}}})"));
        QVERIFY(!journal.readLine(secret).contains("hunter2"));
        QVERIFY(journal.readLine(secret).contains("REDACTED"));
        QCOMPARE(journal.readFrame(FrameRef{journal.contentBytes() + 10, 5}), QByteArray());
    }

    void eachPartIsATraceAndTheFolderGoesOnClose()
    {
        QTemporaryDir dir;
        const QString folder = dir.filePath(QStringLiteral("s"));
        SessionJournal journal;
        JournalOptions options;
        options.partBytes = 256 * 1024;
        journal.setOptions(options);
        QVERIFY(journal.open(folder, QStringLiteral("ws://h:1"), nullptr));
        for (qint64 n = 0; n < 20000; ++n)
            journal.write(received(n, frameNumber(n)));
        journal.flush();
        const QStringList parts = journal.parts();
        QVERIFY2(parts.size() >= 3, qPrintable(QString::number(parts.size())));
        qint64 total = 0;
        for (const QString &part : parts)
            total += countRecords(part);
        QCOMPARE(total, qint64(20000));
        journal.close(false);
        QVERIFY(!QFileInfo::exists(folder));
    }

    void retentionDropsTheOldestPartsAndSaysWhere()
    {
        QTemporaryDir dir;
        SessionJournal journal;
        JournalOptions options;
        options.maxBytes = 2 * 1024 * 1024;
        options.partBytes = 256 * 1024;
        journal.setOptions(options);
        QSignalSpy dropped(&journal, &SessionJournal::historyDropped);
        QVERIFY(journal.open(dir.filePath(QStringLiteral("s")), QStringLiteral("ws://h:1"), nullptr));
        std::vector<std::pair<FrameRef, QByteArray>> written;
        for (qint64 n = 0; n < 60000; ++n) { // ~8 MiB compressed: four times the bound
            const QByteArray frame = frameNumber(n);
            written.emplace_back(journal.write(received(n, frame)), frame);
            QVERIFY(journal.bytesOnDisk() <= options.maxBytes + options.partBytes + SessionJournal::kFrameBytes);
        }
        QVERIFY(!dropped.isEmpty());
        const qint64 firstKept = dropped.last().at(0).toLongLong();
        QCOMPARE(firstKept, journal.firstKeptOffset());
        qint64 onDisk = 0;
        for (const QString &part : journal.parts())
            onDisk += QFileInfo(part).size();
        QCOMPARE(onDisk, journal.bytesOnDisk());
        int gone = 0;
        for (const auto &[ref, frame] : written) {
            if (ref.offset < firstKept) {
                QCOMPARE(journal.readFrame(ref), QByteArray());
                ++gone;
            } else {
                QCOMPARE(journal.readFrame(ref), frame);
            }
        }
        QVERIFY(gone > 30000);
        QCOMPARE(journal.recordsDropped(), qint64(gone)); // every dropped record is counted, once
    }

    void partsOlderThanTheAgeLimitGo()
    {
        QTemporaryDir dir;
        SessionJournal journal;
        JournalOptions options;
        options.maxAgeMs = 60 * 1000;
        options.partBytes = 128 * 1024;
        journal.setOptions(options);
        QSignalSpy dropped(&journal, &SessionJournal::historyDropped);
        QVERIFY(journal.open(dir.filePath(QStringLiteral("s")), QStringLiteral("ws://h:1"), nullptr));
        const qint64 hourAgo = QDateTime::currentMSecsSinceEpoch() - 3600 * 1000;
        FrameRef old;
        for (qint64 n = 0; n < 3000; ++n) {
            const FrameRef ref = journal.write({hourAgo + n, QStringLiteral("recv"), 1, frameNumber(n), false, Json()});
            if (n == 0)
                old = ref;
        }
        journal.flush();
        QVERIFY(dropped.isEmpty() || dropped.last().at(1).toLongLong() < hourAgo + 3000);
        const QByteArray recent = frameNumber(99);
        FrameRef kept;
        for (qint64 n = 0; n < 3000; ++n)
            kept = journal.write(received(n, n == 2999 ? recent : frameNumber(n)));
        journal.flush();
        QVERIFY(!dropped.isEmpty());
        QCOMPARE(journal.readFrame(old), QByteArray());
        QCOMPARE(journal.readFrame(kept), recent);
        QVERIFY(dropped.last().at(1).toLongLong() >= hourAgo);
        QVERIFY(dropped.last().at(1).toLongLong() < hourAgo + 3000); // the newest dropped record's time
    }

    void aFailingDiskKeepsABoundedRingAndJournalingResumes()
    {
        QTemporaryDir dir;
        SessionJournal journal;
        JournalOptions options;
        options.memoryRingBytes = 1024 * 1024;
        journal.setOptions(options);
        QSignalSpy state(&journal, &SessionJournal::journalStateChanged);
        QVERIFY(journal.open(dir.filePath(QStringLiteral("s")), QStringLiteral("ws://h:1"), nullptr));
        journal.setFailWritesForTest(true);
        std::vector<std::pair<FrameRef, QByteArray>> written;
        for (qint64 n = 0; n < 40000; ++n) {
            const QByteArray frame = frameNumber(n);
            written.emplace_back(journal.write(received(n, frame)), frame);
        }
        journal.flush();
        QVERIFY(journal.isDegraded());
        QVERIFY(!state.isEmpty() && state.first().at(0).toBool());
        QVERIFY(state.first().at(1).toString().contains(QStringLiteral("no space left")));
        // The newest frames are in memory; the oldest fell out of the ring, and read as nothing.
        QCOMPARE(journal.readFrame(written.back().first), written.back().second);
        QCOMPARE(journal.readFrame(written.front().first), QByteArray());
        int kept = 0;
        for (const auto &[ref, frame] : written)
            kept += journal.readFrame(ref) == frame ? 1 : 0;
        QVERIFY2(kept > 1000 && kept < 30000, qPrintable(QString::number(kept)));
        QCOMPARE(journal.recordsDropped(), qint64(written.size()) - kept); // what the ring lost

        journal.setFailWritesForTest(false);
        for (qint64 n = 40000; n < 40100; ++n) {
            const QByteArray frame = frameNumber(n);
            written.emplace_back(journal.write(received(n, frame)), frame);
        }
        journal.flush();
        QVERIFY(!journal.isDegraded());
        QVERIFY(!state.last().at(0).toBool());
        QVERIFY(journal.parts().size() >= 2); // a new part took the frames kept in memory
        QCOMPARE(journal.readFrame(written.back().first), written.back().second);
        qint64 total = 0;
        for (const QString &part : journal.parts())
            total += countRecords(part);
        QCOMPARE(total, qint64(kept) + 100); // the first part holds its header only
    }

    void anUnwritableFolderRunsInMemory()
    {
        QTemporaryDir dir;
        QFile blocker(dir.filePath(QStringLiteral("file")));
        QVERIFY(blocker.open(QIODevice::WriteOnly));
        blocker.close();
        SessionJournal journal;
        QString error;
        QVERIFY(!journal.open(dir.filePath(QStringLiteral("file/s")), QStringLiteral("ws://h:1"), &error));
        QVERIFY(error.contains(QStringLiteral("cannot create")));
        QVERIFY(journal.isDegraded());
        const QByteArray frame = frameNumber(1);
        const FrameRef ref = journal.write(received(1, frame));
        journal.flush();
        QCOMPARE(journal.readFrame(ref), frame);
    }

    void killedSessionIsOfferedAndReadsAsATrace()
    {
        QTemporaryDir root;
        const QString folder = root.filePath(QStringLiteral("20261125-120000-h-1"));
        QProcess child;
        child.start(QCoreApplication::applicationFilePath(), {QStringLiteral("--journal-child"), folder});
        QVERIFY(child.waitForStarted());
        QVERIFY(child.waitForReadyRead(20000));
        QVERIFY(child.readAll().contains("ready"));
        // A running session is not offered.
        QVERIFY(SessionJournal::abandonedSessions(root.path()).isEmpty());
        QThread::msleep(1500);
        child.kill();
        QVERIFY(child.waitForFinished());
        const QList<JournalInfo> offered = SessionJournal::abandonedSessions(root.path());
        QCOMPARE(offered.size(), 1);
        QCOMPARE(offered.first().folder, QFileInfo(folder).absoluteFilePath());
        QCOMPARE(offered.first().url, QStringLiteral("ws://127.0.0.1:1/child"));
        QVERIFY(offered.first().bytes > 0);
        QVERIFY(offered.first().startedAtMs > 0);
        QVERIFY(!offered.first().parts.isEmpty());
        qint64 records = 0;
        for (const QString &part : offered.first().parts)
            records += countRecords(part);
        QVERIFY2(records > 500, qPrintable(QString::number(records)));
    }
};

int main(int argc, char **argv)
{
    QCoreApplication app(argc, argv);
    if (argc == 3 && qstrcmp(argv[1], "--journal-child") == 0)
        return runJournalChild(QString::fromLocal8Bit(argv[2]));
    JournalTest test;
    return QTest::qExec(&test, argc, argv);
}

#include "tst_journal.moc"
