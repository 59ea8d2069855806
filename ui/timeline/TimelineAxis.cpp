#include "timeline/TimelineAxis.h"

#include <algorithm>
#include <cmath>

namespace mapi::ui {

void TimelineAxis::zoomAround(double x, double factor)
{
    if (!(factor > 0))
        return;
    const double fixedTime = mapXToTime(x);
    msPerPixel = std::clamp(msPerPixel / factor, kMinMsPerPixel, kMaxMsPerPixel);
    startMs = fixedTime - (x - left) * msPerPixel;
}

void TimelineAxis::showRange(double fromMs, double toMs)
{
    if (toMs < fromMs)
        std::swap(fromMs, toMs);
    const double pixels = std::max(width, 1.0);
    msPerPixel = std::clamp((toMs - fromMs) / pixels, kMinMsPerPixel, kMaxMsPerPixel);
    startMs = (fromMs + toMs) / 2 - pixels * msPerPixel / 2;
}

double timelineTickStepMs(double msPerPixel, double minPixels)
{
    const double minStep = std::max(msPerPixel * minPixels, 1e-9);
    if (minStep <= 1000) {
        double decade = std::pow(10.0, std::floor(std::log10(minStep)));
        for (;;) {
            for (const double multiple : {1.0, 2.0, 5.0}) {
                if (decade * multiple >= minStep * (1 - 1e-12))
                    return decade * multiple;
            }
            decade *= 10;
        }
    }
    // Above a second, steps people read on a clock: seconds, minutes, hours, days.
    static constexpr double kClockSteps[] = {
        1e3,    2e3,    5e3,    10e3,   15e3,   30e3,                      // seconds
        60e3,   120e3,  300e3,  600e3,  900e3,  1800e3,                    // minutes
        3600e3, 7200e3, 10800e3, 21600e3, 43200e3, 86400e3,               // hours, a day
    };
    for (const double step : kClockSteps) {
        if (step >= minStep)
            return step;
    }
    return std::ceil(minStep / 86400e3) * 86400e3;
}

} // namespace mapi::ui
