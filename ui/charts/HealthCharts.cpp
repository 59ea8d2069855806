#include "charts/HealthCharts.h"

#include "charts/HealthHistory.h"
#include "common/TimeText.h"
#include "style/Colors.h"
#include "style/Theme.h"

#include <QAreaSeries>
#include <QChart>
#include <QChartView>
#include <QDateTime>
#include <QDateTimeAxis>
#include <QEvent>
#include <QGridLayout>
#include <QLabel>
#include <QLineSeries>
#include <QValueAxis>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>

namespace mapi::ui {

namespace {

constexpr qint64 kMinimumSpanMs = 10'000;     // a single sample still gets a readable axis
constexpr int kChartMinimumHeight = 170;
constexpr int kTwoColumnWidth = 720;           // wide docks show the charts side by side
constexpr double kPixelsPerPoint = 2.0;        // series resolution: finer is not visible

QColor mix(const QColor &a, const QColor &b, double t)
{
    return QColor::fromRgbF(float(a.redF() + (b.redF() - a.redF()) * t), float(a.greenF() + (b.greenF() - a.greenF()) * t),
                            float(a.blueF() + (b.blueF() - a.blueF()) * t));
}

// Sets only what differs: every axis change re-lays out the whole chart (milliseconds each).
void setAxis(QValueAxis *axis, double top, int ticks, const QString &format)
{
    if (axis->min() != 0.0 || axis->max() != top)
        axis->setRange(0.0, top);
    if (axis->tickCount() != ticks)
        axis->setTickCount(ticks);
    if (axis->labelFormat() != format)
        axis->setLabelFormat(format);
}

// Range [0, top] with about four intervals of 1, 2 or 5 × 10^k; integer steps for counts.
// `prefix` goes before each label (a currency sign).
void setNiceRange(QValueAxis *axis, double maximum, bool integers, const QString &prefix = {})
{
    if (maximum <= 0.0) { // nothing yet: a plain 0..1 scale
        setAxis(axis, 1.0, 2, prefix + QStringLiteral("%.0f"));
        return;
    }
    const double raw = maximum / 4.0;
    const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
    double step = magnitude;
    for (double m : {1.0, 2.0, 5.0, 10.0}) {
        step = m * magnitude;
        if (step >= raw)
            break;
    }
    if (integers)
        step = std::max(1.0, std::round(step));
    const int intervals = std::max(1, int(std::ceil(maximum / step - 1e-9)));
    const int decimals = step >= 1.0 ? 0 : std::min(4, int(std::ceil(-std::log10(step) - 1e-9)));
    setAxis(axis, step * intervals, intervals + 1, prefix + QStringLiteral("%.%1f").arg(decimals));
}

QColor stateColor(StateGroup group, const QPalette &palette)
{
    switch (group) {
    case StateGroup::Idle: return healthColor(Health::Healthy);
    case StateGroup::Busy: return palette.color(QPalette::Highlight);
    case StateGroup::Suspended: return healthColor(Health::Suspended);
    case StateGroup::Stopped: return healthColor(Health::Stopped);
    case StateGroup::Failed: return healthColor(Health::Failed);
    case StateGroup::Other: return healthColor(Health::Disconnected);
    }
    return palette.color(QPalette::Text);
}

void setLineColor(QLineSeries *series, const QColor &color)
{
    QPen pen(color);
    pen.setWidthF(1.6);
    series->setPen(pen);
}

} // namespace

HealthCharts::HealthCharts(const HealthHistory *history, QWidget *parent)
    : QWidget(parent)
    , m_history(history)
{
    m_grid = new QGridLayout(this);
    m_grid->setContentsMargins(0, 0, 0, 0);
    m_grid->setSpacing(4);

    m_traffic = makeChart(tr("Traffic per second"), QStringLiteral("trafficChart"));
    m_events = addLine(m_traffic, tr("events"), QStringLiteral("eventsSeries"));
    m_messages = addLine(m_traffic, tr("messages"), QStringLiteral("messagesSeries"));

    m_states = makeChart(tr("Agents by state"), QStringLiteral("statesChart"));
    for (int g = 0; g < kStateGroupCount; ++g) {
        auto *top = new QLineSeries(m_states.view->chart());
        top->setObjectName(QStringLiteral("stateTop%1").arg(g));
        auto *area = new QAreaSeries(top, g == 0 ? nullptr : m_stateTops[size_t(g - 1)]);
        area->setName(stateGroupName(StateGroup(g)));
        m_states.view->chart()->addSeries(area);
        area->attachAxis(m_states.timeAxis);
        area->attachAxis(m_states.valueAxis);
        m_stateTops[size_t(g)] = top;
        m_stateAreas[size_t(g)] = area;
    }

    m_tasks = makeChart(tr("Task outcomes"), QStringLiteral("tasksChart"));
    m_completed = addLine(m_tasks, tr("completed"), QStringLiteral("completedSeries"));
    m_failed = addLine(m_tasks, tr("failed"), QStringLiteral("failedSeries"));

    m_usage = makeChart(tr("Reported usage"), QStringLiteral("usageChart"));
    m_costAxis = new QValueAxis(m_usage.view->chart());
    m_usage.view->chart()->addAxis(m_costAxis, Qt::AlignRight);
    m_tokens = addLine(m_usage, tr("tokens (thousands)"), QStringLiteral("tokensSeries"));
    m_cost = addLine(m_usage, tr("cost (USD)"), QStringLiteral("costSeries"), m_costAxis);
    m_usageBox = new QWidget(this);
    auto *usageLayout = new QVBoxLayout(m_usageBox);
    usageLayout->setContentsMargins(0, 0, 0, 0);
    m_noUsage = new QLabel(tr("No agent reports usage (tokens or cost)."), m_usageBox);
    m_noUsage->setObjectName(QStringLiteral("noUsageNote"));
    m_noUsage->setAlignment(Qt::AlignCenter);
    m_noUsage->setForegroundRole(QPalette::PlaceholderText);
    usageLayout->addWidget(m_usage.view);
    usageLayout->addWidget(m_noUsage);

    applyChartTheme();
    arrange();
    connect(history, &HealthHistory::samplesChanged, this, &HealthCharts::refresh);
    refresh();
}

HealthCharts::Chart HealthCharts::makeChart(const QString &title, const QString &objectName)
{
    Chart c;
    auto *chart = new QChart;
    chart->setTitle(title);
    chart->setMargins(QMargins(2, 2, 2, 2));
    chart->setBackgroundRoundness(0);
    chart->legend()->setAlignment(Qt::AlignBottom);
    c.timeAxis = new QDateTimeAxis(chart);
    c.timeAxis->setFormat(QStringLiteral("HH:mm:ss"));
    c.timeAxis->setTickCount(4);
    c.valueAxis = new QValueAxis(chart);
    chart->addAxis(c.timeAxis, Qt::AlignBottom);
    chart->addAxis(c.valueAxis, Qt::AlignLeft);
    c.view = new QChartView(chart, this);
    c.view->setObjectName(objectName);
    c.view->setRenderHint(QPainter::Antialiasing);
    c.view->setMinimumHeight(kChartMinimumHeight);
    return c;
}

QLineSeries *HealthCharts::addLine(Chart &chart, const QString &name, const QString &objectName, QValueAxis *valueAxis)
{
    auto *series = new QLineSeries(chart.view->chart());
    series->setName(name);
    series->setObjectName(objectName);
    chart.view->chart()->addSeries(series);
    series->attachAxis(chart.timeAxis);
    series->attachAxis(valueAxis ? valueAxis : chart.valueAxis);
    return series;
}

void HealthCharts::changeEvent(QEvent *event)
{
    QWidget::changeEvent(event);
    if (event->type() == QEvent::PaletteChange || event->type() == QEvent::ApplicationPaletteChange)
        applyChartTheme();
}

void HealthCharts::showEvent(QShowEvent *event)
{
    QWidget::showEvent(event);
    // A widget never shown receives no palette changes: catch up with the theme on showing.
    if (palette().color(QPalette::Base) != m_themedBase)
        applyChartTheme();
    if (m_dirty)
        refresh();
}

void HealthCharts::resizeEvent(QResizeEvent *event)
{
    QWidget::resizeEvent(event);
    arrange();
}

void HealthCharts::arrange()
{
    const int columns = width() >= kTwoColumnWidth ? 2 : 1;
    if (columns == m_columns)
        return;
    m_columns = columns;
    const QList<QWidget *> cells{m_traffic.view, m_states.view, m_tasks.view, m_usageBox};
    for (QWidget *cell : cells)
        m_grid->removeWidget(cell);
    for (int i = 0; i < int(cells.size()); ++i)
        m_grid->addWidget(cells[i], i / columns, i % columns);
}

// Chart themes replace fonts, backgrounds and series colours; ours are set again afterwards so
// the charts sit on the palette's base like the tables around them.
void HealthCharts::applyChartTheme()
{
    const QPalette pal = palette();
    const QColor base = pal.color(QPalette::Base);
    const QColor text = pal.color(QPalette::Text);
    m_themedBase = base;
    const QColor grid = mix(base, text, 0.15);
    const QColor axisLine = mix(base, text, 0.35);
    QFont titleFont = font();
    titleFont.setBold(true);
    QFont smallFont = font();
    smallFont.setPointSizeF(std::max(7.0, font().pointSizeF() - 1.0));

    for (Chart *c : {&m_traffic, &m_states, &m_tasks, &m_usage}) {
        QChart *chart = c->view->chart();
        chart->setTheme(isDarkTheme() ? QChart::ChartThemeDark : QChart::ChartThemeLight);
        chart->setBackgroundBrush(base);
        chart->setBackgroundPen(Qt::NoPen);
        chart->setTitleBrush(text);
        chart->setTitleFont(titleFont);
        chart->legend()->setLabelColor(text);
        chart->legend()->setFont(smallFont);
        c->view->setBackgroundBrush(base);
        for (QAbstractAxis *axis : chart->axes()) {
            axis->setLabelsBrush(text);
            axis->setLabelsFont(smallFont);
            axis->setLinePenColor(axisLine);
            axis->setGridLineColor(grid);
            axis->setShadesVisible(false);
        }
    }
    applySeriesColors();
}

void HealthCharts::applySeriesColors()
{
    const QPalette pal = palette();
    setLineColor(m_events, pal.color(QPalette::Text));
    setLineColor(m_messages, pal.color(QPalette::Highlight));
    for (int g = 0; g < kStateGroupCount; ++g) {
        const QColor color = stateColor(StateGroup(g), pal);
        QColor fill = color;
        fill.setAlpha(190);
        m_stateAreas[size_t(g)]->setBrush(fill);
        m_stateAreas[size_t(g)]->setPen(QPen(color, 1.0));
    }
    setLineColor(m_completed, healthColor(Health::Healthy));
    setLineColor(m_failed, healthColor(Health::Failed));
    setLineColor(m_tokens, pal.color(QPalette::Highlight));
    setLineColor(m_cost, healthColor(Health::Late));
    QPen costPen = m_cost->pen(); // dashed: cost often tracks tokens exactly and would hide it
    costPen.setStyle(Qt::DashLine);
    m_cost->setPen(costPen);
}

void HealthCharts::refresh()
{
    if (!isVisible()) {
        m_dirty = true; // painted when shown: nothing is drawn for a hidden dock
        return;
    }
    m_dirty = false;
    const std::deque<HealthSample> &samples = m_history->samples();
    // The window's one clock (common/TimeText.h): samples derived from events (a trace, the
    // journal) carry the server's stamps; live ones were taken on this computer's clock.
    const bool serverClock = m_history->showsDerived();
    const auto shown = [serverClock](qint64 ms) { return serverClock ? shownTime(ms) : ms; };
    const qsizetype n = qsizetype(samples.size());
    QList<QPointF> events, messages, completed, failed, tokens, cost;
    std::array<QList<QPointF>, kStateGroupCount> tops;
    for (QList<QPointF> *list : {&events, &messages, &completed, &failed, &tokens, &cost})
        list->reserve(n);
    for (QList<QPointF> &list : tops)
        list.reserve(n);

    // About one point per kPixelsPerPoint of plot: QtCharts strokes every series path on each
    // update, so 600 points in a 380 px plot would cost three times as much for nothing seen.
    // Groups are aligned on absolute time so they do not shift as the window slides; rates keep
    // each group's peak, counts its newest value.
    const double plotWidth = std::max(m_traffic.view->chart()->plotArea().width(), 100.0);
    const size_t budget = size_t(plotWidth / kPixelsPerPoint);
    // Groups of equal time: the span over the budget, and never finer than the newest samples
    // (a live series is finest at its newest end; HealthHistory thins the old ones).
    const size_t n1 = samples.size();
    const qint64 spacing = n1 > 1 ? std::max<qint64>(1, samples[n1 - 1].timeMs - samples[n1 - 2].timeMs) : 1000;
    const qint64 span = n1 > 1 ? samples[n1 - 1].timeMs - samples[0].timeMs : 0;
    const qint64 groupMs = std::max(spacing, (span + qint64(budget) - 1) / qint64(std::max<size_t>(1, budget)) + 1);

    double maxRate = 0, maxAgents = 0, maxTasks = 0, maxTokens = 0, maxCost = 0;
    bool usage = false;
    for (size_t i = 0; i < samples.size();) {
        const qint64 group = samples[i].timeMs / groupMs;
        double eventsPeak = 0, messagesPeak = 0;
        size_t next = i;
        for (; next < samples.size() && samples[next].timeMs / groupMs == group; ++next) {
            eventsPeak = std::max(eventsPeak, samples[next].eventsPerSecond);
            messagesPeak = std::max(messagesPeak, samples[next].messagesPerSecond);
        }
        const HealthSample &s = samples[next - 1];
        i = next;
        const double x = double(shown(s.timeMs));
        events << QPointF(x, eventsPeak);
        messages << QPointF(x, messagesPeak);
        maxRate = std::max({maxRate, eventsPeak, messagesPeak});
        int stacked = 0;
        for (int g = 0; g < kStateGroupCount; ++g) {
            stacked += s.agentsByState[size_t(g)];
            tops[size_t(g)] << QPointF(x, stacked);
        }
        maxAgents = std::max(maxAgents, double(stacked));
        completed << QPointF(x, s.tasksCompleted);
        failed << QPointF(x, s.tasksFailed);
        maxTasks = std::max({maxTasks, double(s.tasksCompleted), double(s.tasksFailed)});
        tokens << QPointF(x, double(s.tokensUsed) / 1000.0);
        cost << QPointF(x, s.costUsd);
        maxTokens = std::max(maxTokens, double(s.tokensUsed) / 1000.0);
        maxCost = std::max(maxCost, s.costUsd);
        usage = usage || s.usageReported;
    }
    m_events->replace(events);
    m_messages->replace(messages);
    for (int g = 0; g < kStateGroupCount; ++g)
        m_stateTops[size_t(g)]->replace(tops[size_t(g)]);
    m_completed->replace(completed);
    m_failed->replace(failed);
    m_tokens->replace(tokens);
    m_cost->replace(cost);

    const qint64 end = samples.empty() ? QDateTime::currentMSecsSinceEpoch() : samples.back().timeMs;
    const qint64 start = std::min(samples.empty() ? end : samples.front().timeMs, end - kMinimumSpanMs);
    const QDateTime from = QDateTime::fromMSecsSinceEpoch(samples.empty() ? start : shown(start)); // empty: local now
    const QDateTime to = QDateTime::fromMSecsSinceEpoch(samples.empty() ? end : shown(end));
    for (Chart *c : {&m_traffic, &m_states, &m_tasks, &m_usage})
        c->timeAxis->setRange(from, to);
    setNiceRange(m_traffic.valueAxis, maxRate, false);
    setNiceRange(m_states.valueAxis, maxAgents, true);
    setNiceRange(m_tasks.valueAxis, maxTasks, true);
    setNiceRange(m_usage.valueAxis, maxTokens, false);
    setNiceRange(m_costAxis, maxCost, false, QStringLiteral("$"));
    m_usage.view->setVisible(usage);
    m_noUsage->setVisible(!usage);
}

} // namespace mapi::ui
