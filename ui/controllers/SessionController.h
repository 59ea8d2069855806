// What every controller of the window is: the servant of one system (its InspectorSession and
// the detectors over its store, AlertMonitor), with a widget its dialogs open over (the window) and one way to tell the operator something short
// (statusMessage, shown in the window's status bar). Owned by the dialog parent. GUI thread.
#pragma once

#include <QObject>
#include <QPointer>

class QAction;
class QWidget;

namespace mapi {
class AlertMonitor;
class InspectorSession;
} // namespace mapi

namespace mapi::ui {

class SessionController : public QObject
{
    Q_OBJECT
public:
    SessionController(InspectorSession *session, AlertMonitor *monitor, QWidget *dialogParent);

Q_SIGNALS:
    // `timeoutMs` 0: until the next message.
    void statusMessage(const QString &text, int timeoutMs);

protected:
    QPointer<InspectorSession> m_session; // outlives the controller in the window; a guard in tests
    AlertMonitor *m_monitor;
    QWidget *m_dialogParent;
};

} // namespace mapi::ui
