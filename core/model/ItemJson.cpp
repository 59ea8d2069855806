#include "model/ItemJson.h"

#include "protocol/JsonRpc.h"

#include <QCoreApplication>
#include <QDateTime>
#include <QStringDecoder>

namespace mapi {

namespace {

OrderedJson text(const QString &s)
{
    return s.toStdString();
}

OrderedJson optionalText(const QString &s)
{
    return s.isEmpty() ? OrderedJson() : text(s);
}

template <typename Texts>
OrderedJson texts(const Texts &list)
{
    OrderedJson out = OrderedJson::array();
    for (const QString &s : list)
        out.push_back(s.toStdString());
    return out;
}

// Times as ISO 8601 UTC with milliseconds; 0 (never) as null.
OrderedJson timeJson(qint64 ms)
{
    if (ms <= 0)
        return {};
    return QDateTime::fromMSecsSinceEpoch(ms).toUTC().toString(Qt::ISODateWithMs).toStdString();
}

template<typename T>
OrderedJson optionalNumber(const std::optional<T> &value)
{
    return value ? OrderedJson(*value) : OrderedJson();
}

} // namespace

QString frameText(const QByteArray &bytes, bool *hadEscapes)
{
    bool hasControl = false;
    for (const char c : bytes) {
        const auto u = static_cast<unsigned char>(c);
        if ((u < 0x20 && u != '\n' && u != '\r' && u != '\t') || u == 0x7f) {
            hasControl = true;
            break;
        }
    }
    if (!hasControl) {
        QStringDecoder decoder(QStringDecoder::Utf8, QStringDecoder::Flag::Stateless);
        QString decoded = decoder.decode(bytes);
        if (!decoder.hasError()) {
            *hadEscapes = false;
            return decoded;
        }
    }
    *hadEscapes = true;
    QString out;
    out.reserve(bytes.size());
    const auto *p = reinterpret_cast<const unsigned char *>(bytes.constData());
    const qsizetype n = bytes.size();
    auto escapeByte = [&out](unsigned char b) { out += QStringLiteral("\\x") + QStringLiteral("%1").arg(uint(b), 2, 16, QLatin1Char('0')).toUpper(); };
    auto continuation = [&](qsizetype i) { return i < n && (p[i] & 0xC0) == 0x80; };
    for (qsizetype i = 0; i < n;) {
        const unsigned char c = p[i];
        if (c < 0x80) {
            if ((c < 0x20 && c != '\n' && c != '\r' && c != '\t') || c == 0x7f)
                escapeByte(c);
            else
                out += QLatin1Char(char(c));
            ++i;
            continue;
        }
        int length = 0;
        if (c >= 0xC2 && c <= 0xDF)
            length = 2;
        else if (c >= 0xE0 && c <= 0xEF)
            length = 3;
        else if (c >= 0xF0 && c <= 0xF4)
            length = 4;
        bool valid = length > 0;
        for (int k = 1; valid && k < length; ++k)
            valid = continuation(i + k);
        if (valid && length >= 3) {
            const unsigned char second = p[i + 1];
            // no overlong forms, no UTF-16 surrogates, nothing above U+10FFFF
            valid = !(c == 0xE0 && second < 0xA0) && !(c == 0xED && second > 0x9F) && !(c == 0xF0 && second < 0x90)
                && !(c == 0xF4 && second > 0x8F);
        }
        if (!valid) {
            escapeByte(c);
            ++i;
            continue;
        }
        out += QString::fromUtf8(reinterpret_cast<const char *>(p + i), length);
        i += length;
    }
    return out;
}

std::optional<OrderedJson> parseFrame(const QByteArray &frame)
{
    if (frame.isEmpty() || frame.size() > kMaxParsedFrameBytes)
        return std::nullopt;
    const int depthLimit = CodecLimits().maxNestingDepth;
    if (FrameCodec::nestingDepth(frame, depthLimit) > depthLimit)
        return std::nullopt;
    OrderedJson parsed = OrderedJson::parse(frame.constBegin(), frame.constEnd(), nullptr, false);
    if (parsed.is_discarded())
        return std::nullopt;
    return parsed;
}

OrderedJson frameJson(const QByteArray &frame)
{
    if (frame.isEmpty() || frame.size() > kMaxParsedFrameBytes)
        return {};
    if (std::optional<OrderedJson> parsed = parseFrame(frame))
        return std::move(*parsed);
    bool hadEscapes = false;
    return frameText(frame, &hadEscapes).toStdString();
}

OrderedJson agentJson(const SystemStore &store, const Agent &a)
{
    OrderedJson session;
    if (!a.sessionId.isEmpty()) {
        const auto s = store.sessions().constFind(a.sessionId);
        if (s != store.sessions().constEnd())
            session = {{"id", text(s->id)},
                       {"role", optionalText(s->role)},
                       {"status", text(s->status)},
                       {"connectedAt", timeJson(s->connectedAtMs)},
                       {"lastChangeAt", timeJson(s->lastChangeMs)},
                       {"agents", texts(s->agentIds)}};
    }
    OrderedJson lastError;
    if (!a.lastErrorSeverity.isEmpty() || !a.lastErrorMessage.isEmpty())
        lastError = {{"severity", text(a.lastErrorSeverity)}, {"message", text(a.lastErrorMessage)}, {"at", timeJson(a.lastErrorMs)}};

    return {
        {"id", text(a.id)},
        {"name", text(a.name)},
        {"role", optionalText(a.role)},
        {"state", text(a.state)},
        {"health", text(healthName(a.health))},
        {"parentId", optionalText(a.parentId)},
        {"scopes", texts(a.scopes)},
        {"sessionId", optionalText(a.sessionId)},
        {"session", session},
        {"currentTaskId", optionalText(a.currentTaskId)},
        {"heartbeat",
         {{"status", optionalText(a.heartbeatStatus)},
          {"lastAt", timeJson(a.lastHeartbeatMs)},
          {"load", optionalNumber(a.load)},
          {"tasksRunning", optionalNumber(a.tasksRunning)},
          {"tasksQueued", optionalNumber(a.tasksQueued)},
          {"progress", optionalNumber(a.progress)}}},
        {"usage",
         {{"tokensUsed", optionalNumber(a.tokensUsed)},
          {"tokensRemaining", optionalNumber(a.tokensRemaining)},
          {"inputTokens", optionalNumber(a.inputTokens)},
          {"outputTokens", optionalNumber(a.outputTokens)},
          {"costUsd", optionalNumber(a.costUsd)}}},
        {"lastError", lastError},
        {"messagesSent", a.messagesSent},
        {"messagesReceived", a.messagesReceived},
        {"lastActionId", optionalText(a.lastActionId)},
        {"capabilities", OrderedJson(a.capabilities)},
        {"metadata", OrderedJson(a.metadata)},
        {"registeredAt", timeJson(a.registeredAtMs)},
        {"lastStateChangeAt", timeJson(a.lastStateChangeMs)},
        {"lastActivityAt", timeJson(a.lastActivityMs)},
        {"unregisteredAt", timeJson(a.unregisteredAtMs)},
        {"knownSince", timeJson(a.knownSinceMs)},
        {"placeholder", a.placeholder},
        {"unregistered", a.unregistered},
    };
}

OrderedJson scopeJson(const Scope &s)
{
    return {{"id", text(s.id)},
                 {"name", text(s.name)},
                 {"parentId", optionalText(s.parentId)},
                 {"members", texts(s.members)},
                 {"metadata", OrderedJson(s.metadata)},
                 {"createdAt", timeJson(s.createdAtMs)},
                 {"placeholder", s.placeholder},
                 {"deleted", s.deleted}};
}

OrderedJson taskJson(const SystemStore &store, const Task &t)
{
    OrderedJson history = OrderedJson::array();
    for (const TaskTransition &step : store.taskHistory(t))
        history.push_back({{"at", timeJson(step.timeMs)},
                           {"status", text(step.status)},
                           {"agentId", optionalText(step.agentId)},
                           {"detail", optionalText(step.detail)},
                           {"messageId", step.messageRow >= 0 && store.messages().isKept(size_t(step.messageRow))
                                             ? optionalText(store.messages().id(size_t(step.messageRow)))
                                             : OrderedJson()}});
    return {{"id", text(t.id)},
                 {"type", optionalText(t.type)},
                 {"status", text(t.status)},
                 {"requesterId", optionalText(t.requesterId)},
                 {"assigneeId", optionalText(t.assigneeId)},
                 {"progress", optionalNumber(t.progress)},
                 {"createdAt", timeJson(t.createdAtMs)},
                 {"updatedAt", timeJson(t.updatedAtMs)},
                 {"history", history}};
}

OrderedJson actionJson(const SystemStore &store, const OperatorAction &a)
{
    auto latency = [&a](qint64 stepMs) { return stepMs > 0 ? OrderedJson(stepMs - a.sentAtMs) : OrderedJson(); };
    return {{"id", text(a.id)},
                 {"kind", text(actionKindName(a.kind))},
                 {"agentId", text(a.agentId)},
                 {"agentName", optionalText(store.agent(a.agentId) ? store.agent(a.agentId)->name : QString())},
                 {"status", text(actionStatusName(a.status))},
                 {"detail", optionalText(a.detail)},
                 {"method", text(a.method)},
                 {"fallback", a.fallback},
                 {"note", optionalText(a.note)},
                 {"params", OrderedJson(a.params)},
                 {"sentAt", timeJson(a.sentAtMs)},
                 {"answeredAt", timeJson(a.answeredAtMs)},
                 {"settledAt", timeJson(a.settledAtMs)},
                 {"answerLatencyMs", latency(a.answeredAtMs)},
                 {"settleLatencyMs", latency(a.settledAtMs)},
                 {"messageId", optionalText(a.messageId)},
                 {"confirmingEventId", optionalText(a.confirmingEventId)}};
}

OrderedJson messageJson(const SystemStore &store, int row, int *originEventRow, QByteArray *originEventFrame)
{
    const Message &m = store.messages()[size_t(row)];
    // The message was created by the first event that names it; each event creates at most one
    // message, so that event's row is at least the message's row.
    const auto &events = store.events();
    int originRow = -1;
    OrderedJson related = OrderedJson::array();
    for (size_t i = std::max(size_t(std::max(row, m.eventRow)), events.firstRow()); i < events.size(); ++i) {
        if (events[i].messageIndex() != row)
            continue;
        if (originRow < 0)
            originRow = int(i);
        related.push_back({{"row", int(i)}, {"type", text(events.type(events[i]))}, {"eventId", optionalText(events.eventId(i))}, {"at", timeJson(events[i].timestampMs)}});
    }
    // The payload as compact JSON text, kept by the store or read again from a loaded trace's frame.
    const QByteArray payloadText = store.messagePayload(row);
    OrderedJson payload = payloadText.isEmpty()
        ? OrderedJson()
        : OrderedJson::parse(payloadText.constBegin(), payloadText.constEnd(), nullptr, false);
    if (payload.is_discarded())
        payload = OrderedJson();
    if (payloadText.isEmpty() && m.payloadInFrame) // a trace still loading: its frames come at the end
        payload = text(QCoreApplication::translate("ItemJson", "(in the trace: shown when loading has finished)"));
    const QByteArray originFrame = originRow >= 0 ? store.eventFrame(originRow) : QByteArray();
    if (originEventRow)
        *originEventRow = originRow;
    if (originEventFrame)
        *originEventFrame = originFrame;
    return {{"id", text(m.id)},
                 {"status", text(m.status)},
                 {"from", optionalText(m.fromAgentId)},
                 {"fromRaw", optionalText(m.fromRaw)},
                 {"to", optionalText(m.toDisplay)},
                 {"toAgentIds", texts(m.toAgentIds)},
                 {"recipientsNotKept", m.recipientsNotKept ? OrderedJson(m.recipientsNotKept) : OrderedJson()},
                 {"scopeId", optionalText(m.scopeId)},
                 {"priority", optionalNumber(m.priority)},
                 {"convention", m.convention == ConventionKind::None ? OrderedJson() : text(conventionName(m.convention))},
                 {"taskId", optionalText(m.taskId)},
                 {"correlationId", optionalText(m.correlationId)},
                 {"timestamp", timeJson(m.timestampMs)},
                 {"eventId", optionalText(m.eventId)},
                 {"payload", std::move(payload)},
                 {"events", related},
                 {"frameBytes", originRow >= 0 ? OrderedJson(originFrame.size()) : OrderedJson()},
                 {"frame", originRow >= 0 ? frameJson(originFrame) : OrderedJson()}};
}

OrderedJson eventJson(const SystemStore &store, int row, const QByteArray &frame)
{
    const EventEntry &e = store.events()[size_t(row)];
    const QString &type = store.events().type(e);
    const QString &agentId = store.events().agentId(e);
    const bool hasMessage = e.messageIndex() >= 0 && store.messages().isKept(size_t(e.messageIndex()));
    return {{"row", row},
                 {"eventId", optionalText(store.events().eventId(size_t(row)))},
                 {"type", text(type)},
                 {"timestamp", timeJson(e.timestampMs)},
                 {"receivedAt", timeJson(store.events().receivedMs(size_t(row)))},
                 {"agentId", optionalText(agentId)},
                 {"messageId", hasMessage ? text(store.messages()[size_t(e.messageIndex())].id) : OrderedJson()},
                 {"frameBytes", frame.size()},
                 {"frame", frameJson(frame)}};
}

OrderedJson problemJson(int row, const ProtocolProblem &p)
{
    const bool truncated = p.frame.size() >= ProtocolProblem::kMaxKeptProblemBytes;
    return {{"row", row},
                 {"kind", text(problemKindName(p.kind))},
                 {"detail", text(p.detail)},
                 {"at", timeJson(p.timeMs)},
                 {"frameBytes", p.frame.size()},
                 {"truncated", truncated},
                 {"frame", frameJson(p.frame)}};
}

} // namespace mapi
