// Scopes panel: the scope tree with member counts, each scope expandable to its members
// (health-coloured). Clicking a member selects that agent; clicking a scope shows it in the
// inspector. Expansion and selection survive live updates (the model updates incrementally).
#pragma once

#include <QWidget>

class QModelIndex;
class QTreeView;

namespace mapi {
class InspectorSession;
}

namespace mapi::ui {

class ScopeTreeModel;
class SelectionHub;

class ScopesPanel : public QWidget
{
    Q_OBJECT
public:
    ScopesPanel(InspectorSession *session, SelectionHub *selection, QWidget *parent = nullptr);

private:
    void activate(const QModelIndex &index);
    void expandTopLevel(int first, int last);

    SelectionHub *m_selection;
    ScopeTreeModel *m_model;
    QTreeView *m_view;
};

} // namespace mapi::ui
