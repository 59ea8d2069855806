#include "telemetry/LiveOtlpExporter.h"

namespace mapi {

LiveOtlpExporter::LiveOtlpExporter(SystemStore &store, OtlpOptions otlp, OtlpSenderOptions sender, int intervalMs,
                                   QObject *parent)
    : QObject(parent)
    , m_store(store)
    , m_batcher(store, std::move(otlp))
    , m_sender(std::move(sender), this)
{
    connect(&m_sender, &OtlpHttpSender::drained, this, [this] {
        m_finished = true;
        Q_EMIT finished();
    });
    if (!m_sender.isOn())
        return;
    connect(&store, &SystemStore::changed, this, [this](const ChangeSet &changes) {
        if (m_finishing)
            return;
        m_batcher.noteChanges(changes);
        if (m_batcher.pendingBytes() >= LiveOtlpBatcher::kFlushAtPendingBytes)
            send(false);
    });
    // The store flushes its changes before it resets: everything of the old numbering is noted.
    connect(&store, &SystemStore::wasReset, this, [this] { m_batcher.reset(); });
    m_interval.setInterval(std::max(100, intervalMs));
    connect(&m_interval, &QTimer::timeout, this, [this] { send(false); });
    m_interval.start();
}

void LiveOtlpExporter::noteAlerts(const std::vector<AlertChange> &changes)
{
    if (m_sender.isOn() && !m_finishing)
        m_batcher.noteAlerts(changes);
}

void LiveOtlpExporter::send(bool final)
{
    for (OtlpBody &body : m_batcher.take(m_store.now(), final)) {
        m_spansBatched += body.spans;
        m_sender.enqueue(std::move(body.json), body.spans);
    }
}

void LiveOtlpExporter::finish(int withinMs)
{
    if (m_finishing)
        return;
    if (m_sender.isOn())
        m_store.flushChanges(); // what the store holds back for its next signal is noted and goes too
    m_finishing = true;
    m_interval.stop();
    if (m_sender.isOn())
        send(true);
    m_sender.drain(withinMs); // drained() → finished(), also when off (an idle sender says so next turn)
}

} // namespace mapi
