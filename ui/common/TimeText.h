// How times read in every panel: local time of day, from milliseconds since the epoch.
#pragma once

#include <QString>
#include <QtGlobal>

namespace mapi::ui {

enum class TimePrecision { Seconds, Milliseconds };

// "14:03:27" or "14:03:27.120"; empty for ms <= 0 (no time known).
QString timeOfDay(qint64 ms, TimePrecision precision = TimePrecision::Seconds);
// "2026-11-25 14:03:27" (a time that may be on another day); empty for ms <= 0.
QString dateAndTime(qint64 ms);

} // namespace mapi::ui
