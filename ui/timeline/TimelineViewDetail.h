// Constants and helpers shared by TimelineView.cpp and TimelineViewPaint.cpp (the view's behaviour and its
// painting). Internal to the view: nothing else includes it.
#pragma once

#include "common/TimeText.h"
#include "model/SystemStore.h"

#include <QColor>
#include <QCoreApplication>
#include <QDateTime>
#include <QString>

#include <algorithm>
#include <cmath>

namespace mapi::ui::timeline_view {

constexpr int kStateStripHeight = 4;
constexpr int kMarkerSize = 7;
constexpr int kIndentPerLevel = 12;
constexpr int kAlertBarHeight = 3;      // an alert's bar along the top edge of a lane
constexpr int kAlertBarHit = 9;         // pixels below a lane's top edge where a click hits the bar
constexpr int kHitSlop = 4;              // pixels around a mark or an arrow that still hit it
constexpr double kWheelZoomStep = 1.25;  // per wheel notch
constexpr double kKeyZoomStep = 1.5;
constexpr int kDensitySaturation = 64;   // endpoints per pixel column drawn at full strength

// A server stamp (model time) for the ruler and tooltips, on the window's one clock
// (common/TimeText.h: this computer's), local time of day; below a millisecond the microseconds
// follow. `utcOffsetSeconds`: the local offset from UTC at that time. The ruler passes one offset
// for the whole window instead of asking the time zone database per label (which reads files).
inline QString formatTime(double serverMs, double precisionMs, int utcOffsetSeconds)
{
    const double timeMs = shownTime(serverMs);
    const qint64 wholeMs = qint64(std::floor(timeMs));
    const qint64 msOfDay = ((wholeMs + qint64(utcOffsetSeconds) * 1000) % 86400000 + 86400000) % 86400000;
    QString text = QStringLiteral("%1:%2:%3")
                       .arg(msOfDay / 3600000, 2, 10, QLatin1Char('0'))
                       .arg(msOfDay / 60000 % 60, 2, 10, QLatin1Char('0'))
                       .arg(msOfDay / 1000 % 60, 2, 10, QLatin1Char('0'));
    if (precisionMs < 1000)
        text += QStringLiteral(".%1").arg(msOfDay % 1000, 3, 10, QLatin1Char('0'));
    if (precisionMs < 1) {
        const int micros = std::clamp(int(std::lround((timeMs - double(wholeMs)) * 1000)), 0, 999);
        text += QStringLiteral("'%1").arg(micros, 3, 10, QLatin1Char('0'));
    }
    return text;
}

inline QString formatTime(double serverMs)
{
    return formatTime(serverMs, 1, QDateTime::fromMSecsSinceEpoch(qint64(shownTime(serverMs))).offsetFromUtc());
}

inline QString formatDuration(double ms)
{
    if (ms < 1)
        return QStringLiteral("%1 µs").arg(ms * 1000, 0, 'f', 0);
    if (ms < 1000)
        return QStringLiteral("%1 ms").arg(ms, 0, 'g', 3);
    if (ms < 120000)
        return QStringLiteral("%1 s").arg(ms / 1000, 0, 'g', 3);
    if (ms < 7200000)
        return QStringLiteral("%1 min").arg(ms / 60000, 0, 'g', 3);
    return QStringLiteral("%1 h").arg(ms / 3600000, 0, 'g', 3);
}

inline QColor mixed(const QColor &a, const QColor &b, double amountOfB)
{
    const double k = std::clamp(amountOfB, 0.0, 1.0);
    return QColor::fromRgbF(float(a.redF() * (1 - k) + b.redF() * k), float(a.greenF() * (1 - k) + b.greenF() * k),
                            float(a.blueF() * (1 - k) + b.blueF() * k));
}

template<typename List, typename T = typename List::value_type>
int firstAtOrAfter(const List &list, double timeMs, int from = 0)
{
    const auto at = std::lower_bound(list.begin() + std::clamp(from, 0, int(list.size())), list.end(), timeMs,
                                     [](const T &entry, double t) { return double(entry.timeMs) < t; });
    return int(at - list.begin());
}

// A message's short label: its convention, else the payload's own type.
inline QString messageLabel(ConventionKind convention, const QString &payloadType)
{
    QString label = conventionName(convention);
    if (label.isEmpty())
        label = payloadType;
    return label.size() > 18 ? label.left(17) + QChar(0x2026) : label;
}

inline QString agentName(const SystemStore &store, const QString &id)
{
    if (id.isEmpty())
        return QCoreApplication::translate("TimelineView", "(unknown)");
    return store.agentName(id);
}

} // namespace mapi::ui::timeline_view
