#include "trace/TraceImport.h"

#include <QDateTime>
#include <QRegularExpression>
#include <QTimeZone>

namespace mapi {

QString importFormatName(ImportFormat format)
{
    switch (format) {
    case ImportFormat::Unknown: return {};
    case ImportFormat::Seed000: return QStringLiteral("seed-000");
    case ImportFormat::Seed002: return QStringLiteral("seed-002");
    case ImportFormat::Seed003: return QStringLiteral("seed-003");
    case ImportFormat::Seed004: return QStringLiteral("seed-004");
    }
    return {};
}

QString unknownFormatError(const QString &path, const QString &detail)
{
    return QStringLiteral("%1: unknown format%2. Understood: a MAP Inspector trace (JSON Lines with a "
                          "{\"format\":\"map-inspector-trace\"} header), a raw capture ({seq,dir,t,raw} lines), "
                          "or message logs (one JSON object per line, or a JSON array) in the envelope formats "
                          "000 {message_id,type,from,to,timestamp,payload}, 002 {header{messageId,source,destination},"
                          "body{action,payload},trace}, 003 {id,from,to,type,payload} or 004 {protocol_version,"
                          "message_id,sender_id,receiver_id,message_type,payload}, or OpenTelemetry traces (OTLP/JSON: "
                          "{\"resourceSpans\":[...]} per line, or one such object); plain, .gz or .zst")
        .arg(path, detail.isEmpty() ? QString() : QStringLiteral(" (%1)").arg(detail));
}

ImportFormat detectImportFormat(const Json &o)
{
    if (!o.is_object() || o.contains("dir") || o.contains("format"))
        return ImportFormat::Unknown;
    if (const Json *header = jsonChild(o, "header"); header && header->is_object()
        && (header->contains("messageId") || header->contains("source") || header->contains("type")))
        return ImportFormat::Seed002;
    if (o.contains("protocol_version") || o.contains("sender_id"))
        return ImportFormat::Seed004;
    if (o.contains("message_id") && (o.contains("from") || o.contains("type")))
        return ImportFormat::Seed000;
    if (o.contains("id") && o.contains("from") && o.contains("type"))
        return ImportFormat::Seed003;
    return ImportFormat::Unknown;
}

qint64 importTimeMs(const Json &value)
{
    if (value.is_number()) {
        const double v = value.get<double>();
        if (!(v >= 0))
            return -1;
        return v < 1e11 ? saturatedInt(v * 1000.0) : saturatedInt(v); // seconds or milliseconds since the epoch
    }
    if (!value.is_string())
        return -1;
    const QString s = QString::fromStdString(value.get<std::string>()).trimmed();
    bool isNumber = false;
    const double n = s.toDouble(&isNumber);
    if (isNumber)
        return importTimeMs(Json(n));
    QDateTime dt = QDateTime::fromString(s, Qt::ISODateWithMs);
    if (!dt.isValid())
        return -1;
    // Without an offset, a log's time is taken as UTC (not the local zone of whoever opens it).
    static const QRegularExpression offset(QStringLiteral("[T ]\\d.*(Z|[+-]\\d\\d:?\\d\\d)$"),
                                           QRegularExpression::CaseInsensitiveOption);
    const bool hasOffset = offset.match(s).hasMatch();
    if (!hasOffset)
        dt = QDateTime(dt.date(), dt.time(), QTimeZone::utc());
    return dt.toMSecsSinceEpoch();
}

SeedImporter::SeedImporter(QString sourceName)
    : m_source(std::move(sourceName))
{
}

static QString str(const Json &o, const char *key)
{
    const Json *v = jsonChild(o, key);
    if (!v || v->is_null())
        return {};
    return toQString(*v);
}

static bool isBroadcast(const QString &to)
{
    return to.isEmpty() || to == QLatin1String("*") || to.compare(QLatin1String("broadcast"), Qt::CaseInsensitive) == 0
        || to.compare(QLatin1String("all"), Qt::CaseInsensitive) == 0;
}

TraceRecord SeedImporter::eventRecord(const Json &event, qint64 timeMs)
{
    const std::string id = "import-" + std::to_string(++m_eventCounter);
    Json inner = event;
    inner["id"] = id;
    inner["timestamp"] = timeMs;
    const Json frame = {{"jsonrpc", "2.0"},
                        {"method", "map/event"},
                        {"params", {{"eventId", id}, {"timestamp", timeMs}, {"event", std::move(inner)}}}};
    TraceRecord r;
    r.timeMs = timeMs;
    r.dir = recordDirName(RecordDir::Recv);
    r.connection = 1;
    r.raw = QByteArray::fromStdString(frame.dump(-1, ' ', false, Json::error_handler_t::replace));
    return r;
}

void SeedImporter::registerAgent(const QString &id, qint64 timeMs, std::vector<TraceRecord> &out)
{
    if (id.isEmpty() || m_known.contains(id))
        return;
    m_known.insert(id);
    const Json agent = {{"id", id.toStdString()},
                        {"name", id.toStdString()},
                        {"metadata", {{"imported", true}, {"source", m_source.toStdString()}}}};
    out.push_back(eventRecord({{"type", "agent.registered"}, {"data", {{"agent", agent}}}, {"source", {{"agentId", id.toStdString()}}}},
                              timeMs));
}

bool SeedImporter::convert(const Json &o, std::vector<TraceRecord> &out, QString *why)
{
    const ImportFormat format = detectImportFormat(o);
    if (format == ImportFormat::Unknown) {
        if (why)
            *why = QStringLiteral("not a message in one of the envelope formats 000, 002, 003, 004");
        return false;
    }
    if (m_first == ImportFormat::Unknown)
        m_first = format;

    // Where each envelope keeps the message's id, sender, recipients and time.
    struct EnvelopeKeys
    {
        const char *id, *from, *to;
    };
    static const EnvelopeKeys kKeys[] = {
        {"message_id", "from", "to"},            // Seed000
        {"messageId", "source", "destination"},  // Seed002 (inside "header")
        {"id", "from", "to"},                    // Seed003
        {"message_id", "sender_id", "receiver_id"}, // Seed004
    };
    static_assert(int(ImportFormat::Seed000) == 1 && int(ImportFormat::Seed004) == 4, "kKeys follows ImportFormat");
    const EnvelopeKeys &keys = kKeys[int(format) - 1];
    const Json &envelope = format == ImportFormat::Seed002 ? o.at("header") : o;
    QString id = str(envelope, keys.id);
    const QString from = str(envelope, keys.from);
    const Json to = envelope.value(keys.to, Json());
    qint64 t = importTimeMs(envelope.value("timestamp", Json()));
    if (t < 0 && format == ImportFormat::Seed003)
        if (const Json *meta = jsonChild(o, "metadata"); meta && meta->is_object())
            t = importTimeMs(meta->value("timestamp", Json()));
    if (t < 0) // no usable time: keep the order, one millisecond apart
        t = m_lastTimeMs < 0 ? 0 : m_lastTimeMs + 1;
    m_lastTimeMs = std::max(m_lastTimeMs, t);

    if (!m_opened) {
        m_opened = true;
        TraceRecord open;
        open.timeMs = t;
        open.dir = recordDirName(RecordDir::Open);
        open.raw = QStringLiteral("import:%1").arg(m_source).toUtf8();
        out.push_back(std::move(open));
    }

    // Recipients: agent ids; "*"/"broadcast"/"all" address everyone, "topic:x" a topic (a scope).
    QStringList agents;
    Json mapTo;
    QStringList recipients;
    if (to.is_array()) {
        for (const Json &item : to)
            recipients << toQString(item);
    } else if (!to.is_null()) {
        recipients << toQString(to);
    }
    Json parts = Json::array();
    for (const QString &r : std::as_const(recipients)) {
        if (isBroadcast(r)) {
            parts.push_back("*");
        } else if (r.startsWith(QLatin1String("topic:"))) {
            parts.push_back(QString(QStringLiteral("scope:") + r).toStdString());
        } else {
            agents << r;
            parts.push_back(r.toStdString());
        }
    }
    mapTo = parts.size() == 1 ? parts.at(0) : (parts.empty() ? Json("*") : parts);

    registerAgent(from, t, out);
    for (const QString &a : std::as_const(agents))
        registerAgent(a, t, out);

    ++m_messages;
    if (id.isEmpty())
        id = QStringLiteral("import-message-%1").arg(m_messages);
    Json message = {{"id", id.toStdString()}, {"to", mapTo}, {"payload", o}, {"timestamp", t}};
    Json event = {{"type", "message.sent"}, {"data", {{"message", std::move(message)}}}};
    if (!from.isEmpty()) {
        event["data"]["message"]["from"] = from.toStdString();
        event["source"] = {{"agentId", from.toStdString()}};
    }
    out.push_back(eventRecord(event, t));
    return true;
}

// ---- JSON arrays ------------------------------------------------------------------------------

void JsonArraySplitter::feed(const char *data, qsizetype size, qint64 lineNumber,
                             std::vector<std::pair<QByteArray, qint64>> &out)
{
    auto isSpace = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; };
    auto finishElement = [&] {
        out.emplace_back(std::move(m_current), m_elementLine);
        m_current = QByteArray();
        m_state = State::Between;
    };
    qsizetype runStart = -1; // start of the bytes of `data` not yet appended to m_current
    auto flushRun = [&](qsizetype end) {
        if (runStart >= 0 && end > runStart)
            m_current.append(data + runStart, end - runStart);
        runStart = -1;
    };
    for (qsizetype i = 0; i <= size; ++i) {
        const char c = i < size ? data[i] : '\n'; // lines are separated by whitespace
        switch (m_state) {
        case State::Before:
            if (isSpace(c))
                break;
            m_state = c == '[' ? State::Between : State::Error;
            break;
        case State::Between:
            if (isSpace(c) || c == ',')
                break;
            if (c == ']') {
                m_state = State::Done;
                break;
            }
            m_state = State::InElement;
            m_elementLine = lineNumber;
            m_depth = (c == '{' || c == '[') ? 1 : 0;
            m_inString = c == '"';
            m_escaped = false;
            runStart = i;
            break;
        case State::InElement:
            if (runStart < 0 && i < size)
                runStart = i;
            if (m_inString) {
                if (m_escaped)
                    m_escaped = false;
                else if (c == '\\')
                    m_escaped = true;
                else if (c == '"') {
                    m_inString = false;
                    if (m_depth == 0) { // a string element
                        flushRun(i + 1);
                        finishElement();
                    }
                }
                break;
            }
            if (m_depth == 0) { // a scalar element ends at a separator
                if (isSpace(c) || c == ',' || c == ']') {
                    flushRun(i);
                    finishElement();
                    if (c == ']')
                        m_state = State::Done;
                }
                break;
            }
            if (c == '"')
                m_inString = true;
            else if (c == '{' || c == '[')
                ++m_depth;
            else if ((c == '}' || c == ']') && --m_depth == 0) {
                flushRun(i + 1);
                finishElement();
            }
            break;
        case State::Done:
        case State::Error:
            break;
        }
    }
    if (m_state == State::InElement) {
        flushRun(size);
        m_current.append('\n');
    }
}

} // namespace mapi
