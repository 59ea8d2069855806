#include "trace/CompressedFile.h"

#include "protocol/FastHash.h"

#include <QFile>
#include <QFileInfo>
#include <QSaveFile>

#include <zlib.h>
#include <zstd.h>

#include <algorithm>
#include <cstring>

namespace mapi {

QString compressionName(Compression compression)
{
    switch (compression) {
    case Compression::None: return QStringLiteral("none");
    case Compression::Gzip: return QStringLiteral("gzip");
    case Compression::Zstd: return QStringLiteral("zstd");
    }
    return {};
}

Compression compressionFromPath(const QString &path)
{
    const QString lower = path.toLower();
    if (lower.endsWith(QLatin1String(".gz")) || lower.endsWith(QLatin1String(".gzip")))
        return Compression::Gzip;
    if (lower.endsWith(QLatin1String(".zst")) || lower.endsWith(QLatin1String(".zstd")))
        return Compression::Zstd;
    return Compression::None;
}

Compression compressionFromMagic(const char *data, qsizetype size)
{
    const auto *u = reinterpret_cast<const unsigned char *>(data);
    if (size >= 2 && u[0] == 0x1f && u[1] == 0x8b)
        return Compression::Gzip;
    if (size >= 4 && u[0] == 0x28 && u[1] == 0xb5 && u[2] == 0x2f && u[3] == 0xfd)
        return Compression::Zstd;
    return Compression::None;
}

// ---- content index ------------------------------------------------------------------------

ContentIndex::Cache::~Cache()
{
    ZSTD_freeDCtx(static_cast<ZSTD_DCtx *>(dctx));
}

bool ContentIndex::open(const QString &path, QString *error)
{
    m_file.setFileName(path);
    if (m_file.open(QIODevice::ReadOnly))
        return true;
    if (error)
        *error = QStringLiteral("cannot open %1: %2").arg(path, m_file.errorString());
    return false;
}

void ContentIndex::addFrame(qint64 fileOffset, qint64 fileBytes, qint64 contentSize, quint64 hash)
{
    if (contentSize <= 0)
        return; // a skippable zstd frame (or an empty one): nothing to read back
    const qint64 contentStart = m_completeEnd;
    m_frames.push_back({fileOffset, fileBytes, contentStart, contentSize, hash});
    m_completeEnd = contentStart + contentSize;
}

size_t ContentIndex::frameAt(qint64 offset) const
{
    const auto it = std::upper_bound(m_frames.begin(), m_frames.end(), offset,
                                     [](qint64 at, const Frame &f) { return at < f.contentStart; });
    return it == m_frames.begin() ? m_frames.size() : size_t(it - m_frames.begin()) - 1;
}

bool ContentIndex::covers(qint64 offset, qint64 size) const
{
    if (!usable() || offset < 0 || size < 0 || offset + size > m_completeEnd)
        return false;
    const size_t first = frameAt(offset);
    if (first == m_frames.size())
        return false;
    for (auto it = m_frames.begin() + qsizetype(first);
         it != m_frames.end() && it->contentStart < offset + std::max<qint64>(size, 1); ++it) {
        if (it->contentSize > kMaxFrameBytes)
            return false;
    }
    return true;
}

bool ContentIndex::load(size_t index, Cache &cache, QString *error) const
{
    if (cache.frame == qint64(index))
        return true;
    cache.frame = -1;
    const Frame &frame = m_frames[index];
    QByteArray stored;
    {
        std::lock_guard<std::mutex> lock(m_fileMutex);
        if (!m_file.seek(frame.fileOffset) || (stored = m_file.read(frame.fileBytes)).size() != frame.fileBytes) {
            *error = QStringLiteral("cannot read %1 again: %2").arg(m_file.fileName(), m_file.errorString());
            return false;
        }
    }
    if (m_compression == Compression::Zstd) {
        if (!cache.dctx)
            cache.dctx = ZSTD_createDCtx();
        cache.data.resize(frame.contentSize);
        // The streaming decoder, as the reader used when it indexed the frame: zstd's one-shot
        // ZSTD_decompressDCtx() refuses some frames the streaming one accepts (empty RLE blocks;
        // found by fuzz_decompress), and the two must agree on what the frame holds.
        auto *dctx = static_cast<ZSTD_DCtx *>(cache.dctx);
        ZSTD_DCtx_reset(dctx, ZSTD_reset_session_only);
        ZSTD_inBuffer in{stored.constData(), size_t(stored.size()), 0};
        ZSTD_outBuffer out{cache.data.data(), size_t(cache.data.size()), 0};
        size_t rc = 1;
        while (rc != 0 && !ZSTD_isError(rc) && (in.pos < in.size || out.pos < out.size)) {
            const size_t inBefore = in.pos, outBefore = out.pos;
            rc = ZSTD_decompressStream(dctx, &out, &in);
            if (in.pos == inBefore && out.pos == outBefore)
                break; // no progress: the frame does not end where the index says
        }
        if (ZSTD_isError(rc) || rc != 0 || qint64(out.pos) != frame.contentSize) {
            *error = QStringLiteral("%1 changed on disk since it was opened (zstd frame at byte %2 no longer decodes)")
                         .arg(m_file.fileName())
                         .arg(frame.fileOffset);
            return false;
        }
    } else {
        cache.data = std::move(stored);
    }
    if (XXH3_64bits(cache.data.constData(), size_t(cache.data.size())) != frame.hash) {
        *error = QStringLiteral("%1 changed on disk since it was opened (bytes %2 to %3 of its content differ)")
                     .arg(m_file.fileName())
                     .arg(frame.contentStart)
                     .arg(frame.contentStart + frame.contentSize);
        return false;
    }
    cache.frame = qint64(index);
    return true;
}

bool ContentIndex::read(qint64 offset, qsizetype size, char *out, Cache &cache, QString *error) const
{
    const size_t first = frameAt(offset);
    if (first == m_frames.size() || offset + size > m_completeEnd) {
        *error = QStringLiteral("bytes %1 to %2 of %3 were never indexed").arg(offset).arg(offset + size).arg(m_file.fileName());
        return false;
    }
    for (size_t frame = first; size > 0; ++frame) {
        if (!load(frame, cache, error))
            return false;
        const Frame &f = m_frames[frame];
        const qsizetype from = qsizetype(offset - f.contentStart);
        const qsizetype part = std::min<qsizetype>(size, qsizetype(f.contentSize) - from);
        std::memcpy(out, cache.data.constData() + from, size_t(part));
        out += part;
        offset += part;
        size -= part;
    }
    return true;
}

// ---- reading ------------------------------------------------------------------------------

struct DecompressingReader::Impl
{
    QFile file;
    Compression compression = Compression::None;
    qint64 fileSize = 0;
    qint64 consumed = 0;      // compressed bytes handed to the decompressor (or returned, when plain)
    qint64 produced = 0;
    QString error;

