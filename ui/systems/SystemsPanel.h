// The Systems overview: one row per system the window holds (a live connection or a trace):
// its state, agents by health, events per second, open alerts and the server's clock against
// ours; a system that exports to OpenTelemetry says so in its state ("· OTLP", "· OTLP dropping")
// and, in its row's tooltip, where to and how many spans were sent and dropped. The row of the system in front is bold; choosing a row (click, Enter) brings that system
// to the front. Refreshed once a second (the figures it shows move no faster that an operator
// reads them) and when systems come and go. Below it, every system's open alerts in one inbox
// (SystemsAlertModel, in the order of an Alerts panel), the system named on each row; choosing
// one brings its system to the front with the alert selected in its Alerts panel, where the
// operator acts on it. GUI thread.
#pragma once

#include <QAbstractTableModel>
#include <QList>
#include <QPointer>
#include <QTimer>
#include <QWidget>

#include <functional>

class QLabel;
class QTableView;

namespace mapi::ui {

class AlertOrder;
class SystemView;
class SystemsAlertModel;

class SystemsModel : public QAbstractTableModel
{
    Q_OBJECT
public:
    enum Column { SystemColumn, StateColumn, AgentsColumn, HealthColumn, RateColumn, AlertsColumn, ClockColumn, ColumnCount };
    // `systems`: the window's systems, in their order; `front`: the one shown.
    SystemsModel(std::function<QList<SystemView *>()> systems, std::function<SystemView *()> front, QObject *parent = nullptr);

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

    SystemView *systemAt(int row) const;
    // Rows again (systems came or went), or only their figures (the clock).
    void reload();
    void refresh();

    // What a row says, for the model and for tests: "live · observer · OTLP", "12 ok · 1 failed", "+90.0 s".
    static QString stateText(const SystemView *system);
    static QString healthText(const SystemView *system);
    static QString clockText(const SystemView *system);

private:
    std::function<QList<SystemView *>()> m_systems;
    std::function<SystemView *()> m_front;
    QList<QPointer<SystemView>> m_rows;
};

class SystemsPanel : public QWidget
{
    Q_OBJECT
public:
    SystemsPanel(std::function<QList<SystemView *>()> systems, std::function<SystemView *()> front, QWidget *parent = nullptr);

    SystemsModel *model() const { return m_model; }
    QTableView *table() const { return m_table; }
    QTableView *alertsTable() const { return m_alertsTable; }
    SystemsAlertModel *alertsModel() const { return m_alerts; }
    QString alertsSummary() const { return m_alertsSummaryText; }
    // Systems came or went, or another is in front.
    void systemsChanged();

Q_SIGNALS:
    void systemChosen(mapi::ui::SystemView *system);
    // A row of the every-system inbox: its system and the alert's key (AlertModel::KeyRole).
    void alertChosen(mapi::ui::SystemView *system, const QString &key);

private:
    void tick();
    void updateAlertsSummary();

    std::function<QList<SystemView *>()> m_systems;
    SystemsModel *m_model;
    QTableView *m_table;
    SystemsAlertModel *m_alerts;
    AlertOrder *m_alertOrder;
    QTableView *m_alertsTable;
    QLabel *m_alertsSummary;
    QString m_alertsSummaryText; // what m_alertsSummary says
    qint64 m_lastTickMs = 0;
    QTimer m_clock; // 1 Hz
};

} // namespace mapi::ui
