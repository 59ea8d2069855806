#include "SystemsPanel.h"

#include "SystemView.h"
#include "SystemsAlertModel.h"
#include "alerts/AlertMonitor.h"
#include "common/TableSetup.h"
#include "controllers/TelemetryController.h"
#include "models/AlertModel.h"
#include "models/AlertOrder.h"
#include "models/HealthModel.h"
#include "panels/AlertsPanel.h"
#include "session/InspectorSession.h"

#include <QDateTime>
#include <QFont>
#include <QHeaderView>
#include <QLabel>
#include <QSplitter>
#include <QTableView>
#include <QVBoxLayout>

#include <cmath>

namespace mapi::ui {

SystemsModel::SystemsModel(std::function<QList<SystemView *>()> systems, std::function<SystemView *()> front, QObject *parent)
    : QAbstractTableModel(parent)
    , m_systems(std::move(systems))
    , m_front(std::move(front))
{
    reload();
}

int SystemsModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : int(m_rows.size());
}

int SystemsModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

SystemView *SystemsModel::systemAt(int row) const
{
    return row >= 0 && row < m_rows.size() ? m_rows.at(row).data() : nullptr;
}

void SystemsModel::reload()
{
    beginResetModel();
    m_rows.clear();
    for (SystemView *s : m_systems())
        m_rows << s;
    endResetModel();
}

void SystemsModel::refresh()
{
    if (!m_rows.isEmpty())
        Q_EMIT dataChanged(index(0, 0), index(int(m_rows.size()) - 1, ColumnCount - 1));
}

QString SystemsModel::stateText(const SystemView *system)
{
    const InspectorSession *s = system->session();
    QString state;
    switch (s->source()) {
    case InspectorSession::Source::None: return tr("Nothing open");
    case InspectorSession::Source::Trace: state = s->isLoadingTrace() ? tr("Loading trace") : tr("Trace"); break;
    case InspectorSession::Source::Live:
        state = clientStateName(s->clientState());
        if (s->isTimeTravelling())
            state += tr(" · viewing the past");
        break;
    }
    if (s->observerOnly())
        state += tr(" · observer");
    // Its live OpenTelemetry export, where an operator looks first; the tooltip says how it goes.
    if (const QString otlp = system->telemetry()->stateNote(); !otlp.isEmpty())
        state += QStringLiteral(" · ") + otlp;
    return state;
}

// Agents per health, from the store (a system behind the front one holds its views' changes:
// its Health panel's counts wait, the overview's do not).
static std::array<int, kHealthCount> healthCounts(const SystemView *system)
{
    std::array<int, kHealthCount> counts{};
    for (const Agent &agent : system->session()->store()->agents())
        ++counts[size_t(agent.health)];
    return counts;
}

QString SystemsModel::healthText(const SystemView *system)
{
    const std::array<int, kHealthCount> counts = healthCounts(system);
    QStringList parts;
    for (Health h : healthsWorstFirst())
        if (counts[size_t(h)] > 0)
            parts << QStringLiteral("%1 %2").arg(counts[size_t(h)]).arg(healthName(h));
    return parts.join(QStringLiteral(" · "));
}

QString SystemsModel::clockText(const SystemView *system)
{
    // The server's clock against this machine's, measured on live events (ClockSkew): shown
    // from one second (transit alone is well under that), signed: + means the server is ahead.
    const ConnectionInfo &c = system->session()->store()->connection();
    if (system->session()->source() != InspectorSession::Source::Live || c.clockSamples == 0)
        return QStringLiteral("—");
    if (std::abs(c.clockOffsetMs) < 1000)
        return tr("in step");
    return QStringLiteral("%1%2 s").arg(c.clockOffsetMs > 0 ? QLatin1Char('+') : QChar(0x2212))
        .arg(std::abs(double(c.clockOffsetMs)) / 1000.0, 0, 'f', 1);
}

