// Timeline panel: the sequence diagram of the system over time (ui/timeline/TimelineView)
// under a tool bar: grouping (scope / subtree), collapse and expand all, zoom, follow live,
// and a one-line summary of what is indexed.
#pragma once

#include <QWidget>

class QComboBox;
class QLabel;
class QToolButton;

namespace mapi {
class InspectorSession;
}

namespace mapi::ui {

class SelectionHub;
class TimelineView;

class TimelinePanel : public QWidget
{
    Q_OBJECT
public:
    TimelinePanel(InspectorSession *session, SelectionHub *selection, QWidget *parent = nullptr);

    TimelineView *view() const { return m_view; }

private:
    void updateSummary();

    TimelineView *m_view;
    QComboBox *m_grouping;
    QToolButton *m_follow;
    QLabel *m_summary;
};

} // namespace mapi::ui
