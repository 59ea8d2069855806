#include "panels/TopologyPanel.h"

#include "common/FoldingBar.h"
#include "session/InspectorSession.h"
#include "session/SelectionHub.h"
#include "model/SystemStore.h"
#include "topology/GroupOverview.h"
#include "topology/TopologyView.h"

#include <QComboBox>
#include <QStackedWidget>
#include <QTimer>

#include <QCompleter>
#include <QLabel>
#include <QLineEdit>
#include <QLocale>
#include <QSpinBox>
#include <QStringListModel>
#include <QToolBar>
#include <QToolButton>
#include <QVBoxLayout>

namespace mapi::ui {

TopologyPanel::TopologyPanel(InspectorSession *session, SelectionHub *selection, QWidget *parent)
    : QWidget(parent)
    , m_session(session)
    , m_selection(selection)
    , m_view(new TopologyView(session, selection, this))
    , m_overview(new GroupOverview(session->store(), this))
    , m_pages(new QStackedWidget(this))
    , m_search(new QLineEdit(this))
    , m_searchStatus(new QLabel(this))
    , m_hops(new QSpinBox(this))
    , m_completions(new QStringListModel(this))
{
    setObjectName(QStringLiteral("topologyPanel"));

    m_search->setObjectName(QStringLiteral("topologySearch"));
    m_search->setPlaceholderText(tr("Find agent by name or id…"));
    m_search->setClearButtonEnabled(true);
    m_search->setToolTip(tr("Type a name or id, Enter to select the agent and centre on it"));
    m_search->setMinimumWidth(220);
    auto *completer = new QCompleter(m_completions, this);
    completer->setCaseSensitivity(Qt::CaseInsensitive);
    completer->setFilterMode(Qt::MatchContains);
    completer->setMaxVisibleItems(12);
    m_search->setCompleter(completer);
    connect(m_search, &QLineEdit::returnPressed, this, &TopologyPanel::runSearch);
    connect(completer, qOverload<const QString &>(&QCompleter::activated), this, &TopologyPanel::runSearch);
    connect(m_search, &QLineEdit::textEdited, m_searchStatus, &QLabel::clear);
    connect(m_view, &TopologyView::searchTermsChanged, this, [this] { m_completions->setStringList(m_view->searchTerms()); });
    m_completions->setStringList(m_view->searchTerms());

    m_searchStatus->setObjectName(QStringLiteral("topologySearchStatus"));
    m_searchStatus->setForegroundRole(QPalette::PlaceholderText);

    m_hops->setObjectName(QStringLiteral("topologyHops"));
    m_hops->setRange(0, 9);
    m_hops->setSpecialValueText(tr("off"));
    m_hops->setSuffix(tr(" hops"));
    m_hops->setToolTip(tr("Dim everything further than N hops from the selected agents\n"
                          "(a hop: parent, child, or message partner). 0 = off."));
    connect(m_hops, qOverload<int>(&QSpinBox::valueChanged), m_view, &TopologyView::setNeighbourhoodHops);
    auto *hopsLabel = new QLabel(tr("&Neighbourhood:"), this);
    hopsLabel->setBuddy(m_hops);

    auto button = [this](const char *name, const QString &text, const QString &tip) {
        auto *b = new QToolButton(this);
        b->setObjectName(QLatin1String(name));
        b->setText(text);
        b->setToolTip(tip);
        b->setAutoRaise(true);
        return b;
    };
    QToolButton *fit = button("topologyFit", tr("Fit"), tr("Show the whole system (0)"));
    QToolButton *relayout = button("topologyRelayout", tr("Re-layout"),
                                   tr("Lay the whole tree out tidily again. New agents never move the others;\n"
                                      "this does, once, on request."));
    QToolButton *collapse = button("topologyCollapse", tr("Collapse"),
                                   tr("Collapse every subtree below the top agents (double-click a node to toggle one)"));
    QToolButton *expand = button("topologyExpand", tr("Expand all"), tr("Show every agent"));
    QToolButton *legend = button("topologyLegend", tr("Legend"), tr("Show or hide the legend"));
    legend->setCheckable(true);
    legend->setChecked(true);
    connect(fit, &QToolButton::clicked, m_view, [this] { m_view->zoomToFit(true); });
    connect(relayout, &QToolButton::clicked, m_view, &TopologyView::relayout);
    connect(collapse, &QToolButton::clicked, m_view, &TopologyView::collapseBelowRoots);
    connect(expand, &QToolButton::clicked, m_view, &TopologyView::expandAll);
    connect(legend, &QToolButton::toggled, m_view, &TopologyView::setLegendVisible);

    // Groups: a large system's agents aggregated by scope, subtree or role (GroupOverview).
    m_groups = button("topologyGroups", tr("Groups"),
                      tr("Show the agents aggregated into groups (their counts, health and trouble), or the agent graph.\n"
                         "Double-click a group to open it in the graph."));
    m_groups->setCheckable(true);
    connect(m_groups, &QToolButton::clicked, this, &TopologyPanel::showGroups);
    m_groupBy = new QComboBox(this);
    m_groupBy->setObjectName(QStringLiteral("topologyGroupBy"));
    m_groupBy->setToolTip(tr("What the groups are: the agents' most specific scope, the subtree below a top agent, or the role"));
    m_groupBy->addItem(tr("by scope"), int(GroupOverview::GroupBy::Scope));
    m_groupBy->addItem(tr("by subtree"), int(GroupOverview::GroupBy::Subtree));
    m_groupBy->addItem(tr("by role"), int(GroupOverview::GroupBy::Role));
    connect(m_groupBy, qOverload<int>(&QComboBox::activated), this, [this](int index) {
        m_overview->setGroupBy(GroupOverview::GroupBy(m_groupBy->itemData(index).toInt()));
        showGroups(true);
    });
    connect(m_overview, &GroupOverview::groupActivated, this, &TopologyPanel::openGroup);

    QToolButton *departed = button("topologyShowDeparted", tr("Departed"),
                                   tr("Also draw subtrees whose agents all departed (the previous run of a restarted\n"
                                      "server, say). A departed agent with present children is always drawn, greyed."));
    departed->setCheckable(true);
    connect(departed, &QToolButton::toggled, m_view, &TopologyView::setShowDeparted);

    // A tool bar, not a row of widgets: what does not fit folds into its » menu, so that the
    // panel (and the window) can be narrow without buttons overlapping.
    QToolBar *bar = foldingBar(this, QStringLiteral("topologyBar"));
    m_search->setMinimumWidth(140);
    bar->addWidget(m_search);
    bar->addWidget(m_searchStatus);
    bar->addSeparator();
    bar->addWidget(hopsLabel);
    bar->addWidget(m_hops);
    addStretch(bar);
    bar->addWidget(m_groups);
    bar->addWidget(m_groupBy);
    bar->addSeparator();
    for (QToolButton *b : {collapse, expand, relayout, fit, departed, legend})
        bar->addWidget(b);

    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(0);
    layout->addWidget(bar);
    m_pages->addWidget(m_view);
    m_pages->addWidget(m_overview);
    layout->addWidget(m_pages, 1);

    // Once a second: a system that grows past kGroupsAbove is shown as groups, one that shrinks
    // below it (another source) as a graph, until the operator picks.
    m_sizeCheck = new QTimer(this);
    m_sizeCheck->setInterval(1000);
    connect(m_sizeCheck, &QTimer::timeout, this, &TopologyPanel::followSize);
    m_sizeCheck->start();
    connect(session, &InspectorSession::sourceReplaced, this, [this] {
        m_operatorPicked = false; // another system (not a view of this one's past): its size decides again
        followSize();
    });
    followSize();
}

void TopologyPanel::followSize()
{
    if (m_operatorPicked)
        return;
    int agents = 0;
    for (const Agent &agent : m_session->store()->agents())
        agents += !agent.unregistered;
    if (agents > kGroupsAbove && !showsGroups())
        switchTo(true);
    else if (agents < kGraphBelow && showsGroups())
        switchTo(false);
}

void TopologyPanel::showGroups(bool groups)
{
    m_operatorPicked = true;
    switchTo(groups);
}

void TopologyPanel::switchTo(bool groups)
{
    m_groups->setChecked(groups);
    m_pages->setCurrentWidget(groups ? static_cast<QWidget *>(m_overview) : m_view); // shown: it counts (showEvent)
}

bool TopologyPanel::showsGroups() const
{
    return m_pages->currentWidget() == m_overview;
}

void TopologyPanel::openGroup(const QStringList &agentIds, const QString &title)
{
    showGroups(false);
    m_selection->selectAgents(agentIds, this);
    m_view->zoomToAgents(agentIds);
    m_searchStatus->setText(tr("%1 (%2 agents) · Groups to go back").arg(title, QLocale().toString(agentIds.size())));
}

void TopologyPanel::setAlertBadges(const QHash<QString, int> &severityByAgent)
{
    m_view->setAlertBadges(severityByAgent);
    m_overview->setAlertBadges(severityByAgent);
}

void TopologyPanel::focusSearch()
{
    m_search->setFocus(Qt::ShortcutFocusReason);
    m_search->selectAll();
}

void TopologyPanel::clearSearch()
{
    m_search->clear();
    m_searchStatus->clear();
}

void TopologyPanel::runSearch()
{
    const QString text = m_search->text().trimmed();
    if (text.isEmpty())
        return;
    if (showsGroups() && m_view->hasAgent(text)) // an agent is shown in the graph
        showGroups(false);
    m_searchStatus->setText(m_view->focusAgent(text) ? QString() : tr("No agent matches"));
}

} // namespace mapi::ui
