// Retention of a recording's rotated parts (core/trace/PartRetention.h; record --keep-parts,
// --keep-mb): the pure choice of what goes, and the applier on real files in a scratch folder —
// that it deletes only the parts it was told of, never the part being written, and says each
// deletion once.
#include "TestSupport.h"

#include "trace/PartRetention.h"
#include "trace/Trace.h"

#include <QDir>
#include <QFile>
#include <QTemporaryDir>
#include <QTest>

using namespace mapi;

namespace {

std::vector<RecordingPart> parts(const std::vector<qint64> &sizes)
{
    std::vector<RecordingPart> out;
    for (size_t i = 0; i < sizes.size(); ++i)
        out.push_back({TraceWriter::partPath(QStringLiteral("/data/s.jsonl.zst"), int(i)), sizes[i], int(i)});
    return out;
}

std::vector<int> indexes(const std::vector<RecordingPart> &chosen)
{
    std::vector<int> out;
    for (const RecordingPart &p : chosen)
        out.push_back(p.index);
    return out;
}

RetentionPolicy keepParts(int n)
{
    RetentionPolicy p;
    p.keepParts = n;
    return p;
}

RetentionPolicy keepBytes(qint64 n)
{
    RetentionPolicy p;
    p.keepBytes = n;
    return p;
}

bool writeFile(const QString &path, qint64 bytes)
{
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly))
        return false;
    return f.write(QByteArray(bytes, 'x')) == bytes;
}

} // namespace

