// Desktop notifications of alerts raised while the operator looks elsewhere: through the system
// tray (QSystemTrayIcon) when the platform has one, else a NotificationToast in the corner of
// the screen (desktops without a tray), at most one every kMinGapMs; alerts raised in
// between are gathered into the next ("and 3 more"). Nothing is shown while the window is in
// front: the inbox is in view then. An optional sound (the desktop's beep; off by default).
// Thread: GUI thread.
#pragma once

#include "alerts/AlertEngine.h"

#include <QObject>
#include <QTimer>

#include <vector>

class QSystemTrayIcon;
class QWidget;

namespace mapi::ui {

class AlertNotifier : public QObject
{
    Q_OBJECT
public:
    static constexpr qint64 kMinGapMs = 10000; // a storm of alerts must not become a storm of pop-ups

    // `window`: the main window (the toast appears on its screen).
    explicit AlertNotifier(QWidget *window);
    ~AlertNotifier() override;

    void setEnabled(bool on) { m_enabled = on; }
    bool isEnabled() const { return m_enabled; }
    void setSound(bool on) { m_sound = on; }
    // The system the alerts offered next are about, first in their notification's title while
    // the window holds several systems (empty: not named). One notifier serves every system of
    // a window (one tray icon, one pace): lastShownSystem() says whose alert the last
    // notification showed, for activated().
    void setSystemName(const QString &name) { m_systemName = name; }
    QString lastShownSystem() const { return m_lastShownSystem; }
    bool hasTray() const { return m_tray != nullptr; }
    // Without a tray: the toast that shows notifications (created with the first one; else null).
    class NotificationToast *toast() const { return m_toast; }

    // The alerts one evaluation raised or cleared; `windowInFront`: the operator sees the inbox.
    // `localNowMs`: the local clock (a parameter so that tests control it).
    void offer(const std::vector<AlertChange> &changes, bool windowInFront, qint64 localNowMs);

Q_SIGNALS:
    // A notification went out (also when no tray shows it: the window puts it in its status bar).
    void notified(const QString &title, const QString &text);
    // The operator clicked the notification.
    void activated();

private:
    void flush(qint64 localNowMs);

    QWidget *m_window;
    QSystemTrayIcon *m_tray = nullptr;
    // Without a parent: a child of the window would be minimised with it (most window managers).
    class NotificationToast *m_toast = nullptr;
    QTimer m_later;                       // flushes what waited for the gap to pass
    struct Waiting
    {
        Alert alert;
        QString system; // setSystemName() when it was offered
    };
    std::vector<Waiting> m_waiting;       // raised, not yet notified (the newest kMaxWaiting)
    static constexpr size_t kMaxWaiting = 100;
    qint64 m_waitingDropped = 0;
    qint64 m_lastShownMs = 0;
    bool m_enabled = true;
    bool m_sound = false;
    QString m_systemName;
    QString m_lastShownSystem;
};

} // namespace mapi::ui
