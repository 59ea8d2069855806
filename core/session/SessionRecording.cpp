// InspectorSession's recordings and saved sessions: a recording of the running connection
// (startRecording: the journal's history first, then the live frames, on the same connection),
// its end, and "Save session as" from the journal. The writer and the journal live in the
// session's worker, next to the client: every file operation runs there or on a copy thread.
#include "session/InspectorSession.h"

#include "trace/Trace.h"

#include <QCoreApplication>
#include <QFile>
#include <QPointer>
#include <QThread>

namespace mapi {

void InspectorSession::adoptWriter(TraceWriter *writer, const QString &path)
{
    m_writer = writer;
    m_recordingPath = path;
    m_recordsWritten = 0;
    connect(writer, &TraceWriter::rotated, this, [this](const QString &part) {
        m_recordingPath = part;
        Q_EMIT recordingChanged(true);
    });
    connect(writer, &TraceWriter::writeFailed, this, [this] { stopRecording(); });
}

bool InspectorSession::startRecording(const QString &path, QString *error, qint64 rotateBytes)
{
    if (m_source != Source::Live || !m_client) {
        if (error)
            *error = tr("Recording needs a live connection");
        return false;
    }
    stopRecording();
    TraceWriterOptions options;
    options.maxBytes = rotateBytes;
    const bool fromJournal = m_journal && !m_journalDegraded && m_journalDroppedBeforeMs == 0;
    TraceWriter *writer = openWriter(path, options, m_options.url, error, fromJournal ? &m_store.connection() : nullptr);
    if (!writer)
        return false;
    adoptWriter(writer, path);
    if (fromJournal) {
        m_recordingNote = tr("Recording began with this session's history (from its first frame), then the live frames; "
                             "nothing was reconnected");
        // In the worker, as one task, so that no frame comes between: the journal's records so
        // far into the trace, then the writer joins the client's sinks and takes the next frame.
        SessionJournal *journal = m_journal;
        QPointer<MapClient> client = m_client;
        QPointer<InspectorSession> self(this);
        QMetaObject::invokeMethod(m_workerContext, [journal, client, writer, self] {
            QString why;
            int connection = 0;
            for (const SessionJournal::PartExtent &part : journal->flushedParts()) {
                TraceFileReader reader;
                if (!reader.open(part.path, &why)) {
                    why = tr("the session's history could not be read into the recording (%1): it starts later").arg(why);
                    break;
                }
                TraceRecord record;
                while (reader.next(record)) {
                    connection = record.connection;
                    writer->write(record);
                }
            }
            writer->continueConnection(connection);
            if (client)
                client->addFrameSink(writer);
            if (!why.isEmpty())
                QMetaObject::invokeMethod(qApp, [self, why] {
                    if (self) {
                        self->m_recordingNote = why;
                        Q_EMIT self->recordingChanged(true);
                    }
                }, Qt::QueuedConnection);
        }, Qt::QueuedConnection);
        Q_EMIT recordingChanged(true);
        return true;
    }

    // No history to begin with: a fresh connection, so that the trace holds the handshake and the
    // snapshot. The live model starts again with it.
    m_recordingNote = m_journal ? tr("Recording reconnected: the session journal no longer holds this connection's start")
                                : tr("Recording reconnected: this session keeps no journal");
    returnToLive();
    shutdownClient();
    resetStore();
    m_support.clear();
    m_lastEventCount = 0;
    startClient(writer);
    Q_EMIT recordingChanged(true);
    return true;
}

void InspectorSession::stopRecording()
{
    TraceWriter *writer = std::exchange(m_writer, nullptr);
    if (!writer)
        return;
    m_recordingPath.clear();
    disconnect(writer, nullptr, this, nullptr);
    // Closing flushes the compressor: in the worker, after the client (if it goes on) stopped
    // handing it frames. The outcome comes back queued.
    QPointer<MapClient> client = m_client;
    QMetaObject::invokeMethod(writer, [this, writer, client] {
        if (client)
            client->removeFrameSink(writer);
        writer->close();
        const QStringList files = writer->files();
        const qint64 records = writer->recordsWritten();
        const QString error = writer->lastError();
        delete writer;
        QMetaObject::invokeMethod(this, [this, files, records, error] {
            m_recordsWritten = records;
            Q_EMIT recordingFinished(files, records, error);
        }, Qt::QueuedConnection);
    }, Qt::QueuedConnection);
    Q_EMIT recordingChanged(false);
}

bool InspectorSession::saveSessionAs(const QString &path, QString *error, std::optional<qint64> fromMs,
                                     std::optional<qint64> toMs)
{
    if (!m_journal) {
        if (error)
            *error = tr("Saving the session needs a live connection");
        return false;
    }
    const bool whole = !fromMs && !toMs;
    const QString folder = m_journalFolder;
    withFlushedParts([this, path, whole, fromMs, toMs, folder](const QList<SessionJournal::PartExtent> &parts) {
        if (parts.isEmpty()) {
            Q_EMIT sessionSaved(false, path, tr("The session journal has nothing on disk (it cannot be written: %1)").arg(folder));
            return;
        }
        QPointer<InspectorSession> self(this);
        QThread *copy = QThread::create([parts, path, self, whole, fromMs, toMs] {
            QString why;
            bool ok = false;
            if (whole) {
                ok = SessionJournal::copyParts(parts, path, &why);
            } else {
                // The parts as one trace next to the target, then the range cut from it.
                const QString joined = path + QStringLiteral(".journal-copy.jsonl.zst");
                ok = SessionJournal::copyParts(parts, joined, &why);
                if (ok) {
                    const TraceSlice slice = writeTraceSlice(joined, path, fromMs, toMs);
                    ok = slice.ok();
                    why = slice.error;
                }
                QFile::remove(joined);
            }
            QMetaObject::invokeMethod(qApp, [self, ok, path, why] {
                if (self)
                    Q_EMIT self->sessionSaved(ok, path, why);
            }, Qt::QueuedConnection);
        });
        connect(copy, &QThread::finished, copy, &QObject::deleteLater);
        copy->start();
    });
    return true;
}

void InspectorSession::withFlushedParts(std::function<void(const QList<SessionJournal::PartExtent> &)> then)
{
    // The journal's own thread flushes its open frame and says how far each part is whole; this
    // thread does not wait for it (the worker, at nice +10 under a flood, can take a while to
    // get there). The session outlives the lambda: its destructor waits for the worker.
    SessionJournal *journal = m_journal;
    QPointer<InspectorSession> self(this);
    QMetaObject::invokeMethod(m_workerContext, [journal, self, then = std::move(then)] {
        QList<SessionJournal::PartExtent> parts = journal->flushedParts();
        QMetaObject::invokeMethod(self.data(), [then, parts = std::move(parts)] { then(parts); }, Qt::QueuedConnection);
    }, Qt::QueuedConnection);
}

} // namespace mapi