    QByteArray inBuffer;      // compressed input
    qsizetype inPos = 0;
    qsizetype inSize = 0;
    bool fileEof = false;

    ZSTD_DCtx *zstd = nullptr;
    size_t zstdHint = 0;      // 0: between frames (a clean end is possible)
    z_stream zlib{};
    bool zlibReady = false;
    bool zlibMemberDone = false; // last inflate() ended a gzip member
    bool finished = false;

    // Frames for the content index (setContentIndex): the open zstd frame's start and hash.
    std::shared_ptr<ContentIndex> index;
    qint64 frameFileStart = 0;
    qint64 frameContentStart = 0;
    XXH3_state_t *frameHash = nullptr;

    ~Impl()
    {
        reset();
        if (frameHash)
            XXH3_freeState(frameHash);
    }

    void reset()
    {
        if (zstd) {
            ZSTD_freeDCtx(zstd);
            zstd = nullptr;
        }
        if (zlibReady) {
            inflateEnd(&zlib);
            zlibReady = false;
        }
        if (file.isOpen())
            file.close();
    }

    // Refills the compressed input buffer. Returns false on a read error.
    bool refill()
    {
        if (inPos < inSize || fileEof)
            return true;
        if (inBuffer.isEmpty())
            inBuffer.resize(256 * 1024);
        const qint64 n = file.read(inBuffer.data(), inBuffer.size());
        if (n < 0) {
            error = QStringLiteral("cannot read %1: %2").arg(file.fileName(), file.errorString());
            return false;
        }
        inPos = 0;
        inSize = qsizetype(n);
        if (n == 0)
            fileEof = true;
        return true;
    }
};

DecompressingReader::DecompressingReader()
    : d(std::make_unique<Impl>())
{
}

DecompressingReader::~DecompressingReader() = default;

bool DecompressingReader::open(const QString &path, QString *error)
{
    d = std::make_unique<Impl>();
    d->file.setFileName(path);
    if (!d->file.open(QIODevice::ReadOnly)) {
        if (error)
            *error = QStringLiteral("cannot open %1: %2").arg(path, d->file.errorString());
        return false;
    }
    d->fileSize = d->file.size();
    char magic[4] = {};
    const qint64 n = d->file.peek(magic, 4);
    d->compression = compressionFromMagic(magic, qsizetype(std::max<qint64>(n, 0)));
    if (d->compression == Compression::Zstd) {
        d->zstd = ZSTD_createDCtx();
    } else if (d->compression == Compression::Gzip) {
        d->zlib = z_stream{};
        if (inflateInit2(&d->zlib, 15 + 32) != Z_OK) { // 15 + 32: gzip or zlib header, detected
            if (error)
                *error = QStringLiteral("cannot start gzip decompression");
            return false;
        }
        d->zlibReady = true;
    }
    return true;
}

void DecompressingReader::close()
{
    d->reset();
}

Compression DecompressingReader::compression() const
{
    return d->compression;
}

qint64 DecompressingReader::fileSize() const
{
    return d->fileSize;
}

qint64 DecompressingReader::compressedBytesRead() const
{
    return d->consumed;
}

qint64 DecompressingReader::bytesProduced() const
{
    return d->produced;
}

QString DecompressingReader::errorString() const
{
    return d->error;
}

void DecompressingReader::setContentIndex(std::shared_ptr<ContentIndex> index)
{
    d->index = std::move(index);
    if (!d->index)
        return;
    d->index->setCompression(d->compression);
    if (!d->frameHash)
        d->frameHash = XXH3_createState();
    XXH3_64bits_reset(d->frameHash);
}

qint64 DecompressingReader::read(char *data, qint64 max)
{
    Impl &s = *d;
    if (!s.file.isOpen() || max <= 0 || s.finished)
        return 0;
    if (s.compression == Compression::None) {
        const qint64 n = s.file.read(data, max);
        if (n < 0) {
            s.error = QStringLiteral("cannot read %1: %2").arg(s.file.fileName(), s.file.errorString());
            return -1;
        }
        if (s.index && n > 0) // a plain file's frames: the pieces read
            s.index->addFrame(s.consumed, n, n, XXH3_64bits(data, size_t(n)));
        s.consumed += n;
        s.produced += n;
        return n;
    }

    // Small steps: zstd drops the output of a call that fails, so a damaged block costs at most
    // one step of what preceded it.
    constexpr qint64 kStep = 64 * 1024;
    qint64 total = 0;
    bool failed = false;
    while (total < max) {
        if (!s.refill()) {
            failed = true;
            break;
        }
        if (s.inPos >= s.inSize && s.fileEof) {
            // End of the file: clean only between frames / after a complete member.
            const bool midStream = s.compression == Compression::Zstd ? s.zstdHint != 0 : !s.zlibMemberDone;
            if (midStream && s.error.isEmpty())
                s.error = QStringLiteral("%1 stream is truncated after %2 compressed bytes")
                              .arg(compressionName(s.compression))
                              .arg(s.consumed);
            s.finished = true;
            break;
        }
        const qint64 want = std::min(max - total, kStep);
        if (s.compression == Compression::Zstd) {
            ZSTD_inBuffer in{s.inBuffer.constData() + s.inPos, size_t(s.inSize - s.inPos), 0};
            ZSTD_outBuffer out{data + total, size_t(want), 0};
            const size_t rc = ZSTD_decompressStream(s.zstd, &out, &in);
            s.inPos += qsizetype(in.pos);
            s.consumed += qint64(in.pos);
            if (ZSTD_isError(rc)) {
                s.error = QStringLiteral("zstd stream is corrupt near compressed byte %1: %2")
                              .arg(s.consumed)
                              .arg(QString::fromUtf8(ZSTD_getErrorName(rc)));
                s.finished = true;
                failed = true;
                break;
            }
            s.zstdHint = rc;
            if (s.index) {
                XXH3_64bits_update(s.frameHash, data + total, out.pos);
                if (rc == 0) { // a frame ended (and its output was all given)
                    const qint64 contentEnd = s.produced + total + qint64(out.pos);
                    s.index->addFrame(s.frameFileStart, s.consumed - s.frameFileStart, contentEnd - s.frameContentStart,
                                      XXH3_64bits_digest(s.frameHash));
                    XXH3_64bits_reset(s.frameHash);
                    s.frameFileStart = s.consumed;
                    s.frameContentStart = contentEnd;
                }
            }
            total += qint64(out.pos);
            if (out.pos == 0 && in.pos == 0)
                break; // needs more input than the buffer holds: cannot happen, but never spin
        } else {
            if (s.zlibMemberDone) {
                // Another gzip member follows (concatenated .gz files are valid gzip).
                inflateReset(&s.zlib);
                s.zlibMemberDone = false;
            }
            s.zlib.next_in = reinterpret_cast<Bytef *>(s.inBuffer.data() + s.inPos);
            s.zlib.avail_in = uInt(s.inSize - s.inPos);
            s.zlib.next_out = reinterpret_cast<Bytef *>(data + total);
            s.zlib.avail_out = uInt(want);
            const int rc = inflate(&s.zlib, Z_NO_FLUSH);
            const qsizetype used = qsizetype((s.inSize - s.inPos) - qsizetype(s.zlib.avail_in));
            s.inPos += used;
            s.consumed += used;
            const qint64 got = want - qint64(s.zlib.avail_out);
            total += got;
            if (rc == Z_STREAM_END) {
                s.zlibMemberDone = true;
            } else if (rc != Z_OK && !(rc == Z_BUF_ERROR && got == 0 && used == 0)) {
                s.error = QStringLiteral("gzip stream is corrupt near compressed byte %1: %2")
                              .arg(s.consumed)
                              .arg(QString::fromUtf8(s.zlib.msg ? s.zlib.msg : "inflate failed"));
                s.finished = true;
                failed = true;
                break;
            }
            if (got == 0 && used == 0)
                break;
        }
    }
    s.produced += total;
    if (total == 0 && failed)
        return -1;
    return total;
}

// ---- writing ------------------------------------------------------------------------------

struct CompressingWriter::Impl
{
    // A QSaveFile (Mode::Replace) or a QFile (Mode::CreateNew); always set.
    std::unique_ptr<QFileDevice> device = std::make_unique<QFile>();
    QFileDevice &file() const { return *device; }
    Mode mode = Mode::Replace;
    Compression compression = Compression::None;
    ZSTD_CCtx *zstd = nullptr;
    z_stream zlib{};
    bool zlibReady = false;
    QByteArray out;
    qint64 onDisk = 0;
    qint64 accepted = 0;
    qint64 frameBytes = 0; // zstd: uncompressed bytes in the open frame
    bool dirty = false; // written to since the last flush
    QString error;

