// File → Export: what the window writes besides traces. Thread: GUI thread (they read the store).
//   - Chrome trace-event JSON of the model (core/trace/TraceExport.h), optionally only the events
//     and tasks that involve some agents;
//   - CSV tables: core's writeCsv() directly;
//   - pictures of a view: PNG (raster, at the screen's pixel ratio) or SVG (vectors, through
//     QSvgGenerator), from a paint routine that draws the view in a rectangle of `size`.
#pragma once

#include <QSize>
#include <QStringList>

#include <functional>

class QPainter;

namespace mapi {
class SystemStore;
class TraceTimeline;
} // namespace mapi

namespace mapi::ui {

// `agentIds` empty: every event and task of the store (what ChromeTraceOptions exports). Else
// only the events of those agents, the messages they sent or received, and the tasks they
// requested or were assigned; the threads of other agents are left out unless such an event sits
// on them. `eventsWritten`: instant plus task events written.
bool exportChromeTrace(const SystemStore &store, const TraceTimeline *timeline, const QStringList &agentIds,
                       const QString &path, qint64 *eventsWritten, QString *error);

// SVG when `path` ends in .svg (case-insensitive), PNG otherwise.
bool exportPicture(const QString &path, const QSize &size, qreal devicePixelRatio, const QString &title,
                   const std::function<void(QPainter &)> &paint, QString *error);

} // namespace mapi::ui
