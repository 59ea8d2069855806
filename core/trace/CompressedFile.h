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

#include <QFile>

#include <memory>
#include <mutex>
#include <vector>

namespace mapi {

enum class Compression { None, Gzip, Zstd };

QString compressionName(Compression compression);        // "none", "gzip", "zstd"
Compression compressionFromPath(const QString &path);     // by extension: .gz, .zst/.zstd, else none
Compression compressionFromMagic(const char *data, qsizetype size); // 1f 8b / 28 b5 2f fd

// Where a file's decompressed content lies in it, frame by frame, so that a range of the content
// can be read back later without decompressing the file from its start (TraceTimeline keeps
// what it needs for seeking this way instead of a second compressed copy in memory).
//
// A plain file's frames are the pieces DecompressingReader read; a zstd file's are its zstd
// frames (the trace writer ends one about every MiB: CompressingWriter). gzip files have no
// usable frames: nothing is covered. Each frame's content is hashed (XXH3) as it is first read,
// and checked when it is read back: a file changed on disk since is reported, never misread.
//
// Thread: built by the DecompressingReader it is given to (one thread); once the reading has
// ended, read() may be called from any thread (the file is shared under a lock).
class ContentIndex
{
public:
    // Frames larger than this are not read back (each read decompresses a whole frame).
    static constexpr qint64 kMaxFrameBytes = 8 * 1024 * 1024;

    // Opens its own handle on the file, kept open so that a deleted or renamed file stays
    // readable where the system allows it (POSIX).
    bool open(const QString &path, QString *error);
    // Whether it can read anything back at all (false: gzip, or the file could not be opened).
    bool usable() const { return m_compression != Compression::Gzip && m_file.isOpen(); }
    // Whether [offset, offset + size) of the content lies in complete frames that can be read back.
    bool covers(qint64 offset, qint64 size) const;
    // Content offset up to which the frames are complete (read and hashed).
    qint64 completeEnd() const { return m_completeEnd; }
    size_t frameCount() const { return m_frames.size(); }

    // The last frame read back, kept by each reader of the index.
    struct Cache
    {
        qint64 frame = -1;
        QByteArray data;
        void *dctx = nullptr; // ZSTD_DCtx
        Cache() = default;
        Q_DISABLE_COPY(Cache)
        ~Cache();
    };
    // Copies [offset, offset + size) of the content to `out` (covers() must be true). false:
    // the file cannot be read, or its bytes are no longer those that were indexed (`error`).
    bool read(qint64 offset, qsizetype size, char *out, Cache &cache, QString *error) const;

    // Building (DecompressingReader): frames in content order, contiguous.
    void setCompression(Compression compression) { m_compression = compression; }
    void addFrame(qint64 fileOffset, qint64 fileBytes, qint64 contentSize, quint64 hash);

private:
    struct Frame
    {
        qint64 fileOffset;
        qint64 fileBytes;
        qint64 contentStart;
        qint64 contentSize;
        quint64 hash;
    };
    bool load(size_t frame, Cache &cache, QString *error) const;
    size_t frameAt(qint64 offset) const; // the frame whose content starts at or before offset; size(): none

    Compression m_compression = Compression::None;
    std::vector<Frame> m_frames;
    qint64 m_completeEnd = 0;
    mutable std::mutex m_fileMutex;
    mutable QFile m_file;
};

// Reads a file's content, decompressing it on the fly.
class DecompressingReader
{
public:
    DecompressingReader();
    ~DecompressingReader();
    Q_DISABLE_COPY(DecompressingReader)

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
    // Records the frames of the content in `index` as they are read (call before the first read).
    void setContentIndex(std::shared_ptr<ContentIndex> index);
    // Set after the end when a compressed stream stopped in the middle (a truncated .gz/.zst),
    // or after read() returned -1.
    QString errorString() const;

private:
    struct Impl;
    std::unique_ptr<Impl> d;
};

// Writes a file, compressing it on the fly. zstd files are written as independent frames of
// about kZstdFrameBytes each (a frame ends between two write() calls), so that ContentIndex
// can read any part back by decompressing one frame; the ratio is that of 1 MiB blocks.
class CompressingWriter
{
public:
    static constexpr qint64 kZstdFrameBytes = 1024 * 1024;

    CompressingWriter();
    ~CompressingWriter();
    Q_DISABLE_COPY(CompressingWriter)

    // How the file comes to be at `path`.
    enum class Mode {
        // A file written in one go (convert, bundle, exports, saved sessions and ranges): written
        // to a temporary file beside `path` and renamed over it by close() only once everything
        // was written (QSaveFile). A failed, abandoned or destroyed write leaves an old file whole.
        Replace,
        // A streaming output (a recording and its parts, the session journal): read while it
        // grows, so written in place; the file must not exist yet, nothing existing is truncated.
        CreateNew,
    };

    // `level`: 0 = the library's default (zstd 3, gzip 6).
    bool open(const QString &path, Compression compression, QString *error, int level = 0, Mode mode = Mode::Replace);
    bool isOpen() const;
    bool write(const char *data, qint64 size);
    bool write(const QByteArray &data) { return write(data.constData(), data.size()); }
    // Pushes everything written so far to disk in a decodable state (zstd: end of block,
    // gzip: sync flush). Costs a few bytes of ratio; the trace writer calls it every second.
    bool flush();
    // Ends the compressed stream and closes the file (Replace: puts it in place). False when
    // anything failed; a Replace output is then not put in place.
    bool close();
    // Replace: drops what was written, leaving whatever was at the path. CreateNew: as close().
    void discard();
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
    // Longer lines are reported bad, not kept. What real frames need: the codec refuses a frame
    // over 16 MiB (CodecLimits::maxFrameBytes), and a trace line holds one frame escaped as a JSON
    // string (quotes and backslashes doubled: at most 32 MiB) with a short envelope. The line
    // buffer grows to at most this plus one chunk, and shrinks back once such a line is dropped.
    static constexpr qsizetype kMaxLineBytes = 64 * 1024 * 1024;

    explicit LineReader(DecompressingReader &input, qsizetype chunkBytes = 1 << 20);

    // The next line, without its terminator. Returns false at the end (or on a read error:
    // see DecompressingReader::errorString()). The view stays valid until the next call.
    bool next(const char *&data, qsizetype &size);
    qint64 lineNumber() const { return m_lineNumber; }   // 1-based number of the last line returned
    qint64 lineOffset() const { return m_lineOffset; }   // decompressed byte offset of its first byte
    bool lineTooLong() const { return m_tooLong; }       // the last line exceeded kMaxLineBytes (size 0)

private:
    bool fill();
    DecompressingReader &m_in;
    QByteArray m_buffer;
    qsizetype m_begin = 0;   // first unread byte
    qsizetype m_end = 0;     // end of valid data
    qsizetype m_chunk;
    bool m_eof = false;
    bool m_tooLong = false;
    qint64 m_lineNumber = 0;
    qint64 m_lineOffset = 0;
    qint64 m_consumed = 0;   // decompressed offset of m_buffer[m_begin]
};

} // namespace mapi
