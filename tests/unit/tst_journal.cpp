// The live session's journal (core/session/SessionJournal.h): what is written reads back
// byte for byte (from the open frame and from disk), each part is a trace, retention drops the
// oldest parts and says so, a failing disk keeps frames in a bounded memory ring and journaling
// resumes, and a killed session's journal is found and reads as a trace. Its files are private
// (Unix: 0700 folders, 0600 files), folder names unique, and links, existing folders and other
// users' folders refused with a reason.
#include "session/SessionJournal.h"
#include "trace/Trace.h"

#include <QCoreApplication>
#include <QProcess>
#include <QRegularExpression>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QThread>
#include <QUuid>
#include <QtTest>

#include <random>

#ifdef Q_OS_UNIX
#include <sys/stat.h> // umask
#include <unistd.h>   // geteuid, chown
#endif

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

#ifdef Q_OS_UNIX
// No group or other bit, and the owner's read and write (and, for a folder, search) bits.
bool isOwnerOnly(const QString &path, bool folder)
{
    const QFile::Permissions p = QFileInfo(path).permissions();
    const QFile::Permissions others = QFile::ReadGroup | QFile::WriteGroup | QFile::ExeGroup | QFile::ReadOther
        | QFile::WriteOther | QFile::ExeOther;
    const QFile::Permissions owner = folder ? (QFile::ReadOwner | QFile::WriteOwner | QFile::ExeOwner)
                                            : (QFile::ReadOwner | QFile::WriteOwner);
    return !(p & others) && (p & owner) == owner;
}

