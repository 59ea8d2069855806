// Topology panel, the window's central view: the agent hierarchy as a tidy tree, scopes as
// groups, message traffic as curves (TopologyView), with a search box, an N-hop neighbourhood
// filter and layout controls above it.
#pragma once

#include <QWidget>

class QLabel;
class QLineEdit;
class QSpinBox;
class QStringListModel;

namespace mapi {
class InspectorSession;
}

namespace mapi::ui {

class SelectionHub;
class TopologyView;

class TopologyPanel : public QWidget
{
    Q_OBJECT
public:
    TopologyPanel(InspectorSession *session, SelectionHub *selection, QWidget *parent = nullptr);

    void focusSearch();             // puts the cursor in the search box
    void clearSearch();             // empties the search box and its status (another source)
    TopologyView *view() const { return m_view; }

private:
    void runSearch();

    InspectorSession *m_session;
    SelectionHub *m_selection;
    TopologyView *m_view;
    QLineEdit *m_search;
    QLabel *m_searchStatus;
    QSpinBox *m_hops;
    QStringListModel *m_completions;
};

} // namespace mapi::ui
