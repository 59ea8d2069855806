// No output destroys evidence (issue 42, item 1): an output that is its own input (by identity:
// the same path, a symbolic link, a hard link) is refused before anything is opened; outputs
// written in one go replace an old file only once whole; streaming outputs (recordings, the
// journal) never truncate an existing file. Checked on the core functions, the export job and
// the CLI's convert and bundle, each leaving the input byte for byte as it was.
#include "TestSupport.h"

#include "common/FileIdentity.h"
#include "model/SystemStore.h"
#include "trace/CompressedFile.h"
#include "trace/IncidentBundle.h"
#include "trace/ModelExport.h"
#include "trace/Trace.h"
#include "trace/TraceLoader.h"

#include <QCryptographicHash>
#include <QFile>
#include <QProcess>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

using namespace mapi;

namespace {

const QString kSample = QStringLiteral(MAPI_SOURCE_DIR "/resources/sample/demo-system.jsonl.zst");

QByteArray digestOf(const QString &path)
{
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        return {};
    QCryptographicHash hash(QCryptographicHash::Sha256);
    hash.addData(&file);
    return hash.result().toHex();
}

// A copy of the sample trace in `dir` and the names that reach it: itself, a symbolic link, a
// hard link (where the file system makes them).
struct Aliases
{
    QString file;
    QStringList names;
};

Aliases sampleWithAliases(const QTemporaryDir &dir)
{
    Aliases a;
    a.file = dir.filePath(QStringLiteral("run.jsonl.zst"));
    QFile::copy(kSample, a.file);
    a.names << a.file << dir.filePath(QStringLiteral("./sub/../run.jsonl.zst"));
    QDir(dir.path()).mkpath(QStringLiteral("sub"));
#ifdef Q_OS_UNIX
    // (QFile::link makes a .lnk shortcut on Windows, not a link the file system follows.)
    const QString symlink = dir.filePath(QStringLiteral("link.jsonl.zst"));
    if (QFile::link(a.file, symlink))
        a.names << symlink;
    const QString hard = dir.filePath(QStringLiteral("hard.jsonl.zst"));
    if (::link(QFile::encodeName(a.file).constData(), QFile::encodeName(hard).constData()) == 0)
        a.names << hard;
#endif
    return a;
}

} // namespace

class OutputSafetyTest : public QObject
{
    Q_OBJECT

private slots:
    void sameFileIsFoundByIdentity()
    {
        QTemporaryDir dir;
        const Aliases a = sampleWithAliases(dir);
#ifdef Q_OS_UNIX
        QVERIFY2(a.names.size() >= 4, "the file system made no link: the test would prove little");
#endif
        for (const QString &name : a.names)
            QVERIFY2(isSameFile(a.file, name), qPrintable(name));
        const QString other = dir.filePath(QStringLiteral("other.jsonl.zst"));
        QFile::copy(kSample, other); // equal bytes, another file
        QVERIFY(!isSameFile(a.file, other));
        QVERIFY(!isSameFile(a.file, dir.filePath(QStringLiteral("absent.jsonl"))));
        QVERIFY(outputOverwritesInput(other, {a.file}).isEmpty());
        QVERIFY(!outputOverwritesInput(a.names.last(), {QString(), a.file}).isEmpty());
    }

    // convert's trace output (writeTraceSlice, also Save session / range): refused onto its input
    // under any of its names, the input untouched.
    void sliceOntoItsInputIsRefused()
    {
        QTemporaryDir dir;
        const Aliases a = sampleWithAliases(dir);
        const QByteArray before = digestOf(a.file);
        for (const QString &out : a.names) {
            const TraceSlice slice = writeTraceSlice(a.file, out, std::nullopt, std::nullopt);
            QCOMPARE(int(slice.failure), int(TraceSlice::Failure::OutputIsInput));
            QVERIFY(slice.error.contains(QLatin1String("is the input")));
            QCOMPARE(digestOf(a.file), before);
        }
    }

    void bundleOntoItsInputIsRefused()
    {
        QTemporaryDir dir;
        const Aliases a = sampleWithAliases(dir);
        const QByteArray before = digestOf(a.file);
        for (const QString &out : a.names) {
            const BundleResult r = writeIncidentBundle(a.file, out, BundleOptions());
            QCOMPARE(int(r.failure), int(BundleResult::Failure::BadOptions));
            QVERIFY2(r.error.contains(QLatin1String("cannot replace the trace")), qPrintable(r.error));
            QCOMPARE(digestOf(a.file), before);
        }
        // Another name is written as usual.
        const QString other = dir.filePath(QStringLiteral("bundle.jsonl.zst"));
        QVERIFY(writeIncidentBundle(a.file, other, BundleOptions()).ok());
        QVERIFY(QFileInfo(other).size() > 0);
    }

