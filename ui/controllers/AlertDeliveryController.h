// How alerts reach the operator, for one system's detectors: the rules (read from the rules file
// at start, edited in Alerts → Settings…, saved and applied at once), desktop notifications and
// the webhook (its address and token in the OS keychain only). Notifications and webhook calls
// speak of now: only for a live session not viewing its past.
//
// One controller serves one system (its session and AlertMonitor); `window` is where dialogs
// open and whose being in front silences notifications. GUI thread.
#pragma once

#include "alerts/AlertEngine.h"
#include "dialogs/AlertSettingsDialog.h"

#include "SessionController.h"

#include <QSet>

#include <functional>
#include <vector>

namespace mapi {
class AlertWebhook;
struct AlertRules;
} // namespace mapi

namespace mapi::ui {

class AlertNotifier;

class AlertDeliveryController : public SessionController
{
    Q_OBJECT
public:
    static constexpr const char *kWebhookKeychainKey = "alerts:webhook";

    // `notifier`: one shared by every system of the window (its activated() is the window's to
    // follow); null: one of its own, whose activation is notificationActivated().
    AlertDeliveryController(InspectorSession *session, AlertMonitor *monitor, QWidget *window, AlertNotifier *notifier = nullptr);

    // The rules named in the settings (alerts/rulesFile) applied to the monitor and the store's
    // health policy (a file that cannot be read: the defaults, and a status message); the
    // delivery settings; the webhook's address from the keychain when it is on.
    void loadSettings();
    // alerts/rulesFile, else alert-rules.json in the configuration folder.
    QString rulesPath() const;
    // Alerts → Settings…: the dialog, then applySettings() with what it says.
    void editSettings();
    // Saves `rules` to rulesPath() (atomically) and applies them (the detectors start over; the
    // ladder is told through rulesApplied()), then the delivery (settings, keychain). False, with
    // the reason, when the file could not be written (the rules still apply to this session).
    bool applySettings(const AlertRules &rules, const AlertDelivery &delivery, QString *saveError = nullptr);

    // The name notifications start with (asked at each notification: the window names the system
    // only while it shows several). The webhook always names its system (the source label).
    void setSystemName(std::function<QString()> name) { m_systemName = std::move(name); }

    const AlertDelivery &delivery() const { return m_delivery; }
    AlertNotifier *notifier() const { return m_notifier; }
    AlertWebhook *webhook() const { return m_webhook; }

Q_SIGNALS:
    void rulesApplied();
    // The operator clicked a notification: the window comes forward with its alerts.
    void notificationActivated();

private:
    void applyDelivery();
    void storeDelivery(const AlertDelivery &before);

    AlertNotifier *m_notifier;
    AlertWebhook *m_webhook;
    AlertDelivery m_delivery;          // the webhook's address and token: memory and keychain only
    bool m_webhookInKeychain = false;  // the keychain holds the webhook's address (read or written)
    std::vector<AlertChange> m_toNotify; // an evaluation's changes, told in parts, offered to the notifier at its end
    QSet<QString> m_toldGroups;        // groups notified on the desktop and open since (a group formed again is not told again)
    bool m_applyingNewRules = false;   // new rules: until the detectors' first verdict on the store
    std::function<QString()> m_systemName;
};

} // namespace mapi::ui
