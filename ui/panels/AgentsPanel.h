// Agents panel.
#pragma once

#include <QWidget>

namespace mapi::ui {

class LiveSession;
class SelectionHub;

class AgentsPanel : public QWidget
{
    Q_OBJECT
public:
    AgentsPanel(LiveSession *session, SelectionHub *selection, QWidget *parent = nullptr);
    void focusFilter(); // Ctrl+F: put the cursor in the filter box

private:
    LiveSession *m_session;
    SelectionHub *m_selection;
};

} // namespace mapi::ui
