#include "panels/TopologyPanel.h"

#include "common/FoldingBar.h"
#include "session/InspectorSession.h"
#include "session/SelectionHub.h"
#include "topology/TopologyView.h"

#include <QCompleter>
#include <QLabel>
#include <QLineEdit>
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
    for (QToolButton *b : {collapse, expand, relayout, fit, departed, legend})
        bar->addWidget(b);

    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(0);
    layout->addWidget(bar);
    layout->addWidget(m_view, 1);
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
    m_searchStatus->setText(m_view->focusAgent(text) ? QString() : tr("No agent matches"));
}

} // namespace mapi::ui
