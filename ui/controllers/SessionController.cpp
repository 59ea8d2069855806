#include "SessionController.h"

#include "session/InspectorSession.h"

#include <QWidget>

namespace mapi::ui {

SessionController::SessionController(InspectorSession *session, AlertMonitor *monitor, QWidget *dialogParent)
    : QObject(dialogParent)
    , m_session(session)
    , m_monitor(monitor)
    , m_dialogParent(dialogParent)
{
}

} // namespace mapi::ui