class PartRetentionTest : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase() { mapi_test::installWarningGuard(); }
    void init() { mapi_test::armWarningGuard(); }
    void cleanup() { MAPI_NO_WARNINGS(); }
    void cleanupTestCase() { MAPI_NO_WARNINGS(); }

    void noPolicyDeletesNothing()
    {
        QVERIFY(partsToDelete(parts({100, 100, 100}), RetentionPolicy{}).empty());
        QVERIFY(partsToDelete({}, keepParts(1)).empty());
        QVERIFY(partsToDelete(parts({1000}), keepBytes(1)).empty()); // one part: the one being written
    }

    void keepPartsKeepsTheNewest()
    {
        QCOMPARE(indexes(partsToDelete(parts({1, 1, 1, 1, 1}), keepParts(3))), (std::vector<int>{0, 1}));
        QCOMPARE(indexes(partsToDelete(parts({1, 1, 1}), keepParts(3))), std::vector<int>{});
        QCOMPARE(indexes(partsToDelete(parts({1, 1, 1}), keepParts(10))), std::vector<int>{});
        // 1: only the part being written stays.
        QCOMPARE(indexes(partsToDelete(parts({1, 1, 1, 1}), keepParts(1))), (std::vector<int>{0, 1, 2}));
    }

    void keepBytesDeletesOldestFirst()
    {
        // 40 on disk, at most 25: the two oldest go (20 left).
        QCOMPARE(indexes(partsToDelete(parts({10, 10, 10, 10}), keepBytes(25))), (std::vector<int>{0, 1}));
        // Exactly at the limit: nothing goes.
        QCOMPARE(indexes(partsToDelete(parts({10, 10, 10}), keepBytes(30))), std::vector<int>{});
        // A limit below the newest part's own size: every older part goes, the newest stays.
        QCOMPARE(indexes(partsToDelete(parts({5, 5, 50}), keepBytes(10))), (std::vector<int>{0, 1}));
        // Sizes differ: the oldest go until the rest fits (60 + 5 + 5 = 70 > 20: 0 goes; 10 <= 20).
        QCOMPARE(indexes(partsToDelete(parts({60, 5, 5}), keepBytes(20))), (std::vector<int>{0}));
    }

    void bothLimitsTheStricterWins()
    {
        RetentionPolicy both;
        both.keepParts = 3;
        both.keepBytes = 15;
        // Parts say drop 2 (of 5); bytes say drop 4 (50 > 15 until only 10 is left).
        QCOMPARE(indexes(partsToDelete(parts({10, 10, 10, 10, 10}), both)), (std::vector<int>{0, 1, 2, 3}));
        both.keepBytes = 1000; // now the count decides
        QCOMPARE(indexes(partsToDelete(parts({10, 10, 10, 10, 10}), both)), (std::vector<int>{0, 1}));
    }

    void anyOrderInOldestFirstOut()
    {
        std::vector<RecordingPart> shuffled = parts({1, 1, 1, 1, 1});
        std::swap(shuffled[0], shuffled[4]);
        std::swap(shuffled[1], shuffled[3]);
        QCOMPARE(indexes(partsToDelete(shuffled, keepParts(2))), (std::vector<int>{0, 1, 2}));
    }

    void partStartedTakesOnlyThisRecordingsParts()
    {
        const QString base = QStringLiteral("/data/prod-1.jsonl.zst");
        PartRetention r(base, keepParts(2));
        QVERIFY(r.partStarted(base));
        QVERIFY(!r.partStarted(base)); // told twice
        QVERIFY(!r.partStarted(QStringLiteral("/data/other.1.jsonl.zst")));
        QVERIFY(!r.partStarted(QStringLiteral("/elsewhere/prod-1.1.jsonl.zst")));
        QVERIFY(r.partStarted(TraceWriter::partPath(base, 1)));
        QVERIFY(r.partStarted(TraceWriter::partPath(base, 3))); // 2 was not told: tolerated
        QVERIFY(!r.partStarted(TraceWriter::partPath(base, 2))); // but never backwards
    }

    void applierDeletesOnlyItsOwnOldParts()
    {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const QString base = dir.filePath(QStringLiteral("prod-1.jsonl.zst"));
        // Files the applier is never told of: another recording's, and one of this base's name
        // pattern left by an earlier run.
        const QString foreign = dir.filePath(QStringLiteral("prod-0.jsonl.zst"));
        const QString earlier = TraceWriter::partPath(base, 7);
        QVERIFY(writeFile(foreign, 100));
        QVERIFY(writeFile(earlier, 100));

        RetentionPolicy policy;
        policy.keepParts = 2;
        PartRetention r(base, policy);
        QVERIFY(writeFile(base, 10));
        QVERIFY(r.partStarted(base));
        QVERIFY(r.apply().empty());
        QVERIFY(writeFile(TraceWriter::partPath(base, 1), 10));
        QVERIFY(r.partStarted(TraceWriter::partPath(base, 1)));
        QVERIFY(r.apply().empty());
        QVERIFY(writeFile(TraceWriter::partPath(base, 2), 10));
        QVERIFY(r.partStarted(TraceWriter::partPath(base, 2)));
        const std::vector<PartRetention::Outcome> first = r.apply();
        QCOMPARE(first.size(), size_t(1));
        QCOMPARE(first[0].path, base);
        QCOMPARE(first[0].bytes, qint64(10));
        QVERIFY(first[0].error.isEmpty());
        QVERIFY(!QFile::exists(base));
        QVERIFY(r.apply().empty()); // said once
        QCOMPARE(r.deleted(), QStringList{base});
        QVERIFY(QFile::exists(TraceWriter::partPath(base, 1)));
        QVERIFY(QFile::exists(TraceWriter::partPath(base, 2)));
        QVERIFY(QFile::exists(foreign));
        QVERIFY(QFile::exists(earlier));
    }

    void applierByBytesReadsSizesFromDisk()
    {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const QString base = dir.filePath(QStringLiteral("s.jsonl"));
        PartRetention r(base, keepBytes(250));
        for (int n = 0; n < 3; ++n) {
            QVERIFY(writeFile(TraceWriter::partPath(base, n), 100));
            QVERIFY(r.partStarted(TraceWriter::partPath(base, n)));
        }
        QCOMPARE(r.apply().size(), size_t(1)); // 300 > 250: part 0 goes
        // The part being written grows past the limit on its own: the older one goes, it stays.
        QVERIFY(writeFile(TraceWriter::partPath(base, 2), 400));
        const std::vector<PartRetention::Outcome> grown = r.apply();
        QCOMPARE(grown.size(), size_t(1));
        QCOMPARE(grown[0].path, TraceWriter::partPath(base, 1));
        QVERIFY(QFile::exists(TraceWriter::partPath(base, 2)));
        QVERIFY(r.apply().empty());
    }

    void goneAndUndeletablePartsAreForgotten()
    {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const QString base = dir.filePath(QStringLiteral("s.jsonl"));
        PartRetention r(base, keepParts(1));
        // Part 0 moved away by someone else: forgotten without a word.
        QVERIFY(writeFile(TraceWriter::partPath(base, 0), 10));
        QVERIFY(r.partStarted(TraceWriter::partPath(base, 0)));
        QVERIFY(QFile::remove(TraceWriter::partPath(base, 0)));
        // Part 1 cannot be removed as a file (a folder stands at its path, which holds even for
        // root): told once with its error, then never again.
        QVERIFY(QDir(dir.path()).mkpath(QFileInfo(TraceWriter::partPath(base, 1)).fileName()));
        QVERIFY(writeFile(dir.filePath(QFileInfo(TraceWriter::partPath(base, 1)).fileName() + QStringLiteral("/inside")), 1));
        QVERIFY(r.partStarted(TraceWriter::partPath(base, 1)));
        QVERIFY(writeFile(TraceWriter::partPath(base, 2), 10));
        QVERIFY(r.partStarted(TraceWriter::partPath(base, 2)));
        const std::vector<PartRetention::Outcome> out = r.apply();
        QCOMPARE(out.size(), size_t(1));
        QCOMPARE(out[0].path, TraceWriter::partPath(base, 1));
        QVERIFY(!out[0].error.isEmpty());
        QVERIFY(r.deleted().isEmpty());
        QVERIFY(r.apply().empty());
        // The newest part gone too: still never deleted (nothing to delete, nothing said).
        QVERIFY(QFile::remove(TraceWriter::partPath(base, 2)));
        QVERIFY(r.apply().empty());
    }
};

QTEST_GUILESS_MAIN(PartRetentionTest)
#include "tst_part_retention.moc"
