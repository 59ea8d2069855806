#include "trace/ModelExport.h"

#include "common/FileIdentity.h"
#include "trace/ExportOutput.h"

#include "common/Redaction.h"
#include "map/Dialect.h"
#include "trace/TraceTimeline.h"

#include <QDateTime>
#include <QElapsedTimer>
#include <QSaveFile>

#include <algorithm>
#include <cstring>

namespace mapi {

namespace {


QByteArray dump(const Json &json)
{
    return QByteArray::fromStdString(json.dump(-1, ' ', false, Json::error_handler_t::replace));
}

std::string s(const QString &text)
{
    return text.toStdString();
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
    size_t taskRow = 0; // a row, not a pointer: a live store's task list grows between slices
    qint64 start = 0;
    qint64 end = 0;
    bool open = false;
};

TaskSpan spanOf(size_t taskRow, const std::vector<TaskTransition> &history, qint64 createdAtMs, qint64 nowMs)
{
    TaskSpan span;
    span.taskRow = taskRow;
    span.start = createdAtMs;
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

// The Chrome trace, a slice at a time. The rows to write are those of the store when the writer
// was made (a live store appends more meanwhile: they are left out, so the file is one instant).
class ChromeTraceWriter final : public ExportWriter
{
public:
    ChromeTraceWriter(const SystemStore &store, QIODevice &device, const ChromeTraceOptions &options)
        : m_store(store)
        , m_device(device)
        , m_options(options)
        , m_out(device)
        , m_eventCount(store.events().size())
        , m_firstEvent(store.events().firstRow())
        , m_filtered(!options.agents.isEmpty())
    {
        // A live session's trimmed history is not exported; a trim during the export makes
        // those rows read as empty ones, which keepEvent() leaves out.
        m_scanned = m_written = m_firstEvent;
        m_total = scanWeight() + qint64(m_eventCount - m_firstEvent) + qint64(store.tasks().size());
    }

    bool writeSome(qint64 maxRows) override
    {
        qint64 budget = std::max<qint64>(1, maxRows);
        // 1. The origin (the earliest exported time) and, with an agent filter, the threads in use.
        for (; m_scanned < m_eventCount && budget > 0; ++m_scanned, --budget) {
            const EventEntry &e = m_store.events()[m_scanned];
            if (keepEvent(e)) {
                m_origin = std::min(m_origin, e.timestampMs);
                m_usedThreads.insert(tidOfEvent(e));
            }
        }
        m_done = qint64(m_scanned - m_firstEvent) / kScanRowsPerRow;
        if (m_scanned < m_eventCount)
            return true;
        if (!m_headerWritten) {
            // Tasks are few next to events: their spans in one go.
            const auto &tasks = m_store.tasks();
            for (size_t row = 0; row < tasks.size(); ++row) {
                const Task &task = tasks[row];
                const TaskSpan span = spanOf(row, m_store.taskHistory(task), task.createdAtMs, m_store.now());
                if (span.end < m_options.fromMs || span.start > m_options.toMs)
                    continue;
                if (m_filtered && !selected(task.requesterId) && !selected(task.assigneeId))
                    continue;
                m_spans.push_back(span);
                m_usedThreads.insert(tidOf(taskThread(task)));
                m_origin = std::min(m_origin, std::max(span.start, m_options.fromMs));
            }
            m_total = scanWeight() + qint64(m_eventCount - m_firstEvent) + qint64(m_spans.size());
            if (m_origin == std::numeric_limits<qint64>::max())
                m_origin = 0;
            writeHeader();
            m_headerWritten = true;
        }
        // 2. One instant event per model event.
        for (; m_written < m_eventCount && budget > 0; ++m_written, --budget, ++m_done)
            writeEvent(m_written);
        if (m_written < m_eventCount)
            return writing();
        // 3. One complete event per task.
        for (; m_spanWritten < m_spans.size() && budget > 0; ++m_spanWritten, --budget, ++m_done)
            writeSpan(m_spans[m_spanWritten]);
        if (m_spanWritten < m_spans.size())
            return writing();
        finish();
        return false;
    }

    ChromeTraceCounts counts() const { return m_counts; }

private:
    // Progress: the first pass reads each event's few fields, about a sixteenth of the time of
    // writing it, and weighs that much.
    static constexpr qint64 kScanRowsPerRow = 16;
    qint64 scanWeight() const { return qint64(m_eventCount - m_firstEvent) / kScanRowsPerRow; }

    bool writing()
    {
        if (!m_out.failed())
            return true;
        m_error = QStringLiteral("cannot write the Chrome trace: %1").arg(m_device.errorString());
        return false;
    }

    bool inRange(qint64 t) const { return t >= m_options.fromMs && t <= m_options.toMs; }
    bool selected(const QString &agentId) const { return m_options.agents.contains(agentId); }
    // Filters and threads read single fields of the message (no copy of it per event).
    bool hasMessage(const EventEntry &e) const
    {
        return e.messageIndex() >= 0 && m_store.messages().isKept(size_t(e.messageIndex()));
    }
    bool keepEvent(const EventEntry &e) const
    {
        if (!inRange(e.timestampMs))
            return false;
        const auto &events = m_store.events();
        const auto &messages = m_store.messages();
        if (!m_filtered || selected(events.agentId(e)))
            return true;
        if (!hasMessage(e))
            return false;
        const size_t m = size_t(e.messageIndex());
        if (selected(messages.fromAgentId(m)))
            return true;
        for (int i = 0; i < messages.recipientCount(m); ++i)
            if (selected(messages.recipient(m, i)))
                return true;
        return false;
    }
    int tidOf(const QString &agentId) const { return agentId.isEmpty() ? 0 : m_store.agentRow(agentId) + 1; }
    int tidOfEvent(const EventEntry &e) const
    {
        const auto &messages = m_store.messages();
        if (m_store.events().kind(e) == EventKind::MessageSent && hasMessage(e)
            && !messages.fromAgentId(size_t(e.messageIndex())).isEmpty())
            return tidOf(messages.fromAgentId(size_t(e.messageIndex())));
        return tidOf(m_store.events().agentId(e));
    }
    static const QString &taskThread(const Task &t) { return t.assigneeId.isEmpty() ? t.requesterId : t.assigneeId; }
    qint64 ts(qint64 ms) const { return (ms - m_origin) * 1000; }

    void put(const Json &event)
    {
        if (!m_first)
            m_out.append(",\n");
        m_first = false;
        m_out.append(redactSecrets(dump(event))); // names, ids and payload excerpts are text from the server
    }

    void writeHeader()
    {
        m_out.append("{\"traceEvents\":[\n");
        put({{"name", "process_name"}, {"ph", "M"}, {"pid", 1}, {"tid", 0}, {"args", {{"name", s(m_options.processName)}}}});
        put({{"name", "thread_name"}, {"ph", "M"}, {"pid", 1}, {"tid", 0}, {"args", {{"name", "system"}}}});
        put({{"name", "thread_sort_index"}, {"ph", "M"}, {"pid", 1}, {"tid", 0}, {"args", {{"sort_index", 0}}}});
        m_counts.threads = 1;
        for (size_t row = 0; row < m_store.agents().size(); ++row) {
            if (m_filtered && !m_usedThreads.contains(int(row) + 1))
                continue;
            const Agent &a = m_store.agents()[row];
            const QString label = a.name.isEmpty() || a.name == a.id ? a.id : QStringLiteral("%1 (%2)").arg(a.name, a.id);
            put({{"name", "thread_name"}, {"ph", "M"}, {"pid", 1}, {"tid", int(row) + 1}, {"args", {{"name", s(label)}}}});
            put({{"name", "thread_sort_index"}, {"ph", "M"}, {"pid", 1}, {"tid", int(row) + 1}, {"args", {{"sort_index", int(row) + 1}}}});
            ++m_counts.threads;
        }
    }

    void writeEvent(size_t i)
    {
        const auto &events = m_store.events();
        const EventEntry &e = events[i];
        if (!keepEvent(e))
            return;
        Json args = {{"eventId", s(events.eventId(i))}};
        if (const QString &agentId = events.agentId(e); !agentId.isEmpty())
            args["agent"] = s(agentId);
        if (hasMessage(e)) {
            const Message m = m_store.messages()[size_t(e.messageIndex())];
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
        if (events.kind(e) == EventKind::AgentStateChanged && m_options.timeline) {
            const QString state = stateFromFrame(m_options.timeline->frameForEvent(int(i)));
            if (!state.isEmpty())
                args["state"] = s(state);
        }
        put({{"name", s(events.type(e))},
             {"cat", eventFamilyName(eventFamily(events.kind(e)))},
             {"ph", "i"},
             {"s", "t"},
             {"ts", ts(e.timestampMs)},
             {"pid", 1},
             {"tid", tidOfEvent(e)},
             {"args", std::move(args)}});
        ++m_counts.instantEvents;
    }

    void writeSpan(const TaskSpan &span)
    {
        if (span.taskRow >= m_store.tasks().size())
            return;
        const Task &t = m_store.tasks()[span.taskRow];
        const qint64 start = std::max(span.start, m_options.fromMs);
        const qint64 end = std::min(span.end, m_options.toMs);
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
        ++m_counts.taskEvents;
    }

    void finish()
    {
        m_out.append("\n],\"displayTimeUnit\":\"ms\",\"otherData\":");
        Json other = {{"generator", "map-inspector " MAPI_VERSION}, {"startMs", m_origin}};
        if (m_filtered) {
            QStringList ids(m_options.agents.cbegin(), m_options.agents.cend());
            ids.sort();
            Json list = Json::array();
            for (const QString &id : std::as_const(ids))
                list.push_back(s(id));
            other["agents"] = std::move(list);
        }
        m_out.append(dump(other));
        m_out.append("}\n");
        if (!m_out.flush())
            m_error = QStringLiteral("cannot write the Chrome trace: %1").arg(m_device.errorString());
        m_done = m_total;
    }

    const SystemStore &m_store;
    QIODevice &m_device;
    ChromeTraceOptions m_options;
    Output m_out;
    const size_t m_eventCount;
    const size_t m_firstEvent;   // the oldest kept event (a live session trims its history)
    const bool m_filtered;
    qint64 m_origin = std::numeric_limits<qint64>::max();
    QSet<int> m_usedThreads;
    std::vector<TaskSpan> m_spans;
    size_t m_scanned = 0;
    size_t m_written = 0;
    size_t m_spanWritten = 0;
    bool m_headerWritten = false;
    bool m_first = true;
    ChromeTraceCounts m_counts;
};

} // namespace

std::unique_ptr<ExportWriter> makeChromeTraceWriter(const SystemStore &store, QIODevice &device,
                                                    const ChromeTraceOptions &options)
{
    return std::make_unique<ChromeTraceWriter>(store, device, options);
}

bool writeChromeTrace(const SystemStore &store, QIODevice &device, const ChromeTraceOptions &options,
                      ChromeTraceCounts *counts, QString *error)
{
    ChromeTraceWriter writer(store, device, options);
    while (writer.writeSome(std::numeric_limits<qint64>::max())) {
    }
    if (!writer.error().isEmpty()) {
        if (error)
            *error = writer.error();
        return false;
    }
    if (counts)
        *counts = writer.counts();
    return true;
}


bool writeChromeTrace(const SystemStore &store, const QString &path, const ChromeTraceOptions &options,
                      ChromeTraceCounts *counts, QString *error)
{
    return toFile(path, error, [&](QIODevice &device) { return writeChromeTrace(store, device, options, counts, error); });
}

// ---- export jobs --------------------------------------------------------------------------------

ExportJob::ExportJob(SystemStore *store, const QString &path, MakeWriter makeWriter, QObject *parent)
    : BackgroundJob(parent)
    , m_store(store)
    , m_path(path)
    , m_makeWriter(std::move(makeWriter))
{
}

ExportJob::~ExportJob()
{
    if (m_file)
        m_file->cancelWriting();
}

void ExportJob::start()
{
    const quint64 ticket = beginAttempt();
    // The trace the model reads its frames from is never replaced by an export of it.
    if (const QString same = outputOverwritesInput(m_path, m_store->frameFiles()); !same.isEmpty()) {
        end(JobOutcome::failed(same));
        return;
    }
    m_file = std::make_unique<QSaveFile>(m_path);
    if (!m_file->open(QIODevice::WriteOnly)) {
        end(JobOutcome::failed(QStringLiteral("cannot write %1: %2").arg(m_path, m_file->errorString())));
        return;
    }
    m_writer = m_makeWriter(*m_file);
    m_resetConnection = connect(m_store, &SystemStore::aboutToReset, this, [this] {
        end(JobOutcome::failed(QStringLiteral("the model was rebuilt while exporting (a seek back, or another trace); "
                                              "nothing was written: export again")));
    });
    Q_EMIT progress(0, m_writer->total());
    QMetaObject::invokeMethod(this, [this, ticket] { slice(ticket); }, Qt::QueuedConnection);
}

void ExportJob::requestStop()
{
    end(JobOutcome::cancel()); // the work is this thread's: it stops here
}

void ExportJob::slice(quint64 ticket)
{
    if (!isCurrent(ticket))
        return; // a slice posted for an attempt that has ended
    QElapsedTimer clock;
    clock.start();
    // Rows in small steps (a messages row may read its payload from the trace), the clock read between them.
    bool more = true;
    do
        more = m_writer->writeSome(64);
    while (more && clock.elapsed() < m_sliceMs);
    Q_EMIT progress(m_writer->done(), m_writer->total());
    if (more) {
        QMetaObject::invokeMethod(this, [this, ticket] { slice(ticket); }, Qt::QueuedConnection);
        return;
    }
    if (!m_writer->error().isEmpty()) {
        end(JobOutcome::failed(m_writer->error()));
        return;
    }
    m_writer.reset();
    if (!m_file->commit()) {
        end(JobOutcome::failed(QStringLiteral("cannot write %1: %2").arg(m_path, m_file->errorString())));
        return;
    }
    m_file.reset();
    end(JobOutcome::done());
}

void ExportJob::end(JobOutcome outcome)
{
    if (!isRunning())
        return;
    disconnect(m_resetConnection);
    m_writer.reset(); // before the file it writes to
    if (m_file) {
        m_file->cancelWriting();
        m_file.reset();
    }
    endAttempt(currentTicket(), std::move(outcome));
}

} // namespace mapi
