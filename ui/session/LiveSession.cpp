#include "session/LiveSession.h"

#include "trace/Trace.h"

#include <QDateTime>
#include <QFileInfo>

namespace mapi::ui {

LiveSession::LiveSession(QObject *parent)
    : QObject(parent)
{
    m_worker.setObjectName(QStringLiteral("map-client"));
    m_worker.start();
    m_workerContext = new QObject;
    m_workerContext->moveToThread(&m_worker);
    m_clock.setInterval(1000); // health is defined in tens of seconds; 1 Hz is plenty
    connect(&m_clock, &QTimer::timeout, this, [this] {
        if (m_source == Source::Live)
            m_store.advanceTime(QDateTime::currentMSecsSinceEpoch());
        const qint64 count = m_store.counters().eventsApplied;
        m_eventRate = double(count - m_lastEventCount);
        m_lastEventCount = count;
        Q_EMIT rateUpdated(m_eventRate);
    });
    m_clock.start();
}

LiveSession::~LiveSession()
{
    shutdownClient();
    m_workerContext->deleteLater(); // deleted by the worker's event loop before it quits
    m_worker.quit();
    m_worker.wait();
}

template<typename F> void LiveSession::onClient(F &&f)
{
    if (m_client)
        QMetaObject::invokeMethod(m_client, std::forward<F>(f), Qt::QueuedConnection);
}

void LiveSession::shutdownClient()
{
    if (!m_client)
        return;
    MapClient *client = m_client;
    m_client = nullptr;
    disconnect(client, nullptr, this, nullptr);
    disconnect(client, nullptr, &m_store, nullptr);
    // Stop and delete in the worker thread, where the client and its sockets live.
    QMetaObject::invokeMethod(client, [client] {
        client->stop();
        client->deleteLater();
    }, Qt::BlockingQueuedConnection);
}

void LiveSession::connectTo(const ClientOptions &options, bool observerOnly)
{
    shutdownClient();
    m_store.reset();
    m_support.clear();
    m_lastEventCount = 0;
    m_source = Source::Live;
    m_label = redactedUrl(options.url);
    m_lastError.clear();
    setObserverOnly(observerOnly);

    MapClient *client = nullptr;
    // Constructed inside the worker so its timers and socket belong to that thread.
    QMetaObject::invokeMethod(m_workerContext, [&client, options] { client = new MapClient(options); }, Qt::BlockingQueuedConnection);
    m_client = client;
    connect(client, &MapClient::inputsReady, &m_store, [this](const ModelInputs &inputs) { m_store.apply(inputs); },
            Qt::QueuedConnection);
    connect(client, &MapClient::stateChanged, this, [this](ClientState state) {
        m_state = state;
        Q_EMIT stateChanged(state);
    }, Qt::QueuedConnection);
    connect(client, &MapClient::fatalError, this, [this](const QString &message) {
        m_lastError = message;
        Q_EMIT fatalError(message);
    }, Qt::QueuedConnection);
    connect(client, &MapClient::supportChanged, this, [this](const QString &method, Support support) {
        m_support.insert(method, support);
        Q_EMIT supportChanged();
    }, Qt::QueuedConnection);
    onClient([client] { client->start(); });
    Q_EMIT sourceChanged();
}

void LiveSession::disconnectFromServer()
{
    shutdownClient();
    m_state = ClientState::Closed;
    Q_EMIT stateChanged(m_state);
    Q_EMIT sourceChanged();
}

bool LiveSession::openTrace(const QString &path, QString *error)
{
    shutdownClient();
    m_store.reset();
    m_support.clear();
    TraceReplayer replayer(&m_store);
    TraceReadStats stats;
    const bool ok = replayer.replayFile(path, stats, error);
    m_store.flushChanges();
    m_source = ok ? Source::Trace : Source::None;
    m_label = QFileInfo(path).fileName();
    m_state = ClientState::Closed;
    m_lastEventCount = m_store.counters().eventsApplied;
    Q_EMIT sourceChanged();
    return ok;
}

QString LiveSession::sourceLabel() const
{
    return m_label;
}

void LiveSession::setObserverOnly(bool on)
{
    if (m_observerOnly == on)
        return;
    m_observerOnly = on;
    Q_EMIT observerOnlyChanged(on);
}

QString LiveSession::actionBlockedReason() const
{
    if (m_observerOnly)
        return tr("Observer-only mode: control actions are disabled");
    if (m_source == Source::Trace)
        return tr("Replaying a trace: nothing to control");
    if (m_source != Source::Live || m_state != ClientState::Live)
        return tr("Not connected to a live system");
    return {};
}

void LiveSession::inject(const QStringList &agentIds, const Json &content, MapClient::Delivery delivery)
{
    if (!actionBlockedReason().isEmpty())
        return;
    MapClient *client = m_client;
    onClient([client, agentIds, content, delivery] {
        for (const QString &id : agentIds)
            client->inject(id, content, delivery);
    });
}

void LiveSession::stop(const QStringList &agentIds, const QString &reason)
{
    if (!actionBlockedReason().isEmpty())
        return;
    MapClient *client = m_client;
    onClient([client, agentIds, reason] {
        for (const QString &id : agentIds)
            client->stopAgent(id, reason);
    });
}

void LiveSession::suspend(const QStringList &agentIds, const QString &reason)
{
    if (!actionBlockedReason().isEmpty())
        return;
    MapClient *client = m_client;
    onClient([client, agentIds, reason] {
        for (const QString &id : agentIds)
            client->suspendAgent(id, reason);
    });
}

void LiveSession::resume(const QStringList &agentIds)
{
    if (!actionBlockedReason().isEmpty())
        return;
    MapClient *client = m_client;
    onClient([client, agentIds] {
        for (const QString &id : agentIds)
            client->resumeAgent(id);
    });
}

} // namespace mapi::ui
