// JSON-RPC 2.0 frame codec for MAP: one message per WebSocket text frame, never batches.
//
// Contract: nothing in this file throws. Every frame, however broken, becomes either a
// decoded message or a ProtocolProblem that keeps (a bounded prefix of) the offending text.
// Thread: all functions are re-entrant; a decoder instance may be used from one thread at a time.
#pragma once

#include <QByteArray>
#include <QString>

#include <nlohmann/json.hpp>

#include <memory>
#include <optional>
#include <string_view>

namespace mapi {

using Json = nlohmann::json;

struct CodecLimits
{
    qsizetype maxFrameBytes = 16 * 1024 * 1024; // frames above this are refused unparsed
    int maxNestingDepth = 128;                   // deeper documents are refused unparsed
};

enum class ProblemKind {
    InvalidJson,      // not parseable, or not UTF-8
    OversizedFrame,   // above CodecLimits::maxFrameBytes
    TooDeep,          // nesting above CodecLimits::maxNestingDepth
    NotJsonRpc,       // valid JSON but not a JSON-RPC 2.0 object (arrays/batches included)
    WrongType,        // a known field with the wrong type
    BinaryFrame,      // MAP uses text frames only
    UnmatchedResponse,// a response whose id no request of ours carries
    Malformed,        // a MAP-level shape that cannot be used (e.g. map/event without event)
    TraceUnreadable,  // records of a loaded trace that its file no longer gives back (TraceTimeline)
    LimitReached,     // the model reached one of its bounds (SystemStore::maxAgents())
    // What the observation could not learn, said rather than guessed (issue 40):
    MethodFailed,     // a method the observation needs (connect, subscribe, a snapshot list) failed: `method` names it
    MethodFallback,   // a method answered -32601 under its usual name and was used under another spelling
    UnknownEvent,     // the first event of a type the model does not understand (kept raw; counted by type)
    NotAnswering,     // the server stopped answering requests (a liveness probe timed out)
    Drift,            // the server's own agent list differs from the model (events were missed)
    Repaired,         // a frame usable only once its lone UTF-16 surrogates were replaced (U+FFFD)
};

QString problemKindName(ProblemKind kind);

struct ProtocolProblem
{
    ProblemKind kind = ProblemKind::Malformed;
    QString detail;      // one readable sentence for the operator
    QByteArray frame;    // the offending frame, truncated to kMaxKeptProblemBytes
    qint64 timeMs = 0;   // local receive time, ms since epoch
    QString method;      // MethodFailed, MethodFallback: the (canonical) method concerned
    static constexpr qsizetype kMaxKeptProblemBytes = 64 * 1024;
};

// A problem with its frame cut at kMaxKeptProblemBytes.
ProtocolProblem makeProblem(ProblemKind kind, QString detail, const QByteArray &frame = {}, qint64 timeMs = 0,
                            QString method = {});

enum class MessageKind { Request, Notification, Result, Error };

struct RpcError
{
    int code = 0;
    QString message;
    Json data; // null when absent
};

// One decoded JSON-RPC message. `id` is kept as JSON (int, string or null are all legal).
struct RpcMessage
{
    MessageKind kind = MessageKind::Notification;
    Json id;
    QString method;      // Request / Notification
    Json params;         // Request / Notification; null when absent
    Json result;         // Result
    RpcError error;      // Error
};

struct DecodeOutcome
{
    std::optional<RpcMessage> message;
    std::optional<ProtocolProblem> problem;
    int surrogatesReplaced = 0; // lone UTF-16 surrogates replaced to make the frame usable (Utf16Repair.h)
    bool ok() const { return message.has_value(); }
};

// The swap point for the JSON parser: the hot path of the whole application.
class JsonParser
{
public:
    virtual ~JsonParser() = default;
    // Parses `text` into `out`. Returns false with a human-readable `error` on failure.
    // Must validate UTF-8 and must not throw.
    virtual bool parse(const QByteArray &text, Json &out, QString &error) const = 0;
    virtual const char *name() const = 0;
};

// nlohmann/json-backed parser: the default.
class NlohmannJsonParser final : public JsonParser
{
public:
    bool parse(const QByteArray &text, Json &out, QString &error) const override;
    const char *name() const override { return "nlohmann"; }
};

class FrameCodec
{
public:
    explicit FrameCodec(CodecLimits limits = {}, std::shared_ptr<const JsonParser> parser = {});

    const CodecLimits &limits() const { return m_limits; }
    void setLimits(const CodecLimits &limits) { m_limits = limits; }

    // Decodes one text frame. `timeMs` stamps a problem, if any.
    DecodeOutcome decode(const QByteArray &frame, qint64 timeMs = 0) const;

    // Encoders: compact JSON, no trailing newline.
    static QByteArray encodeRequest(const Json &id, const QString &method, const Json &params);
    static QByteArray encodeNotification(const QString &method, const Json &params);

    // Maximum nesting of arrays/objects, scanning bytes (strings skipped). Stops early once
    // `limit` is exceeded and returns limit + 1. Linear, allocation free.
    static int nestingDepth(const QByteArray &text, int limit);

private:
    CodecLimits m_limits;
    std::shared_ptr<const JsonParser> m_parser;
};

// Small helpers for reading loosely typed JSON without exceptions.
QString jsonString(const Json &object, const char *key);
qint64 jsonInt(const Json &object, const char *key, qint64 fallback = 0);
// A JSON number as an integer: truncated toward zero, saturated at qint64's limits, NaN as 0.
// (A plain cast of 1e300 is undefined behaviour; hostile frames send such numbers.)
qint64 saturatedInt(double value);
const Json *jsonChild(const Json &object, std::string_view key); // nullptr if absent or not an object member
QString toQString(const Json &value);                       // string as-is; other scalars dumped
QString jsonIdKey(const Json &id);                          // stable map key for a JSON-RPC id

} // namespace mapi
