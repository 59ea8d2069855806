// Internal to the OTLP import (OtlpImportRead.cpp reads the requests, OtlpImport.cpp orders
// what they say into events): the spans as they are kept between the two. Include only there.
#pragma once

#include "trace/Otlp.h"

#include <QString>

#include <optional>
#include <string>
#include <vector>

namespace mapi::otlpimport {

// A span event as finish() reads it: a message this inspector exported (map.message) or a task's
// transition (map.task.transition); the file's other events are not kept. Typed fields, not a
// JSON object per event: 700,000 events as objects took about 1 GB.
struct SpanEvent
{
    enum class Kind : quint8 { Message, TaskTransition };
    Kind kind = Kind::Message;
    bool fromMessage = false; // a transition a message made
    qint64 timeMs = 0;
    Json to;                  // map.message.to (null: absent)
    std::string address;      // map.message.address
    std::string id;           // map.message.id
    std::string payload;      // map.message.payload: its text as written (a JSON text, or any text)
    std::string status;       // map.task.status
    std::string agent;        // map.agent.id
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
    std::vector<SpanEvent> events;
    int statusCode = 0;
    QString statusMessage;
};

// An event to write, stamped with (time, order of making). The span events (most of them)
// become JSON only when their frame is written, from the span they are in: made at once, 577,000
// events took 870 MB of JSON objects.
enum class Made : quint8 { Ready, SpanMessage, TaskCreated, TaskStatus };
struct Pending
{
    qint64 timeMs;
    qint64 order;
    Json event;               // Ready: the event itself
    qint32 span = -1;         // otherwise: the span event it is made from
    qint32 spanEvent = -1;
    qint64 messageNumber = 0; // SpanMessage without an id of its own: the one it is given
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
    qint64 events = 0;
    qint64 dropped = 0;
    qint64 agentCount = 0;
    // After finish(): what next() writes, in order, and the owner of each span.
    std::vector<otlpimport::Pending> pending;
    std::vector<QString> owner;
    size_t nextPending = 0;
    bool openWritten = false;
    bool finished = false;
};

} // namespace mapi
