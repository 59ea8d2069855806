#include "trace/Trace.h"

#include <QDateTime>
#include <QRegularExpression>

namespace mapi {

// Above this depth a frame is redacted by text, not parsed (the parse and the walk recurse).
static constexpr int kMaxRedactionDepth = 128;

static bool isSecretKey(const std::string &key)
{
    static const char *const keys[] = {"credential", "token", "resumetoken", "apikey", "api_key", "password",
                                       "secret", "accesstoken", "refreshtoken", "authorization", "access_token",
                                       "refresh_token", "resume_token"};
    std::string lower;
    lower.reserve(key.size());
    for (char c : key)
        lower.push_back(char(std::tolower(static_cast<unsigned char>(c))));
    for (const char *k : keys)
        if (lower == k)
            return true;
    return false;
}

static bool redactValue(Json &value)
{
    bool changed = false;
    if (value.is_object()) {
        for (auto it = value.begin(); it != value.end(); ++it) {
            if (isSecretKey(it.key()) && !it.value().is_null()) {
                it.value() = "REDACTED";
                changed = true;
            } else {
                changed |= redactValue(it.value());
            }
        }
    } else if (value.is_array()) {
        for (Json &item : value)
            changed |= redactValue(item);
    }
    return changed;
}

QByteArray redactSecrets(const QByteArray &frame)
{
    // Cheap pre-check: most frames carry none of these words.
    static const char *const hints[] = {"redential", "oken", "pikey", "pi_key", "assword", "ecret", "uthorization"};
    bool maybe = false;
    for (const char *h : hints)
        if (frame.contains(h)) {
            maybe = true;
            break;
        }
    if (!maybe)
        return frame;
    // Too deep to parse safely (recursion): redact textually instead, key by key.
    if (FrameCodec::nestingDepth(frame, kMaxRedactionDepth) > kMaxRedactionDepth) {
        static const QRegularExpression secretValue(
            QStringLiteral("(\"(?:credential|token|resumeToken|apiKey|api_key|password|secret|accessToken|refreshToken|"
                           "authorization|access_token|refresh_token|resume_token)\"\\s*:\\s*)\"(?:[^\"\\\\]|\\\\.)*\""),
            QRegularExpression::CaseInsensitiveOption);
        QString text = QString::fromUtf8(frame);
        text.replace(secretValue, QStringLiteral("\\1\"REDACTED\""));
        return text.toUtf8();
    }
    Json doc = Json::parse(frame.constBegin(), frame.constEnd(), nullptr, false);
    if (doc.is_discarded())
        return frame;
    if (!redactValue(doc))
        return frame;
    return QByteArray::fromStdString(doc.dump(-1, ' ', false, Json::error_handler_t::replace));
}

// ---- writer ----------------------------------------------------------------------------

TraceWriter::TraceWriter(QObject *parent)
    : QObject(parent)
{
    m_flushTimer.setInterval(1000);
    connect(&m_flushTimer, &QTimer::timeout, this, [this] {
        if (m_file.isOpen())
            m_file.flush();
    });
}

TraceWriter::~TraceWriter()
{
    close();
}

bool TraceWriter::open(const QString &path, const QString &url, QString *error)
{
    m_file.setFileName(path);
    if (!m_file.open(QIODevice::WriteOnly | QIODevice::Truncate)) {
        if (error)
            *error = QStringLiteral("cannot write %1: %2").arg(path, m_file.errorString());
        return false;
    }
    const Json header = {{"format", "map-inspector-trace"},
                         {"version", kTraceFormatVersion},
                         {"app", MAPI_VERSION},
                         {"startedAt", QDateTime::currentMSecsSinceEpoch()},
                         {"url", url.toStdString()}};
    m_file.write(QByteArray::fromStdString(header.dump()) + '\n');
    m_file.flush();
    m_flushTimer.start();
    return true;
}

void TraceWriter::attach(MapClient *client)
{
    connect(client, &MapClient::socketOpened, this, [this](const QString &url, qint64 t) {
        ++m_connection;
        write({t, QStringLiteral("open"), m_connection, url.toUtf8(), false, Json()});
    });
    connect(client, &MapClient::socketClosed, this, [this](const QString &reason, qint64 t) {
        write({t, QStringLiteral("close"), m_connection, reason.toUtf8(), false, Json()});
    });
    connect(client, &MapClient::frameSent, this, [this](const QByteArray &frame, qint64 t) {
        write({t, QStringLiteral("send"), m_connection, frame, false, Json()});
    });
    connect(client, &MapClient::frameReceived, this, [this](const QByteArray &frame, qint64 t, bool binary) {
        write({t, QStringLiteral("recv"), m_connection, frame, binary, Json()});
    });
    connect(client, &MapClient::actionRecorded, this, [this](const ActionUpdate &update) {
        write({update.timeMs, QStringLiteral("action"), m_connection, QByteArray(), false, actionUpdateToJson(update)});
    });
}

void TraceWriter::write(const TraceRecord &record)
{
    if (!m_file.isOpen())
        return;
    Json line = {{"t", record.timeMs}, {"dir", record.dir.toStdString()}, {"conn", record.connection}};
    if (record.dir == QLatin1String("action")) {
        line["action"] = record.extra;
    } else if (record.binary) {
        line["binary"] = true;
        line["encoding"] = "base64"; // captures keep binary frames as text; ours say how they are stored
        line["raw"] = record.raw.toBase64().toStdString();
    } else {
        const QByteArray clean = (record.dir == QLatin1String("send") || record.dir == QLatin1String("recv"))
            ? redactSecrets(record.raw)
            : record.raw;
        line["raw"] = clean.toStdString();
    }
    m_file.write(QByteArray::fromStdString(line.dump(-1, ' ', false, Json::error_handler_t::replace)) + '\n');
    ++m_records;
}

void TraceWriter::close()
{
    m_flushTimer.stop();
    if (m_file.isOpen()) {
        m_file.flush();
        m_file.close();
    }
}

// ---- reader ----------------------------------------------------------------------------

bool readTrace(const QString &path, const std::function<bool(const TraceRecord &)> &sink, TraceReadStats &stats,
               QString *error)
{
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly)) {
        if (error)
            *error = QStringLiteral("cannot open %1: %2").arg(path, file.errorString());
        return false;
    }
    while (!file.atEnd()) {
        const QByteArray line = file.readLine().trimmed();
        ++stats.lines;
        if (line.isEmpty())
            continue;
        Json doc = Json::parse(line.constBegin(), line.constEnd(), nullptr, false);
        if (doc.is_discarded() || !doc.is_object()) {
            stats.badLines << stats.lines;
            continue;
        }
        if (doc.contains("format")) {
            stats.format = jsonString(doc, "format");
            continue;
        }
        TraceRecord record;
        record.dir = jsonString(doc, "dir");
        const Json *t = jsonChild(doc, "t");
        if (record.dir.isEmpty() || !t || !t->is_number()) {
            stats.badLines << stats.lines;
            continue;
        }
        if (stats.format.isEmpty())
            stats.format = QStringLiteral("capture");
        record.timeMs = qint64(t->get<double>());
        record.connection = int(jsonInt(doc, "conn", 1));
        const Json *binary = jsonChild(doc, "binary");
        record.binary = binary && binary->is_boolean() && binary->get<bool>();
        const bool base64 = jsonString(doc, "encoding") == QLatin1String("base64");
        if (record.dir == QLatin1String("action")) {
            record.extra = doc.value("action", Json());
        } else if (const Json *raw = jsonChild(doc, "raw"); raw && raw->is_string()) {
            record.raw = QByteArray::fromStdString(raw->get<std::string>());
            if (base64)
                record.raw = QByteArray::fromBase64(record.raw);
        } else if (record.dir == QLatin1String("open")) {
            record.raw = jsonString(doc, "url").toUtf8();
        }
        ++stats.records;
        if (!sink(record))
            break;
    }
    return true;
}

