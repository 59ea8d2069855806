#include "tap/TapRecorder.h"

#include <QDateTime>
#include <QMetaObject>

namespace mapi {

TapRecorder::TapRecorder()
{
    m_thread.setObjectName(QStringLiteral("tap recorder"));
}

TapRecorder::~TapRecorder()
{
    close();
}

bool TapRecorder::open(const QString &path, const QString &url, const Json &headerExtra, const TraceWriterOptions &options,
                       QString *error)
{
    close();
    m_anchor = new QObject;
    m_anchor->moveToThread(&m_thread);
    m_thread.start();
    bool opened = false;
    QString why;
    // Made in the writing thread: its flush timer belongs there.
    QMetaObject::invokeMethod(m_anchor, [&] {
        auto *writer = new TraceWriter;
        writer->setOptions(options);
        writer->setHeaderExtra(headerExtra);
        connect(writer, &TraceWriter::writeFailed, this, &TapRecorder::failed, Qt::DirectConnection);
        opened = writer->open(path, url, &why);
        m_live = {};
        if (m_follow) {
            m_publish = new QTimer(m_anchor);
            m_publish->setSingleShot(true);
            m_publish->setInterval(kPublishMs);
            connect(m_publish, &QTimer::timeout, m_anchor, [this] {
                auto copy = std::make_shared<const TapConnections>(m_live); // copied here, not under the lock
                std::lock_guard<std::mutex> lock(m_mutex);
                m_published = std::move(copy);
            });
            m_publish->start(0); // an empty picture at once
        }
        std::lock_guard<std::mutex> lock(m_mutex);
        m_writer = writer;
    }, Qt::BlockingQueuedConnection);
    if (!opened) {
        close();
        if (error)
            *error = why;
        return false;
    }
    std::lock_guard<std::mutex> lock(m_mutex);
    m_files = m_writer->files();
    return true;
}

void TapRecorder::post(TraceRecord &&record)
{
    std::lock_guard<std::mutex> lock(m_mutex);
    if (!m_writer)
        return;
    const qint64 size = record.raw.size() + 64;
    if (m_queuedBytes + size > kMaxQueuedBytes) {
        ++m_droppedUnsaid;
        m_dropped.fetch_add(1, std::memory_order_relaxed);
        return;
    }
    m_queuedBytes += size;
    m_queue.push_back(std::move(record));
    if (!m_drainPosted) { // one wake-up per batch, not one per frame
        m_drainPosted = true;
        QMetaObject::invokeMethod(m_writer, [this] { drain(); }, Qt::QueuedConnection);
    }
}

void TapRecorder::drain()
{
    std::vector<TraceRecord> batch;
    qint64 droppedUnsaid = 0;
    {
        std::lock_guard<std::mutex> lock(m_mutex);
        batch.swap(m_queue);
        m_queuedBytes = 0;
        m_drainPosted = false;
        droppedUnsaid = std::exchange(m_droppedUnsaid, 0);
    }
    for (const TraceRecord &record : batch) {
        if (m_follow)
            m_live.add(record);
        m_writer->write(record);
    }
    if (m_publish && !m_publish->isActive())
        m_publish->start();
    if (droppedUnsaid > 0) {
        TraceRecord note;
        note.timeMs = batch.empty() ? QDateTime::currentMSecsSinceEpoch() : batch.back().timeMs;
        note.dir = QStringLiteral("note");
        note.connection = 0;
        note.raw = QStringLiteral("tap: %1 frame(s) before this point were forwarded but not recorded "
                                  "(the disk fell behind)").arg(droppedUnsaid).toUtf8();
        m_writer->write(note);
    }
    m_written.store(m_writer->recordsWritten(), std::memory_order_relaxed);
    std::lock_guard<std::mutex> lock(m_mutex);
    m_files = m_writer->files();
}

void TapRecorder::close()
{
    if (!m_thread.isRunning())
        return;
    // In the writer's thread (its timer is there); post() sees no writer from then on.
    QMetaObject::invokeMethod(m_anchor, [this] {
        if (m_writer) {
            drain();
            m_writer->close();
        }
        std::lock_guard<std::mutex> lock(m_mutex);
        delete m_writer;
        m_writer = nullptr;
        m_queue.clear();
        m_queuedBytes = 0;
        m_drainPosted = false;
        delete m_anchor; // and m_publish
        m_anchor = nullptr;
        m_publish = nullptr;
    }, Qt::BlockingQueuedConnection);
    m_thread.quit();
    m_thread.wait();
}

std::shared_ptr<const TapConnections> TapRecorder::liveConnections() const
{
    std::lock_guard<std::mutex> lock(m_mutex);
    return m_published;
}

QStringList TapRecorder::files() const
{
    std::lock_guard<std::mutex> lock(m_mutex);
    return m_files;
}

} // namespace mapi