    ~Impl() { release(); }

    QSaveFile *saveFile() const { return mode == Mode::Replace ? static_cast<QSaveFile *>(device.get()) : nullptr; }

    void release()
    {
        if (zstd) {
            ZSTD_freeCCtx(zstd);
            zstd = nullptr;
        }
        if (zlibReady) {
            deflateEnd(&zlib);
            zlibReady = false;
        }
    }

    bool put(const char *data, qint64 size)
    {
        if (size <= 0)
            return true;
        if (file().write(data, size) != size) {
            error = QStringLiteral("cannot write %1: %2").arg(file().fileName(), file().errorString());
            return false;
        }
        onDisk += size;
        return true;
    }

    bool zstdRun(const char *data, qint64 size, ZSTD_EndDirective mode)
    {
        ZSTD_inBuffer in{data, size_t(size), 0};
        for (;;) {
            ZSTD_outBuffer o{out.data(), size_t(out.size()), 0};
            const size_t rc = ZSTD_compressStream2(zstd, &o, &in, mode);
            if (ZSTD_isError(rc)) {
                error = QStringLiteral("zstd compression failed: %1").arg(QString::fromUtf8(ZSTD_getErrorName(rc)));
                return false;
            }
            if (!put(out.constData(), qint64(o.pos)))
                return false;
            const bool done = mode == ZSTD_e_continue ? in.pos == in.size : rc == 0;
            if (done)
                return true;
        }
    }

