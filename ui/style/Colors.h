// Colours shared by every view, so health reads the same everywhere (tables, graph, timeline).
#pragma once

#include "model/ModelTypes.h"

#include <QColor>

namespace mapi::ui {

inline QColor healthColor(Health h)
{
    switch (h) {
    case Health::Healthy: return QColor(0x2e, 0xa0, 0x43);       // green
    case Health::Late: return QColor(0xe0, 0xa1, 0x00);          // amber
    case Health::Unresponsive: return QColor(0xe0, 0x5d, 0x00);  // orange
    case Health::Suspended: return QColor(0x6b, 0x8e, 0xc9);     // steel blue
    case Health::Disconnected: return QColor(0x8a, 0x8a, 0x8a);  // grey
    case Health::Stopped: return QColor(0x55, 0x55, 0x55);       // dark grey
    case Health::Failed: return QColor(0xd0, 0x31, 0x2d);        // red
    case Health::Unknown: return QColor(0xa8, 0x9f, 0x91);       // warm grey: not heard from yet
    }
    return Qt::gray;
}

// An alert's severity (core/alerts: 0 info, 1 warning, 2 critical), in the health colours it
// stands closest to, so that a badge and the inbox read alike.
inline QColor alertSeverityColor(int severity)
{
    return severity >= 2 ? healthColor(Health::Failed) : severity == 1 ? healthColor(Health::Unresponsive) : healthColor(Health::Suspended);
}

} // namespace mapi::ui
