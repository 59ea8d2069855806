// InspectorSession's read-only requests for the views (conversations, checkpoint content,
// workspace files), and the federation buffer's flush the Federation panel asks for once the
// operator confirmed it: sent by the live client in its worker thread, answered here.
#include "session/InspectorSession.h"

#include "map/MethodTable.h"

#include <QDateTime>

namespace mapi {

quint64 InspectorSession::readFromServer(const QString &method, const Json &params, ReadReply done, int timeoutMs)
{
    const quint64 id = ++m_nextReadId;
    const auto refuse = [&](const QString &why) {
        QMetaObject::invokeMethod(this, [done, why] { done(false, Json(), why); }, Qt::QueuedConnection);
        return id;
    };
    if (methodEffect(method, params) != MethodEffect::Reads)
        return refuse(tr("%1 is not a read: the console does not send it from here").arg(method));
    if (m_source != Source::Live || !m_client || m_timeTravel)
        return refuse(tr("not connected to a live server"));
    if (m_reads.size() >= kMaxReadsInFlight)
        return refuse(tr("too many requests waiting for the server (%1)").arg(kMaxReadsInFlight));
    m_reads.insert(id, std::move(done));
    const QPointer<InspectorSession> self(this);
    MapClient *client = m_client;
    QMetaObject::invokeMethod(client, [client, self, id, method, params, timeoutMs] {
        client->request(method, params, [self, id](bool ok, const Json &result, const RpcError &error) {
            QMetaObject::invokeMethod(
                self.data(),
                [self, id, ok, result, message = error.message, code = error.code] {
                    if (!self)
                        return;
                    const ReadReply reply = self->m_reads.take(id);
                    if (reply)
                        reply(ok, result, ok ? QString() : QStringLiteral("%1 (%2)").arg(message).arg(code));
                },
                Qt::QueuedConnection);
        }, timeoutMs);
    }, Qt::QueuedConnection);
    return id;
}

void InspectorSession::discardFederationBuffer(const QString &systemId,
                                               std::function<void(bool ok, qint64 discarded, const QString &error)> done)
{
    const auto refuse = [&](const QString &why) {
        QMetaObject::invokeMethod(this, [done, why] { done(false, 0, why); }, Qt::QueuedConnection);
    };
    if (m_source != Source::Live || !m_client || m_timeTravel)
        return refuse(tr("not connected to a live server"));
    if (m_observerOnly)
        return refuse(tr("observer mode: map/federation/buffer/flush changes the system and is not sent"));
    const QPointer<InspectorSession> self(this);
    MapClient *client = m_client;
    const Json params = {{"systemId", systemId.toStdString()}};
    QMetaObject::invokeMethod(client, [client, self, params, done] {
        client->request(QStringLiteral("map/federation/buffer/flush"), params, [client, self, done](bool ok, const Json &result, const RpcError &error) {
            // What is left, read again whatever the answer (a lost answer may still have taken
            // effect); it reaches the model through the pipeline.
            client->request(QStringLiteral("map/federation/buffer/stats"), Json::object(), {});
            const qint64 discarded = jsonInt(result, "count", 0);
            const QString why = error.code == MapClient::kTimeoutCode
                ? tr("no answer (%1): the messages may or may not be gone; the buffer is read again").arg(error.message)
                : QStringLiteral("%1 (%2)").arg(error.message).arg(error.code);
            QMetaObject::invokeMethod(self.data(), [self, done, ok, discarded, why] {
                if (self)
                    done(ok, discarded, ok ? QString() : why);
            }, Qt::QueuedConnection);
        });
    }, Qt::QueuedConnection);
}

void InspectorSession::cancelRead(quint64 id)
{
    m_reads.remove(id);
}

void InspectorSession::wireReads(MapClient *client)
{
    connect(client, &MapClient::contentChunk, this, [this](const QByteArray &params) {
        const Json json = Json::parse(params.constData(), params.constData() + params.size(), nullptr, false);
        if (json.is_object())
            m_contentStreams.addChunk(json, QDateTime::currentMSecsSinceEpoch());
    }, Qt::QueuedConnection);
    if (!m_contentClock.isActive()) {
        m_contentClock.setInterval(1000); // stalls are counted in tens of seconds
        connect(&m_contentClock, &QTimer::timeout, this,
                [this] { m_contentStreams.expire(QDateTime::currentMSecsSinceEpoch()); });
        m_contentClock.start();
    }
}

void InspectorSession::awaitContentStream(const QString &streamId,
                                          std::function<void(bool ok, const QByteArray &content, const QString &error)> done)
{
    m_contentStreams.await(streamId, std::move(done));
}

void InspectorSession::cancelStream(const QString &streamId)
{
    m_contentStreams.cancel(streamId);
}

} // namespace mapi
