#include "replay/ScrubberSlider.h"

#include <QHelpEvent>
#include <QPainter>
#include <QStyle>
#include <QStyleOptionSlider>
#include <QToolTip>

#include <algorithm>
#include <cmath>

namespace mapi::ui {

namespace {

constexpr int kTickHalfWidth = 2;   // px: a bookmark tick is 5 px wide, easy to see and to hover
constexpr int kHoverReach = 4;      // px either side of a tick that still shows its title

} // namespace

ScrubberSlider::ScrubberSlider(QWidget *parent)
    : QSlider(Qt::Horizontal, parent)
{
    // Room under the handle for the ticks, and a width that a mouse can scrub with.
    setMinimumHeight(std::max(minimumSizeHint().height(), 22));
    setMinimumWidth(200);
}

void ScrubberSlider::setTicks(std::vector<Tick> ticks)
{
    m_ticks = std::move(ticks);
    update();
}

void ScrubberSlider::setSpans(std::vector<Span> spans)
{
    m_spans = std::move(spans);
    update();
}

void ScrubberSlider::setLiveEdge(bool on)
{
    if (m_liveEdge == on)
        return;
    m_liveEdge = on;
    update();
}

std::pair<int, int> ScrubberSlider::grooveSpan() const
{
    QStyleOptionSlider option;
    initStyleOption(&option);
    const QRect groove = style()->subControlRect(QStyle::CC_Slider, &option, QStyle::SC_SliderGroove, this);
    const QRect handle = style()->subControlRect(QStyle::CC_Slider, &option, QStyle::SC_SliderHandle, this);
    // The handle's centre travels from groove.left + handle/2 to groove.right - handle/2.
    return {groove.left() + handle.width() / 2, groove.right() - handle.width() / 2};
}

void ScrubberSlider::paintEvent(QPaintEvent *event)
{
    QSlider::paintEvent(event);
    if (m_ticks.empty() && !m_liveEdge && m_spans.empty())
        return;
    QPainter painter(this);
    const auto [left, right] = grooveSpan();
    if (!m_spans.empty() && right > left) {
        // Per pixel column, how many spans of each severity cover it (difference arrays).
        const int width = right - left + 1;
        std::vector<int> warnings(size_t(width) + 1, 0), criticals(size_t(width) + 1, 0);
        for (const Span &span : m_spans) {
            const int from = std::clamp(int(std::floor(span.from * (width - 1))), 0, width - 1);
            const int to = std::clamp(int(std::ceil(span.to * (width - 1))), from, width - 1);
            std::vector<int> &counts = span.critical ? criticals : warnings;
            ++counts[size_t(from)];
            --counts[size_t(to) + 1];
        }
        const QColor critical(0xd3, 0x2f, 0x2f), warning(0xf0, 0xa0, 0x20);
        int w = 0, c = 0;
        for (int x = 0; x < width; ++x) {
            w += warnings[size_t(x)];
            c += criticals[size_t(x)];
            if (c > 0 || w > 0)
                painter.fillRect(QRect(left + x, 1, 1, 3), c > 0 ? critical : warning);
        }
    }
    if (m_ticks.empty() && !m_liveEdge)
        return;
    const int bottom = height() - 1;
    const QColor bookmark = palette().color(isEnabled() ? QPalette::Active : QPalette::Disabled, QPalette::Highlight);
    for (const Tick &tick : m_ticks) {
        const int x = left + int(std::lround(tick.at * (right - left)));
        painter.fillRect(QRect(x - kTickHalfWidth, bottom - 5, 2 * kTickHalfWidth + 1, 6), bookmark);
    }
    if (m_liveEdge) {
        const QColor live(0xd3, 0x2f, 0x2f); // the red of "● Recording" and of live marks
        painter.fillRect(QRect(right - 1, 1, 3, height() - 2), live);
    }
}

bool ScrubberSlider::event(QEvent *event)
{
    if (event->type() == QEvent::ToolTip) {
        const auto *help = static_cast<QHelpEvent *>(event);
        const auto [left, right] = grooveSpan();
        QStringList titles;
        for (const Tick &tick : m_ticks) {
            const int x = left + int(std::lround(tick.at * (right - left)));
            if (std::abs(help->pos().x() - x) <= kTickHalfWidth + kHoverReach)
                titles << tr("Bookmark: %1").arg(tick.title);
        }
        if (right > left && help->pos().y() <= 6) {
            const double at = double(help->pos().x() - left) / double(right - left);
            const double reach = double(kHoverReach) / double(right - left);
            int shown = 0, more = 0;
            for (const Span &span : m_spans) {
                if (at < span.from - reach || at > span.to + reach)
                    continue;
                if (shown < 8) { // a tooltip, not a list: the Alerts panel has them all
                    titles << tr("Alert: %1").arg(spanTitle(span));
                    ++shown;
                } else {
                    ++more;
                }
            }
            if (more > 0)
                titles << tr("and %n more alert(s)", nullptr, more);
        }
        if (m_liveEdge && help->pos().x() >= right - kHoverReach)
            titles << tr("Live: the connection's newest moment");
        if (!titles.isEmpty()) {
            QToolTip::showText(help->globalPos(), titles.join(u'\n'), this);
            return true;
        }
    }
    return QSlider::event(event);
}

} // namespace mapi::ui
