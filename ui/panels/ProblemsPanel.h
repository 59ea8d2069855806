// Problems panel.
#pragma once

#include <QWidget>

namespace mapi::ui {

class LiveSession;
class SelectionHub;

class ProblemsPanel : public QWidget
{
    Q_OBJECT
public:
    ProblemsPanel(LiveSession *session, SelectionHub *selection, QWidget *parent = nullptr);

private:
    LiveSession *m_session;
    SelectionHub *m_selection;
};

} // namespace mapi::ui