    // The CLI: convert (every output kind) and bundle onto their input exit 7, input untouched.
    void cliRefusesToOverwriteItsInput()
    {
        QTemporaryDir dir;
        const Aliases a = sampleWithAliases(dir);
        const QByteArray before = digestOf(a.file);
        for (const QString &out : a.names) {
            const QList<QStringList> commands = {
                {QStringLiteral("convert"), QStringLiteral("--trace"), a.file, QStringLiteral("--out"), out},
                {QStringLiteral("bundle"), QStringLiteral("--trace"), a.file, QStringLiteral("--out"), out},
            };
            for (const QStringList &args : commands) {
                QProcess p;
                p.start(QStringLiteral(MAPI_CLI_PATH), args);
                QVERIFY(p.waitForFinished(60000));
                QCOMPARE(p.exitCode(), 7);
                QVERIFY2(p.readAllStandardError().contains("is the input"), qPrintable(args.join(u' ')));
                QCOMPARE(digestOf(a.file), before);
            }
        }
        // A CSV or Chrome trace named like the input (a trace renamed .csv) is refused as well.
        const QString csvNamed = dir.filePath(QStringLiteral("run.csv"));
        QVERIFY(QFile::copy(kSample, csvNamed));
        const QByteArray csvBefore = digestOf(csvNamed);
        QProcess p;
        p.start(QStringLiteral(MAPI_CLI_PATH), {QStringLiteral("convert"), QStringLiteral("--trace"), csvNamed, QStringLiteral("--out"),
                                                 csvNamed, QStringLiteral("--table"), QStringLiteral("agents")});
        QVERIFY(p.waitForFinished(60000));
        QCOMPARE(p.exitCode(), 7);
        QCOMPARE(digestOf(csvNamed), csvBefore);
    }

    // An export job onto the trace the model reads its frames from.
    void exportOntoTheOpenTraceIsRefused()
    {
        QTemporaryDir dir;
        const Aliases a = sampleWithAliases(dir);
        const QByteArray before = digestOf(a.file);
        SystemStore store;
        QVERIFY(loadTraceInto(store, a.file, TraceLoadOptions()).ok);
        QVERIFY(store.frameFiles().contains(a.file));
        for (const QString &out : a.names) {
            ExportJob job(&store, out, [&store](QIODevice &device) { return makeCsvWriter(store, CsvTable::Messages, device); });
            QSignalSpy finished(&job, &BackgroundJob::finished);
            job.start();
            QVERIFY(finished.count() == 1 || finished.wait(10000));
            const JobOutcome outcome = finished.first().first().value<JobOutcome>();
            QVERIFY2(!outcome.ok() && outcome.error.contains(QLatin1String("is the input")), qPrintable(out));
            QCOMPARE(digestOf(a.file), before);
        }
    }

    // Written in one go: an abandoned or failed write leaves the old file whole; a finished one
    // replaces it.
    void replaceKeepsTheOldFileUntilWhole()
    {
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("out.jsonl"));
        {
            QFile old(path);
            QVERIFY(old.open(QIODevice::WriteOnly));
            old.write("old content\n");
        }
        {
            CompressingWriter w;
            QString error;
            QVERIFY(w.open(path, Compression::None, &error));
            QVERIFY(w.write(QByteArray("half of a new file")));
            // destroyed without close(): abandoned
        }
        QFile check(path);
        QVERIFY(check.open(QIODevice::ReadOnly));
        QCOMPARE(check.readAll(), QByteArray("old content\n"));
        check.close();
        {
            CompressingWriter w;
            QString error;
            QVERIFY(w.open(path, Compression::None, &error));
            QVERIFY(w.write(QByteArray("discarded")));
            w.discard();
        }
        QVERIFY(check.open(QIODevice::ReadOnly));
        QCOMPARE(check.readAll(), QByteArray("old content\n"));
        check.close();
        QCOMPARE(QDir(dir.path()).entryList(QDir::Files), QStringList{QStringLiteral("out.jsonl")}); // no temporary left
        {
            CompressingWriter w;
            QString error;
            QVERIFY(w.open(path, Compression::None, &error));
            QVERIFY(w.write(QByteArray("new\n")));
            QVERIFY(w.close());
        }
        QVERIFY(check.open(QIODevice::ReadOnly));
        QCOMPARE(check.readAll(), QByteArray("new\n"));
    }

    // Streaming outputs create new files: a recording onto an existing file is refused and the
    // file stays as it was.
    void recordingNeverTruncates()
    {
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("rec.jsonl"));
        {
            QFile old(path);
            QVERIFY(old.open(QIODevice::WriteOnly));
            old.write("an earlier recording\n");
        }
        TraceWriter writer;
        QString error;
        QVERIFY(!writer.open(path, QStringLiteral("ws://127.0.0.1:1/"), &error));
        QVERIFY2(error.contains(QLatin1String("exists already")), qPrintable(error));
        QFile check(path);
        QVERIFY(check.open(QIODevice::ReadOnly));
        QCOMPARE(check.readAll(), QByteArray("an earlier recording\n"));
        // A new name records as before.
        const QString fresh = dir.filePath(QStringLiteral("new.jsonl"));
        QVERIFY2(writer.open(fresh, QStringLiteral("ws://127.0.0.1:1/"), &error), qPrintable(error));
        writer.close();
        QVERIFY(QFileInfo(fresh).size() > 0);
    }
};

QTEST_GUILESS_MAIN(OutputSafetyTest)
#include "tst_output_safety.moc"
