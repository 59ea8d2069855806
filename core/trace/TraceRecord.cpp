#include "trace/TraceRecord.h"

#include "common/JsonEscape.h"
#include "protocol/Utf16Repair.h"

#include "protocol/SimdJsonConvert.h"

#include <QDateTime>

#include <algorithm>
#include <cstring>
#include <limits>
#include <optional>

static_assert(simdjson::SIMDJSON_PADDING <= 64, "LineReader::kPadding must cover simdjson's padding");

namespace mapi {

// ---- encoding ------------------------------------------------------------------------------

static const QString &dirString(RecordDir dir)
{
    static const QString names[] = {QStringLiteral("send"), QStringLiteral("recv"), QStringLiteral("open"),
                                     QStringLiteral("close"), QStringLiteral("action"), QStringLiteral("skip"), QString()};
    return names[int(dir)];
}

RecordDir recordDir(const QString &dir)
{
    if (dir == QLatin1String("recv"))
        return RecordDir::Recv;
    if (dir == QLatin1String("send"))
        return RecordDir::Send;
    if (dir == QLatin1String("open"))
        return RecordDir::Open;
    if (dir == QLatin1String("close"))
        return RecordDir::Close;
    if (dir == QLatin1String("action"))
        return RecordDir::Action;
    if (dir == QLatin1String("skip"))
        return RecordDir::Skip;
    return RecordDir::Other;
}

QString recordDirName(RecordDir dir)
{
    return dirString(dir);
}

void appendJsonString(QByteArray &out, const char *text, qsizetype size)
{
    appendJsonStringTo(out, text, size_t(size));
}

static void appendJsonString(QByteArray &out, const QByteArray &text)
{
    appendJsonString(out, text.constData(), text.size());
}

// Whether `text` can stand in a record line as it is: valid JSON (simdjson's check, the one
// every reader makes) and no line break (JSON allows them between tokens; JSON Lines does not).
static bool isOneLineOfJson(const QByteArray &text)
{
    if (text.isEmpty() || std::memchr(text.constData(), '\n', size_t(text.size()))
        || std::memchr(text.constData(), '\r', size_t(text.size())))
        return false;
    thread_local simdjson::dom::parser parser;
    simdjson::dom::element root;
    return parseText(parser, text, root) == simdjson::SUCCESS;
}

QByteArray encodeRecordLine(const TraceRecord &record)
{
    const RecordDir dir = recordDir(record.dir);
    QByteArray line;
    line.reserve(record.raw.size() + record.raw.size() / 8 + 64);
    line.append("{\"t\":");
    line.append(QByteArray::number(record.timeMs));
    line.append(",\"dir\":");
    appendJsonString(line, record.dir.toUtf8());
    line.append(",\"conn\":");
    line.append(QByteArray::number(record.connection));
    if (dir == RecordDir::Action) {
        line.append(",\"action\":");
        line.append(redactSecrets(QByteArray::fromStdString(record.extra.dump(-1, ' ', false, Json::error_handler_t::replace))));
    } else if (record.binary) {
        line.append(",\"binary\":true,\"encoding\":\"base64\",\"raw\":\"");
        line.append(redactSecrets(record.raw).toBase64());
        line.append('"');
    } else {
        const bool frame = dir == RecordDir::Send || dir == RecordDir::Recv;
        const QByteArray clean = redactSecrets(record.raw);
        if (frame && isOneLineOfJson(clean)) {
            line.append(",\"frame\":");
            line.append(clean);
        } else if (simdjson::validate_utf8(clean.constData(), size_t(clean.size()))) {
            line.append(",\"raw\":");
            appendJsonString(line, clean);
        } else { // JSON strings cannot hold these bytes
            line.append(",\"encoding\":\"base64\",\"raw\":\"");
            line.append(clean.toBase64());
            line.append('"');
        }
    }
    line.append("}\n");
    return line;
}

QByteArray encodeHeaderLine(const QString &url, qint64 startedAtMs, const Json &extra)
{
    Json header = {{"format", "map-inspector-trace"},
                   {"version", kTraceFormatVersion},
                   {"app", MAPI_VERSION},
                   {"startedAt", startedAtMs},
                   {"url", url.toStdString()}};
    if (extra.is_object())
        for (auto it = extra.begin(); it != extra.end(); ++it)
            header[it.key()] = it.value();
    return redactSecrets(QByteArray::fromStdString(header.dump(-1, ' ', false, Json::error_handler_t::replace))) + '\n';
}

// ---- action records --------------------------------------------------------------------

Json actionUpdateToJson(const ActionUpdate &u)
{
    // In the order of ActionUpdate::Step; traces keep the names, so the order may change.
    static const char *const steps[] = {"created", "answered", "answer-lost", "failed", "unsupported", "fallback"};
    const OperatorAction &a = u.action;
    return {{"step", steps[int(u.step)]},
            {"id", a.id.toStdString()},
            {"kind", actionKindName(a.kind).toStdString()},
            {"agentId", a.agentId.toStdString()},
            {"method", a.method.toStdString()},
            {"params", a.params},
            {"note", a.note.toStdString()},
            {"detail", a.detail.toStdString()},
            {"messageId", a.messageId.toStdString()}};
}

ActionUpdate actionUpdateFromJson(const Json &j)
{
    ActionUpdate u;
    const QString step = jsonString(j, "step");
    static const QStringList steps = {QStringLiteral("created"),     QStringLiteral("answered"),
                                      QStringLiteral("answer-lost"), QStringLiteral("failed"),
                                      QStringLiteral("unsupported"), QStringLiteral("fallback")};
    u.step = ActionUpdate::Step(std::max(0, int(steps.indexOf(step))));
    OperatorAction &a = u.action;
    a.id = jsonString(j, "id");
    const QString kind = jsonString(j, "kind");
    for (ActionKind k : {ActionKind::Inject, ActionKind::Stop, ActionKind::Suspend, ActionKind::Resume, ActionKind::Send})
        if (actionKindName(k) == kind)
            a.kind = k;
    a.agentId = jsonString(j, "agentId");
    a.method = jsonString(j, "method");
    if (const Json *p = jsonChild(j, "params"))
        a.params = *p;
    a.note = jsonString(j, "note");
    a.detail = jsonString(j, "detail");
    a.messageId = jsonString(j, "messageId");
    return u;
}

// ---- parsing -------------------------------------------------------------------------------

struct RecordLineParser::Impl
{
    simdjson::dom::parser parser;
};

RecordLineParser::RecordLineParser()
    : d(std::make_unique<Impl>())
{
}

RecordLineParser::~RecordLineParser() = default;

static QString dirFromView(std::string_view v)
{
    if (v == "recv")
        return dirString(RecordDir::Recv);
    if (v == "send")
        return dirString(RecordDir::Send);
    if (v == "open")
        return dirString(RecordDir::Open);
    if (v == "close")
        return dirString(RecordDir::Close);
    if (v == "action")
        return dirString(RecordDir::Action);
    return QString::fromUtf8(v.data(), qsizetype(v.size()));
}

// With room for simdjson's padding after the text: the frame is parsed where it is (parseText).
static QByteArray bytes(std::string_view v)
{
    QByteArray out;
    out.reserve(qsizetype(v.size() + simdjson::SIMDJSON_PADDING + 1));
    out.append(v.data(), qsizetype(v.size()));
    return out;
}

// A record line exactly as encodeRecordLine() writes a frame:
//   {"t":<digits>,"dir":"send"|"recv","conn":<digits>,"frame":<frame>}
// Such a line is valid JSON exactly when <frame> is; nothing else is checked here.
struct FrameLine
{
    qint64 timeMs = 0;
    RecordDir dir = RecordDir::Recv;
    int connection = 1;
    const char *frame = nullptr;
    qsizetype frameSize = 0;
};

static bool scanFrameLine(const char *data, qsizetype size, FrameLine &out)
{
    const char *p = data;
    const char *const end = data + size;
    auto literal = [&](std::string_view text) {
        if (end - p < qsizetype(text.size()) || std::memcmp(p, text.data(), text.size()) != 0)
            return false;
        p += text.size();
        return true;
    };
    auto digits = [&](qint64 &value, int maxDigits) {
        value = 0;
        const char *const first = p;
        while (p < end && *p >= '0' && *p <= '9' && p - first < maxDigits)
            value = value * 10 + (*p++ - '0');
        return p > first && (p == end || *p < '0' || *p > '9');
    };
    qint64 time = 0, connection = 0;
    if (!literal(R"({"t":)") || !digits(time, 18) || !literal(R"(,"dir":")"))
        return false;
    if (literal(R"(recv")"))
        out.dir = RecordDir::Recv;
    else if (literal(R"(send")"))
        out.dir = RecordDir::Send;
    else
        return false;
    if (!literal(R"(,"conn":)") || !digits(connection, 9) || !literal(R"(,"frame":)") || end - p < 2 || end[-1] != '}')
        return false;
    out.timeMs = time;
    out.connection = int(connection);
    out.frame = p;
    out.frameSize = (end - 1) - p;
    return true;
}

RecordLineParser::Result RecordLineParser::parse(const char *data, qsizetype size, qsizetype paddedCapacity,
                                                 TraceRecord &out)
{
    const char *const lineStart = data;
    const qsizetype lineSize = size;
    out.contentOffset = -1;
    out.contentLineSize = 0;
    while (size > 0 && (data[size - 1] == ' ' || data[size - 1] == '\t' || data[size - 1] == '\r'))
        --size;
    while (size > 0 && (*data == ' ' || *data == '\t')) {
        ++data;
        --size;
        --paddedCapacity;
    }
    if (size == 0)
        return Result::Empty;
    FrameLine frameLine;
    const bool writtenByUs = scanFrameLine(data, size, frameLine);
    out.frameUnchecked = false;
    if (writtenByUs && m_framesCheckedLater) {
        out.timeMs = frameLine.timeMs;
        out.dir = dirString(frameLine.dir);
        out.connection = frameLine.connection;
        out.binary = false;
        out.extra = Json();
        out.raw = bytes(std::string_view(frameLine.frame, size_t(frameLine.frameSize)));
        out.frameUnchecked = true;
        out.contentOffset = frameLine.frame - lineStart; // the reader adds the line's offset
        return Result::Record;
    }
    using namespace simdjson;
    dom::element root;
    const bool copy = paddedCapacity < size + qsizetype(SIMDJSON_PADDING);
    if (const error_code e = d->parser.parse(data, size_t(size), copy).get(root); e != SUCCESS) {
        // A line with a lone UTF-16 surrogate (a JavaScript string cut in half): read with it
        // replaced by U+FFFD rather than lost (protocol/Utf16Repair.h).
        QByteArray repaired(data, size);
        if (repairLoneSurrogates(repaired) > 0) {
            repaired.reserve(repaired.size() + qsizetype(SIMDJSON_PADDING));
            const Result again = parse(repaired.constData(), repaired.size(), repaired.capacity(), out);
            out.contentOffset = -1; // not the file's bytes: read back by parsing the line again
            out.contentLineSize = 0;
            return again;
        }
        m_error = QString::fromUtf8(error_message(e));
        return Result::Bad;
    }
    dom::object object;
    if (root.get(object) != SUCCESS) {
        m_error = QStringLiteral("not a JSON object");
        return Result::Bad;
    }
    if (dom::element format; object["format"].get(format) == SUCCESS) {
        m_header = jsonFromSimd(root);
        if (format.is_string())
            m_base64 = std::string_view(format) == "map-inspector-trace";
        return Result::Header;
    }

    std::string_view dir;
    bool haveDir = false;
    double t = 0;
    bool haveTime = false;
    qint64 conn = 1;
    bool binary = false;
    std::optional<dom::element> raw, frame, action, url; // present when the line has them
    bool base64 = false;
    for (const dom::key_value_pair field : object) {
        const std::string_view key = field.key;
        const dom::element value = field.value;
        if (key == "t") {
            if (value.is_number()) {
                t = value.get_double().value_unsafe();
                haveTime = true;
            }
        } else if (key == "dir") {
            haveDir = value.get_string().get(dir) == SUCCESS && !dir.empty();
        } else if (key == "conn") {
            if (value.is_int64())
                conn = qint64(value.get_int64().value_unsafe());
            else if (value.is_number())
                conn = saturatedInt(value.get_double().value_unsafe());
        } else if (key == "raw") {
            raw = value;
        } else if (key == "frame") {
            frame = value;
        } else if (key == "encoding") {
            std::string_view encoding;
            base64 = value.get_string().get(encoding) == SUCCESS && encoding == "base64";
        } else if (key == "binary") {
            if (value.get_bool().get(binary) != SUCCESS) {
                m_error = QStringLiteral("\"binary\" is not true or false");
                return Result::Bad;
            }
        } else if (key == "action") {
            action = value;
        } else if (key == "url") {
            url = value;
        }
    }
    if (!haveDir || !haveTime) {
        m_error = haveDir ? QStringLiteral("no numeric \"t\"") : QStringLiteral("no \"dir\"");
        return Result::Bad;
    }
    out.timeMs = saturatedInt(t);
    out.dir = dirFromView(dir);
    out.connection = int(std::clamp<qint64>(conn, std::numeric_limits<int>::min(), std::numeric_limits<int>::max()));
    out.binary = binary;
    out.raw.clear();
    out.extra = Json();
    if (dir == "action") {
        if (action)
            out.extra = jsonFromSimd(*action);
    } else if (frame) {
        // Our own lines give the frame's bytes as written (four members: nothing follows the
        // frame); a line edited into another shape gives the frame minified (same JSON).
        if (writtenByUs && object.size() == 4) {
            out.raw = bytes(std::string_view(frameLine.frame, size_t(frameLine.frameSize)));
            out.contentOffset = frameLine.frame - lineStart; // verbatim, as above
            return Result::Record;
        }
        out.raw = bytes(simdjson::to_string(*frame));
    } else if (std::string_view text; raw && raw->get_string().get(text) == SUCCESS) {
        out.raw = bytes(text);
        // Base64 when the record says so, and for binary frames of traces written before
        // "encoding" existed; captures keep binary frames as text.
        if (base64 || (binary && m_base64))
            out.raw = QByteArray::fromBase64(out.raw);
    } else if (url && dir == "open" && url->get_string().get(text) == SUCCESS) {
        out.raw = bytes(text);
    }
    // The line gives `raw` back when parsed again by a parser that has seen no header, unless
    // the header made a binary frame base64 (a map-inspector trace from before "encoding").
    if (dir != "action" && !(binary && m_base64)) {
        out.contentOffset = 0; // the reader adds the line's offset
        out.contentLineSize = lineSize;
    }
    return Result::Record;
}

} // namespace mapi