    bool zlibRun(const char *data, qint64 size, int mode)
    {
        zlib.next_in = reinterpret_cast<Bytef *>(const_cast<char *>(data));
        zlib.avail_in = uInt(size);
        for (;;) {
            zlib.next_out = reinterpret_cast<Bytef *>(out.data());
            zlib.avail_out = uInt(out.size());
            const int rc = deflate(&zlib, mode);
            if (rc == Z_STREAM_ERROR) {
                error = QStringLiteral("gzip compression failed");
                return false;
            }
            if (!put(out.constData(), qint64(out.size()) - qint64(zlib.avail_out)))
                return false;
            if (mode == Z_FINISH ? rc == Z_STREAM_END : (zlib.avail_in == 0 && zlib.avail_out != 0))
                return true;
        }
    }
};

CompressingWriter::CompressingWriter()
    : d(std::make_unique<Impl>())
{
}

CompressingWriter::~CompressingWriter()
{
    // A Replace output that was not closed is abandoned: half a file never takes an old one's place.
    if (d->mode == Mode::Replace)
        discard();
    else
        close();
}

bool CompressingWriter::open(const QString &path, Compression compression, QString *error, int level, Mode mode)
{
    if (d->mode == Mode::Replace)
        discard();
    else
        close();
    d = std::make_unique<Impl>();
    d->compression = compression;
    d->mode = mode;
    if (mode == Mode::Replace) {
        d->device = std::make_unique<QSaveFile>(path);
    } else {
        d->device = std::make_unique<QFile>(path);
    }
    QFileDevice &file = *d->device;
    // CreateNew: NewOnly fails when anything (a file, a link) is at the path already.
    const QIODevice::OpenMode openMode = mode == Mode::Replace ? QIODevice::WriteOnly : (QIODevice::WriteOnly | QIODevice::NewOnly);
    if (!file.open(openMode)) {
        if (error) {
            *error = mode == Mode::CreateNew && QFileInfo::exists(path)
                ? QStringLiteral("cannot write %1: it exists already (a recording never overwrites a file)").arg(path)
                : QStringLiteral("cannot write %1: %2").arg(path, file.errorString());
        }
        return false;
    }
    if (compression == Compression::Zstd) {
        d->zstd = ZSTD_createCCtx();
        ZSTD_CCtx_setParameter(d->zstd, ZSTD_c_compressionLevel, level ? level : ZSTD_CLEVEL_DEFAULT);
        ZSTD_CCtx_setParameter(d->zstd, ZSTD_c_checksumFlag, 1);
        d->out.resize(qsizetype(ZSTD_CStreamOutSize()));
    } else if (compression == Compression::Gzip) {
        d->zlib = z_stream{};
        // 15 + 16: a gzip header and trailer rather than zlib's.
        if (deflateInit2(&d->zlib, level ? level : Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY)
            != Z_OK) {
            if (error)
                *error = QStringLiteral("cannot start gzip compression");
            discard();
            return false;
        }
        d->zlibReady = true;
        d->out.resize(128 * 1024);
    }
    return true;
}

bool CompressingWriter::isOpen() const
{
    return d->file().isOpen();
}

bool CompressingWriter::write(const char *data, qint64 size)
{
    if (!d->file().isOpen() || size <= 0)
        return d->file().isOpen();
    d->accepted += size;
    d->dirty = true;
    switch (d->compression) {
    case Compression::None: return d->put(data, size);
    case Compression::Zstd:
        // Independent frames of about kZstdFrameBytes, ended between two writes (the trace
        // writer writes whole lines): ContentIndex reads a range back by decompressing one frame.
        if (d->frameBytes >= kZstdFrameBytes) {
            if (!d->zstdRun(nullptr, 0, ZSTD_e_end))
                return false;
            d->frameBytes = 0;
        }
        d->frameBytes += size;
        return d->zstdRun(data, size, ZSTD_e_continue);
    case Compression::Gzip: {
        // zlib counts in 32-bit units.
        while (size > 0) {
            const qint64 part = std::min<qint64>(size, 1 << 30);
            if (!d->zlibRun(data, part, Z_NO_FLUSH))
                return false;
            data += part;
            size -= part;
        }
        return true;
    }
    }
    return false;
}

bool CompressingWriter::flush()
{
    if (!d->file().isOpen())
        return false;
    if (!d->dirty)
        return true;
    d->dirty = false;
    bool ok = true;
    if (d->compression == Compression::Zstd)
        ok = d->zstdRun(nullptr, 0, ZSTD_e_flush);
    else if (d->compression == Compression::Gzip)
        ok = d->zlibRun(nullptr, 0, Z_SYNC_FLUSH);
    return d->file().flush() && ok;
}

bool CompressingWriter::close()
{
    if (!d->file().isOpen())
        return true;
    bool ok = true;
    if (d->compression == Compression::Zstd)
        ok = d->zstdRun(nullptr, 0, ZSTD_e_end);
    else if (d->compression == Compression::Gzip)
        ok = d->zlibRun(nullptr, 0, Z_FINISH);
    d->release();
    if (!d->file().flush()) {
        if (d->error.isEmpty())
            d->error = QStringLiteral("cannot write %1: %2").arg(d->file().fileName(), d->file().errorString());
        ok = false;
    }
    if (QSaveFile *save = d->saveFile()) {
        if (!ok) {
            save->cancelWriting();
            save->commit(); // only removes the temporary file
            return false;
        }
        if (!save->commit()) {
            d->error = QStringLiteral("cannot write %1: %2").arg(save->fileName(), save->errorString());
            return false;
        }
        return true;
    }
    d->file().close();
    return ok;
}

void CompressingWriter::discard()
{
    if (!d->file().isOpen())
        return;
    if (QSaveFile *save = d->saveFile()) {
        d->release();
        save->cancelWriting();
        save->commit(); // cancelled: removes the temporary file and reports false
        return;
    }
    close();
}

qint64 CompressingWriter::bytesOnDisk() const
{
    return d->onDisk;
}

qint64 CompressingWriter::bytesWritten() const
{
    return d->accepted;
}

QString CompressingWriter::errorString() const
{
    return d->error;
}

// ---- lines ----------------------------------------------------------------------------------

LineReader::LineReader(DecompressingReader &input, qsizetype chunkBytes)
    : m_in(input)
    , m_chunk(std::max<qsizetype>(chunkBytes, 4096))
{
    m_buffer.resize(m_chunk + kPadding);
}

// Moves the unread bytes to the front and reads more. Returns false when nothing more came.
bool LineReader::fill()
{
    if (m_eof)
        return false;
    if (m_begin > 0) {
        const qsizetype rest = m_end - m_begin;
        if (rest > 0)
            std::memmove(m_buffer.data(), m_buffer.constData() + m_begin, size_t(rest));
        m_end = rest;
        m_begin = 0;
    }
    if (m_buffer.size() - kPadding - m_end < m_chunk / 2) // a long line: grow, never past the cap and a chunk
        m_buffer.resize(std::min(std::max(m_buffer.size() * 2, m_end + m_chunk + kPadding), kMaxLineBytes + 2 * m_chunk + kPadding));
    const qint64 n = m_in.read(m_buffer.data() + m_end, m_buffer.size() - kPadding - m_end);
    if (n < 0) {
        m_eof = true; // DecompressingReader::errorString() says why
        return false;
    }
    if (n == 0) {
        m_eof = true;
        return false;
    }
    m_end += qsizetype(n);
    return true;
}

bool LineReader::next(const char *&data, qsizetype &size)
{
    m_tooLong = false;
    qsizetype scanFrom = m_begin;
    bool skipping = false; // inside a line longer than kMaxLineBytes: dropping its bytes
    qint64 skippedLineStart = 0; // the dropped line's offset
    for (;;) {
        const char *base = m_buffer.constData();
        const void *nl = scanFrom < m_end ? std::memchr(base + scanFrom, '\n', size_t(m_end - scanFrom)) : nullptr;
        if (nl) {
            const qsizetype at = qsizetype(static_cast<const char *>(nl) - base);
            ++m_lineNumber;
            m_lineOffset = skipping ? skippedLineStart : m_consumed;
            const qsizetype lineEnd = at;
            m_consumed += (at + 1 - m_begin);
            if (skipping) {
                m_begin = at + 1;
                m_tooLong = true;
                data = base + at;
                size = 0;
                return true;
            }
            qsizetype len = lineEnd - m_begin;
            if (len > 0 && base[m_begin + len - 1] == '\r')
                --len;
            data = base + m_begin;
            size = len;
            m_begin = at + 1;
            return true;
        }
        if (skipping || m_end - m_begin > kMaxLineBytes) {
            // Drop what we have of this line and keep looking for its end, a chunk at a time:
            // the buffer's memory goes back (a 2 GiB line costs what a 64 MiB one does).
            if (!skipping)
                skippedLineStart = m_consumed;
            m_consumed += m_end - m_begin;
            m_begin = m_end = 0;
            if (!skipping) {
                m_buffer.resize(m_chunk + kPadding);
                m_buffer.squeeze();
            }
            skipping = true;
        }
        const qsizetype scanned = m_end - m_begin; // bytes of this line already searched
        if (!fill()) {
            if (m_end > m_begin || skipping) {
                // A final line without a newline.
                ++m_lineNumber;
                m_lineOffset = skipping ? skippedLineStart : m_consumed;
                m_consumed += m_end - m_begin;
                std::memset(m_buffer.data() + m_end, 0, size_t(kPadding));
                data = m_buffer.constData() + m_begin;
                size = skipping ? 0 : m_end - m_begin;
                m_tooLong = skipping;
                m_begin = m_end;
                return true;
            }
            return false;
        }
        scanFrom = m_begin + scanned;
    }
}

} // namespace mapi