QVariant SystemsModel::data(const QModelIndex &index, int role) const
{
    const SystemView *system = systemAt(index.row());
    if (!system || !index.isValid())
        return {};
    const InspectorSession *s = system->session();
    if (role == Qt::FontRole && system == m_front()) {
        QFont bold;
        bold.setBold(true);
        return bold;
    }
    if (role == Qt::ToolTipRole && (index.column() == SystemColumn || index.column() == StateColumn)) {
        const QString otlp = system->telemetry()->statusText(); // no header value, no endpoint path
        return otlp.isEmpty() ? QVariant() : QVariant(otlp);
    }
    if (role == Qt::ToolTipRole && index.column() == ClockColumn)
        return tr("The server's clock against this computer's, from %n live event(s); + is ahead. Ages and timeouts "
                  "of this system are on its own clock.", nullptr, s->store()->connection().clockSamples);
    if (role == Qt::TextAlignmentRole && (index.column() == AgentsColumn || index.column() == RateColumn
                                          || index.column() == AlertsColumn))
        return QVariant(Qt::AlignRight | Qt::AlignVCenter);
    if (role != Qt::DisplayRole)
        return {};
    switch (Column(index.column())) {
    case SystemColumn: return system->label();
    case StateColumn: return stateText(system);
    case AgentsColumn: return qint64(s->store()->agents().size());
    case HealthColumn: return healthText(system);
    case RateColumn:
        return s->source() == InspectorSession::Source::Live ? QVariant(qRound(s->eventRate())) : QVariant(QStringLiteral("—"));
    case AlertsColumn: {
        int critical = 0;
        const auto &open = system->alertMonitor()->openAlerts();
        for (const auto &[key, alert] : open)
            critical += alert.severity == AlertSeverity::Critical;
        return critical > 0 ? tr("%1 (%2 critical)").arg(open.size()).arg(critical) : QString::number(open.size());
    }
    case ClockColumn: return clockText(system);
    case ColumnCount: break;
    }
    return {};
}

QVariant SystemsModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return {};
    switch (Column(section)) {
    case SystemColumn: return tr("System");
    case StateColumn: return tr("State");
    case AgentsColumn: return tr("Agents");
    case HealthColumn: return tr("Health");
    case RateColumn: return tr("Events/s");
    case AlertsColumn: return tr("Open alerts");
    case ClockColumn: return tr("Server clock");
    case ColumnCount: break;
    }
    return {};
}

