#include "common/TimeText.h"

#include <QDateTime>

namespace mapi::ui {

QString timeOfDay(qint64 ms, TimePrecision precision)
{
    if (ms <= 0)
        return {};
    return QDateTime::fromMSecsSinceEpoch(ms).toString(precision == TimePrecision::Milliseconds ? QStringLiteral("HH:mm:ss.zzz")
                                                                                                : QStringLiteral("HH:mm:ss"));
}

QString dateAndTime(qint64 ms)
{
    return ms > 0 ? QDateTime::fromMSecsSinceEpoch(ms).toString(QStringLiteral("yyyy-MM-dd HH:mm:ss")) : QString();
}

} // namespace mapi::ui
