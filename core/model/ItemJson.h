// One item of the model as a JSON document to read: every field the store keeps of an agent,
// scope, task, operator action, message, event or protocol problem, in a fixed key order, times
// as ISO 8601 UTC (null: never), absent values as null. The window's inspector shows these;
// nothing parses them back. Thread: the store's (they read it).
#pragma once

#include "model/SystemStore.h"

#include <nlohmann/json.hpp>

#include <optional>

namespace mapi {

using OrderedJson = nlohmann::ordered_json; // keeps the keys in the order written here

// Frames larger than this are neither parsed (frameJson() is null) nor re-indented for display.
// Parsing, building and dumping cost ≈25 ms per 100 KiB of frame on the GUI thread; 256 KiB keeps
// a click near 50 ms, and MAP frames are rarely above a few KiB.
constexpr qsizetype kMaxParsedFrameBytes = 256 * 1024;

// A frame as text: valid UTF-8 decoded; invalid bytes and control characters (other than tab,
// line feed and carriage return) as \xNN so that nothing is silently replaced. `hadEscapes`
// tells whether any were.
QString frameText(const QByteArray &bytes, bool *hadEscapes);
// The frame as JSON; nothing when it is not JSON, or too big or deep to parse here.
std::optional<OrderedJson> parseFrame(const QByteArray &frame);
// The frame as JSON when it parses, else as (escaped) text; null when empty or too large.
OrderedJson frameJson(const QByteArray &frame);

OrderedJson agentJson(const SystemStore &store, const Agent &agent);
OrderedJson scopeJson(const Scope &scope);
OrderedJson taskJson(const SystemStore &store, const Task &task); // with its history
OrderedJson actionJson(const SystemStore &store, const OperatorAction &action);
// Message `row` with its payload, the events that name it and the frame that carried it.
// `originEventRow` and `originEventFrame` (optional) receive that event's row (-1 when it is not
// in the model) and its frame, so that a caller showing the frame too reads it once (a loaded
// trace's frames are read from its file).
OrderedJson messageJson(const SystemStore &store, int row, int *originEventRow = nullptr,
                        QByteArray *originEventFrame = nullptr);
// Event `row` with `frame`, its frame as SystemStore::eventFrame(row) gives it.
OrderedJson eventJson(const SystemStore &store, int row, const QByteArray &frame);
OrderedJson problemJson(int row, const ProtocolProblem &problem);

} // namespace mapi
