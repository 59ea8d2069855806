// The replay bar's scrubber: a slider over the whole time range that also shows where the
// bookmarks are (ticks, their titles on hover), when alerts were open (thin bars along the top,
// red where a critical one was, amber where only warnings were) and, while viewing a live
// session's past, the live edge at its right end. Positions are fractions of the range (0 = start, 1 = end). GUI thread.
#pragma once

#include <QSlider>

#include <vector>

namespace mapi::ui {

class ScrubberSlider : public QSlider
{
    Q_OBJECT
public:
    explicit ScrubberSlider(QWidget *parent = nullptr);

    struct Tick
    {
        double at = 0;   // 0..1 of the range
        QString title;   // shown on hover
    };
    void setTicks(std::vector<Tick> ticks);
    const std::vector<Tick> &ticks() const { return m_ticks; }
    struct Span
    {
        double from = 0, to = 1;   // 0..1 of the range
        bool critical = false;
        QString title;             // shown on hover ("failed: worker-2.sub-1")
    };
    // Painting and hovering cost O(spans + width): spans are summed per pixel column, so that
    // thousands of open alerts do not slow a repaint.
    void setSpans(std::vector<Span> spans);
    const std::vector<Span> &spans() const { return m_spans; }
    // The range's end is the live edge (time travel in a live session): drawn and named.
    void setLiveEdge(bool on);
    bool liveEdge() const { return m_liveEdge; }

    // Where the groove runs, in this widget's coordinates: x of fraction 0 and of fraction 1.
    std::pair<int, int> grooveSpan() const;

protected:
    void paintEvent(QPaintEvent *event) override;
    bool event(QEvent *event) override; // tooltips: the bookmark under the pointer

private:
    std::vector<Tick> m_ticks;
    std::vector<Span> m_spans;
    bool m_liveEdge = false;
};

} // namespace mapi::ui
