#include "panels/HealthPanel.h"

#include "common/TableSetup.h"
#include "charts/HealthCharts.h"
#include "charts/HealthHistory.h"
#include "models/HealthModel.h"
#include "session/InspectorSession.h"
#include "session/SelectionHub.h"
#include "style/Colors.h"

#include <QDateTime>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QLabel>
#include <QScopedValueRollback>
#include <QScrollArea>
#include <QSplitter>
#include <QTableView>
#include <QVBoxLayout>

namespace mapi::ui {

HealthPanel::HealthPanel(InspectorSession *session, SelectionHub *selection, QWidget *parent)
    : QWidget(parent)
    , m_session(session)
    , m_selection(selection)
    , m_model(new HealthModel(session->store(), this))
    , m_proxy(new HealthSortProxy(this))
    , m_history(new HealthHistory(session->store(), this))
{
    m_proxy->setSourceModel(m_model);

    m_summary = new QLabel(this);
    m_summary->setObjectName(QStringLiteral("healthSummary"));
    m_summary->setTextFormat(Qt::RichText);
    m_summary->setWordWrap(true);

    m_table = new QTableView(this);
    m_table->setObjectName(QStringLiteral("healthTable"));
    m_table->setModel(m_proxy);
    m_table->setSortingEnabled(true);
    m_table->sortByColumn(HealthModel::HealthColumn, Qt::AscendingOrder);
    setUpReadOnlyTable(m_table, QAbstractItemView::ExtendedSelection);
    m_table->setIconSize(QSize(10, 10)); // the health swatch beside each name
    // Fixed widths from the font: ResizeToContents would measure every row on each change.
    QHeaderView *header = m_table->horizontalHeader();
    // The names keep a readable width (a stretched first column shrank to "…" in the default,
    // narrow dock); the last column takes what is left, and a narrow dock scrolls sideways.
    header->setStretchLastSection(true);
    m_table->setTextElideMode(Qt::ElideMiddle); // "worker-1…sub-3" keeps both ends of a name
    const QFontMetrics metrics = fontMetrics();
    auto widthOf = [&metrics](const char *sample) { return metrics.horizontalAdvance(QLatin1String(sample)) + 14; };
    header->resizeSection(HealthModel::AgentColumn, widthOf("worker-10.sub-3") + 16); // + the swatch
    header->resizeSection(HealthModel::HealthColumn, widthOf("unresponsive"));
    header->resizeSection(HealthModel::HeartbeatColumn, widthOf("59 min"));
    header->resizeSection(HealthModel::StatusColumn, widthOf("ACTIVE"));
    header->resizeSection(HealthModel::LoadColumn, widthOf("100 %"));
    header->resizeSection(HealthModel::TasksColumn, widthOf("10 / 10"));
    header->setMinimumSectionSize(widthOf("M"));

    m_charts = new HealthCharts(m_history, this);
    auto *chartScroll = new QScrollArea(this);
    chartScroll->setWidget(m_charts);
    chartScroll->setWidgetResizable(true);
    chartScroll->setFrameShape(QFrame::NoFrame);
    chartScroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);

    auto *splitter = new QSplitter(Qt::Vertical, this);
    splitter->setChildrenCollapsible(false);
    splitter->addWidget(m_table);
    splitter->addWidget(chartScroll);
    splitter->setStretchFactor(0, 2);
    splitter->setStretchFactor(1, 3);

    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->setSpacing(4);
    layout->addWidget(m_summary);
    layout->addWidget(splitter, 1);

