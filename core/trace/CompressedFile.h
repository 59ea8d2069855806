// Transparent compression for trace files: plain, gzip (zlib) and zstd (libzstd), streamed.
//
// Reading detects the compression from the file's first bytes (magic numbers), whatever its
// name; writing chooses it from the file name (".gz", ".zst"). Both sides use the libraries'
// streaming APIs (inflate with a gzip header, ZSTD_decompressStream; deflate, ZSTD_compressStream2),
// so a file of any size passes through a fixed amount of memory.
//
// Thread: an instance is used from one thread at a time; instances are independent.
#pragma once

#include <QByteArray>
#include <QString>

#include <memory>

namespace mapi {

enum class Compression { None, Gzip, Zstd };

QString compressionName(Compression compression);        // "none", "gzip", "zstd"
Compression compressionFromPath(const QString &path);     // by extension: .gz, .zst/.zstd, else none
Compression compressionFromMagic(const char *data, qsizetype size); // 1f 8b / 28 b5 2f fd

// Reads a file's content, decompressing it on the fly.
class DecompressingReader
{
public:
    DecompressingReader();
    ~DecompressingReader();
    DecompressingReader(const DecompressingReader &) = delete;
    DecompressingReader &operator=(const DecompressingReader &) = delete;

    bool open(const QString &path, QString *error);
    void close();

    // Reads up to `max` decompressed bytes into `data`. Returns the count, 0 at the end of the
    // content, or -1 when the compressed stream is corrupt or the file cannot be read (see
    // errorString(); what was returned before stays valid).
    qint64 read(char *data, qint64 max);

    Compression compression() const;
    qint64 fileSize() const;            // bytes on disk (the progress bar's total)
    qint64 compressedBytesRead() const; // bytes consumed from disk so far (progress)
    qint64 bytesProduced() const;       // decompressed bytes returned so far
    // Set after the end when a compressed stream stopped in the middle (a truncated .gz/.zst),
    // or after read() returned -1.
    QString errorString() const;

private:
    struct Impl;
    std::unique_ptr<Impl> d;
};

// Writes a file, compressing it on the fly.
class CompressingWriter
{
public:
    CompressingWriter();
    ~CompressingWriter();
    CompressingWriter(const CompressingWriter &) = delete;
    CompressingWriter &operator=(const CompressingWriter &) = delete;

    // `level`: 0 = the library's default (zstd 3, gzip 6).
    bool open(const QString &path, Compression compression, QString *error, int level = 0);
    bool isOpen() const;
    bool write(const char *data, qint64 size);
    bool write(const QByteArray &data) { return write(data.constData(), data.size()); }
    // Pushes everything written so far to disk in a decodable state (zstd: end of block,
    // gzip: sync flush). Costs a few bytes of ratio; the trace writer calls it every second.
    bool flush();
    // Ends the compressed stream and closes the file.
    bool close();
    qint64 bytesOnDisk() const;   // compressed bytes handed to the file so far
    qint64 bytesWritten() const;  // uncompressed bytes accepted so far
    QString errorString() const;

private:
    struct Impl;
    std::unique_ptr<Impl> d;
};

// Splits a DecompressingReader's content into lines ("\n" or "\r\n"), without copying them.
// Every returned line is followed by at least kPadding readable bytes (for simdjson).
class LineReader
{
public:
    static constexpr qsizetype kPadding = 64;
    static constexpr qsizetype kMaxLineBytes = 512 * 1024 * 1024; // longer lines are reported bad, not kept

    explicit LineReader(DecompressingReader &input, qsizetype chunkBytes = 1 << 20);

    // The next line, without its terminator. Returns false at the end (or on a read error:
    // see DecompressingReader::errorString()). The view stays valid until the next call.
    bool next(const char *&data, qsizetype &size);
    qint64 lineNumber() const { return m_lineNumber; }   // 1-based number of the last line returned
    qint64 lineOffset() const { return m_lineOffset; }   // decompressed byte offset of its first byte
    bool lastLineTerminated() const { return m_terminated; } // false for a final line without "\n"
    bool lineTooLong() const { return m_tooLong; }       // the last line exceeded kMaxLineBytes (size 0)
    bool readError() const { return m_readError; }

private:
    bool fill();
    DecompressingReader &m_in;
    QByteArray m_buffer;
    qsizetype m_begin = 0;   // first unread byte
    qsizetype m_end = 0;     // end of valid data
    qsizetype m_chunk;
    bool m_eof = false;
    bool m_readError = false;
    bool m_terminated = true;
    bool m_tooLong = false;
    qint64 m_lineNumber = 0;
    qint64 m_lineOffset = 0;
    qint64 m_consumed = 0;   // decompressed offset of m_buffer[m_begin]
};

} // namespace mapi
