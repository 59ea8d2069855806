// Topology panel, the window's central view: the agent hierarchy as a tidy tree, scopes as
// groups, message traffic as curves (TopologyView), with a search box, an N-hop neighbourhood
// filter and layout controls above it.
#pragma once

#include <QHash>
#include <QWidget>

class QComboBox;
class QLabel;
class QStackedWidget;
class QTimer;
class QToolButton;
class QLineEdit;
class QSpinBox;
class QStringListModel;

namespace mapi {
class InspectorSession;
}

namespace mapi::ui {

class SelectionHub;
class GroupOverview;
class TopologyView;

class TopologyPanel : public QWidget
{
    Q_OBJECT
public:
    TopologyPanel(InspectorSession *session, SelectionHub *selection, QWidget *parent = nullptr);

    void focusSearch();             // puts the cursor in the search box
    void clearSearch();             // empties the search box and its status (another source)
    TopologyView *view() const { return m_view; }
    GroupOverview *overview() const { return m_overview; }
    // Open alerts by agent (the worst severity): the graph's badges and the groups' counts.
    void setAlertBadges(const QHash<QString, int> &severityByAgent);
    // The groups (true) or the agent graph. Until the operator picks (this, the Groups button,
    // opening a group, a search), a source is shown as groups once it has more than kGroupsAbove
    // agents and as a graph once it has fewer than kGraphBelow (no flipping near one number).
    static constexpr int kGroupsAbove = 1500;
    static constexpr int kGraphBelow = 1200;
    void showGroups(bool groups);
    bool showsGroups() const;
    // The graph, zoomed to `agentIds` (selected), titled `title` in the search status.
    void openGroup(const QStringList &agentIds, const QString &title);

private:
    void runSearch();
    void followSize(); // the automatic choice of groups or graph, until the operator picks
    void switchTo(bool groups);

    InspectorSession *m_session;
    SelectionHub *m_selection;
    TopologyView *m_view;
    GroupOverview *m_overview;
    QStackedWidget *m_pages;
    QToolButton *m_groups;
    QComboBox *m_groupBy;
    bool m_operatorPicked = false; // the operator chose groups or graph: no automatic switch any more
    QTimer *m_sizeCheck;
    QLineEdit *m_search;
    QLabel *m_searchStatus;
    QSpinBox *m_hops;
    QStringListModel *m_completions;
};

} // namespace mapi::ui
