// Actions panel.
#pragma once

#include <QWidget>

namespace mapi::ui {

class LiveSession;
class SelectionHub;

class ActionsPanel : public QWidget
{
    Q_OBJECT
public:
    ActionsPanel(LiveSession *session, SelectionHub *selection, QWidget *parent = nullptr);

private:
    LiveSession *m_session;
    SelectionHub *m_selection;
};

} // namespace mapi::ui
