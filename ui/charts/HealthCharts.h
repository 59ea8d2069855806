// The Health panel's charts over a HealthHistory: traffic (events/s, messages/s), agents by
// state (stacked areas), task outcomes (completed vs failed) and usage (tokens, cost; replaced
// by a note while no agent reports usage).
//
// Thread: GUI thread. Series are replaced in one call per sample (at most 1 Hz) and only
// while the widget is visible; a hidden widget catches up when shown. Follows the palette:
// QChart::ChartThemeDark/Light by isDarkTheme(), backgrounds and text from the palette.
#pragma once

#include <QColor>
#include <QWidget>

#include <array>

class QAreaSeries;
class QChartView;
class QDateTimeAxis;
class QGridLayout;
class QLabel;
class QLineSeries;
class QValueAxis;

namespace mapi::ui {

class HealthHistory;

class HealthCharts : public QWidget
{
    Q_OBJECT
public:
    explicit HealthCharts(const HealthHistory *history, QWidget *parent = nullptr);

protected:
    void changeEvent(QEvent *event) override;
    void showEvent(QShowEvent *event) override;
    void resizeEvent(QResizeEvent *event) override;

private:
    struct Chart
    {
        QChartView *view = nullptr;
        QDateTimeAxis *timeAxis = nullptr;
        QValueAxis *valueAxis = nullptr;
    };
    Chart makeChart(const QString &title, const QString &objectName);
    QLineSeries *addLine(Chart &chart, const QString &name, const QString &objectName, QValueAxis *valueAxis = nullptr);
    void refresh();
    void applyChartTheme();
    void applySeriesColors();
    void arrange();

    const HealthHistory *m_history;
    bool m_dirty = true;
    QColor m_themedBase;       // palette base the charts were last themed for
    int m_columns = 0;
    QGridLayout *m_grid = nullptr;

    Chart m_traffic;
    QLineSeries *m_events = nullptr;
    QLineSeries *m_messages = nullptr;

    Chart m_states;
    std::array<QLineSeries *, 6> m_stateTops{};  // cumulative tops (not shown themselves)
    std::array<QAreaSeries *, 6> m_stateAreas{};

    Chart m_tasks;
    QLineSeries *m_completed = nullptr;
    QLineSeries *m_failed = nullptr;

    Chart m_usage;
    QValueAxis *m_costAxis = nullptr;
    QLineSeries *m_tokens = nullptr;
    QLineSeries *m_cost = nullptr;
    QWidget *m_usageBox = nullptr;
    QLabel *m_noUsage = nullptr;
};

} // namespace mapi::ui
