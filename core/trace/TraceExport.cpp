#include "trace/TraceExport.h"

#include "map/Dialect.h"
#include "trace/TraceTimeline.h"

#include <QDateTime>
#include <QSaveFile>

#include <algorithm>
#include <cstring>

namespace mapi {

namespace {

// Buffers output and writes it in large pieces.
class Output
{
public:
    explicit Output(QIODevice &device)
        : m_device(device)
    {
        m_buffer.reserve(kFlushAt + 64 * 1024);
    }
    void append(const QByteArray &text)
    {
        m_buffer.append(text);
        if (m_buffer.size() >= kFlushAt)
            flush();
    }
    void append(const char *text) { append(QByteArray::fromRawData(text, qsizetype(std::strlen(text)))); }
    bool flush()
    {
        if (!m_buffer.isEmpty() && m_device.write(m_buffer) != m_buffer.size())
            m_failed = true;
        m_buffer.clear();
        return !m_failed;
    }
    bool failed() const { return m_failed; }

private:
    static constexpr qsizetype kFlushAt = 1 << 20;
    QIODevice &m_device;
    QByteArray m_buffer;
    bool m_failed = false;
};

QByteArray dump(const Json &json)
{
    return QByteArray::fromStdString(json.dump(-1, ' ', false, Json::error_handler_t::replace));
}

std::string s(const QString &text)
{
    return text.toStdString();
}

const char *categoryOf(EventKind kind)
{
    switch (kind) {
    case EventKind::AgentRegistered:
    case EventKind::AgentUnregistered:
    case EventKind::AgentStateChanged:
    case EventKind::AgentMetadataChanged:
    case EventKind::AgentResumed:
    case EventKind::AgentOrphaned: return "agent";
    case EventKind::ScopeCreated:
    case EventKind::ScopeDeleted:
    case EventKind::ScopeMemberJoined:
    case EventKind::ScopeMemberLeft: return "scope";
    case EventKind::MessageSent: return "message";
    case EventKind::MessageQueued:
    case EventKind::MessageDelivered:
    case EventKind::MessageDropped:
    case EventKind::MessageExpired:
    case EventKind::MessageFailed: return "delivery";
    case EventKind::SessionConnected:
    case EventKind::SessionDisconnected:
    case EventKind::SessionResumed:
    case EventKind::SessionExpired: return "session";
    case EventKind::TaskCreated:
    case EventKind::TaskAssigned:
    case EventKind::TaskStatus:
    case EventKind::TaskCompleted: return "task";
    case EventKind::Other: return "other";
    }
    return "other";
}

bool isTaskStart(const QString &status)
{
    return status == QLatin1String("requested") || status == QLatin1String("accepted") || status == QLatin1String("open")
        || status == QLatin1String("assigned") || status == QLatin1String("in-progress");
}

bool isTaskEnd(const QString &status)
{
    return status == QLatin1String("completed") || status == QLatin1String("failed") || status == QLatin1String("rejected")
        || status == QLatin1String("cancelled");
}

// The new state of an agent.state.changed event, read from its frame.
QString stateFromFrame(const QByteArray &frame)
{
    const Json doc = Json::parse(frame.constBegin(), frame.constEnd(), nullptr, false);
    const Json *params = doc.is_object() ? jsonChild(doc, "params") : nullptr;
    if (!params)
        return {};
    QString error;
    const auto event = eventFromNotification(*params, error);
    if (!event || !event->agent || !event->agent->state)
        return {};
    return *event->agent->state;
}

struct TaskSpan
{
    const Task *task = nullptr;
    qint64 start = 0;
    qint64 end = 0;
    bool open = false;
};

TaskSpan spanOf(const Task &task, const std::vector<TaskTransition> &history, qint64 nowMs)
{
    TaskSpan span;
    span.task = &task;
    span.start = task.createdAtMs;
    for (const TaskTransition &t : history)
        if (isTaskStart(t.status)) {
            span.start = t.timeMs;
            break;
        }
    if (!history.empty() && !isTaskStart(history.front().status))
        span.start = std::min(span.start, history.front().timeMs);
    span.open = true;
    span.end = std::max(nowMs, span.start);
    for (const TaskTransition &t : history)
        if (t.timeMs >= span.start && isTaskEnd(t.status)) {
            span.end = t.timeMs;
            span.open = false;
            break;
        }
    return span;
}

} // namespace

bool writeChromeTrace(const SystemStore &store, QIODevice &device, const ChromeTraceOptions &options,
                      ChromeTraceCounts *counts, QString *error)
{
    ChromeTraceCounts c;
    const auto &messages = store.messages();
    const auto &events = store.events();
    auto inRange = [&](qint64 t) { return t >= options.fromMs && t <= options.toMs; };
    const bool filtered = !options.agents.isEmpty();
    auto selected = [&](const QString &agentId) { return options.agents.contains(agentId); };
    // Filters and threads read single fields of the message (no copy of it per event).
    auto hasMessage = [&](const EventEntry &e) { return e.messageIndex >= 0 && size_t(e.messageIndex) < messages.size(); };
    auto keepEvent = [&](const EventEntry &e) {
        if (!inRange(e.timestampMs))
            return false;
        if (!filtered || selected(events.agentId(e)))
            return true;
        if (!hasMessage(e))
            return false;
        const size_t m = size_t(e.messageIndex);
        if (selected(messages.fromAgentId(m)))
            return true;
        for (int i = 0; i < messages.recipientCount(m); ++i)
            if (selected(messages.recipient(m, i)))
                return true;
        return false;
    };
    auto tidOf = [&](const QString &agentId) { return agentId.isEmpty() ? 0 : store.agentRow(agentId) + 1; };
    auto tidOfEvent = [&](const EventEntry &e) {
        if (events.kind(e) == EventKind::MessageSent && hasMessage(e) && !messages.fromAgentId(size_t(e.messageIndex)).isEmpty())
            return tidOf(messages.fromAgentId(size_t(e.messageIndex)));
        return tidOf(events.agentId(e));
    };
    auto taskThread = [](const Task &t) { return t.assigneeId.isEmpty() ? t.requesterId : t.assigneeId; };

    // The origin: the earliest exported time; with an agent filter, the threads in use.
    qint64 origin = std::numeric_limits<qint64>::max();
    QSet<int> usedThreads;
    for (const EventEntry &e : events)
        if (keepEvent(e)) {
            origin = std::min(origin, e.timestampMs);
            usedThreads.insert(tidOfEvent(e));
        }
    std::vector<TaskSpan> spans;
    for (const Task &task : store.tasks()) {
        const TaskSpan span = spanOf(task, store.taskHistory(task), store.now());
        if (span.end < options.fromMs || span.start > options.toMs)
            continue;
        if (filtered && !selected(task.requesterId) && !selected(task.assigneeId))
            continue;
        spans.push_back(span);
        usedThreads.insert(tidOf(taskThread(task)));
        origin = std::min(origin, std::max(span.start, options.fromMs));
    }
    if (origin == std::numeric_limits<qint64>::max())
        origin = 0;
    auto ts = [&](qint64 ms) { return (ms - origin) * 1000; };

    Output out(device);
    out.append("{\"traceEvents\":[\n");
    bool first = true;
    auto put = [&](const Json &event) {
        if (!first)
            out.append(",\n");
        first = false;
        out.append(dump(event));
    };

    put({{"name", "process_name"}, {"ph", "M"}, {"pid", 1}, {"tid", 0}, {"args", {{"name", s(options.processName)}}}});
    put({{"name", "thread_name"}, {"ph", "M"}, {"pid", 1}, {"tid", 0}, {"args", {{"name", "system"}}}});
    put({{"name", "thread_sort_index"}, {"ph", "M"}, {"pid", 1}, {"tid", 0}, {"args", {{"sort_index", 0}}}});
    c.threads = 1;
    for (size_t row = 0; row < store.agents().size(); ++row) {
        if (filtered && !usedThreads.contains(int(row) + 1))
            continue;
        const Agent &a = store.agents()[row];
        const QString label = a.name.isEmpty() || a.name == a.id ? a.id : QStringLiteral("%1 (%2)").arg(a.name, a.id);
        put({{"name", "thread_name"}, {"ph", "M"}, {"pid", 1}, {"tid", int(row) + 1}, {"args", {{"name", s(label)}}}});
        put({{"name", "thread_sort_index"}, {"ph", "M"}, {"pid", 1}, {"tid", int(row) + 1}, {"args", {{"sort_index", int(row) + 1}}}});
        ++c.threads;
    }

    for (size_t i = 0; i < events.size(); ++i) {
        const EventEntry &e = events[i];
        if (!keepEvent(e))
            continue;
        Json args = {{"eventId", s(events.eventId(i))}};
        if (const QString &agentId = events.agentId(e); !agentId.isEmpty())
            args["agent"] = s(agentId);
        if (hasMessage(e)) {
            const Message m = messages[size_t(e.messageIndex)];
            args["message"] = s(m.id);
            args["from"] = s(m.fromAgentId.isEmpty() ? m.fromRaw : m.fromAgentId);
            args["to"] = s(m.toDisplay);
            args["status"] = s(m.status);
            if (m.convention != ConventionKind::None)
                args["convention"] = s(conventionName(m.convention));
            if (!m.taskId.isEmpty())
                args["task"] = s(m.taskId);
            if (!m.correlationId.isEmpty())
                args["correlation"] = s(m.correlationId);
        }
        if (events.kind(e) == EventKind::AgentStateChanged && options.timeline) {
            const QString state = stateFromFrame(options.timeline->frameForEvent(int(i)));
            if (!state.isEmpty())
                args["state"] = s(state);
        }
        put({{"name", s(events.type(e))},
             {"cat", categoryOf(events.kind(e))},
             {"ph", "i"},
             {"s", "t"},
             {"ts", ts(e.timestampMs)},
             {"pid", 1},
             {"tid", tidOfEvent(e)},
             {"args", std::move(args)}});
        ++c.instantEvents;
    }

    for (const TaskSpan &span : spans) {
        const Task &t = *span.task;
        const qint64 start = std::max(span.start, options.fromMs);
        const qint64 end = std::min(span.end, options.toMs);
        Json args = {{"task", s(t.id)}, {"status", s(t.status)}, {"transitions", t.historySize}};
        if (!t.type.isEmpty())
            args["type"] = s(t.type);
        if (!t.requesterId.isEmpty())
            args["requester"] = s(t.requesterId);
        if (!t.assigneeId.isEmpty())
            args["assignee"] = s(t.assigneeId);
        if (span.open)
            args["open"] = true;
        put({{"name", s(QStringLiteral("task %1").arg(t.type.isEmpty() ? t.id : t.type))},
             {"cat", "task"},
             {"ph", "X"},
             {"ts", ts(start)},
             {"dur", std::max<qint64>(end - start, 0) * 1000},
             {"pid", 1},
             {"tid", tidOf(taskThread(t))},
             {"args", std::move(args)}});
        ++c.taskEvents;
    }

    out.append("\n],\"displayTimeUnit\":\"ms\",\"otherData\":");
    Json other = {{"generator", "map-inspector " MAPI_VERSION}, {"startMs", origin}};
    if (filtered) {
        QStringList ids(options.agents.cbegin(), options.agents.cend());
        ids.sort();
        Json list = Json::array();
        for (const QString &id : std::as_const(ids))
            list.push_back(s(id));
        other["agents"] = std::move(list);
    }
    out.append(dump(other));
    out.append("}\n");
    if (!out.flush()) {
        if (error)
            *error = QStringLiteral("cannot write the Chrome trace: %1").arg(device.errorString());
        return false;
    }
    if (counts)
        *counts = c;
    return true;
}

template <typename Writer>
static bool toFile(const QString &path, QString *error, Writer &&write)
{
    QSaveFile file(path);
    if (!file.open(QIODevice::WriteOnly)) {
        if (error)
            *error = QStringLiteral("cannot write %1: %2").arg(path, file.errorString());
        return false;
    }
    if (!write(file))
        return false;
    if (!file.commit()) {
        if (error)
            *error = QStringLiteral("cannot write %1: %2").arg(path, file.errorString());
        return false;
    }
    return true;
}

bool writeChromeTrace(const SystemStore &store, const QString &path, const ChromeTraceOptions &options,
                      ChromeTraceCounts *counts, QString *error)
{
    return toFile(path, error, [&](QIODevice &device) { return writeChromeTrace(store, device, options, counts, error); });
}

// ---- CSV -----------------------------------------------------------------------------------------

bool csvTableFromName(const QString &name, CsvTable &table)
{
    if (name == QLatin1String("agents"))
        table = CsvTable::Agents;
    else if (name == QLatin1String("messages"))
        table = CsvTable::Messages;
    else if (name == QLatin1String("tasks"))
        table = CsvTable::Tasks;
    else
        return false;
    return true;
}

QByteArray csvField(const QString &text, bool neutraliseFormula)
{
    QByteArray bytes = text.toUtf8();
    if (neutraliseFormula && !bytes.isEmpty()
        && (bytes[0] == '=' || bytes[0] == '+' || bytes[0] == '-' || bytes[0] == '@' || bytes[0] == '\t' || bytes[0] == '\r'))
        bytes.prepend('\'');
    bool quote = false;
    for (const char ch : std::as_const(bytes))
        if (ch == ',' || ch == '"' || ch == '\n' || ch == '\r') {
            quote = true;
            break;
        }
    if (!quote && !bytes.isEmpty() && (bytes.front() == ' ' || bytes.back() == ' '))
        quote = true;
    if (!quote)
        return bytes;
    bytes.replace("\"", "\"\"");
    return '"' + bytes + '"';
}

static QString isoTime(qint64 ms)
{
    if (ms <= 0)
        return {};
    return QDateTime::fromMSecsSinceEpoch(ms).toUTC().toString(Qt::ISODateWithMs);
}

template <typename T>
static QString optionalNumber(const std::optional<T> &value)
{
    return value ? QString::number(*value) : QString();
}

qint64 writeCsv(const SystemStore &store, CsvTable table, QIODevice &device, QString *error)
{
    Output out(device);
    qint64 rows = 0;
    // Numbers and times are written as they are; text goes through csvField().
    auto row = [&](std::initializer_list<QByteArray> fields) {
        QByteArray line;
        bool firstField = true;
        for (const QByteArray &f : fields) {
            if (!firstField)
                line.append(',');
            firstField = false;
            line.append(f);
        }
        line.append("\r\n");
        out.append(line);
    };
    auto t = [](const QString &text) { return csvField(text); };
    auto n = [](const QString &number) { return csvField(number, false); };
    switch (table) {
    case CsvTable::Agents:
        row({"id", "name", "role", "state", "health", "placeholder", "unregistered", "parentId", "sessionId", "scopes",
             "registeredAt", "lastActivity", "lastHeartbeat", "messagesSent", "messagesReceived", "currentTaskId",
             "heartbeatStatus", "load", "progress", "tokensUsed", "costUsd", "lastErrorSeverity", "lastErrorMessage"});
        for (const Agent &a : store.agents()) {
            row({t(a.id), t(a.name), t(a.role), t(a.state), t(healthName(a.health)),
                 n(a.placeholder ? QStringLiteral("true") : QStringLiteral("false")),
                 n(a.unregistered ? QStringLiteral("true") : QStringLiteral("false")), t(a.parentId), t(a.sessionId),
                 t(a.scopes.join(QLatin1Char(';'))), n(isoTime(a.registeredAtMs)), n(isoTime(a.lastActivityMs)),
                 n(isoTime(a.lastHeartbeatMs)), n(QString::number(a.messagesSent)), n(QString::number(a.messagesReceived)),
                 t(a.currentTaskId), t(a.heartbeatStatus), n(optionalNumber(a.load)), n(optionalNumber(a.progress)),
                 n(optionalNumber(a.tokensUsed)), n(optionalNumber(a.costUsd)), t(a.lastErrorSeverity), t(a.lastErrorMessage)});
            ++rows;
        }
        break;
    case CsvTable::Messages:
        row({"id", "time", "eventId", "from", "fromRaw", "to", "toAgents", "scope", "status", "convention", "taskId",
             "correlationId", "priority", "payload"});
        for (size_t messageRow = 0; messageRow < store.messages().size(); ++messageRow) {
            const Message m = store.messages()[messageRow];
            row({t(m.id), n(isoTime(m.timestampMs)), t(m.eventId), t(m.fromAgentId), t(m.fromRaw), t(m.toDisplay),
                 t(m.toAgentIds.join(QLatin1Char(';'))), t(m.scopeId), t(m.status), t(conventionName(m.convention)),
                 t(m.taskId), t(m.correlationId), n(optionalNumber(m.priority)),
                 t(QString::fromUtf8(store.messagePayload(int(messageRow))))});
            ++rows;
        }
        break;
    case CsvTable::Tasks:
        row({"id", "type", "status", "requester", "assignee", "progress", "createdAt", "updatedAt", "transitions", "history"});
        for (const Task &task : store.tasks()) {
            QStringList history;
            for (const TaskTransition &tr : store.taskHistory(task))
                history << QStringLiteral("%1 %2%3").arg(isoTime(tr.timeMs), tr.status,
                                                         tr.agentId.isEmpty() ? QString() : QStringLiteral(" by ") + tr.agentId);
            row({t(task.id), t(task.type), t(task.status), t(task.requesterId), t(task.assigneeId),
                 n(optionalNumber(task.progress)), n(isoTime(task.createdAtMs)), n(isoTime(task.updatedAtMs)),
                 n(QString::number(task.historySize)), t(history.join(QStringLiteral("; ")))});
            ++rows;
        }
        break;
    }
    if (!out.flush()) {
        if (error)
            *error = QStringLiteral("cannot write the CSV: %1").arg(device.errorString());
        return -1;
    }
    return rows;
}

qint64 writeCsv(const SystemStore &store, CsvTable table, const QString &path, QString *error)
{
    qint64 rows = -1;
    if (!toFile(path, error, [&](QIODevice &device) {
            rows = writeCsv(store, table, device, error);
            return rows >= 0;
        }))
        return -1;
    return rows;
}

} // namespace mapi
