// How times read in every panel: local time of day, from milliseconds since the epoch.
//
// One clock for the whole window (issue 43 item 4): this computer's. A system's model keeps its
// server's stamps (events, messages, tasks, agents' activity: Clock::Server); the window shows
// them less the offset measured for the system in front (server minus local, ms:
// SystemStore::connection().clockOffsetMs), which MainWindow sets when a system comes to the
// front or its estimate moves. Stamps taken here (arrivals, protocol problems, actions sent:
// Clock::Local) are shown as they are. Only the front system's panels are ever painted, so one
// offset at a time is enough. GUI thread only.
#pragma once

#include <QString>
#include <QtGlobal>

namespace mapi::ui {

enum class TimePrecision { Seconds, Milliseconds };
enum class Clock { Server, Local };

void setShownClockOffset(qint64 serverMinusLocalMs);
qint64 shownClockOffset();
// A server stamp on this computer's clock (ms <= 0, "no time known", stays as it is).
qint64 shownTime(qint64 serverMs);
double shownTime(double serverMs);

// "14:03:27" or "14:03:27.120"; empty for ms <= 0 (no time known).
QString timeOfDay(qint64 ms, TimePrecision precision = TimePrecision::Seconds, Clock clock = Clock::Server);
// "2026-11-25 14:03:27" (a time that may be on another day); empty for ms <= 0.
QString dateAndTime(qint64 ms, Clock clock = Clock::Server);

} // namespace mapi::ui
