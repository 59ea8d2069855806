#include "controllers/AlertDeliveryController.h"

#include "alerts/AlertMonitor.h"
#include "alerts/AlertRules.h"
#include "alerts/AlertWebhook.h"
#include "common/AlertNotifier.h"
#include "dialogs/ConnectionProfiles.h"
#include "model/HealthRules.h"
#include "model/SystemStore.h"
#include "session/InspectorSession.h"

#include <QDateTime>
#include <QDir>
#include <QLocale>
#include <QFileInfo>
#include <QSaveFile>
#include <QSettings>
#include <QStandardPaths>
#include <QWidget>

#include <utility>

namespace mapi::ui {

namespace {

// A group notice as the notifier shows an alert: its kind and severity in the title, the group's
// title ("unresponsive — 1,000 agents in team/ingest") as the text.
Alert groupNotification(const AlertGroups::Notice &notice)
{
    Alert alert;
    alert.kind = notice.kind;
    alert.severity = notice.severity;
    alert.reason = notice.first ? notice.title
                                : QObject::tr("%1 (%2 more since the last notice)").arg(notice.title, QLocale().toString(notice.added));
    alert.cachedKey = QStringLiteral("group:") + notice.groupKey;
    return alert;
}

} // namespace

AlertDeliveryController::AlertDeliveryController(InspectorSession *session, AlertMonitor *monitor, QWidget *window,
                                                 AlertNotifier *notifier)
    : SessionController(session, monitor, window)
    , m_notifier(notifier ? notifier : new AlertNotifier(window)) // its toasts sit on the window
    , m_webhook(new AlertWebhook(this))
{
    connect(m_webhook, &AlertWebhook::delivered, this, [this](bool ok, const QString &detail) {
        if (!ok)
            Q_EMIT statusMessage(tr("Alert webhook: not delivered (%1 so far): %2").arg(m_webhook->failed()).arg(detail), 15000);
    });
    connect(m_monitor, &AlertMonitor::alertsChanged, this, [this](const std::vector<AlertChange> &changes) {
        // Notifications and the webhook speak of now: not of a trace, nor of the live past. After
        // new rules, what is raised again was already said (the webhook skips what it sent).
        if (m_session->source() != InspectorSession::Source::Live || m_session->isTimeTravelling())
            return;
        // A raised alert of a grouped storm is told with its group (at the evaluation's end), not
        // alone; clearings go on (the webhook tells only those whose raising it sent).
        std::vector<AlertChange> singles;
        singles.reserve(changes.size());
        for (const AlertChange &change : changes)
            if (!change.raised || !m_monitor->groups().isGrouped(change.alert.key()))
                singles.push_back(change);
        m_notifier->setSystemName(m_systemName ? m_systemName() : QString());
        m_webhook->setSystem(m_session->sourceLabel());
        if (!m_applyingNewRules) // one evaluation's parts offered together: its worst alert is the headline
            m_toNotify.insert(m_toNotify.end(), singles.begin(), singles.end());
        m_webhook->offer(singles);
    });
    connect(m_monitor, &AlertMonitor::alertsReset, this, [this] { m_toNotify.clear(); });
    connect(m_monitor, &AlertMonitor::evaluated, this, [this] {
        // Asked after every evaluation, so that a view of the past or a trace lets them pass
        // rather than piling them up for later.
        const std::vector<AlertGroups::Notice> notices = m_monitor->groupNoticesDue();
        const bool now = m_session->source() == InspectorSession::Source::Live && !m_session->isTimeTravelling();
        if (now && !notices.empty()) {
            const qint64 at = m_session->store()->now();
            for (const AlertGroups::Notice &notice : notices) {
                // A storm that ended is said by the webhook; the inbox shows it gone. One that
                // formed again (new rules, a reconnect, a view of the past) was said already.
                if (notice.resolved) {
                    m_toldGroups.remove(notice.groupKey);
                    continue;
                }
                if (notice.first && m_toldGroups.contains(notice.groupKey))
                    continue;
                m_toldGroups.insert(notice.groupKey);
                m_toNotify.push_back({groupNotification(notice), true, at});
            }
            m_notifier->setSystemName(m_systemName ? m_systemName() : QString());
            m_webhook->setSystem(m_session->sourceLabel());
            m_webhook->offerGroups(notices, at);
        }
        if (!m_toNotify.empty())
            m_notifier->offer(std::exchange(m_toNotify, {}), m_dialogParent->isActiveWindow() && !m_dialogParent->isMinimized(),
                              QDateTime::currentMSecsSinceEpoch());
        if (now) {
            m_webhook->setSystem(m_session->sourceLabel());
            m_webhook->reconcile(m_monitor->openAlerts(), m_session->store()->now());
            m_webhook->reconcileGroups(m_monitor->groups(), m_session->store()->now());
            for (auto it = m_toldGroups.begin(); it != m_toldGroups.end();) { // storms whose end was not seen
                const AlertGroup *group = m_monitor->groups().group(*it);
                it = group && group->grownAtMs >= 0 ? std::next(it) : m_toldGroups.erase(it);
            }
        }
        m_applyingNewRules = false; // the first verdict of new rules has been given
    });
    if (!notifier)
        connect(m_notifier, &AlertNotifier::activated, this, &AlertDeliveryController::notificationActivated);
}

QString AlertDeliveryController::rulesPath() const
{
    const QString named = QSettings().value(QStringLiteral("alerts/rulesFile")).toString();
    return !named.isEmpty() ? named
                            : QStandardPaths::writableLocation(QStandardPaths::AppConfigLocation) + QStringLiteral("/alert-rules.json");
}

void AlertDeliveryController::loadSettings()
{
    QSettings settings;
    AlertRules rules;
    const QString rulesFile = settings.value(QStringLiteral("alerts/rulesFile")).toString();
    if (!rulesFile.isEmpty()) {
        const ErrorOr<AlertRules> read = readAlertRulesFile(rulesFile);
        if (read)
            rules = *read;
        else
            Q_EMIT statusMessage(tr("Alert rules: %1; the defaults apply").arg(read.error()), 15000);
    }
    m_monitor->setRules(rules);
    m_session->store()->setHealthPolicy(healthPolicyForRules(rules, m_session->store()->healthPolicy()));

    m_delivery.desktop = settings.value(QStringLiteral("alerts/notify"), true).toBool();
    m_delivery.sound = settings.value(QStringLiteral("alerts/sound"), false).toBool();
    m_delivery.webhookOn = settings.value(QStringLiteral("alerts/webhookOn"), false).toBool();
    m_delivery.webhookMinSeverity =
        alertSeverityFromName(settings.value(QStringLiteral("alerts/webhookMinSeverity")).toString()).value_or(AlertSeverity::Warning);
    applyDelivery();
    if (!m_delivery.webhookOn)
        return;
    ConnectionProfiles::readKeychain(QString::fromLatin1(kWebhookKeychainKey), this, [this](const QString &secret, const QString &error) {
        const Json stored = Json::parse(secret.toStdString(), nullptr, false);
        if (!error.isEmpty() || !stored.is_object()) {
            // Off for this session (the settings file still says on): the dialog shows it off
            // rather than on with no address, and nothing in the keychain is touched.
            m_delivery.webhookOn = false;
            Q_EMIT statusMessage(error.isEmpty() ? tr("Alert webhook off: its address is not in the OS keychain (Alerts → Settings…)")
                                                 : tr("Alert webhook off: the OS keychain is not available (%1)").arg(error),
                                 15000);
            return;
        }
        m_delivery.webhookUrl = QString::fromStdString(stored.value("url", std::string()));
        m_delivery.webhookToken = QString::fromStdString(stored.value("token", std::string()));
        m_webhookInKeychain = true;
        applyDelivery();
    });
}

void AlertDeliveryController::applyDelivery()
{
    m_notifier->setEnabled(m_delivery.desktop);
    m_notifier->setSound(m_delivery.sound);
    m_webhook->setTarget(m_delivery.webhookOn ? QUrl(m_delivery.webhookUrl) : QUrl(), m_delivery.webhookToken,
                         m_delivery.webhookMinSeverity);
}

void AlertDeliveryController::editSettings()
{
    const QString path = rulesPath();
    AlertSettingsDialog dialog(m_monitor->rules(), QDir::toNativeSeparators(path), m_delivery, m_dialogParent);
    AlertWebhook tester; // "Send a test" posts to what the form says, before it is saved
    connect(&dialog, &AlertSettingsDialog::testWebhookRequested, &tester, [&tester](const QString &url, const QString &token) {
        tester.setTarget(QUrl(url), token, AlertSeverity::Info);
        tester.sendTest();
    });
    connect(&tester, &AlertWebhook::delivered, &dialog, &AlertSettingsDialog::showWebhookTestResult);
    if (dialog.exec() != QDialog::Accepted)
        return;
    QString error;
    const bool saved = applySettings(dialog.rules(), dialog.delivery(), &error);
    Q_EMIT statusMessage(saved ? tr("Alert rules saved to %1 and applied").arg(QDir::toNativeSeparators(path))
                               : tr("Alert rules applied for this session; not saved: %1").arg(error),
                         8000);
}

bool AlertDeliveryController::applySettings(const AlertRules &rules, const AlertDelivery &delivery, QString *saveError)
{
    const QString path = rulesPath();
    QDir().mkpath(QFileInfo(path).absolutePath());
    QSaveFile file(path);
    const QByteArray text = QByteArray::fromStdString(alertRulesToJson(rules).dump(2)) + '\n';
    const bool saved = file.open(QIODevice::WriteOnly) && file.write(text) == text.size() && file.commit();
    if (saved)
        QSettings().setValue(QStringLiteral("alerts/rulesFile"), path);
    else if (saveError)
        *saveError = file.errorString();
    // The detectors start over under the new rules (reading the store again in slices, as after a
    // trace load). When they have evaluated it, the ladder ends the climbs of alerts the new rules
    // no longer raise, the webhook sends the clearing of what is gone, and the inbox keeps what the
    // operator acknowledged or snoozed. The health policy first: "unresponsive" reads it.
    m_session->store()->setHealthPolicy(healthPolicyForRules(rules, m_session->store()->healthPolicy()));
    m_applyingNewRules = true;
    m_monitor->setRules(rules);
    Q_EMIT rulesApplied();

    const AlertDelivery before = m_delivery;
    m_delivery = delivery;
    storeDelivery(before);
    applyDelivery();
    return saved;
}

void AlertDeliveryController::storeDelivery(const AlertDelivery &before)
{
    QSettings settings;
    settings.setValue(QStringLiteral("alerts/notify"), m_delivery.desktop);
    settings.setValue(QStringLiteral("alerts/sound"), m_delivery.sound);
    settings.setValue(QStringLiteral("alerts/webhookOn"), m_delivery.webhookOn);
    settings.setValue(QStringLiteral("alerts/webhookMinSeverity"), alertSeverityName(m_delivery.webhookMinSeverity));
    const QString key = QString::fromLatin1(kWebhookKeychainKey);
    const bool wanted = m_delivery.webhookOn && !m_delivery.webhookUrl.isEmpty();
    const bool changed = before.webhookUrl != m_delivery.webhookUrl || before.webhookToken != m_delivery.webhookToken;
    if (wanted && (changed || !m_webhookInKeychain)) {
        const Json stored = {{"url", m_delivery.webhookUrl.toStdString()}, {"token", m_delivery.webhookToken.toStdString()}};
        ConnectionProfiles::writeKeychain(key, QString::fromStdString(stored.dump()), this, [this](const QString &error) {
            m_webhookInKeychain = error.isEmpty();
            if (!error.isEmpty())
                Q_EMIT statusMessage(tr("The webhook works for this session only: the OS keychain is not available (%1)").arg(error),
                                     15000);
        });
    } else if (!wanted && m_webhookInKeychain) {
        ConnectionProfiles::deleteKeychain(key); // off: nothing of it stays behind
        m_webhookInKeychain = false;
    }
}

} // namespace mapi::ui
