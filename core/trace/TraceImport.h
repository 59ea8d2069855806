// Import of message logs written in the envelope formats of the seed documents, so that
// systems that do not speak MAP (or logged before they did) open in the same model:
//
//   000  {message_id, type, from, to, timestamp, priority, payload, metadata}
//   002  {header{messageId, correlationId, type, source, destination, timestamp, priority},
//         body{action, payload, context}, trace{traceId, spanId, parentSpan}}
//   003  {id, from, to, type (TASK_ASSIGNMENT, ...), payload, metadata}
//   004  {protocol_version, message_id, timestamp, sender_id, receiver_id, message_type,
//         payload, metadata{correlation_id}}
//
// one JSON object per line, or one JSON array of objects. Each message becomes a synthetic MAP
// `message.sent` event whose payload is the whole envelope (PayloadConventions.h reads it there),
// preceded by an `agent.registered` event the first time a sender or receiver id is seen. The
// records then go through ProtocolPipeline like any recorded frame: the same store, the same
// tasks, heartbeats, errors and health.
#pragma once

#include "trace/TraceRecord.h"

#include <QSet>

#include <vector>

namespace mapi {

enum class ImportFormat { Unknown, Seed000, Seed002, Seed003, Seed004 };

QString importFormatName(ImportFormat format); // "seed-000", ...
ImportFormat detectImportFormat(const Json &object);
// The error for a file in no understood format, naming those that are.
QString unknownFormatError(const QString &path, const QString &detail = {});

// Parses "2026-11-21T09:08:43.230Z"-style strings and epoch numbers (seconds or milliseconds).
// Returns -1 when `value` is no time.
qint64 importTimeMs(const Json &value);

class SeedImporter
{
public:
    explicit SeedImporter(QString sourceName = {});

    // Converts one envelope (any of the four formats) into records appended to `out`.
    // Returns false, with `why`, when the object is no envelope (the caller reports the line).
    bool convert(const Json &object, std::vector<TraceRecord> &out, QString *why = nullptr);
    ImportFormat firstFormat() const { return m_first; }
    qint64 messages() const { return m_messages; }

private:
    void registerAgent(const QString &id, qint64 timeMs, std::vector<TraceRecord> &out);
    TraceRecord eventRecord(const Json &event, qint64 timeMs);

    QString m_source;
    QSet<QString> m_known;
    ImportFormat m_first = ImportFormat::Unknown;
    qint64 m_messages = 0;
    qint64 m_eventCounter = 0;
    qint64 m_lastTimeMs = -1;
    bool m_opened = false;
};

// Splits a JSON array, fed in pieces (lines), into the text of its elements. Scans bytes
// (strings, escapes, nesting), without recursion and without holding more than one element.
class JsonArraySplitter
{
public:
    // Feeds the next piece; complete elements are appended to `out` with their 1-based line.
    void feed(const char *data, qsizetype size, qint64 lineNumber, std::vector<std::pair<QByteArray, qint64>> &out);
    bool finished() const { return m_state == State::Done; }
    bool started() const { return m_state != State::Before; }
    bool error() const { return m_state == State::Error; }
    bool pending() const { return !m_current.isEmpty(); } // an unterminated element at the end

private:
    enum class State { Before, Between, InElement, Done, Error };
    State m_state = State::Before;
    QByteArray m_current;
    qint64 m_elementLine = 0;
    int m_depth = 0;       // nesting inside the current element
    bool m_inString = false;
    bool m_escaped = false;
};

} // namespace mapi
