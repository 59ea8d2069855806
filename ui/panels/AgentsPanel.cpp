#include "panels/AgentsPanel.h"

#include "common/TypingFilter.h"
#include "common/TableSetup.h"

#include "models/AgentFilter.h"
#include "models/AgentGroupsModel.h"
#include "models/AgentTableModel.h"
#include "session/InspectorSession.h"
#include "session/SelectionHub.h"
#include "style/Colors.h"

#include <QAction>
#include <QCheckBox>
#include <QComboBox>
#include <QSplitter>
#include <QClipboard>
#include <QGuiApplication>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QSignalBlocker>
#include <QMenu>
#include <QScopedValueRollback>
#include <QTableView>
#include <QVBoxLayout>

#include <set>

namespace mapi::ui {

namespace {

QString filterHelp()
{
    return AgentsPanel::tr(
        "<b>Filter agents</b> — terms separated by spaces must all match:<br>"
        "<code>role:worker</code> <code>state:busy</code> <code>health:late</code> "
        "<code>scope:squad-a</code> <code>parent:coordinator</code> <code>id:01M7</code> "
        "<code>task:t-42</code> <code>session:…</code> <code>is:departed</code> <code>system:B</code> (federation)<br>"
        "<code>name:~^worker-\\d+$</code> regular expression · <code>-state:stopped</code> negation · "
        "<code>name:\"two words\"</code> quotes · <code>health:late OR health:failed</code> either<br>"
        "A bare word matches name, role or id. Enter applies at once.");
}

} // namespace

AgentsPanel::AgentsPanel(InspectorSession *session, SelectionHub *selection, QWidget *parent)
    : QWidget(parent)
    , m_selection(selection)
    , m_model(new AgentTableModel(session->store(), this))
    , m_proxy(new AgentFilterProxy(this))
    , m_filterEdit(new QLineEdit(this))
    , m_showDeparted(new QCheckBox(tr("Show departed"), this))
    , m_countLabel(new QLabel(this))
    , m_view(new QTableView(this))
    , m_groups(new AgentGroupsModel(session->store(), this))
    , m_groupBy(new QComboBox(this))
    , m_groupsView(new QTableView(this))
{
    m_proxy->setSourceModel(m_model);

    m_filterEdit->setObjectName(QStringLiteral("agentFilter"));
    m_filterEdit->setPlaceholderText(tr("Filter, e.g. role:worker -state:stopped health:late OR health:failed"));
    m_filterEdit->setClearButtonEnabled(true);
    m_filterEdit->setToolTip(filterHelp());

    // Hidden by default: after a server restart every agent of the previous run is departed, and
    // listing them beside their successors of the same names doubles the list. The count says
    // how many are hidden, so that an agent that left is one click away, not silently gone.
    m_showDeparted->setObjectName(QStringLiteral("showDeparted"));
    m_showDeparted->setChecked(false);
    m_proxy->setShowDeparted(false);
    m_showDeparted->setToolTip(tr("Also list agents that unregistered, or that the server no longer lists (a restarted server's previous run)"));
    m_countLabel->setObjectName(QStringLiteral("agentCount"));
    m_countLabel->setWordWrap(true); // "39 of 40 · 1 selected · 1 departed hidden" must not widen a narrow dock

    m_view->setObjectName(QStringLiteral("agentsTable"));
    m_view->setModel(m_proxy);
    setUpReadOnlyTable(m_view, QAbstractItemView::ExtendedSelection);
    m_view->setSortingEnabled(true);
    m_view->sortByColumn(AgentTableModel::NameColumn, Qt::AscendingOrder);
    m_view->setIconSize(QSize(12, 12));
    m_view->setHorizontalScrollMode(QAbstractItemView::ScrollPerPixel);
    m_view->setContextMenuPolicy(Qt::CustomContextMenu);
    QHeaderView *header = m_view->horizontalHeader();
    header->setContextMenuPolicy(Qt::CustomContextMenu);
    // Widths from sample texts, so that name, health, state and role fit a dock of about 410 px
    // (the default layout at 1366×768) whatever the font; the rest is one scroll away.
    const QFontMetrics metrics = fontMetrics();
    const int swatch = m_view->iconSize().width() + 8;
    const struct { int column; const char *sample; int extra; } widths[] = {
        {AgentTableModel::NameColumn, "worker-10.sub-10", 0},   {AgentTableModel::HealthColumn, "unresponsive", swatch},
        {AgentTableModel::StateColumn, "suspended", 0},         {AgentTableModel::RoleColumn, "coordinator", 0},
        {AgentTableModel::ParentColumn, "worker-10.sub-10", 0}, {AgentTableModel::ScopesColumn, "squad-a, project", 0},
        {AgentTableModel::SessionColumn, "01M8GD5K", 0},        {AgentTableModel::LastActivityColumn, "59 min ago", 0},
        {AgentTableModel::TaskColumn, "task-000000-00", 0},     {AgentTableModel::TokensColumn, "1,000,000", 0},
        {AgentTableModel::CostColumn, "$1,000.00", 0},          {AgentTableModel::IdColumn, "01M8GD5K7YHW3N8Q2V6XJ4T0RA", 0},
        {AgentTableModel::SystemColumn, "system-b", 0},
    };
    for (const auto &w : widths)
        header->resizeSection(w.column, metrics.horizontalAdvance(QLatin1String(w.sample)) + 10 + w.extra);
    m_view->setColumnHidden(AgentTableModel::IdColumn, true);
    m_view->setColumnHidden(AgentTableModel::SystemColumn, true); // until another system's agent is listed

    // The count sits under the table so the filter box keeps its width in a narrow dock.
    // Groups (issue 44 item 4): counts and health per role, scope or parent, above the table; a
    // click lists a group's agents (the filter box says how).
    m_groupBy->setObjectName(QStringLiteral("agentGroupBy"));
    m_groupBy->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    m_groupBy->setMinimumContentsLength(8);
    m_groupBy->setToolTip(tr("Count the agents by role, by scope or by parent, with their health; a click on a group lists its agents"));
    m_groupBy->addItem(tr("No groups"), int(AgentGroupsModel::GroupBy::None));
    m_groupBy->addItem(tr("By role"), int(AgentGroupsModel::GroupBy::Role));
    m_groupBy->addItem(tr("By scope"), int(AgentGroupsModel::GroupBy::Scope));
    m_groupBy->addItem(tr("By parent"), int(AgentGroupsModel::GroupBy::Parent));
    m_groupsView->setObjectName(QStringLiteral("agentGroupsTable"));
    m_groupsView->setModel(m_groups);
    setUpReadOnlyTable(m_groupsView, QAbstractItemView::SingleSelection, AgentGroupsModel::GroupColumn);
    m_groupsView->hide();
    const auto showGrouping = [this](int index) {
        m_groups->setGroupBy(AgentGroupsModel::GroupBy(m_groupBy->itemData(index).toInt()));
        m_groupsView->setVisible(m_groups->groupBy() != AgentGroupsModel::GroupBy::None);
    };
    connect(m_groupBy, qOverload<int>(&QComboBox::activated), this, [this, showGrouping](int index) {
        m_groupingPicked = true;
        showGrouping(index);
    });
    const auto listGroup = [this](const QModelIndex &index) { setFilterText(m_groups->filter(index.row())); };
    connect(m_groupsView, &QTableView::clicked, this, listGroup);
    connect(m_groupsView, &QTableView::activated, this, listGroup); // Enter too
    // Once a second while shown: health moves with time alone; the size decides the grouping
    // until the operator picks one.
    m_groupsTick.setInterval(1000);
    connect(&m_groupsTick, &QTimer::timeout, this, [this, session, showGrouping] {
        if (!m_groupingPicked && m_groups->groupBy() == AgentGroupsModel::GroupBy::None
            && int(session->store()->agents().size()) > kGroupsAbove) {
            m_groupBy->setCurrentIndex(m_groupBy->findData(int(AgentGroupsModel::GroupBy::Scope)));
            showGrouping(m_groupBy->currentIndex());
        }
        if (m_groupsView->isVisible())
            m_groups->refresh();
    });
    m_groupsTick.start();
    connect(session, &InspectorSession::sourceReplaced, this, [this, showGrouping] {
        m_groupingPicked = false;
        m_groupBy->setCurrentIndex(0);
        showGrouping(0);
    });

    auto *top = new QHBoxLayout;
    top->addWidget(m_filterEdit, 1);
    top->addWidget(m_showDeparted);
    auto *bottom = new QHBoxLayout; // the grouping beside the count: the filter row keeps a narrow dock's width
    bottom->addWidget(m_countLabel, 1);
    bottom->addWidget(m_groupBy, 0, Qt::AlignTop);
    auto *split = new QSplitter(Qt::Vertical, this);
    split->setObjectName(QStringLiteral("agentsSplit"));
    split->setChildrenCollapsible(false);
    split->addWidget(m_groupsView);
    split->addWidget(m_view);
    split->setStretchFactor(1, 3);
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->setSpacing(4);
    layout->addLayout(top);
    layout->addWidget(split, 1);
    layout->addLayout(bottom);

    whenTypingSettles(m_filterEdit, [this] { applyFilter(); });
    connect(m_showDeparted, &QCheckBox::toggled, m_proxy, &AgentFilterProxy::setShowDeparted);

    connect(m_view->selectionModel(), &QItemSelectionModel::selectionChanged, this, &AgentsPanel::pushSelection);
    connect(m_selection, &SelectionHub::agentSelectionChanged, this, &AgentsPanel::mirrorSelection);
    // A click on an already selected row still brings that agent back into the inspector.
    connect(m_view, &QTableView::clicked, this, [this](const QModelIndex &index) {
        if (selectedRows().size() == 1)
            m_selection->focus(SelectionHub::Kind::Agent, index.data(AgentTableModel::AgentIdRole).toString(), this);
    });
    connect(m_view, &QWidget::customContextMenuRequested, this, &AgentsPanel::showContextMenu);
    connect(header, &QWidget::customContextMenuRequested, this, &AgentsPanel::showHeaderMenu);

    for (QAbstractItemModel *model : {static_cast<QAbstractItemModel *>(m_model), static_cast<QAbstractItemModel *>(m_proxy)}) {
        connect(model, &QAbstractItemModel::rowsInserted, this, &AgentsPanel::updateCount);
        connect(model, &QAbstractItemModel::rowsRemoved, this, &AgentsPanel::updateCount);
        connect(model, &QAbstractItemModel::modelReset, this, &AgentsPanel::updateCount);
    }
    updateCount();
    mirrorSelection(m_selection->selectedAgents(), nullptr);
}

void AgentsPanel::focusFilter()
{
    m_filterEdit->setFocus(Qt::ShortcutFocusReason);
    m_filterEdit->selectAll();
}

void AgentsPanel::setFilterText(const QString &query)
{
    {
        const QSignalBlocker quiet(m_filterEdit); // applied now, not again when typing would settle
        m_filterEdit->setText(query);
    }
    applyFilter();
}

QString AgentsPanel::filterText() const
{
    return m_filterEdit->text();
}

void AgentsPanel::applyFilter()
{
    const AgentFilter filter = AgentFilter::parse(m_filterEdit->text());
    if (!filter.isValid()) {
        // The previous filter stays applied; the box says why the new one is not.
        m_filterEdit->setStyleSheet(QStringLiteral("QLineEdit { border: 1px solid %1; border-radius: 3px; padding: 2px; }")
                                        .arg(healthColor(Health::Failed).name()));
        m_filterEdit->setToolTip(tr("<b>Not applied:</b> %1 (at character %2)<br><br>%3")
                                     .arg(filter.errorString().toHtmlEscaped())
                                     .arg(filter.errorPosition() + 1)
                                     .arg(filterHelp()));
        m_filterRejected = true;
        updateCount();
        return;
    }
    m_filterRejected = false;
    m_filterEdit->setStyleSheet(QString());
    m_filterEdit->setToolTip(filterHelp());
    m_proxy->setFilter(filter);
    updateCount();
}

std::set<int> AgentsPanel::selectedRows() const
{
    // From the selection's ranges rather than QItemSelectionModel::selectedRows(), which
    // would depend on every column (hidden ones included) being part of the selection.
    std::set<int> rows;
    const QItemSelection selection = m_view->selectionModel()->selection();
    for (const QItemSelectionRange &range : selection) {
        for (int row = range.top(); row <= range.bottom(); ++row)
            rows.insert(row);
    }
    return rows;
}

void AgentsPanel::pushSelection()
{
    updateCount();
    if (m_mirroring)
        return;
    QStringList ids;
    for (int row : selectedRows())
        ids << m_proxy->index(row, 0).data(AgentTableModel::AgentIdRole).toString();
    m_selection->selectAgents(ids, this);
}

void AgentsPanel::mirrorSelection(const QStringList &ids, QObject *origin)
{
    if (origin == this)
        return;
    const QScopedValueRollback<bool> noEcho(m_mirroring, true);
    selectRowsOf(m_view, m_proxy, ids, [this](const QString &id) { return m_model->rowOfAgent(id); });
    updateCount();
}

void AgentsPanel::showContextMenu(const QPoint &pos)
{
    const QModelIndex index = m_view->indexAt(pos);
    if (!index.isValid())
        return;
    QItemSelectionModel *selection = m_view->selectionModel();
    if (!selection->isRowSelected(index.row(), QModelIndex())) {
        selection->select(index, QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
        selection->setCurrentIndex(index, QItemSelectionModel::NoUpdate);
    }

    // The window owns the control actions (and keeps their enabled state and reasons up to
    // date); look them up from the top-level ancestor so a floating dock finds them too.
    QWidget *window = this;
    while (window->parentWidget())
        window = window->parentWidget();
    QMenu menu(this);
    menu.setToolTipsVisible(true); // a disabled action's tooltip says why
    for (const char *name : {"inject", "suspend", "resume", "stop"}) {
        if (QAction *action = window->findChild<QAction *>(QLatin1String(name))) {
            menu.addAction(action);
            if (qstrcmp(name, "inject") == 0)
                menu.addSeparator();
        }
    }
    if (!menu.isEmpty())
        menu.addSeparator();
    const QStringList ids = m_selection->selectedAgents();
    menu.addAction(tr("Copy agent id(s)", nullptr, int(ids.size())), this, [ids] {
        QGuiApplication::clipboard()->setText(ids.join(QLatin1Char('\n')));
    });
    menu.exec(m_view->viewport()->mapToGlobal(pos));
}

void AgentsPanel::showHeaderMenu(const QPoint &pos)
{
    QMenu menu(this);
    QHeaderView *header = m_view->horizontalHeader();
    for (int column = 0; column < AgentTableModel::ColumnCount; ++column) {
        QAction *action = menu.addAction(m_model->headerData(column, Qt::Horizontal).toString());
        action->setCheckable(true);
        action->setChecked(!header->isSectionHidden(column));
        action->setEnabled(column != AgentTableModel::NameColumn); // the name always stays
        connect(action, &QAction::toggled, this, [this, column](bool shown) { m_view->setColumnHidden(column, !shown); });
    }
    menu.exec(header->mapToGlobal(pos));
}

void AgentsPanel::updateCount()
{
    const int total = m_model->rowCount();
    const int shown = m_proxy->rowCount();
    QString text = shown == total ? tr("%n agent(s)", nullptr, total) : tr("%1 of %n", nullptr, total).arg(shown);
    const size_t selected = selectedRows().size();
    if (selected > 0)
        text += tr(" · %1 selected").arg(int(selected));
    if (m_filterRejected)
        text += tr(" · previous filter");
    if (!m_proxy->showDeparted()) {
        int departed = 0;
        for (int row = 0; row < total; ++row) // 10,000 agents: a few µs, once per change batch
            if (const Agent *agent = m_model->agentAt(row); agent && agent->unregistered)
                ++departed;
        if (departed > 0)
            text += tr(" · %n departed hidden", nullptr, departed);
    }
    m_countLabel->setText(text);
    // The System column comes once another system's agent does (federation), beside the name, then
    // stays the operator's to hide or move.
    if (!m_systemColumnOffered) {
        for (int row = 0; row < total && !m_systemColumnOffered; ++row)
            if (const Agent *agent = m_model->agentAt(row); agent && !AgentTableModel::originSystem(*agent).isEmpty())
                m_systemColumnOffered = true;
        if (m_systemColumnOffered) { // beside the name, where a narrow dock still shows it
            QHeaderView *header = m_view->horizontalHeader();
            header->moveSection(header->visualIndex(AgentTableModel::SystemColumn), 1);
            m_view->setColumnHidden(AgentTableModel::SystemColumn, false);
        }
    }
}

} // namespace mapi::ui
