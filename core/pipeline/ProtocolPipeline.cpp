#include "pipeline/ProtocolPipeline.h"

#include "map/Dialect.h"
#include "map/DialectSimd.h"
#include "protocol/SimdJsonConvert.h"
#include "protocol/SimdJsonParser.h"

#include <limits>

namespace mapi {

// A sequence number this far below the expected one means the numbering restarted; closer ones
// are late or repeated deliveries (ignored for gap detection).
constexpr qint64 kSequenceRestartBelow = 1000;

void dropRawFrames(ModelInputs &inputs, const FrameRef &journalRef, qsizetype from, bool dropReadPayloads)
{
    for (qsizetype i = from; i < inputs.size(); ++i) {
        auto *in = std::get_if<EventInput>(&inputs[i]);
        if (!in)
            continue;
        in->event.journalRef = journalRef;
        MessageRecord *message = in->event.message ? &*in->event.message : nullptr;
        // A delivery whose payload or address is in the frame keeps the frame, for the store
        // (which reads them only for a message it never saw sent).
        if (message
            && ((message->payloadInFrame && message->payloadText.isEmpty() && !message->convention) || message->toInFrame))
            message->payloadFrame = in->event.rawFrame;
        in->event.rawFrame = QByteArray();
        // A payload the decoder has read (its convention) is not needed again until someone
        // asks for it (SystemStore::messagePayload()). Others stay: the store may read them.
        if (dropReadPayloads && message && message->convention && !message->payloadText.isEmpty()) {
            message->payloadText = QByteArray();
            message->payloadInFrame = true;
        }
    }
}


ProtocolPipeline::ProtocolPipeline(CodecLimits limits, std::shared_ptr<const JsonParser> parser)
    : m_fastEvents(dynamic_cast<const SimdJsonParser *>(parser.get()) != nullptr)
    , m_codec(limits, std::move(parser))
{
}

ModelInputs ProtocolPipeline::connectionOpened(const QString &url, qint64 timeMs)
{
    m_url = url;
    m_pending.clear();
    m_agentsListed = false;
    m_agentWalk.reset();
    m_agentWalkPages = 0;
    m_refused.clear();
    for (Subscription &sub : m_subscriptions)
        sub.expectedSequence = 1;
    m_clock.restart();
    ConnectionInfo info;
    info.url = url;
    info.state = QStringLiteral("open");
    info.timeMs = timeMs;
    return {info};
}

ModelInputs ProtocolPipeline::connectionClosed(const QString &reason, qint64 timeMs)
{
    m_pending.clear();
    ModelInputs out;
    flushAgentWalk(out); // the pages that came: their agents count, nothing is retired
    ConnectionInfo info;
    info.url = m_url;
    info.state = reason.isEmpty() ? QStringLiteral("closed") : QStringLiteral("closed: ") + reason;
    info.timeMs = timeMs;
    out.push_back(info);
    if (reason.startsWith(kServerSilent))
        out.push_back(ProblemInput{makeProblem(ProblemKind::NotAnswering, reason.mid(kServerSilent.size()), {}, timeMs)});
    return out;
}

bool ProtocolPipeline::frameSent(const QByteArray &frame, qint64 timeMs)
{
    const DecodeOutcome decoded = m_codec.decode(frame, timeMs);
    if (!decoded.ok())
        return !decoded.problem || decoded.problem->kind != ProblemKind::InvalidJson;
    if (decoded.message->kind == MessageKind::Request) {
        const RpcMessage &msg = *decoded.message;
        m_pending.insert(jsonIdKey(msg.id), {canonicalMethodName(msg.method), msg.params, msg.method});
    }
    return true;
}

InterpretedFrame ProtocolPipeline::binaryFrameReceived(const QByteArray &frame, qint64 timeMs, ModelInputs appendTo)
{
    InterpretedFrame out;
    out.inputs = std::move(appendTo);
    ProtocolProblem p;
    p.kind = ProblemKind::BinaryFrame;
    p.detail = QStringLiteral("binary frame of %1 bytes (MAP uses text frames)").arg(frame.size());
    p.frame = frame.left(ProtocolProblem::kMaxKeptProblemBytes);
    p.timeMs = timeMs;
    out.inputs.push_back(ProblemInput{p});
    return out;
}

bool ProtocolPipeline::interpretEventFast(InterpretedFrame &out, const QByteArray &frame, qint64 timeMs)
{
    const CodecLimits &limits = m_codec.limits();
    if (frame.size() > limits.maxFrameBytes || limits.maxNestingDepth < 1)
        return false;
    // simdjson enforces the nesting limit itself, at least as strictly as FrameCodec counts it
    // (tests/unit: simdEventPathMatchesGeneralPath); a refused frame takes the general path,
    // which words the problem.
    struct LimitedParser
    {
        simdjson::dom::parser parser;
        int maxDepth = -1;
    };
    thread_local LimitedParser local;
    if (local.maxDepth != limits.maxNestingDepth) {
        if (local.parser.allocate(64 * 1024, size_t(limits.maxNestingDepth)) != simdjson::SUCCESS)
            return false;
        local.maxDepth = limits.maxNestingDepth;
    }
    simdjson::dom::element root;
    if (parseText(local.parser, frame, root) != simdjson::SUCCESS
        || root.type() != simdjson::dom::element_type::OBJECT)
        return false;
    const simdjson::dom::object object(root);
    simdjson::dom::element version;
    simdjson::dom::element method;
    simdjson::dom::element params;
    simdjson::dom::element id;
    if (!lastMember(object, "jsonrpc", version) || version.type() != simdjson::dom::element_type::STRING
        || std::string_view(version) != "2.0" || lastMember(object, "id", id)
        || !lastMember(object, "method", method) || method.type() != simdjson::dom::element_type::STRING
        || std::string_view(method) != "map/event" || !lastMember(object, "params", params)
        || params.type() != simdjson::dom::element_type::OBJECT)
        return false;
    QString error;
    bool differs = false;
    // Made where it stays: an event is some 650 bytes, and each move of it between decoding
    // and the list cost a copy and a destruction.
    const qsizetype at = out.inputs.size();
    MapEvent &event = std::get<EventInput>(out.inputs.emplaceBack(std::in_place_type<EventInput>)).event;
    if (!eventFromNotification(params, event, error, differs, m_keepPayloadText) || differs) {
        out.inputs.removeLast();
        return false; // the general path decides, and words the problem
    }
    RpcMessage msg;
    msg.kind = MessageKind::Notification;
    msg.method = QStringLiteral("map/event");
    out.message = std::move(msg);
    addEventAt(out, at, frame, timeMs);
    return true;
}

InterpretedFrame ProtocolPipeline::frameReceived(const QByteArray &frame, qint64 timeMs, ModelInputs appendTo)
{
    InterpretedFrame out;
    out.inputs = std::move(appendTo);
    if (m_fastEvents && interpretEventFast(out, frame, timeMs))
        return out;
    DecodeOutcome decoded = m_codec.decode(frame, timeMs);
    if (!decoded.ok()) {
        out.inputs.push_back(ProblemInput{std::move(*decoded.problem)});
        return out;
    }
    if (decoded.surrogatesReplaced > 0) { // used, and said (the frame is kept as it came)
        out.inputs.push_back(ProblemInput{makeProblem(
            ProblemKind::Repaired,
            QStringLiteral("%1 lone UTF-16 surrogate(s) (a string cut inside a character) replaced with U+FFFD; the frame was used")
                .arg(decoded.surrogatesReplaced),
            frame, timeMs)});
    }
    RpcMessage &msg = *decoded.message;
    switch (msg.kind) {
    case MessageKind::Notification:
        if (msg.method == QLatin1String("map/event"))
            interpretEvent(out, msg, frame, timeMs);
        break;
    case MessageKind::Request:
        break; // server→client requests are not part of MAP today; the client answers -32601
    case MessageKind::Result:
    case MessageKind::Error: {
        const auto it = m_pending.find(jsonIdKey(msg.id));
        if (it == m_pending.end()) {
            ProtocolProblem p;
            p.kind = ProblemKind::UnmatchedResponse;
            p.detail = QStringLiteral("response with id %1 matches no request").arg(toQString(msg.id));
            p.frame = frame.left(ProtocolProblem::kMaxKeptProblemBytes);
            p.timeMs = timeMs;
            out.inputs.push_back(ProblemInput{p});
            break;
        }
        out.requestMethod = it->method;
        out.requestParams = std::move(it->params);
        const QString sentAs = std::move(it->sentAs);
        m_pending.erase(it);
        if (msg.kind == MessageKind::Result && sentAs != out.requestMethod && m_refused.remove(out.requestMethod)) {
            out.inputs.push_back(ProblemInput{makeProblem(
                ProblemKind::MethodFallback,
                QStringLiteral("%1 is not known to this server (-32601); it answers %2, used instead").arg(out.requestMethod, sentAs),
                {}, timeMs, out.requestMethod)});
        }
        if (msg.kind == MessageKind::Result)
            interpretResult(out, msg, timeMs);
        else
            interpretError(out, msg, sentAs, frame, timeMs);
        break;
    }
    }
    out.message = std::move(msg);
    return out;
}

void ProtocolPipeline::interpretEvent(InterpretedFrame &out, const RpcMessage &msg, const QByteArray &frame,
                                      qint64 timeMs)
{
    QString error;
    auto event = eventFromNotification(msg.params, error);
    if (!event) {
        ProtocolProblem p;
        p.kind = ProblemKind::Malformed;
        p.detail = error;
        p.frame = frame.left(ProtocolProblem::kMaxKeptProblemBytes);
        p.timeMs = timeMs;
        out.inputs.push_back(ProblemInput{p});
        return;
    }
    out.inputs.push_back(EventInput{std::move(*event), timeMs});
    addEventAt(out, out.inputs.size() - 1, frame, timeMs);
}

void ProtocolPipeline::skipSequence(const QString &subscriptionId, qint64 upToSequence)
{
    Subscription &sub = subscription(subscriptionId);
    if (upToSequence >= sub.expectedSequence && upToSequence < std::numeric_limits<qint64>::max())
        sub.expectedSequence = upToSequence + 1;
}

void ProtocolPipeline::addEventAt(InterpretedFrame &out, qsizetype at, const QByteArray &frame, qint64 timeMs)
{
    // Inputs this event brings come before it (rare: a clock estimate, a gap).
    const auto insertBefore = [&](ModelInput &&input) {
        out.inputs.insert(at, std::move(input));
        ++at;
    };
    EventInput *input = &std::get<EventInput>(out.inputs[at]);
    input->receivedMs = timeMs;
    MapEvent *event = &input->event;
    event->rawFrame = frame;
    if (m_clock.addSample(event->timestampMs, timeMs)) {
        insertBefore(ClockInput{m_clock.offsetMs(), m_clock.samples(), timeMs});
        event = &std::get<EventInput>(out.inputs[at]).event;
    }
    const bool sequenced = event->sequenceNumber >= 0 && !event->subscriptionId.isEmpty();
    if (!sequenced && event->eventId.isEmpty())
        return;
    const qint64 forgottenBefore = m_subscriptionsForgotten;
    Subscription &sub = subscription(event->subscriptionId);
    if (forgottenBefore == 0 && m_subscriptionsForgotten > 0) {
        insertBefore(ProblemInput{makeProblem(
            ProblemKind::LimitReached,
            QStringLiteral("the server named more than %1 subscriptions: the oldest are no longer followed, and events "
                           "missing from them are not seen as gaps").arg(kMaxSubscriptions),
            frame, timeMs)});
        event = &std::get<EventInput>(out.inputs[at]).event;
    }
    if (sequenced) {
        const qint64 expected = sub.expectedSequence;
        const qint64 sequence = event->sequenceNumber;
        if (sequence > expected) {
            Gap gap;
            gap.kind = Gap::Kind::Sequence;
            gap.timeMs = timeMs;
            gap.fromSequence = expected;
            gap.toSequence = sequence - 1;
            gap.detail = QStringLiteral("events %1–%2 of subscription %3 never arrived")
                             .arg(expected)
                             .arg(sequence - 1)
                             .arg(event->subscriptionId);
            insertBefore(GapInput{gap});
            event = &std::get<EventInput>(out.inputs[at]).event;
        }
        if (sequence >= expected) {
            // At the integer limit the next number cannot be expected: detection restarts below.
            sub.expectedSequence = sequence < std::numeric_limits<qint64>::max() ? sequence + 1 : sequence;
        } else if (sequence < expected - kSequenceRestartBelow) {
            // Far below what came before: the server's numbering restarted (or one number was
            // absurd). Follow the new numbering rather than stop seeing gaps for good.
            sub.expectedSequence = sequence + 1;
        }
    }
    if (!event->eventId.isEmpty()) {
        sub.lastEventId = event->eventId;
        m_lastAnyEventId = event->eventId;
    }
}

ProtocolPipeline::Subscription &ProtocolPipeline::subscription(const QString &id)
{
    if (!m_lastSubscription || id != m_lastSubscriptionId) {
        auto it = m_subscriptions.find(id);
        if (it == m_subscriptions.end()) {
            if (m_subscriptions.size() >= kMaxSubscriptions) {
                m_subscriptions.erase(m_subscriptions.begin()); // any other one: which is oldest is not kept
                ++m_subscriptionsForgotten;
            }
            it = m_subscriptions.insert(id, Subscription());
        }
        m_lastSubscription = &*it; // may move the others: only this one is kept
        m_lastSubscriptionId = id;
    }
    return *m_lastSubscription;
}

// An error answer to a method the observation depends on: said as a problem (MethodFailed), with
// the method, the server's words and what the model loses. When the client then asks under the
// other spelling and that works, a MethodFallback follows (interpretFrame) and takes it back.
void ProtocolPipeline::interpretError(InterpretedFrame &out, const RpcMessage &msg, const QString &sentAs,
                                      const QByteArray &frame, qint64 timeMs)
{
    const QString &method = out.requestMethod;
    if (method == QLatin1String("map/agents/list"))
        flushAgentWalk(out.inputs); // a page failed: the walk ends here
    if (method == QLatin1String("map/federation/list") || method == QLatin1String("map/federation/buffer/stats")) {
        // Missing or refused (gateway role only): said as such (FederationLedger), not a loss.
        out.inputs.push_back(ExtensionPage{method, out.requestParams, Json(), timeMs, true, msg.error.code, msg.error.message});
        return;
    }
    const QString loss = observationLossOf(method);
    if (loss.isEmpty())
        return;
    // A scope deleted between the list and its members: nothing is missing.
    if (method == QLatin1String("map/scopes/members")
        && classifyError(msg.error.code, msg.error.message) == ErrorClass::ScopeNotFound)
        return;
    if (msg.error.code == -32601 && sentAs == method)
        m_refused.insert(method); // a later answer under the other spelling is a MethodFallback
    out.inputs.push_back(ProblemInput{makeProblem(
        ProblemKind::MethodFailed, QStringLiteral("%1 failed (%2 %3): %4").arg(sentAs).arg(msg.error.code).arg(msg.error.message, loss),
        frame, timeMs, method)});
}

void ProtocolPipeline::interpretResult(InterpretedFrame &out, const RpcMessage &msg, qint64 timeMs)
{
    const QString &method = out.requestMethod;
    const Json &result = msg.result;
    if (method == QLatin1String("map/connect") || method == QLatin1String("map/authenticate")) {
        if (jsonChild(result, "authRequired"))
            return;
        ConnectionInfo info;
        info.url = m_url;
        info.state = QStringLiteral("connected");
        info.handshake = true;
        info.sessionId = jsonString(result, "sessionId");
        if (const Json *version = jsonChild(result, "protocolVersion")) // any result shape: never throws
            info.protocolVersion = toQString(*version);
        if (const Json *sys = jsonChild(result, "systemInfo"); sys && sys->is_object()) {
            info.serverName = jsonString(*sys, "name");
            info.serverVersion = jsonString(*sys, "version");
        }
        if (const Json *caps = jsonChild(result, "capabilities"); caps && caps->is_object()) {
            const auto enabled = [&](std::string_view name) {
                const Json *cap = jsonChild(*caps, name);
                const Json *on = cap ? jsonChild(*cap, "enabled") : nullptr;
                return on && on->is_boolean() && on->get<bool>();
            };
            info.mail = enabled("mail");
            info.workspace = enabled("workspace");
        }
        info.timeMs = timeMs;
        out.inputs.push_back(info);
    } else if (method == QLatin1String("map/agents/list")) {
        interpretAgentList(out, result, timeMs);
    } else if (method == QLatin1String("map/agents/get")) {
        if (const Json *agent = jsonChild(result, "agent")) {
            AgentsSnapshot snap;
            snap.data.agents.push_back(agentFromJson(*agent));
            snap.timeMs = timeMs;
            snap.complete = false;
            out.inputs.push_back(std::move(snap));
        }
    } else if (method == QLatin1String("map/scopes/list")) {
        const Json &p = out.requestParams;
        if (p.is_object() && (p.contains("parentId") || p.contains("parent") || p.contains("ancestorId")))
            return; // a partial list; the full one drives deletion
        ScopesSnapshot snap;
        snap.data = scopesFromListResult(result);
        snap.timeMs = timeMs;
        out.inputs.push_back(std::move(snap));
    } else if (method == QLatin1String("map/scopes/members")) {
        MembersSnapshot members;
        members.data.scopeId = jsonString(out.requestParams, "scopeId");
        members.data.members = membersFromResult(result);
        members.timeMs = timeMs;
        out.inputs.push_back(std::move(members));
    } else if (method.startsWith(QLatin1String("mail/")) || method == QLatin1String("trajectory/list")
               || method == QLatin1String("trajectory/get")) {
        // What the ledgers read of conversations and checkpoints (ExtensionPage); the other
        // mail/ and trajectory/ answers (a created conversation, content) teach the model
        // nothing the events do not.
        static const QSet<QString> pages = {
            QStringLiteral("mail/list"), QStringLiteral("mail/get"), QStringLiteral("mail/turns/list"),
            QStringLiteral("mail/thread/list"), QStringLiteral("mail/replay"), QStringLiteral("mail/join"),
            QStringLiteral("trajectory/list"), QStringLiteral("trajectory/get")};
        if (pages.contains(method) && result.is_object())
            out.inputs.push_back(ExtensionPage{method, out.requestParams, result, timeMs, false, 0, QString()});
    } else if (method == QLatin1String("map/federation/list") || method == QLatin1String("map/federation/buffer/stats")) {
        out.inputs.push_back(ExtensionPage{method, out.requestParams, result, timeMs, false, 0, QString()});
    } else if (method == QLatin1String("map/replay")) {
        bool hasMore = false;
        for (MapEvent &e : eventsFromReplayResult(result, hasMore)) {
            if (!e.eventId.isEmpty())
                m_lastAnyEventId = e.eventId;
            out.inputs.push_back(EventInput{std::move(e), timeMs});
        }
    }
}

// A map/agents/list answer. A server that pages (`nextCursor`; the spec's shape, not MAPServer's)
// is walked by the client from a request without `cursor` to the page without `nextCursor`: the
// pages are kept here and applied as one list when the last arrives, so that the reconciliation
// compares the whole list with the model. A walk cut short (a failed page, a new walk, the page
// bound) is applied as a partial list: its agents count, nothing is retired.
void ProtocolPipeline::interpretAgentList(InterpretedFrame &out, const Json &result, qint64 timeMs)
{
    const Json &p = out.requestParams;
    const bool filtered = p.is_object()
        && (p.contains("filter") || p.contains("state") || p.contains("role") || p.contains("sessionId"));
    const bool paged = p.is_object() && p.contains("cursor");
    const Json *next = jsonChild(result, "nextCursor");
    const bool more = next && next->is_string() && !next->get_ref<const std::string &>().empty();
    AgentsSnapshot snap;
    snap.data = agentsFromListResult(result);
    snap.timeMs = timeMs;
    snap.complete = false;
    if (filtered) { // a filtered list is not the whole truth: do not retire agents missing from it
        out.inputs.push_back(std::move(snap));
        return;
    }
    if (!paged)
        flushAgentWalk(out.inputs); // a new walk: an unfinished one is what it is
    else if (!m_agentWalk) {
        out.inputs.push_back(std::move(snap)); // a page of a walk whose start this pipeline did not see
        return;
    }
    if (more || m_agentWalk) { // a page of a walk: held until its last page
        if (!m_agentWalk)
            m_agentWalk.emplace();
        auto &agents = m_agentWalk->data.agents;
        agents.insert(agents.end(), std::make_move_iterator(snap.data.agents.begin()),
                      std::make_move_iterator(snap.data.agents.end()));
        m_agentWalk->timeMs = timeMs;
        if (more) {
            if (++m_agentWalkPages >= kAgentListMaxPages)
                flushAgentWalk(out.inputs);
            return;
        }
        snap = std::move(*m_agentWalk); // the last page: the whole list
        m_agentWalk.reset();
        m_agentWalkPages = 0;
    }
    snap.complete = true;
    // The first complete list of a connection is its snapshot; later ones check the model.
    snap.reconcile = m_agentsListed;
    m_agentsListed = true;
    out.inputs.push_back(std::move(snap));
}

void ProtocolPipeline::flushAgentWalk(ModelInputs &out)
{
    if (!m_agentWalk)
        return;
    m_agentWalk->complete = false;
    out.push_back(std::move(*m_agentWalk));
    m_agentWalk.reset();
    m_agentWalkPages = 0;
}

} // namespace mapi
