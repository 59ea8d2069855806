// Turns the raw frames of one MAP connection, in both directions, into model inputs.
//
// This is the one path from wire to model: the live client feeds it every frame it sends and
// receives, and trace replay feeds it the recorded frames, so both produce identical inputs.
// Thread: not thread-safe; one instance per connection, used from one thread (it can be a
// worker thread: it touches no QObject).
#pragma once

#include "model/ModelTypes.h"
#include "pipeline/ClockSkew.h"
#include "protocol/JsonRpc.h"

#include <QHash>
#include <QSet>

#include <optional>

namespace mapi {

struct InterpretedFrame
{
    std::optional<RpcMessage> message;   // the decoded message, if the frame decoded (a map/event's
                                         // params are not kept when SimdJsonParser decoded it)
    ModelInputs inputs;                  // what the model must apply
    QString requestMethod;               // for responses: the method of the matching request
    Json requestParams;                  // for responses: the params of the matching request
};

// Empties the raw frame of every event in `inputs`, and the payload text of the messages whose
// payload the decoder has read, for a consumer that reads them back from where the frames are
// kept when asked (a loaded trace: TraceTimeline::frameForEvent; a live session: its journal,
// whose place of the frame `journalRef` names, set on every event). The model changes as before.
// Only the inputs from index `from` on: the ones of the frame just appended to a batch.
// `dropReadPayloads` false: the payload texts stay (a live export without a journal: it reads
// every payload, and nothing else could give it back).
void dropRawFrames(ModelInputs &inputs, const FrameRef &journalRef = {}, qsizetype from = 0, bool dropReadPayloads = true);

class ProtocolPipeline
{
public:
    // `parser`: the JSON parser of the codec (default: nlohmann). SimdJsonParser yields the
    // same values and errors, faster, and turns on interpretEventFast().
    explicit ProtocolPipeline(CodecLimits limits = {}, std::shared_ptr<const JsonParser> parser = {});
    Q_DISABLE_COPY_MOVE(ProtocolPipeline) // m_lastSubscription points into m_subscriptions

    void setLimits(const CodecLimits &limits) { m_codec.setLimits(limits); }
    // false: map/event frames read through SimdJsonParser leave sent payloads' text in the frame
    // (MessageRecord::payloadInFrame) for a consumer that reads it from there when asked (a
    // loaded trace: dropRawFrames()). Default true: records carry the text.
    void setKeepPayloadText(bool keep) { m_keepPayloadText = keep; }
    const FrameCodec &codec() const { return m_codec; }

    // The start of a close reason that says the server stopped answering (MapClient's probe):
    // connectionClosed() turns the rest into a NotAnswering problem.
    static inline const QString kServerSilent = QStringLiteral("server silent: ");
    // The pages of one map/agents/list walk (MapClient::listAgents) read at most: a server that
    // pages 100 agents at a time is read whole up to 20,000 agents, each page held until the last.
    static constexpr int kAgentListMaxPages = 200;

    // A new socket: sequence tracking restarts (numbers are per subscription).
    ModelInputs connectionOpened(const QString &url, qint64 timeMs);
    ModelInputs connectionClosed(const QString &reason, qint64 timeMs);

    // Our own frame, as sent: remembered so that the response can be interpreted. false: the
    // frame is not JSON.
    bool frameSent(const QByteArray &frame, qint64 timeMs);
    // `appendTo`: inputs already collected (a batch being filled); the frame's inputs are appended
    // and the whole list comes back in InterpretedFrame::inputs. A trace load passes its batch, so
    // no list is allocated per frame (each took a 1 KiB block, and the allocator's consolidation
    // with it: a tenth of the decoding thread).
    InterpretedFrame frameReceived(const QByteArray &frame, qint64 timeMs, ModelInputs appendTo = {});
    InterpretedFrame binaryFrameReceived(const QByteArray &frame, qint64 timeMs, ModelInputs appendTo = {});

    // The events of `subscriptionId` up to `upToSequence` were left out on purpose (a trace's
    // "skip" record: an incident bundle's range): the next one expected is the one after.
    void skipSequence(const QString &subscriptionId, qint64 upToSequence);

    // Last applied event id per subscription (for gap replay after a reconnect).
    QString lastEventId(const QString &subscriptionId) const { return m_subscriptions.value(subscriptionId).lastEventId; }
    static constexpr int kMaxSubscriptions = 256; // followed at once (subscription())
    int subscriptionsFollowed() const { return int(m_subscriptions.size()); } // at most kMaxSubscriptions
    qint64 subscriptionsForgotten() const { return m_subscriptionsForgotten; }
    QString lastEventId() const { return m_lastAnyEventId; }

private:
    void interpretResult(InterpretedFrame &out, const RpcMessage &msg, qint64 timeMs);
    void interpretAgentList(InterpretedFrame &out, const Json &result, qint64 timeMs);
    void flushAgentWalk(ModelInputs &out);
    void interpretError(InterpretedFrame &out, const RpcMessage &msg, const QString &sentAs, const QByteArray &frame,
                        qint64 timeMs);
    void interpretEvent(InterpretedFrame &out, const RpcMessage &msg, const QByteArray &frame, qint64 timeMs);
    // map/event frames read straight from simdjson's DOM (no nlohmann tree of the frame; the
    // message's params stay null). false: not a well-formed map/event, take the general path.
    bool interpretEventFast(InterpretedFrame &out, const QByteArray &frame, qint64 timeMs);
    // The event at out.inputs[at], just decoded: its frame, its receipt, sequence tracking.
    void addEventAt(InterpretedFrame &out, qsizetype at, const QByteArray &frame, qint64 timeMs);

    // `method`: canonical (canonicalMethodName); `sentAs`: as it went on the wire.
    struct PendingRequest { QString method; Json params; QString sentAs; };
    bool m_fastEvents = false;                      // the parser is SimdJsonParser
    bool m_keepPayloadText = true;
    FrameCodec m_codec;
    QHash<QString, PendingRequest> m_pending;       // by jsonIdKey
    struct Subscription
    {
        qint64 expectedSequence = 1; // the next sequence number (1 again on a new socket)
        QString lastEventId;
    };
    // The subscription of this event: events come in runs of one subscription, so the last one
    // is kept at hand (a hash of its id per event was a tenth of the decoding thread). At most
    // kMaxSubscriptions are followed: a server that names more (we open a few) forgets one, and
    // its gaps are no longer seen (said once, LimitReached).
    Subscription &subscription(const QString &id);
    QHash<QString, Subscription> m_subscriptions;
    qint64 m_subscriptionsForgotten = 0;
    Subscription *m_lastSubscription = nullptr;     // into m_subscriptions, for ...
    QString m_lastSubscriptionId;                   // ... this id
    QString m_lastAnyEventId;
    ClockSkewEstimator m_clock; // from live map/event notifications only
    QString m_url;
    bool m_agentsListed = false; // this connection had its complete agent list (the snapshot)
    // The pages of a map/agents/list walk so far (interpretAgentList), at most kAgentListMaxPages.
    std::optional<AgentsSnapshot> m_agentWalk;
    int m_agentWalkPages = 0;
    QSet<QString> m_refused;     // observation methods refused (-32601) under their usual spelling, this connection
};

} // namespace mapi