// MAPI_SESSIONS_DIR for one scope, then empty again (as initTestCase leaves it).
struct SessionsDirFor
{
    explicit SessionsDirFor(const QString &dir) { qputenv("MAPI_SESSIONS_DIR", QFile::encodeName(dir)); }
    ~SessionsDirFor() { qputenv("MAPI_SESSIONS_DIR", QByteArray()); }
};
#endif

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

    // Two windows started in the same second against one server: each gets its own folder and
    // journals to disk (with names made of time and server only, the second ran memory-only).
    void twoSessionsStartedAtOnceBothJournal()
    {
        QTemporaryDir root;
        const QString url = QStringLiteral("ws://127.0.0.1:3000/map");
        const QString first = SessionJournal::newSessionFolder(root.path(), url);
        const QString second = SessionJournal::newSessionFolder(root.path(), url);
        QVERIFY(first != second);
        // <time>-<server>-<64 random bits>
        const QRegularExpression name(QStringLiteral("^\\d{8}-\\d{6}-127_0_0_1-3000-[0-9a-f]{16}$"));
        QVERIFY2(name.match(QFileInfo(first).fileName()).hasMatch(), qPrintable(first));
        SessionJournal a;
        SessionJournal b;
        QString error;
        QVERIFY2(a.open(first, url, &error), qPrintable(error));
        QVERIFY2(b.open(second, url, &error), qPrintable(error));
        const QByteArray fa = frameNumber(1);
        const QByteArray fb = frameNumber(2);
        const FrameRef ra = a.write(received(1, fa));
        const FrameRef rb = b.write(received(2, fb));
        a.flush();
        b.flush();
        QVERIFY(!a.isDegraded());
        QVERIFY(!b.isDegraded());
        QCOMPARE(a.readFrame(ra), fa);
        QCOMPARE(b.readFrame(rb), fb);
        QCOMPARE(a.parts().size(), 1);
        QCOMPARE(b.parts().size(), 1);
        QVERIFY(a.parts().first() != b.parts().first());
        QCOMPARE(countRecords(a.parts().first()), qint64(1));
        QCOMPARE(countRecords(b.parts().first()), qint64(1));
    }

    // A folder that exists already (planted, or another session's) is never used, nor deleted.
    void anExistingSessionFolderIsRefused()
    {
        QTemporaryDir root;
        const QString folder = root.filePath(QStringLiteral("planted"));
        QVERIFY(QDir().mkdir(folder));
        QFile mine(folder + QStringLiteral("/keep.txt"));
        QVERIFY(mine.open(QIODevice::WriteOnly));
        mine.close();
        SessionJournal journal;
        QSignalSpy state(&journal, &SessionJournal::journalStateChanged);
        QString error;
        QVERIFY(!journal.open(folder, QStringLiteral("ws://h:1"), &error));
        QVERIFY2(error.contains(QStringLiteral("exists already")), qPrintable(error));
        QVERIFY(journal.isDegraded());
        QVERIFY(!state.isEmpty() && state.first().at(0).toBool() && state.first().at(1).toString() == error);
        const QByteArray frame = frameNumber(1);
        const FrameRef ref = journal.write(received(1, frame));
        journal.flush(); // retries, and refuses again
        QVERIFY(journal.isDegraded());
        QCOMPARE(journal.readFrame(ref), frame); // kept in memory
        QVERIFY(journal.parts().isEmpty());
        QCOMPARE(QDir(folder).entryList(QDir::Files), QStringList{QStringLiteral("keep.txt")});
        journal.close(false);
        QVERIFY(QFileInfo::exists(folder + QStringLiteral("/keep.txt"))); // not deleted
    }

    // Folders 0700 (the sessions folder too, when the journal creates it), every file 0600,
    // whatever the umask lets through (022 here, the usual one).
    void filesAreOwnerOnly()
    {
#ifndef Q_OS_UNIX
        QSKIP("POSIX permissions, links and owners: Unix only");
#else
        const mode_t oldMask = ::umask(022);
        QTemporaryDir dir;
        const QString root = dir.filePath(QStringLiteral("sessions")); // the journal creates it
        const QString folder = SessionJournal::newSessionFolder(root, QStringLiteral("ws://h:1"));
        SessionJournal journal;
        JournalOptions options;
        options.partBytes = 64 * 1024;
        journal.setOptions(options);
        QString error;
        const bool opened = journal.open(folder, QStringLiteral("ws://h:1"), &error);
        ::umask(oldMask);
        QVERIFY2(opened, qPrintable(error));
        for (qint64 n = 0; n < 3000; ++n)
            journal.write(received(n, frameNumber(n)));
        journal.flush();
        QVERIFY(journal.parts().size() >= 2);
        QVERIFY(isOwnerOnly(root, true));
        QVERIFY(isOwnerOnly(folder, true));
        const QFileInfoList files = QDir(folder).entryInfoList(QDir::Files | QDir::Hidden);
        QVERIFY(files.size() >= 4); // parts, session.json, session.lock
        for (const QFileInfo &f : files)
            QVERIFY2(isOwnerOnly(f.absoluteFilePath(), false), qPrintable(f.fileName()));
#endif
    }

    // MAPI_SESSIONS_DIR (a shared folder) holding a link: nothing is written through it, and the
    // journal says why it is off. A link planted as the session folder itself is refused too.
    void linksAreRefused()
    {
#ifndef Q_OS_UNIX
        QSKIP("POSIX permissions, links and owners: Unix only");
#else
        QTemporaryDir dir;
        const QString elsewhere = dir.filePath(QStringLiteral("elsewhere"));
        QVERIFY(QDir().mkdir(elsewhere));
        const QString link = dir.filePath(QStringLiteral("sessions"));
        QVERIFY(QFile::link(elsewhere, link));
        {
            SessionsDirFor sessions(link);
            const QString root = SessionJournal::sessionsRoot();
            QCOMPARE(root, link);
            SessionJournal journal;
            QSignalSpy state(&journal, &SessionJournal::journalStateChanged);
            QString error;
            QVERIFY(!journal.open(SessionJournal::newSessionFolder(root, QStringLiteral("ws://h:1")), QStringLiteral("ws://h:1"), &error));
            QVERIFY2(error.contains(QStringLiteral("symbolic link")) && error.contains(link), qPrintable(error));
            QVERIFY(journal.isDegraded());
            QVERIFY(!state.isEmpty() && state.first().at(1).toString() == error);
            const QByteArray frame = frameNumber(1);
            const FrameRef ref = journal.write(received(1, frame));
            journal.flush();
            QCOMPARE(journal.readFrame(ref), frame);
            journal.close(false);
        }
        QVERIFY(QDir(elsewhere).isEmpty()); // nothing went through the link

        const QString plantedLeaf = dir.filePath(QStringLiteral("leaf"));
        QVERIFY(QFile::link(elsewhere, plantedLeaf));
        SessionJournal journal;
        QString error;
        QVERIFY(!journal.open(plantedLeaf, QStringLiteral("ws://h:1"), &error));
        QVERIFY(journal.isDegraded());
        journal.close(false);
        QVERIFY(QDir(elsewhere).isEmpty());
#endif
    }

    // A sessions folder owned by another user is refused before anything is created in it, with
    // that reason (not "cannot create"): "/" (root's) for a user, a folder given to "nobody" when
    // the tests run as root (as CI does).
    void anotherUsersFolderIsRefused()
    {
#ifndef Q_OS_UNIX
        QSKIP("POSIX permissions, links and owners: Unix only");
#else
        QTemporaryDir mine;
        QString parent = QStringLiteral("/");
        if (::geteuid() == 0) {
            parent = mine.filePath(QStringLiteral("nobodys"));
            QVERIFY(QDir().mkdir(parent));
            QVERIFY(::chown(QFile::encodeName(parent).constData(), 65534, 65534) == 0);
        }
        QVERIFY(QFileInfo(parent).ownerId() != ::geteuid());
        const QString folder = QDir(parent).filePath(QStringLiteral("mapi-journal-test-") + QUuid::createUuid().toString(QUuid::Id128));
        SessionJournal journal;
        QString error;
        QVERIFY(!journal.open(folder, QStringLiteral("ws://h:1"), &error));
        QVERIFY2(error.contains(QStringLiteral("another user")), qPrintable(error));
        QVERIFY(journal.isDegraded());
        QVERIFY(!QFileInfo::exists(folder));
#endif
    }

    // A link in the sessions folder to a session's journal is not offered as one of ours.
    void abandonedSessionsSkipLinks()
    {
#ifndef Q_OS_UNIX
        QSKIP("POSIX permissions, links and owners: Unix only");
#else
        QTemporaryDir root;
        QTemporaryDir other;
        const QString folder = other.filePath(QStringLiteral("s"));
        {
            SessionJournal journal;
            QVERIFY(journal.open(folder, QStringLiteral("ws://h:1"), nullptr));
            journal.write(received(1, frameNumber(1)));
            journal.close(true); // files kept, lock free: looks abandoned
        }
        QCOMPARE(SessionJournal::abandonedSessions(other.path()).size(), 1);
        QVERIFY(QFile::link(folder, root.filePath(QStringLiteral("linked"))));
        QVERIFY(SessionJournal::abandonedSessions(root.path()).isEmpty());
#endif
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
