// LineReader (issue 42 item 5): a line past kMaxLineBytes is dropped and said (lineTooLong, size
// 0) and the lines around it are read whole, numbered and placed as in the file; a line under the
// cap as long as a real frame can be (a 16 MiB frame escaped) is kept whole; plain and zstd files
// alike; "\r\n" endings; a last line without a newline, long or not. The memory a giant line
// costs is measured by bench/giant_inputs.py (docs/benchmarks.md), not here.
#include "trace/CompressedFile.h"

#include <QFile>
#include <QTemporaryDir>
#include <QtTest>

using namespace mapi;

namespace {

struct Line
{
    QByteArray text;
    bool tooLong = false;
    qint64 number = 0;
    qint64 offset = 0;
};

QList<Line> readAll(const QString &path)
{
    QList<Line> lines;
    DecompressingReader in;
    QString error;
    if (!in.open(path, &error))
        return lines;
    LineReader reader(in);
    const char *data = nullptr;
    qsizetype size = 0;
    while (reader.next(data, size))
        lines.append({QByteArray(data, size), reader.lineTooLong(), reader.lineNumber(), reader.lineOffset()});
    return lines;
}

bool writeFile(const QString &path, const QList<QByteArray> &parts, Compression compression)
{
    CompressingWriter out;
    QString error;
    if (!out.open(path, compression, &error))
        return false;
    for (const QByteArray &part : parts)
        if (!out.write(part))
            return false;
    return out.close();
}

} // namespace

class LineReaderTest : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void aLinePastTheCapIsDroppedAndTheOthersKept_data()
    {
        QTest::addColumn<int>("compression");
        QTest::newRow("plain") << int(Compression::None);
        QTest::newRow("zstd") << int(Compression::Zstd);
    }
    void aLinePastTheCapIsDroppedAndTheOthersKept()
    {
        QFETCH(int, compression);
        QTemporaryDir dir;
        const QString path = dir.filePath(compression == int(Compression::Zstd) ? QStringLiteral("t.jsonl.zst") : QStringLiteral("t.jsonl"));
        const QByteArray giant(LineReader::kMaxLineBytes + 3 * 1024 * 1024, 'x');
        const QByteArray large(32 * 1024 * 1024 + 512, 'y'); // a 16 MiB frame, every byte escaped
        QVERIFY(writeFile(path, {"first\n", giant, "\r\n", "second\r\n", large, "\n", "last, no newline"}, Compression(compression)));
        const QList<Line> lines = readAll(path);
        QCOMPARE(lines.size(), 5);
        QCOMPARE(lines[0].text, QByteArray("first"));
        QVERIFY(!lines[0].tooLong);
        QVERIFY(lines[1].tooLong);
        QCOMPARE(lines[1].text.size(), 0);
        QCOMPARE(lines[1].number, 2);
        QCOMPARE(lines[1].offset, 6);
        QCOMPARE(lines[2].text, QByteArray("second"));
        QCOMPARE(lines[2].number, 3);
        QCOMPARE(lines[2].offset, 6 + giant.size() + 2);
        QVERIFY(!lines[3].tooLong);
        QCOMPARE(lines[3].text.size(), large.size());
        QVERIFY(lines[3].text == large);
        QCOMPARE(lines[4].text, QByteArray("last, no newline"));
    }

    void aGiantLastLineWithoutANewlineIsDropped()
    {
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("t.jsonl"));
        QVERIFY(writeFile(path, {"a\n", QByteArray(LineReader::kMaxLineBytes + 1024, 'z')}, Compression::None));
        const QList<Line> lines = readAll(path);
        QCOMPARE(lines.size(), 2);
        QCOMPARE(lines[0].text, QByteArray("a"));
        QVERIFY(lines[1].tooLong);
        QCOMPARE(lines[1].text.size(), 0);
    }

    void theCapHoldsTheLargestFrameTheCodecTakes()
    {
        // A frame the codec accepts (16 MiB) escaped in a trace line: never past the cap.
        QVERIFY(LineReader::kMaxLineBytes >= 2 * 16 * 1024 * 1024 + 4096);
    }
};

QTEST_MAIN(LineReaderTest)
#include "tst_line_reader.moc"