    connect(m_model, &HealthModel::healthCountsChanged, this, &HealthPanel::updateSummary);
    connect(m_model, &HealthModel::reportedColumnsChanged, this, &HealthPanel::updateColumns);
    connect(m_model, &QAbstractItemModel::modelReset, this, &HealthPanel::updateSummary);
    connect(m_table->selectionModel(), &QItemSelectionModel::selectionChanged, this, &HealthPanel::publishSelection);
    connect(m_selection, &SelectionHub::agentSelectionChanged, this, &HealthPanel::followSelection);
    // A trace's series are derived from the store's timestamps: once it has loaded, and again
    // when the replay moved the store to another instant (coalesced: a rebuild reads every
    // event, so not at each playback tick).
    m_replayRebuild.setSingleShot(true);
    m_replayRebuild.setInterval(250);
    connect(&m_replayRebuild, &QTimer::timeout, m_history, &HealthHistory::rebuildFromStore);
    connect(m_session, &InspectorSession::traceLoadFinished, this, [this](bool ok) {
        if (ok)
            m_history->rebuildFromStore();
    });
    connect(m_session, &InspectorSession::replayPositionChanged, this, [this] {
        if (!m_replayRebuild.isActive())
            m_replayRebuild.start();
    });
    // A live session viewed in the past: the live series goes on (sampled from the live
    // model) while the charts show the past; back at the live edge they show it again.
    m_history->setKeepLiveOnReset([session = m_session] { return session->isTimeTravelling(); });
    connect(m_session, &InspectorSession::timeTravelReady, this, [this](bool ok) {
        if (ok)
            m_history->rebuildFromStore();
    });
    connect(m_session, &InspectorSession::timeTravelChanged, this, [this](bool on) {
        if (!on)
            m_history->showLive();
    });
    m_clock.setObjectName(QStringLiteral("healthClock"));
    m_clock.setInterval(1000);
    connect(&m_clock, &QTimer::timeout, this, &HealthPanel::tick);
    m_clock.start();

    if (m_session->source() == InspectorSession::Source::Trace)
        m_history->rebuildFromStore();
    updateSummary();
    updateColumns();
}

void HealthPanel::updateColumns()
{
    for (HealthModel::Column column : {HealthModel::StatusColumn, HealthModel::LoadColumn, HealthModel::TasksColumn})
        m_table->setColumnHidden(column, !m_model->isReported(column));
}

void HealthPanel::tick()
{
    if (m_session->source() == InspectorSession::Source::Live && m_session->clientState() != ClientState::Closed)
        m_history->sampleLive(QDateTime::currentMSecsSinceEpoch(), *m_session->liveStore());
    m_model->refreshAges();
}

void HealthPanel::updateSummary()
{
    const std::array<int, kHealthCount> &counts = m_model->healthCounts();
    int total = 0;
    QStringList parts;
    for (Health health : healthsWorstFirst()) {
        const int count = counts[size_t(health)];
        total += count;
        if (count == 0)
            continue;
        parts << QStringLiteral("<span style=\"color:%1\">&#9679;</span>&nbsp;%2&nbsp;%3")
                     .arg(healthColor(health).name())
                     .arg(count)
                     .arg(healthName(health).toHtmlEscaped());
    }
    if (total == 0) {
        m_summary->setText(tr("No agents yet: connect to a MAP system or open a trace."));
        return;
    }
    const QString agents = total == 1 ? tr("1 agent") : tr("%1 agents").arg(total);
    m_summary->setText(QStringLiteral("<b>%1</b> &nbsp; ").arg(agents)
                       + parts.join(QStringLiteral(" &nbsp; ")));
}

void HealthPanel::publishSelection()
{
    if (m_following)
        return;
    QStringList ids;
    const QModelIndexList rows = m_table->selectionModel()->selectedRows(HealthModel::AgentColumn);
    for (const QModelIndex &index : rows)
        ids << index.data(HealthModel::AgentIdRole).toString();
    if (!ids.isEmpty())
        m_selection->selectAgents(ids, this);
}

void HealthPanel::followSelection(const QStringList &agentIds, QObject *origin)
{
    if (origin == this)
        return;
    const QScopedValueRollback<bool> noEcho(m_following, true);
    selectRowsOf(m_table, m_proxy, agentIds, [this](const QString &id) { return m_model->rowOfAgent(id); });
}

} // namespace mapi::ui
