#include "JsonRpc.h"
#include "Utf16Repair.h"

#include <cstring>
#include <limits>

namespace mapi {

QString problemKindName(ProblemKind kind)
{
    switch (kind) {
    case ProblemKind::InvalidJson: return QStringLiteral("invalid-json");
    case ProblemKind::OversizedFrame: return QStringLiteral("oversized-frame");
    case ProblemKind::TooDeep: return QStringLiteral("too-deep");
    case ProblemKind::NotJsonRpc: return QStringLiteral("not-json-rpc");
    case ProblemKind::WrongType: return QStringLiteral("wrong-type");
    case ProblemKind::BinaryFrame: return QStringLiteral("binary-frame");
    case ProblemKind::UnmatchedResponse: return QStringLiteral("unmatched-response");
    case ProblemKind::Malformed: return QStringLiteral("malformed");
    case ProblemKind::TraceUnreadable: return QStringLiteral("trace-unreadable");
    case ProblemKind::LimitReached: return QStringLiteral("limit-reached");
    case ProblemKind::MethodFailed: return QStringLiteral("method-failed");
    case ProblemKind::MethodFallback: return QStringLiteral("method-fallback");
    case ProblemKind::UnknownEvent: return QStringLiteral("unknown-event");
    case ProblemKind::NotAnswering: return QStringLiteral("not-answering");
    case ProblemKind::Drift: return QStringLiteral("drift");
    case ProblemKind::Repaired: return QStringLiteral("repaired");
    }
    return QStringLiteral("unknown");
}

bool NlohmannJsonParser::parse(const QByteArray &text, Json &out, QString &error) const
{
    try {
        out = Json::parse(text.constBegin(), text.constEnd());
        return true;
    } catch (const std::exception &e) {
        error = QString::fromUtf8(e.what());
        // nlohmann quotes the input it read last ("…; last read: '\"hunter2…'"): the error goes
        // to Problems, the CLI's output and logs, where a piece of a frame is a piece of a secret.
        // The place (line, column) says where; the frame itself is kept with the problem.
        if (const qsizetype quoted = error.indexOf(QLatin1String("; last read:")); quoted >= 0)
            error.truncate(quoted);
    } catch (...) {
        error = QStringLiteral("unknown parser failure");
    }
    return false;
}

FrameCodec::FrameCodec(CodecLimits limits, std::shared_ptr<const JsonParser> parser)
    : m_limits(limits)
    , m_parser(parser ? std::move(parser) : std::make_shared<NlohmannJsonParser>())
{
}

int FrameCodec::nestingDepth(const QByteArray &text, int limit)
{
    // Strings are skipped with memchr (vectorised): most of a frame's bytes are in strings, and
    // a byte-by-byte scan of them cost as much as parsing the frame.
    const char *p = text.constData();
    const char *const end = p + text.size();
    int depth = 0;
    int maxDepth = 0;
    while (p < end) {
        switch (*p) {
        case '"': {
            // The closing quote: the next one not escaped (preceded by an even number of backslashes).
            const char *const open = p;
            for (;;) {
                p = static_cast<const char *>(std::memchr(p + 1, '"', size_t(end - p - 1)));
                if (!p)
                    return maxDepth; // unterminated string: the parser reports it
                const char *b = p;
                while (b > open + 1 && b[-1] == '\\')
                    --b;
                if ((p - b) % 2 == 0)
                    break;
            }
            break;
        }
        case '[':
        case '{':
            if (++depth > maxDepth) {
                maxDepth = depth;
                if (maxDepth > limit)
                    return limit + 1;
            }
            break;
        case ']':
        case '}':
            --depth;
            break;
        default: break;
        }
        ++p;
    }
    return maxDepth;
}

ProtocolProblem makeProblem(ProblemKind kind, QString detail, const QByteArray &frame, qint64 timeMs, QString method)
{
    ProtocolProblem p;
    p.kind = kind;
    p.detail = std::move(detail);
    p.frame = frame.left(ProtocolProblem::kMaxKeptProblemBytes);
    p.timeMs = timeMs;
    p.method = std::move(method);
    return p;
}

DecodeOutcome FrameCodec::decode(const QByteArray &frame, qint64 timeMs) const
{
    DecodeOutcome out;
    auto fail = [&](ProblemKind kind, QString detail) {
        out.problem = makeProblem(kind, std::move(detail), frame, timeMs);
        return out;
    };
    if (frame.size() > m_limits.maxFrameBytes)
        return fail(ProblemKind::OversizedFrame,
                    QStringLiteral("frame of %1 bytes exceeds the %2-byte limit")
                        .arg(frame.size())
                        .arg(m_limits.maxFrameBytes));
    if (nestingDepth(frame, m_limits.maxNestingDepth) > m_limits.maxNestingDepth)
        return fail(ProblemKind::TooDeep,
                    QStringLiteral("JSON nesting deeper than %1 levels").arg(m_limits.maxNestingDepth));

    Json doc;
    QString parseError;
    if (!m_parser->parse(frame, doc, parseError)) {
        // A JavaScript string cut in half: usable once its lone surrogates are U+FFFD.
        QByteArray repaired = frame;
        QString ignored;
        out.surrogatesReplaced = repairLoneSurrogates(repaired);
        if (out.surrogatesReplaced == 0 || !m_parser->parse(repaired, doc, ignored)) {
            out.surrogatesReplaced = 0;
            return fail(ProblemKind::InvalidJson, QStringLiteral("invalid JSON: %1").arg(parseError));
        }
    }
    if (doc.is_array())
        return fail(ProblemKind::NotJsonRpc, QStringLiteral("JSON-RPC batches are not part of MAP"));
    if (!doc.is_object())
        return fail(ProblemKind::NotJsonRpc, QStringLiteral("frame is not a JSON object"));

    const auto version = doc.find("jsonrpc");
    if (version == doc.end() || !version->is_string() || version->get_ref<const std::string &>() != "2.0")
        return fail(ProblemKind::NotJsonRpc, QStringLiteral("missing or wrong \"jsonrpc\":\"2.0\""));

    RpcMessage msg;
    const auto idIt = doc.find("id");
    const bool hasId = idIt != doc.end();
    if (hasId) {
        if (!(idIt->is_string() || idIt->is_number_integer() || idIt->is_null()))
            return fail(ProblemKind::WrongType, QStringLiteral("\"id\" must be a string, integer or null"));
        msg.id = *idIt;
    }

    const auto methodIt = doc.find("method");
    if (methodIt != doc.end()) {
        if (!methodIt->is_string())
            return fail(ProblemKind::WrongType, QStringLiteral("\"method\" must be a string"));
        msg.method = QString::fromStdString(methodIt->get_ref<const std::string &>());
        msg.kind = hasId ? MessageKind::Request : MessageKind::Notification;
        const auto paramsIt = doc.find("params");
        if (paramsIt != doc.end()) {
            if (!paramsIt->is_object() && !paramsIt->is_array())
                return fail(ProblemKind::WrongType, QStringLiteral("\"params\" must be an object or array"));
            msg.params = std::move(*paramsIt);
        }
        out.message = std::move(msg);
        return out;
    }

    const auto resultIt = doc.find("result");
    const auto errorIt = doc.find("error");
    if (!hasId)
        return fail(ProblemKind::NotJsonRpc, QStringLiteral("neither a call (no \"method\") nor a response (no \"id\")"));
    if (resultIt != doc.end() && errorIt != doc.end())
        return fail(ProblemKind::NotJsonRpc, QStringLiteral("response carries both \"result\" and \"error\""));
    if (resultIt != doc.end()) {
        msg.kind = MessageKind::Result;
        msg.result = std::move(*resultIt);
        out.message = std::move(msg);
        return out;
    }
    if (errorIt != doc.end()) {
        if (!errorIt->is_object())
            return fail(ProblemKind::WrongType, QStringLiteral("\"error\" must be an object"));
        const auto codeIt = errorIt->find("code");
        if (codeIt == errorIt->end() || !codeIt->is_number_integer())
            return fail(ProblemKind::WrongType, QStringLiteral("\"error.code\" must be an integer"));
        msg.kind = MessageKind::Error;
        msg.error.code = codeIt->get<int>();
        msg.error.message = jsonString(*errorIt, "message");
        if (const auto dataIt = errorIt->find("data"); dataIt != errorIt->end())
            msg.error.data = std::move(*dataIt);
        out.message = std::move(msg);
        return out;
    }
    return fail(ProblemKind::NotJsonRpc, QStringLiteral("response has neither \"result\" nor \"error\""));
}

QByteArray FrameCodec::encodeRequest(const Json &id, const QString &method, const Json &params)
{
    Json doc = {{"jsonrpc", "2.0"}, {"id", id}, {"method", method.toStdString()}};
    doc["params"] = params.is_null() ? Json::object() : params;
    return QByteArray::fromStdString(doc.dump(-1, ' ', false, Json::error_handler_t::replace));
}

QByteArray FrameCodec::encodeNotification(const QString &method, const Json &params)
{
    Json doc = {{"jsonrpc", "2.0"}, {"method", method.toStdString()}};
    doc["params"] = params.is_null() ? Json::object() : params;
    return QByteArray::fromStdString(doc.dump(-1, ' ', false, Json::error_handler_t::replace));
}

const Json *jsonChild(const Json &object, std::string_view key)
{
    if (!object.is_object())
        return nullptr;
    const auto it = object.find(key);
    return it == object.end() ? nullptr : &*it;
}

QString toQString(const Json &value)
{
    if (value.is_string())
        return QString::fromStdString(value.get_ref<const std::string &>());
    if (value.is_null())
        return {};
    return QString::fromStdString(value.dump(-1, ' ', false, Json::error_handler_t::replace));
}

QString jsonString(const Json &object, const char *key)
{
    const Json *child = jsonChild(object, key);
    if (!child || child->is_null() || child->is_object() || child->is_array())
        return {};
    return toQString(*child);
}

qint64 jsonInt(const Json &object, const char *key, qint64 fallback)
{
    const Json *child = jsonChild(object, key);
    if (!child)
        return fallback;
    if (child->is_number_integer())
        return child->get<qint64>();
    if (child->is_number_float())
        return saturatedInt(child->get<double>());
    return fallback;
}

qint64 saturatedInt(double value)
{
    // 2^63 is exactly representable; every double below it converts without overflow.
    constexpr double limit = 9223372036854775808.0;
    if (!(value == value))
        return 0;
    if (value >= limit)
        return std::numeric_limits<qint64>::max();
    if (value < -limit)
        return std::numeric_limits<qint64>::min();
    return static_cast<qint64>(value);
}

QString jsonIdKey(const Json &id)
{
    if (id.is_string())
        return QLatin1Char('s') + QString::fromStdString(id.get_ref<const std::string &>());
    return QLatin1Char('n') + QString::fromStdString(id.dump());
}

} // namespace mapi
