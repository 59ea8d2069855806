// The replay bar's scrubber: a slider over the whole time range that also shows where the
// bookmarks are (ticks, their titles on hover), when alerts were open (thin bars along the top,
// red where a critical one was, amber where only warnings were) and, while viewing a live
// session's past, the live edge at its right end. Positions are fractions of the range (0 = start, 1 = end). GUI thread.
#pragma once

#include <QSlider>

#include <functional>
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
        int titleKey = -1;         // with no title: what the span titler is asked for, on hover
    };
    // Makes the title of a span that has none, from its titleKey, when a tooltip shows it:
    // thousands of spans (a storm's alerts) are then set without making thousands of strings.
    using SpanTitler = std::function<QString(int titleKey)>;
    void setSpanTitler(SpanTitler titler) { m_spanTitler = std::move(titler); }
    QString spanTitle(const Span &span) const
    {
        return span.title.isEmpty() && m_spanTitler ? m_spanTitler(span.titleKey) : span.title;
    }
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
    SpanTitler m_spanTitler;
    bool m_liveEdge = false;
};

} // namespace mapi::ui
