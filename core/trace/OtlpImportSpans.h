// Internal to the OTLP import (OtlpImportRead.cpp reads the requests, OtlpImport.cpp orders
// what they say into events): the spans as they are kept between the two. Include only there.
#pragma once

#include "trace/Otlp.h"
#include "trace/OtlpImportSpool.h"

#include <QString>

#include <optional>
#include <string>
#include <vector>

namespace mapi::otlpimport {

// A span event as finish() reads it: a message this inspector exported (map.message) or a task's
// transition (map.task.transition); the file's other events are not kept. One row of a flat table
// (OtlpImporter::Impl::spanEvents), its texts in the spool: 700,000 events as structs of strings
// held about 400 MB (issue 45 item 4), as rows 22 MB.
struct SpanEvent
{
    enum class Kind : quint8 { Message, TaskTransition };
    qint64 timeMs = 0;
    // Its texts (TextSpool): a message's id, its recipients as written into its event (text, or
    // JSON when `toIsJson`) and its payload's text as written (a JSON text, or any text); a task
    // transition's status and agent.
    SpooledRecord texts;
    Kind kind = Kind::Message;
    bool fromMessage = false; // a transition a message made
    bool hasId = false;       // a message with an id of its own
    bool toIsJson = false;
};

struct Span
{
    std::string traceId;
    std::string spanId;
    std::string parentId;
    QString name;
    QString service;
    qint64 startMs = 0;
    qint64 endMs = 0;
    Json attributes;
    size_t firstEvent = 0; // its events: rows firstEvent … firstEvent + eventCount - 1 of the table
    quint32 eventCount = 0;
    int statusCode = 0;
    QString statusMessage;
};

// An event to write, stamped with (time, order of making). The span events (most of them)
// become JSON only when their frame is written, from their row and span: made at once, 577,000
// events took 870 MB of JSON objects.
enum class Made : quint8 { Ready, SpanMessage, TaskCreated, TaskStatus };
struct Pending
{
    qint64 timeMs = 0;
    quint32 order = 0;         // below kMaxSpans + kMaxEvents + agents and their reports
    quint32 item = 0;          // Ready: the event's index in Impl::ready; otherwise the span event's row
    quint32 span = 0;          // otherwise: the span it is in
    quint32 messageNumber = 0; // SpanMessage without an id of its own: the one it is given
    Made made = Made::Ready;
};

// An attribute's value as text (a string as it is, a number or a boolean as its JSON); empty when
// absent or another kind.
QString text(const Json &attrs, const char *key);
std::optional<double> number(const Json &attrs, const char *key);

} // namespace mapi::otlpimport

namespace mapi {

struct OtlpImporter::Impl
{
    QString source;
    std::vector<otlpimport::Span> spans;
    std::vector<otlpimport::SpanEvent> spanEvents; // the spans' events, span after span
    otlpimport::TextSpool spool;                   // their texts
    qint64 events = 0;
    qint64 dropped = 0;
    qint64 agentCount = 0;
    // After finish(): what next() writes, in order, and the owner of each span.
    std::vector<otlpimport::Pending> pending;
    std::vector<Json> ready; // the events made whole in finish(), each freed once written
    std::vector<QString> owner;
    size_t nextPending = 0;
    qint64 eventsWritten = 0;
    bool openWritten = false;
    bool finished = false;
};

} // namespace mapi
