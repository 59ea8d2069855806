// Agents panel: every agent in a sortable table, narrowed by the filter language
// (docs/filter-language.md). The table's selection is the shared agent selection (what the
// window's control actions apply to); a selection made elsewhere is mirrored here.
#pragma once

#include <QTimer>
#include <QWidget>

#include <set>

class QCheckBox;
class QComboBox;
class QLabel;
class QLineEdit;
class QTableView;

namespace mapi {
class InspectorSession;
}

namespace mapi::ui {

class AgentFilterProxy;
class AgentGroupsModel;
class AgentTableModel;
class SelectionHub;

class AgentsPanel : public QWidget
{
    Q_OBJECT
public:
    AgentsPanel(InspectorSession *session, SelectionHub *selection, QWidget *parent = nullptr);
    void focusFilter(); // Ctrl+F: put the cursor in the filter box, its text selected
    // The filter box set to `query` and applied now (the window's header counts are filters).
    void setFilterText(const QString &query);
    QString filterText() const;
    // Groups shown above the table (by role, scope or parent; none: hidden). Past kGroupsAbove
    // agents a source opens with its agents grouped by scope, until the operator picks.
    static constexpr int kGroupsAbove = 300;
    AgentGroupsModel *groups() const { return m_groups; }

private:
    void applyFilter();
    std::set<int> selectedRows() const; // proxy rows, top to bottom
    void pushSelection();
    void mirrorSelection(const QStringList &ids, QObject *origin);
    void showContextMenu(const QPoint &pos);
    void showHeaderMenu(const QPoint &pos);
    void updateCount();

    SelectionHub *m_selection;
    AgentTableModel *m_model;
    AgentFilterProxy *m_proxy;
    QLineEdit *m_filterEdit;
    QCheckBox *m_showDeparted;
    QLabel *m_countLabel;
    QTableView *m_view;
    AgentGroupsModel *m_groups;
    QComboBox *m_groupBy;
    QTableView *m_groupsView;
    QTimer m_groupsTick;
    bool m_groupingPicked = false; // the operator chose a grouping: the size no longer does
    bool m_mirroring = false;      // true while applying a selection that came from the hub
    bool m_filterRejected = false; // the box holds a query that does not parse
    bool m_systemColumnOffered = false; // the System column was shown for the first federated agent
};

} // namespace mapi::ui
