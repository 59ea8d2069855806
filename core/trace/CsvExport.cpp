// CSV tables of a loaded model (ModelExport.h): agents, messages, tasks, conversation turns,
// checkpoints and ACP frames.
#include "trace/ModelExport.h"

#include "common/Redaction.h"
#include "map/Dialect.h"
#include "trace/ExportOutput.h"

#include <QDateTime>

#include <limits>

namespace mapi {

// ---- CSV -----------------------------------------------------------------------------------------

bool csvTableFromName(const QString &name, CsvTable &table)
{
    if (name == QLatin1String("agents"))
        table = CsvTable::Agents;
    else if (name == QLatin1String("messages"))
        table = CsvTable::Messages;
    else if (name == QLatin1String("tasks"))
        table = CsvTable::Tasks;
    else if (name == QLatin1String("turns"))
        table = CsvTable::Turns;
    else if (name == QLatin1String("checkpoints"))
        table = CsvTable::Checkpoints;
    else if (name == QLatin1String("acp"))
        table = CsvTable::Acp;
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

namespace {

// A CSV table, a slice at a time: the rows of the store when the writer was made.
class CsvWriter final : public ExportWriter
{
public:
    CsvWriter(const SystemStore &store, CsvTable table, QIODevice &device)
        : m_store(store)
        , m_table(table)
        , m_device(device)
        , m_out(device)
    {
        switch (table) {
        case CsvTable::Agents: m_rows = store.agents().size(); break;
        case CsvTable::Messages: // the kept ones: a live session trims its oldest
            m_rows = store.messages().size();
            m_next = store.messages().firstRow();
            break;
        case CsvTable::Tasks: m_rows = store.tasks().size(); break;
        case CsvTable::Turns: // (conversation row, turn index), in conversation order
            for (size_t c = 0; c < store.conversations().conversations().size(); ++c)
                for (size_t i = 0; i < store.conversations().conversations()[c].turns.size(); ++i)
                    m_places.push_back({c, i});
            m_rows = m_places.size();
            break;
        case CsvTable::Checkpoints: m_rows = store.checkpoints().checkpoints().size(); break;
        case CsvTable::Acp: // (stream row, exchange index), then (stream row, kNotice + notice index)
            for (size_t s = 0; s < store.acpStreams().streams().size(); ++s) {
                const AcpStream &stream = store.acpStreams().streams()[s];
                for (size_t i = 0; i < stream.exchanges.size(); ++i)
                    m_places.push_back({s, i});
                for (size_t i = 0; i < stream.notices.size(); ++i)
                    m_places.push_back({s, kNotice + i});
            }
            m_rows = m_places.size();
            break;
        }
        m_total = qint64(m_rows - m_next);
    }

    bool writeSome(qint64 maxRows) override
    {
        if (!m_headerWritten) {
            writeHeader();
            m_headerWritten = true;
        }
        for (qint64 budget = std::max<qint64>(1, maxRows); m_next < m_rows && budget > 0; ++m_next, --budget, ++m_done)
            writeRow(m_next);
        if (m_out.failed() || (m_next >= m_rows && !m_out.flush())) {
            m_error = QStringLiteral("cannot write the CSV: %1").arg(m_device.errorString());
            return false;
        }
        return m_next < m_rows;
    }

private:
    // Numbers and times are written as they are; text is redacted and goes through csvField().
    static QByteArray t(const QString &text) { return csvField(redactSecrets(text)); }
    static QByteArray n(const QString &number) { return csvField(number, false); }
    void row(std::initializer_list<QByteArray> fields)
    {
        QByteArray line;
        bool firstField = true;
        for (const QByteArray &f : fields) {
            if (!firstField)
                line.append(',');
            firstField = false;
            line.append(f);
        }
        line.append("\r\n");
        m_out.append(line);
    }

    void writeHeader()
    {
        switch (m_table) {
        case CsvTable::Agents:
            row({"id", "name", "role", "state", "health", "placeholder", "unregistered", "parentId", "sessionId", "scopes",
                 "registeredAt", "lastActivity", "lastHeartbeat", "messagesSent", "messagesReceived", "currentTaskId",
                 "heartbeatStatus", "load", "progress", "tokensUsed", "costUsd", "lastErrorSeverity", "lastErrorMessage"});
            break;
        case CsvTable::Messages:
            row({"id", "time", "eventId", "from", "fromRaw", "to", "toAgents", "scope", "status", "convention", "taskId",
                 "correlationId", "priority", "payload"});
            break;
        case CsvTable::Tasks:
            row({"id", "type", "status", "requester", "assignee", "progress", "createdAt", "updatedAt", "transitions", "history"});
            break;
        case CsvTable::Turns:
            row({"conversationId", "subject", "conversationType", "turnId", "time", "participant", "participantId", "contentType",
                 "threadId", "inReplyTo", "interceptedMessageId", "text", "textCut"});
            break;
        case CsvTable::Checkpoints:
            row({"id", "time", "agentId", "agent", "label", "workSession", "metadata"});
            break;
        case CsvTable::Acp:
            row({"streamId", "agent", "session", "kind", "method", "id", "time", "answeredAt", "text", "answer", "error"});
            break;
        }
    }

    void writeRow(size_t index)
    {
        switch (m_table) {
        case CsvTable::Agents: {
            const Agent &a = m_store.agents()[index];
            row({t(a.id), t(a.name), t(a.role), t(a.state), t(healthName(a.health)),
                 n(a.placeholder ? QStringLiteral("true") : QStringLiteral("false")),
                 n(a.unregistered ? QStringLiteral("true") : QStringLiteral("false")), t(a.parentId), t(a.sessionId),
                 t(toStringList(a.scopes).join(QLatin1Char(';'))), n(isoTime(a.registeredAtMs)), n(isoTime(a.lastActivityMs)),
                 n(isoTime(a.lastHeartbeatMs)), n(QString::number(a.messagesSent)), n(QString::number(a.messagesReceived)),
                 t(a.currentTaskId), t(a.heartbeatStatus), n(optionalNumber(a.load)), n(optionalNumber(a.progress)),
                 n(optionalNumber(a.tokensUsed)), n(optionalNumber(a.costUsd)), t(a.lastErrorSeverity), t(a.lastErrorMessage)});
            break;
        }
        case CsvTable::Messages: {
            if (!m_store.messages().isKept(index)) // trimmed by a live session while exporting
                break;
            const Message m = m_store.messages()[index];
            row({t(m.id), n(isoTime(m.timestampMs)), t(m.eventId), t(m.fromAgentId), t(m.fromRaw), t(m.toDisplay),
                 t(m.toAgentIds.join(QLatin1Char(';'))), t(m.scopeId), t(m.status), t(conventionName(m.convention)),
                 t(m.taskId), t(m.correlationId), n(optionalNumber(m.priority)),
                 t(QString::fromUtf8(m_store.messagePayload(int(index))))});
            break;
        }
        case CsvTable::Tasks: {
            const Task &task = m_store.tasks()[index];
            QStringList history;
            for (const TaskTransition &tr : m_store.taskHistory(task))
                history << QStringLiteral("%1 %2%3").arg(isoTime(tr.timeMs), tr.status,
                                                         tr.agentId.isEmpty() ? QString() : QStringLiteral(" by ") + tr.agentId);
            row({t(task.id), t(task.type), t(task.status), t(task.requesterId), t(task.assigneeId),
                 n(optionalNumber(task.progress)), n(isoTime(task.createdAtMs)), n(isoTime(task.updatedAtMs)),
                 n(QString::number(task.historySize)), t(history.join(QStringLiteral("; ")))});
            break;
        }
        case CsvTable::Turns: {
            const auto [c, i] = m_places[index];
            const Conversation &conv = m_store.conversations().conversations()[c];
            if (i >= conv.turns.size()) // dropped by the ledger's bound while exporting
                break;
            const ConversationTurn &turn = conv.turns[i];
            row({t(conv.id), t(conv.subject), t(conv.type), t(turn.id), n(isoTime(turn.timeMs)), t(m_store.participantName(turn.participant)),
                 t(turn.participant), t(turn.contentType), t(turn.threadId), t(turn.inReplyTo), t(turn.interceptedMessageId),
                 t(turn.text), n(turn.textCut ? QStringLiteral("true") : QStringLiteral("false"))});
            break;
        }
        case CsvTable::Checkpoints: {
            if (index >= m_store.checkpoints().checkpoints().size())
                break;
            const Checkpoint &cp = m_store.checkpoints().checkpoints()[index];
            row({t(cp.id), n(isoTime(cp.timeMs)), t(cp.agentId), t(m_store.agentName(cp.agentId)), t(cp.label), t(cp.workSessionId),
                 t(cp.metadata)});
            break;
        }
        case CsvTable::Acp: {
            const auto [s, i] = m_places[index];
            const AcpStream &stream = m_store.acpStreams().streams()[s];
            const QString agent = m_store.agentName(stream.agentId);
            if (i >= kNotice) {
                const AcpNotice &notice = stream.notices[i - kNotice];
                row({t(stream.streamId), t(agent), t(stream.sessionId), n(QStringLiteral("notification")), t(notice.update.isEmpty() ? notice.method : notice.update),
                     t(notice.toolCallId), n(isoTime(notice.timeMs)), n(QString()), t(notice.text), n(QString()), n(QStringLiteral("false"))});
            } else {
                const AcpExchange &x = stream.exchanges[i];
                row({t(stream.streamId), t(agent), t(stream.sessionId), n(QStringLiteral("request")), t(x.method), t(x.id),
                     n(isoTime(x.requestMs)), n(isoTime(x.responseMs)), t(x.text), t(x.answer),
                     n(x.error ? QStringLiteral("true") : QStringLiteral("false"))});
            }
            break;
        }
        }
    }

    // Places of the rows of the flattened tables (turns, ACP): ACP notices are offset by kNotice.
    static constexpr size_t kNotice = size_t(1) << 40;
    std::vector<std::pair<size_t, size_t>> m_places;

    const SystemStore &m_store;
    const CsvTable m_table;
    QIODevice &m_device;
    Output m_out;
    size_t m_rows = 0;
    size_t m_next = 0;
    bool m_headerWritten = false;
};

} // namespace

std::unique_ptr<ExportWriter> makeCsvWriter(const SystemStore &store, CsvTable table, QIODevice &device)
{
    return std::make_unique<CsvWriter>(store, table, device);
}

ErrorOr<qint64> writeCsv(const SystemStore &store, CsvTable table, QIODevice &device)
{
    CsvWriter writer(store, table, device);
    while (writer.writeSome(std::numeric_limits<qint64>::max())) {
    }
    if (!writer.error().isEmpty())
        return Failure{writer.error()};
    return writer.total();
}

ErrorOr<qint64> writeCsv(const SystemStore &store, CsvTable table, const QString &path)
{
    ErrorOr<qint64> rows = Failure{};
    QString error;
    const bool written = toFile(path, &error, [&](QIODevice &device) {
        rows = writeCsv(store, table, device);
        if (!rows)
            error = rows.error();
        return rows.ok();
    });
    if (!written)
        return Failure{error};
    return rows;
}

} // namespace mapi
