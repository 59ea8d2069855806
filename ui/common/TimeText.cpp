#include "common/TimeText.h"

#include <QDateTime>

namespace mapi::ui {

namespace {
qint64 g_shownOffsetMs = 0; // GUI thread only (TimeText.h)
}

void setShownClockOffset(qint64 serverMinusLocalMs)
{
    g_shownOffsetMs = serverMinusLocalMs;
}

qint64 shownClockOffset()
{
    return g_shownOffsetMs;
}

qint64 shownTime(qint64 serverMs)
{
    return serverMs <= 0 ? serverMs : serverMs - g_shownOffsetMs;
}

double shownTime(double serverMs)
{
    return serverMs <= 0 ? serverMs : serverMs - double(g_shownOffsetMs);
}

QString timeOfDay(qint64 ms, TimePrecision precision, Clock clock)
{
    if (ms <= 0)
        return {};
    return QDateTime::fromMSecsSinceEpoch(clock == Clock::Server ? shownTime(ms) : ms)
        .toString(precision == TimePrecision::Milliseconds ? QStringLiteral("HH:mm:ss.zzz") : QStringLiteral("HH:mm:ss"));
}

QString dateAndTime(qint64 ms, Clock clock)
{
    return ms > 0 ? QDateTime::fromMSecsSinceEpoch(clock == Clock::Server ? shownTime(ms) : ms).toString(QStringLiteral("yyyy-MM-dd HH:mm:ss"))
                  : QString();
}

} // namespace mapi::ui