// ---- replay ----------------------------------------------------------------------------

TraceReplayer::TraceReplayer(SystemStore *store, CodecLimits limits)
    : m_store(store)
    , m_limits(limits)
{
}

void TraceReplayer::feed(const TraceRecord &r)
{
    ProtocolPipeline *pipeline = m_pipelines.value(r.connection);
    if (!pipeline) {
        m_owned.push_back(std::make_unique<ProtocolPipeline>(m_limits));
        pipeline = m_owned.back().get();
        m_pipelines.insert(r.connection, pipeline);
    }
    m_lastTimeMs = std::max(m_lastTimeMs, r.timeMs);
    if (r.dir == QLatin1String("recv")) {
        InterpretedFrame f = r.binary ? pipeline->binaryFrameReceived(r.raw, r.timeMs) : pipeline->frameReceived(r.raw, r.timeMs);
        m_store->apply(f.inputs);
    } else if (r.dir == QLatin1String("send")) {
        pipeline->frameSent(r.raw, r.timeMs);
    } else if (r.dir == QLatin1String("open")) {
        m_store->apply(pipeline->connectionOpened(QString::fromUtf8(r.raw), r.timeMs));
    } else if (r.dir == QLatin1String("close")) {
        m_store->apply(pipeline->connectionClosed(QString::fromUtf8(r.raw), r.timeMs));
    } else if (r.dir == QLatin1String("action")) {
        ActionUpdate update = actionUpdateFromJson(r.extra);
        update.timeMs = r.timeMs;
        m_store->apply(ModelInput(std::move(update)));
    }
}

bool TraceReplayer::replayFile(const QString &path, TraceReadStats &stats, QString *error)
{
    const bool ok = readTrace(path, [this](const TraceRecord &r) {
        feed(r);
        return true;
    }, stats, error);
    if (ok)
        m_store->advanceTime(m_lastTimeMs);
    return ok;
}

// ---- action records --------------------------------------------------------------------

Json actionUpdateToJson(const ActionUpdate &u)
{
    static const char *const steps[] = {"created", "answered", "failed", "unsupported", "fallback"};
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
    static const QStringList steps = {QStringLiteral("created"), QStringLiteral("answered"), QStringLiteral("failed"),
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

} // namespace mapi