SystemsPanel::SystemsPanel(std::function<QList<SystemView *>()> systems, std::function<SystemView *()> front, QWidget *parent)
    : QWidget(parent)
    , m_systems(systems)
    , m_model(new SystemsModel(std::move(systems), std::move(front), this))
    , m_table(new QTableView(this))
    , m_alerts(new SystemsAlertModel(this))
    , m_alertOrder(new AlertOrder(this))
    , m_alertsTable(new QTableView(this))
    , m_alertsSummary(new QLabel(this))
    , m_lastTickMs(QDateTime::currentMSecsSinceEpoch())
{
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    auto *split = new QSplitter(Qt::Vertical, this);
    split->setObjectName(QStringLiteral("systemsSplit"));
    split->setChildrenCollapsible(false);
    layout->addWidget(split);

    connect(m_alerts, &SystemsAlertModel::groupingChanged, m_alertOrder, &AlertOrder::regroup);
    m_table->setObjectName(QStringLiteral("systemsTable"));
    m_table->setModel(m_model);
    setUpReadOnlyTable(m_table, QAbstractItemView::SingleSelection, SystemsModel::HealthColumn);
    split->addWidget(m_table);
    const auto choose = [this](const QModelIndex &index) {
        if (SystemView *system = m_model->systemAt(index.row()))
            Q_EMIT systemChosen(system);
    };
    connect(m_table, &QTableView::clicked, this, choose);
    connect(m_table, &QTableView::activated, this, choose);

    auto *inbox = new QWidget(split);
    auto *inboxLayout = new QVBoxLayout(inbox);
    inboxLayout->setContentsMargins(4, 2, 0, 0);
    m_alertsSummary->setObjectName(QStringLiteral("systemsAlertsSummary"));
    inboxLayout->addWidget(m_alertsSummary);
    m_alertOrder->setRowLocator([alerts = m_alerts](int row) { return alerts->alertRow(row); });
    m_alertOrder->setSourceModel(m_alerts);
    m_alertOrder->setDynamicSortFilter(true);
    m_alertOrder->sort(0);
    m_alertsTable->setObjectName(QStringLiteral("systemsAlertsTable"));
    m_alertsTable->setModel(m_alertOrder);
    setUpReadOnlyTable(m_alertsTable, QAbstractItemView::SingleSelection, SystemsAlertModel::FirstAlertColumn + AlertModel::ReasonColumn);
    const int em = fontMetrics().horizontalAdvance(QLatin1Char('m'));
    QHeaderView *header = m_alertsTable->horizontalHeader();
    const std::pair<int, int> widths[] = {{SystemsAlertModel::SystemColumn, 22},
                                          {SystemsAlertModel::FirstAlertColumn + AlertModel::SeverityColumn, 6},
                                          {SystemsAlertModel::FirstAlertColumn + AlertModel::KindColumn, 9},
                                          {SystemsAlertModel::FirstAlertColumn + AlertModel::AgentsColumn, 16},
                                          {SystemsAlertModel::FirstAlertColumn + AlertModel::WaitingColumn, 6}};
    for (const auto &[column, ems] : widths)
        header->resizeSection(column, ems * em);
    m_alertsTable->setToolTip(tr("Every system's open alerts; choose one to bring its system forward with the alert selected in its Alerts panel"));
    inboxLayout->addWidget(m_alertsTable, 1);
    split->addWidget(inbox);
    split->setStretchFactor(0, 1);
    split->setStretchFactor(1, 2);
    const auto chooseAlert = [this](const QModelIndex &index) {
        const int row = m_alertOrder->mapToSource(index).row();
        if (SystemView *system = m_alerts->systemAt(row))
            Q_EMIT alertChosen(system, m_alerts->keyAt(row));
    };
    connect(m_alertsTable, &QTableView::clicked, this, chooseAlert);
    connect(m_alertsTable, &QTableView::activated, this, chooseAlert);
    connect(m_alerts, &QAbstractItemModel::rowsInserted, this, &SystemsPanel::updateAlertsSummary);
    connect(m_alerts, &QAbstractItemModel::rowsRemoved, this, &SystemsPanel::updateAlertsSummary);
    connect(m_alerts, &QAbstractItemModel::modelReset, this, &SystemsPanel::updateAlertsSummary);

    m_clock.setInterval(1000);
    connect(&m_clock, &QTimer::timeout, this, &SystemsPanel::tick);
    m_clock.start();
    updateAlertsSummary();
}

void SystemsPanel::systemsChanged()
{
    m_model->reload();
    m_table->resizeColumnsToContents();
    m_alerts->setSystems(m_systems());
}

void SystemsPanel::tick()
{
    m_model->refresh();
    // A snooze that ended shows its row again (the systems' own panels do the same each second).
    const qint64 now = QDateTime::currentMSecsSinceEpoch();
    for (SystemView *system : m_systems()) {
        if (system->alerts() && system->alerts()->model()->snoozeEndedBetween(m_lastTickMs, now)) {
            m_alertOrder->refilter();
            break;
        }
    }
    m_lastTickMs = now;
    updateAlertsSummary();
}

void SystemsPanel::updateAlertsSummary()
{
    // As each system's Alerts panel counts: waiting = open, neither acknowledged nor snoozed.
    const qint64 now = QDateTime::currentMSecsSinceEpoch();
    int open = 0, waiting = 0, critical = 0, systemsWaiting = 0;
    for (SystemView *system : m_systems()) {
        if (!system->alerts())
            continue;
        const AlertModel::Counts c = system->alerts()->model()->counts(now);
        open += c.open;
        critical += c.critical;
        const int systemWaiting = c.open - c.acknowledged - c.snoozed;
        waiting += systemWaiting;
        systemsWaiting += systemWaiting > 0 ? 1 : 0;
    }
    m_alertsSummaryText = open == 0 ? tr("Open alerts, every system: none")
                                    : tr("Open alerts, every system: %1 open, %2 waiting in %3, %4 critical")
                                          .arg(open)
                                          .arg(waiting)
                                          .arg(tr("%n system(s)", nullptr, systemsWaiting))
                                          .arg(critical);
    m_alertsSummary->setText(m_alertsSummaryText);
}

} // namespace mapi::ui
