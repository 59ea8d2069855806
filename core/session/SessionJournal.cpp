#include "session/SessionJournal.h"


#include <QDateTime>
#include <QDir>
#include <QFile>
#include <QSaveFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRandomGenerator>
#include <QStandardPaths>
#include <QUrl>

#ifdef Q_OS_UNIX
#include <unistd.h> // geteuid
#endif

#define XXH_INLINE_ALL // header only, as protocol/FastHash.h
#include <xxhash.h>
#include <zstd.h>

#include <algorithm>

namespace mapi {

namespace {

QString partFileName(int part)
{
    return part == 0 ? QStringLiteral("journal.jsonl.zst") : QStringLiteral("journal.%1.jsonl.zst").arg(part);
}

int partNumberOf(const QString &fileName)
{
    if (fileName == QLatin1String("journal.jsonl.zst"))
        return 0;
    const QStringList pieces = fileName.split(QLatin1Char('.'));
    bool ok = false;
    const int n = pieces.size() == 4 ? pieces[1].toInt(&ok) : -1;
    return ok ? n : -1;
}

// Owner-only: folders 0700, files 0600 (Unix; mkdir(2) and open(2) take the mode at creation, so
// nothing is ever readable by others, whatever the umask). On Windows, ACLs are out of scope: the
// journal lives in the user's profile (AppLocalDataLocation), already private to that user, and
// Qt's permission emulation there would write unusual ACLs.
#ifdef Q_OS_UNIX
QFile::Permissions ownerOnly(bool folder)
{
    return folder ? (QFile::ReadOwner | QFile::WriteOwner | QFile::ExeOwner) : (QFile::ReadOwner | QFile::WriteOwner);
}
#endif

// Creates `path` and no parent; false when it exists already (create-new: never reuses a folder).
bool makeNewFolder(const QString &path)
{
#ifdef Q_OS_UNIX
    return QDir().mkdir(path, ownerOnly(true));
#else
    return QDir().mkdir(path);
#endif
}

// Opens `file` for writing as a new file (never over one already there).
bool openNewFile(QFile &file)
{
#ifdef Q_OS_UNIX
    return file.open(QIODevice::WriteOnly | QIODevice::NewOnly, ownerOnly(false));
#else
    return file.open(QIODevice::WriteOnly | QIODevice::NewOnly);
#endif
}

// For what others create (QLockFile, QSaveFile): made owner-only right after.
void makeOwnerOnly(const QString &path, bool folder)
{
#ifdef Q_OS_UNIX
    QFile::setPermissions(path, ownerOnly(folder));
#else
    Q_UNUSED(path);
    Q_UNUSED(folder);
#endif
}

// Why the journal must not write in (or read from) the folder `path`, named `what` ("the
// sessions folder", "the session folder") in the reason; empty when it may. A symbolic link or
// junction is refused whatever it points to (one planted in a shared folder would send the frames
// elsewhere), and so, on Unix, is a folder owned by another user (they could read or swap what it
// holds).
QString folderRefusal(const QString &path, const QString &what)
{
    const QFileInfo info(path);
    if (info.isSymbolicLink() || info.isJunction())
        return SessionJournal::tr("%1 %2 is a symbolic link").arg(what, QDir::toNativeSeparators(path));
    if (!info.isDir())
        return SessionJournal::tr("cannot create %1 %2: not a folder").arg(what, QDir::toNativeSeparators(path));
#ifdef Q_OS_UNIX
    if (info.ownerId() != uint(::geteuid()))
        return SessionJournal::tr("%1 %2 belongs to another user (%3)").arg(what, QDir::toNativeSeparators(path), info.owner());
#endif
    return {};
}

} // namespace

SessionJournal::SessionJournal(QObject *parent)
    : QObject(parent)
{
    m_flushTimer.setInterval(kFlushMs / 2); // a frame waits at most kFlushMs (checked twice as often)
    connect(&m_flushTimer, &QTimer::timeout, this, [this] {
        if (!m_open.isEmpty() && m_sinceOpen.hasExpired(kFlushMs))
            flush();
        else if (m_open.isEmpty() && m_degraded.load())
            flush(); // try the disk again
    });
}

SessionJournal::~SessionJournal()
{
    if (m_active)
        close(true);
    ZSTD_freeCCtx(static_cast<ZSTD_CCtx *>(m_cctx));
    ZSTD_freeDCtx(static_cast<ZSTD_DCtx *>(m_dctx));
}

QString SessionJournal::sessionsRoot()
{
    const QByteArray overridden = qgetenv("MAPI_SESSIONS_DIR");
    if (!overridden.isEmpty())
        return QString::fromLocal8Bit(overridden);
    return QStandardPaths::writableLocation(QStandardPaths::AppLocalDataLocation) + QStringLiteral("/sessions");
}

QString SessionJournal::newSessionFolder(const QString &root, const QString &url)
{
    const QUrl u(url);
    QString server = u.host().isEmpty() ? QStringLiteral("server") : u.host();
    if (u.port() > 0)
        server += QLatin1Char('-') + QString::number(u.port());
    for (QChar &c : server)
        if (!c.isLetterOrNumber() && c != QLatin1Char('-'))
            c = QLatin1Char('_');
    const QString base = root + QLatin1Char('/') + QDateTime::currentDateTime().toString(QStringLiteral("yyyyMMdd-HHmmss"))
        + QLatin1Char('-') + server + QLatin1Char('-');
    // 64 random bits: two sessions started in the same second against one server get different
    // folders, and no one can guess (and plant) a folder before open() creates it.
    for (;;) {
        const QString folder = base + QString::number(QRandomGenerator::system()->generate64(), 16).rightJustified(16, QLatin1Char('0'));
        const QFileInfo info(folder);
        if (!info.exists() && !info.isSymLink())
            return folder;
    }
}

QList<JournalInfo> SessionJournal::abandonedSessions(const QString &root)
{
    QList<JournalInfo> found;
    const QDir dir(root);
    for (const QFileInfo &entry : dir.entryInfoList(QDir::Dirs | QDir::NoDotAndDotDot)) {
        const QString folder = entry.absoluteFilePath();
        if (!folderRefusal(folder, QString()).isEmpty())
            continue; // a link or someone else's folder: not a session of ours to offer
        QLockFile lock(folder + QStringLiteral("/session.lock"));
        if (!lock.tryLock(0))
            continue; // a running session holds it
        lock.unlock();
        JournalInfo info;
        info.folder = folder;
        QFile meta(folder + QStringLiteral("/session.json"));
        if (meta.open(QIODevice::ReadOnly)) {
            const QJsonObject o = QJsonDocument::fromJson(meta.readAll()).object();
            info.url = o.value(QStringLiteral("url")).toString();
            info.startedAtMs = qint64(o.value(QStringLiteral("startedAt")).toDouble());
        }
        QList<std::pair<int, QFileInfo>> parts;
        for (const QFileInfo &f : QDir(folder).entryInfoList({QStringLiteral("journal*.jsonl.zst")}, QDir::Files)) {
            const int n = partNumberOf(f.fileName());
            if (n >= 0)
                parts.append({n, f});
        }
        if (parts.isEmpty())
            continue;
        std::sort(parts.begin(), parts.end(), [](const auto &a, const auto &b) { return a.first < b.first; });
        for (const auto &p : parts) {
            info.parts << p.second.absoluteFilePath();
            info.bytes += p.second.size();
            info.lastWriteMs = std::max(info.lastWriteMs, p.second.lastModified().toMSecsSinceEpoch());
        }
        found << info;
    }
    std::sort(found.begin(), found.end(), [](const JournalInfo &a, const JournalInfo &b) { return a.startedAtMs > b.startedAtMs; });
    return found;
}

bool SessionJournal::open(const QString &folder, const QString &url, QString *error)
{
    m_folder = folder;
    m_madeFolder = false;
    m_url = url;
    m_startedAt = QDateTime::currentMSecsSinceEpoch();
    m_active = true;
    if (!m_cctx) {
        m_cctx = ZSTD_createCCtx();
        ZSTD_CCtx_setParameter(static_cast<ZSTD_CCtx *>(m_cctx), ZSTD_c_compressionLevel, ZSTD_CLEVEL_DEFAULT);
        ZSTD_CCtx_setParameter(static_cast<ZSTD_CCtx *>(m_cctx), ZSTD_c_checksumFlag, 1);
    }
    m_options.partBytes = std::max<qint64>(1, std::min(m_options.partBytes, m_options.maxBytes / 4));
    m_flushTimer.start();
    // Whatever fails here, the session goes on: frames wait in memory (bounded) and every flush
    // tries the disk again.
    QString why;
    if (!takeFolder(&why) || !openPart(&why)) {
        setDegraded(true, why);
        if (error)
            *error = why;
        return false;
    }
    return true;
}

bool SessionJournal::takeFolder(QString *error)
{
    if (m_lock)
        return true;
    const QString folderName = QDir::toNativeSeparators(m_folder);
    if (!m_madeFolder) {
        // The sessions folder: created owner-only when missing, and refused when it is a link
        // or someone else's (a shared MAPI_SESSIONS_DIR).
        const QString root = QFileInfo(m_folder).absolutePath();
        const QFileInfo rootInfo(root);
        if (!rootInfo.exists() && !rootInfo.isSymLink()) {
            if (!QDir().mkpath(root)) {
                *error = tr("cannot create the sessions folder %1").arg(QDir::toNativeSeparators(root));
                return false;
            }
            makeOwnerOnly(root, true);
        }
        if (const QString why = folderRefusal(root, tr("the sessions folder")); !why.isEmpty()) {
            *error = why;
            return false;
        }
        // The session's folder is always a new one (create-new, owner-only): an existing folder
        // (planted, or another session's) is never used, nor deleted by close().
        if (QFileInfo(m_folder).exists() || QFileInfo(m_folder).isSymLink()) {
            *error = tr("the session folder %1 exists already (a new one is needed)").arg(folderName);
            return false;
        }
        if (!makeNewFolder(m_folder)) {
            *error = tr("cannot create the session folder %1").arg(folderName);
            return false;
        }
        m_madeFolder = true;
    }
    if (const QString why = folderRefusal(m_folder, tr("the session folder")); !why.isEmpty()) {
        *error = why; // swapped after we made it
        return false;
    }
    const QString lockPath = m_folder + QStringLiteral("/session.lock");
    auto lock = std::make_unique<QLockFile>(lockPath);
    lock->setStaleLockTime(0); // held as long as the process lives, however long that is
    if (!lock->tryLock(0)) {
        *error = tr("the session folder %1 is in use").arg(folderName);
        return false;
    }
    makeOwnerOnly(lockPath, false);
    m_lock = std::move(lock);
    writeSessionInfo();
    return true;
}

void SessionJournal::writeSessionInfo()
{
    const QString path = m_folder + QStringLiteral("/session.json");
    QSaveFile meta(path);
    if (!meta.open(QIODevice::WriteOnly))
        return; // the journal itself says what it holds; this only names it
    // Redacted like the header (open() promises it; the callers pass a redacted URL already).
    const QJsonObject o{{QStringLiteral("url"), redactSecrets(m_url)}, {QStringLiteral("startedAt"), double(m_startedAt)}};
    meta.write(QJsonDocument(o).toJson(QJsonDocument::Compact));
    if (meta.commit())
        makeOwnerOnly(path, false); // QSaveFile makes new files 0666 & ~umask; the folder is 0700 meanwhile
}

FrameRef SessionJournal::write(const TraceRecord &record)
{
    if (!m_active)
        return {};
    const QByteArray line = encodeRecordLine(record); // redacts secrets; ends with '\n'
    const qint64 offset = m_contentEnd.load();
    {
        std::lock_guard<std::mutex> lock(m_mutex);
        if (m_open.isEmpty())
            m_sinceOpen.start();
        m_open.append(line);
        m_openLastTimeMs = std::max(m_openLastTimeMs, record.timeMs);
        ++m_openRecords;
    }
    m_contentEnd.store(offset + line.size());
    m_records.fetch_add(1);
    if (m_open.size() >= kFrameBytes || m_sinceOpen.hasExpired(kFlushMs))
        flush();
    return {offset, line.size() - 1};
}

bool SessionJournal::openPart(QString *error)
{
    m_file.close();
    if (!takeFolder(error))
        return false;
    const int number = m_partNumber + 1;
    const QString path = m_folder + QLatin1Char('/') + partFileName(number);
    m_file.setFileName(path);
    // A part is read while it grows: written in place, and never over a file already there.
    if (m_failWrites || !openNewFile(m_file)) {
        if (error)
            *error = m_failWrites ? tr("cannot write %1: no space left on device").arg(path)
                                  : tr("cannot write %1: %2").arg(path, m_file.errorString());
        m_file.close();
        return false;
    }
    // Each part is a trace of its own: a header line (its own zstd frame, outside the content
    // offsets), then the records.
    Json extra = Json::object();
    extra["journal"] = true;
    if (number > 0)
        extra["part"] = number;
    const QByteArray header = encodeHeaderLine(m_url, m_startedAt, extra);
    QByteArray compressed(qsizetype(ZSTD_compressBound(size_t(header.size()))), Qt::Uninitialized);
    const size_t n = ZSTD_compress2(static_cast<ZSTD_CCtx *>(m_cctx), compressed.data(), size_t(compressed.size()),
                                    header.constData(), size_t(header.size()));
    compressed.truncate(qsizetype(n));
    if (m_file.write(compressed) != compressed.size() || !m_file.flush()) {
        if (error)
            *error = tr("cannot write %1: %2").arg(path, m_file.errorString());
        m_file.close();
        QFile::remove(path);
        return false;
    }
    m_partNumber = number;
    std::lock_guard<std::mutex> lock(m_mutex);
    if (m_parts.empty())
        m_firstPartNumber = number;
    else
        while (m_firstPartNumber + int(m_parts.size()) < number)
            m_parts.push_back({}); // parts that failed to open: nothing on disk
    m_parts.push_back({path, compressed.size()});
    m_bytesOnDisk.fetch_add(compressed.size());
    return true;
}

bool SessionJournal::writeToPart(Frame &frame, const QByteArray &compressed)
{
    if (!m_file.isOpen())
        return false;
    const qint64 at = m_file.pos();
    if (m_failWrites || m_file.write(compressed) != compressed.size() || !m_file.flush()) {
        m_file.resize(at); // no half frame stays behind (best effort: the disk may refuse this too)
        m_file.close();
        return false;
    }
    frame.part = m_partNumber;
    frame.fileOffset = at;
    frame.fileBytes = compressed.size();
    std::lock_guard<std::mutex> lock(m_mutex);
    m_parts.back().bytes += compressed.size();
    m_bytesOnDisk.fetch_add(compressed.size());
    return true;
}

void SessionJournal::flush()
{
    if (!m_active)
        return;
    QString why;
    // A part that failed, or that is full: the next frame goes to a new one.
    if (m_file.isOpen() && m_file.pos() >= m_options.partBytes)
        m_file.close();
    if (!m_file.isOpen() && (!m_open.isEmpty() || m_degraded.load()) && !openPart(&why))
        setDegraded(true, why);

    // Frames kept in memory while the disk failed go first, in order.
    if (m_file.isOpen() && m_memoryBytes > 0) {
        std::lock_guard<std::mutex> lock(m_mutex);
        for (Frame &f : m_frames) {
            if (f.memory.isEmpty())
                continue;
            const QByteArray compressed = f.memory;
            m_mutex.unlock();
            const bool written = writeToPart(f, compressed);
            m_mutex.lock();
            if (!written)
                break;
            m_memoryBytes -= compressed.size();
            f.memory = QByteArray();
        }
    }

    if (!m_open.isEmpty()) {
        Frame frame;
        frame.contentStart = m_openStart;
        frame.contentSize = m_open.size();
        frame.lastTimeMs = m_openLastTimeMs;
        frame.records = m_openRecords;
        frame.hash = XXH3_64bits(m_open.constData(), size_t(m_open.size()));
        // m_open changes only in this thread: compressing it needs no lock.
        QByteArray compressed(qsizetype(ZSTD_compressBound(size_t(m_open.size()))), Qt::Uninitialized);
        const size_t n = ZSTD_compress2(static_cast<ZSTD_CCtx *>(m_cctx), compressed.data(), size_t(compressed.size()),
                                        m_open.constData(), size_t(m_open.size()));
        compressed.truncate(ZSTD_isError(n) ? 0 : qsizetype(n));
        if (!writeToPart(frame, compressed)) {
            if (why.isEmpty())
                why = tr("cannot write the session journal in %1: %2")
                          .arg(m_folder, m_failWrites ? QStringLiteral("no space left on device") : m_file.errorString());
            frame.memory = compressed;
        }
        std::lock_guard<std::mutex> lock(m_mutex);
        m_memoryBytes += frame.memory.size();
        m_frames.push_back(std::move(frame));
        m_open.clear();
        if (m_open.capacity() > 2 * kFrameBytes)
            m_open.squeeze();
        m_openStart = m_contentEnd.load();
        m_openLastTimeMs = 0;
        m_openRecords = 0;
        // Past the ring's bound, the oldest frames held in memory are lost.
        for (Frame &f : m_frames) {
            if (m_memoryBytes <= m_options.memoryRingBytes)
                break;
            if (!f.memory.isEmpty()) {
                m_memoryBytes -= f.memory.size();
                f.memory = QByteArray();
                m_recordsDropped.fetch_add(f.records);
            }
        }
    }
    const bool stillFailing = m_memoryBytes > 0 || !m_file.isOpen();
    if (stillFailing && !why.isEmpty())
        setDegraded(true, why);
    else if (!stillFailing)
        setDegraded(false, QString());
    enforceRetention();
}

void SessionJournal::setDegraded(bool degraded, const QString &reason)
{
    if (m_degraded.exchange(degraded) != degraded)
        Q_EMIT journalStateChanged(degraded, reason);
}

void SessionJournal::enforceRetention()
{
    const qint64 now = QDateTime::currentMSecsSinceEpoch();
    qint64 droppedTo = -1;
    qint64 droppedTime = 0;
    {
        std::lock_guard<std::mutex> lock(m_mutex);
        while (m_parts.size() > 1) {
            const int oldest = m_firstPartNumber;
            qint64 newestTime = 0;
            for (const Frame &f : m_frames) {
                if (f.part == oldest)
                    newestTime = std::max(newestTime, f.lastTimeMs);
                else if (f.part > oldest)
                    break;
            }
            const bool tooBig = m_bytesOnDisk.load() > m_options.maxBytes;
            const bool tooOld = newestTime > 0 && now - newestTime > m_options.maxAgeMs;
            const bool empty = m_parts.front().path.isEmpty();
            if (!tooBig && !tooOld && !empty)
                break;
            if (!m_parts.front().path.isEmpty())
                QFile::remove(m_parts.front().path);
            m_bytesOnDisk.fetch_sub(m_parts.front().bytes);
            m_parts.pop_front();
            ++m_firstPartNumber;
            // Its frames, and frames lost while the disk failed before them, go with it.
            while (!m_frames.empty() && m_frames.front().part < m_firstPartNumber && m_frames.front().memory.isEmpty()) {
                droppedTime = std::max(droppedTime, m_frames.front().lastTimeMs);
                if (m_frames.front().part >= 0) // a frame lost from the memory ring was counted then
                    m_recordsDropped.fetch_add(m_frames.front().records);
                m_frames.pop_front();
            }
            droppedTo = m_frames.empty() ? m_openStart : m_frames.front().contentStart;
            m_cachedFrame = -1;
            m_readFile.reset();
            m_readPart = -1;
        }
    }
    if (droppedTo >= 0) {
        m_firstKept.store(droppedTo);
        Q_EMIT historyDropped(droppedTo, droppedTime);
    }
}

void SessionJournal::close(bool keepFiles)
{
    if (!m_active)
        return;
    flush();
    m_active = false;
    m_flushTimer.stop();
    m_file.close();
    {
        std::lock_guard<std::mutex> lock(m_mutex);
        m_readFile.reset();
        m_readPart = -1;
    }
    if (m_lock) {
        m_lock->unlock();
        m_lock.reset();
    }
    if (!keepFiles && m_madeFolder)
        QDir(m_folder).removeRecursively(); // only a folder this journal made: never a refused one
}

QList<SessionJournal::PartExtent> SessionJournal::flushedParts()
{
    flush();
    std::lock_guard<std::mutex> lock(m_mutex);
    QList<PartExtent> out;
    for (const Part &p : m_parts)
        if (!p.path.isEmpty() && p.bytes > 0)
            out.push_back({p.path, p.bytes});
    return out;
}

bool SessionJournal::copyParts(const QList<PartExtent> &parts, const QString &target, QString *error)
{
    QSaveFile out(target);
    if (!out.open(QIODevice::WriteOnly)) {
        if (error)
            *error = QStringLiteral("cannot write %1: %2").arg(target, out.errorString());
        return false;
    }
    for (const PartExtent &part : parts) {
        QFile in(part.path);
        if (!in.open(QIODevice::ReadOnly)) {
            if (error)
                *error = QStringLiteral("cannot read the journal part %1: %2").arg(part.path, in.errorString());
            return false;
        }
        for (qint64 left = part.bytes; left > 0;) {
            const QByteArray chunk = in.read(std::min<qint64>(left, 4 << 20));
            if (chunk.isEmpty()) {
                if (error)
                    *error = QStringLiteral("the journal part %1 is shorter than written").arg(part.path);
                return false;
            }
            if (out.write(chunk) != chunk.size()) {
                if (error)
                    *error = QStringLiteral("cannot write %1: %2").arg(target, out.errorString());
                return false;
            }
            left -= chunk.size();
        }
    }
    if (!out.commit()) {
        if (error)
            *error = QStringLiteral("cannot write %1: %2").arg(target, out.errorString());
        return false;
    }
    return true;
}

QStringList SessionJournal::parts() const
{
    std::lock_guard<std::mutex> lock(m_mutex);
    QStringList paths;
    for (const Part &p : m_parts)
        if (!p.path.isEmpty())
            paths << p.path;
    return paths;
}

QByteArray SessionJournal::readLine(const FrameRef &ref) const
{
    if (!ref.isValid() || ref.size <= 0)
        return {};
    std::lock_guard<std::mutex> lock(m_mutex);
    if (ref.offset >= m_openStart) {
        if (ref.offset + ref.size > m_openStart + m_open.size())
            return {};
        return m_open.mid(qsizetype(ref.offset - m_openStart), qsizetype(ref.size));
    }
    const auto it = std::upper_bound(m_frames.begin(), m_frames.end(), ref.offset,
                                     [](qint64 at, const Frame &f) { return at < f.contentStart; });
    if (it == m_frames.begin())
        return {}; // dropped by retention
    const Frame &frame = *(it - 1);
    if (ref.offset + ref.size > frame.contentStart + frame.contentSize)
        return {};
    if (m_cachedFrame != frame.contentStart) {
        QByteArray compressed = frame.memory;
        if (compressed.isEmpty()) {
            if (frame.part < m_firstPartNumber || frame.part - m_firstPartNumber >= int(m_parts.size()))
                return {}; // lost while the disk failed
            if (m_readPart != frame.part) {
                m_readFile = std::make_unique<QFile>(m_parts[size_t(frame.part - m_firstPartNumber)].path);
                m_readPart = m_readFile->open(QIODevice::ReadOnly) ? frame.part : -1;
            }
            if (m_readPart != frame.part || !m_readFile->seek(frame.fileOffset))
                return {};
            compressed = m_readFile->read(frame.fileBytes);
        }
        if (!m_dctx)
            m_dctx = ZSTD_createDCtx();
        m_cache.resize(qsizetype(frame.contentSize));
        const size_t n = ZSTD_decompressDCtx(static_cast<ZSTD_DCtx *>(m_dctx), m_cache.data(), size_t(m_cache.size()),
                                             compressed.constData(), size_t(compressed.size()));
        m_cachedFrame = -1;
        if (ZSTD_isError(n) || qint64(n) != frame.contentSize
            || XXH3_64bits(m_cache.constData(), size_t(m_cache.size())) != frame.hash)
            return {}; // changed on disk under us: never misread
        m_cachedFrame = frame.contentStart;
    }
    return m_cache.mid(qsizetype(ref.offset - frame.contentStart), qsizetype(ref.size));
}

QByteArray SessionJournal::readFrame(const FrameRef &ref) const
{
    const QByteArray line = readLine(ref);
    if (line.isEmpty())
        return {};
    std::lock_guard<std::mutex> lock(m_mutex);
    if (!m_parser)
        m_parser = std::make_unique<RecordLineParser>();
    TraceRecord record;
    if (m_parser->parse(line.constData(), line.size(), line.size(), record) != RecordLineParser::Result::Record)
        return {};
    return record.raw;
}

} // namespace mapi
