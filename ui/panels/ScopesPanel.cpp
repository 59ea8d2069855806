#include "panels/ScopesPanel.h"

#include "common/TableSetup.h"
#include "models/ScopeTreeModel.h"
#include "session/InspectorSession.h"
#include "session/SelectionHub.h"

#include <QHeaderView>
#include <QTreeView>
#include <QVBoxLayout>

namespace mapi::ui {

ScopesPanel::ScopesPanel(InspectorSession *session, SelectionHub *selection, QWidget *parent)
    : QWidget(parent)
    , m_selection(selection)
    , m_model(new ScopeTreeModel(session->store(), this))
    , m_view(new QTreeView(this))
{
    m_view->setObjectName(QStringLiteral("scopesTree"));
    m_view->setModel(m_model);
    setUpReadOnlyTree(m_view, QAbstractItemView::SingleSelection);
    m_view->setIconSize(QSize(12, 12));
    m_view->setToolTip(tr("Click a scope to inspect it, a member to select that agent (Enter does the same)"));
    QHeaderView *header = m_view->header();
    header->setStretchLastSection(false);
    header->setSectionResizeMode(ScopeTreeModel::NameColumn, QHeaderView::Stretch);
    // A width from the font, not ResizeToContents: that measured the column's rows again on each
    // store update (30 Hz), a visible share of the GUI thread with 1,000 agents.
    header->setSectionResizeMode(ScopeTreeModel::MembersColumn, QHeaderView::Interactive);
    header->resizeSection(ScopeTreeModel::MembersColumn, fontMetrics().horizontalAdvance(QStringLiteral("Members ● 99999")) + 16);

    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->addWidget(m_view);

    // Top-level scopes open when they appear, so nested scopes are visible at once; deeper
    // ones stay closed (a big scope's member list is one click away, not in the way).
    connect(m_model, &QAbstractItemModel::rowsInserted, this, [this](const QModelIndex &parent, int first, int last) {
        if (!parent.isValid())
            expandTopLevel(first, last);
    });
    connect(m_model, &QAbstractItemModel::modelReset, this, [this] { expandTopLevel(0, m_model->rowCount() - 1); });
    expandTopLevel(0, m_model->rowCount() - 1);

    // Only operator gestures act (click, Enter): a current row that moves because the tree
    // changed under it must not change the selection on its own.
    connect(m_view, &QTreeView::clicked, this, &ScopesPanel::activate);
    connect(m_view, &QTreeView::activated, this, &ScopesPanel::activate);
    connect(m_selection, &SelectionHub::focusChanged, this,
            [this](SelectionHub::Kind kind, const QString &key, QObject *origin) {
                if (origin == this || kind != SelectionHub::Kind::Scope)
                    return;
                const QModelIndex index = m_model->indexOfScope(key);
                if (!index.isValid())
                    return;
                m_view->setCurrentIndex(index);
                m_view->scrollTo(index);
            });
}

void ScopesPanel::expandTopLevel(int first, int last)
{
    for (int row = first; row <= last; ++row)
        m_view->expand(m_model->index(row, 0));
}

void ScopesPanel::activate(const QModelIndex &index)
{
    if (!index.isValid())
        return;
    const QString id = index.siblingAtColumn(0).data(ScopeTreeModel::IdRole).toString();
    if (ScopeTreeModel::NodeKind(index.data(ScopeTreeModel::NodeKindRole).toInt()) == ScopeTreeModel::NodeKind::Member) {
        m_selection->selectAgents({id}, this);
        m_selection->focus(SelectionHub::Kind::Agent, id, this); // also when already the selection
    } else {
        m_selection->focus(SelectionHub::Kind::Scope, id, this);
    }
}

} // namespace mapi::ui
