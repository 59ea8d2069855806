// Inspector panel.
#pragma once

#include <QWidget>

namespace mapi::ui {

class LiveSession;
class SelectionHub;

class InspectorPanel : public QWidget
{
    Q_OBJECT
public:
    InspectorPanel(LiveSession *session, SelectionHub *selection, QWidget *parent = nullptr);

private:
    LiveSession *m_session;
    SelectionHub *m_selection;
};

} // namespace mapi::ui
