// Time ↔ pixel mapping of the timeline's horizontal axis, and the ruler's tick spacing.
//
// A plain value type with no widget behind it, so tests exercise the maths directly.
// Units: times are milliseconds since the epoch, held as double so zoom levels below one
// millisecond per pixel still map exactly; x is in widget (viewport) pixels.
#pragma once

namespace mapi::ui {

struct TimelineAxis
{
    // Zoom limits: 10 µs per pixel (a millisecond, the timestamps' resolution, spans 100 px;
    // doubles near epoch milliseconds resolve ≈ 0.25 µs, so mappings stay within 0.03 px) and
    // 1 hour per pixel (a month of data still fits in a narrow window).
    static constexpr double kMinMsPerPixel = 0.01;
    static constexpr double kMaxMsPerPixel = 3600.0 * 1000.0;

    double startMs = 0;      // time at x == left
    double msPerPixel = 10;
    double left = 0;         // x of the plot area's left edge
    double width = 0;        // plot area width in pixels

    double mapTimeToX(double timeMs) const { return left + (timeMs - startMs) / msPerPixel; }
    double mapXToTime(double x) const { return startMs + (x - left) * msPerPixel; }
    double endMs() const { return startMs + width * msPerPixel; }
    double spanMs() const { return width * msPerPixel; }
    bool containsTime(double timeMs) const { return timeMs >= startMs && timeMs <= endMs(); }

    // Scales by `factor` (> 1 zooms in) keeping the time under `x` under `x`. The zoom limits
    // clamp the factor; the fixed point holds whatever the clamp did.
    void zoomAround(double x, double factor);
    // Moves the visible window by `dx` pixels (positive: towards later times).
    void panByPixels(double dx) { startMs += dx * msPerPixel; }
    // Fits [fromMs, toMs] exactly into the plot width (within the zoom limits, centred then).
    void showRange(double fromMs, double toMs);
    // Keeps the zoom and moves the window so that `timeMs` sits at `fraction` of the width.
    void placeTimeAt(double timeMs, double fraction) { startMs = timeMs - fraction * spanMs(); }
};

// The ruler's tick step: the smallest step that puts ticks at least `minPixels` apart at
// `msPerPixel`. Up to a second: 1, 2 or 5 × 10^k ms (k may be negative); above: clock steps
// (1, 2, 5, 10, 15, 30 s, the same in minutes, 1, 2, 3, 6, 12 h, whole days).
double timelineTickStepMs(double msPerPixel, double minPixels);

} // namespace mapi::ui
