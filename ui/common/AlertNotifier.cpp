#include "common/AlertNotifier.h"

#include "common/NotificationToast.h"
#include "style/Colors.h"

#include <QApplication>
#include <QDateTime>
#include <QIcon>
#include <QSystemTrayIcon>

namespace mapi::ui {

AlertNotifier::AlertNotifier(QWidget *window)
    : QObject(window)
    , m_window(window)
{
    if (QSystemTrayIcon::isSystemTrayAvailable()) {
        m_tray = new QSystemTrayIcon(QApplication::windowIcon(), this);
        m_tray->setToolTip(tr("MAP Inspector"));
        connect(m_tray, &QSystemTrayIcon::messageClicked, this, &AlertNotifier::activated);
        connect(m_tray, &QSystemTrayIcon::activated, this, &AlertNotifier::activated);
    }
    m_later.setSingleShot(true);
    connect(&m_later, &QTimer::timeout, this, [this] { flush(QDateTime::currentMSecsSinceEpoch()); });
}

AlertNotifier::~AlertNotifier()
{
    delete m_toast;
}

void AlertNotifier::offer(const std::vector<AlertChange> &changes, bool windowInFront, qint64 localNowMs)
{
    if (!m_enabled)
        return;
    for (const AlertChange &c : changes) {
        if (!c.raised) { // cleared before it was shown: nothing to say any more
            const QString key = c.alert.key();
            m_waiting.erase(std::remove_if(m_waiting.begin(), m_waiting.end(),
                                           [&](const Waiting &w) { return w.alert.key() == key && w.system == m_systemName; }),
                            m_waiting.end());
            continue;
        }
        if (windowInFront)
            continue;
        m_waiting.push_back({c.alert, m_systemName});
        if (m_waiting.size() > kMaxWaiting) {
            m_waiting.erase(m_waiting.begin());
            ++m_waitingDropped;
        }
    }
    if (m_waiting.empty())
        return;
    if (localNowMs - m_lastShownMs >= kMinGapMs)
        flush(localNowMs);
    else if (!m_later.isActive())
        m_later.start(int(kMinGapMs - (localNowMs - m_lastShownMs)));
}

void AlertNotifier::flush(qint64 localNowMs)
{
    if (m_waiting.empty())
        return;
    // The most severe first; the others counted.
    const auto worst = std::max_element(m_waiting.begin(), m_waiting.end(),
                                        [](const Waiting &a, const Waiting &b) { return a.alert.severity < b.alert.severity; });
    const Alert &a = worst->alert;
    QString title = tr("%1: %2").arg(alertSeverityName(a.severity), alertKindName(a.kind));
    m_lastShownSystem = worst->system;
    if (!worst->system.isEmpty())
        title = QStringLiteral("%1 — %2").arg(worst->system, title);
    QString text = a.reason;
    const qint64 more = qint64(m_waiting.size()) - 1 + m_waitingDropped;
    if (more > 0)
        text += tr("\nand %n more alert(s)", nullptr, int(std::min<qint64>(more, INT_MAX)));
    m_waiting.clear();
    m_waitingDropped = 0;
    m_lastShownMs = localNowMs;
    if (m_tray) {
        m_tray->show();
        m_tray->showMessage(title, text,
                            a.severity == AlertSeverity::Critical ? QSystemTrayIcon::Critical : QSystemTrayIcon::Warning,
                            NotificationToast::kShownMs);
    } else {
        if (!m_toast) {
            m_toast = new NotificationToast(nullptr);
            connect(m_toast, &NotificationToast::clicked, this, &AlertNotifier::activated);
        }
        m_toast->showMessage(title, text, alertSeverityColor(int(a.severity)), m_window);
    }
    if (m_sound)
        QApplication::beep();
    Q_EMIT notified(title, text);
}

} // namespace mapi::ui
