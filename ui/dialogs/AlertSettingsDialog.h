// Alerts → Settings…: the detectors' rules (every key of the rules file, docs/alerts.md, as a
// form: a group per rule with its switch, severity and thresholds) and how alerts reach the
// operator (desktop notifications, sound, the webhook). OK refuses values the rules file would
// refuse, with the key's name; the caller saves the rules to the rules file and the webhook's
// address and token to the OS keychain (never to the settings file).
// Thread: GUI thread.
#pragma once

#include "alerts/AlertRules.h"

#include <QDialog>

#include <vector>

class QCheckBox;
class QComboBox;
class QLabel;
class QLineEdit;

namespace mapi::ui {

struct AlertDelivery
{
    bool desktop = true;                // notifications when the window is not in front
    bool sound = false;
    bool webhookOn = false;
    QString webhookUrl;                 // a secret: keychain only
    QString webhookToken;               // a secret: keychain only
    AlertSeverity webhookMinSeverity = AlertSeverity::Warning;
};

class AlertSettingsDialog : public QDialog
{
    Q_OBJECT
public:
    AlertSettingsDialog(const AlertRules &rules, const QString &rulesPath, const AlertDelivery &delivery,
                        QWidget *parent = nullptr);

    // Valid after accept().
    AlertRules rules() const { return m_accepted; }
    AlertDelivery delivery() const;

    // The result of a test POST the dialog asked for (testWebhookRequested).
    void showWebhookTestResult(bool ok, const QString &detail);
    // The rules the form holds now, as the rules file writes them.
    Json formJson() const;

Q_SIGNALS:
    void testWebhookRequested(const QString &url, const QString &token);

public Q_SLOTS:
    void accept() override;

private:
    struct Field
    {
        QString rule;      // empty: a top-level key
        std::string key;
        QWidget *editor = nullptr;
    };
    void buildRules(QWidget *page, const Json &values);
    void setForm(const Json &values);
    QWidget *buildDelivery(const AlertDelivery &delivery);

    std::vector<Field> m_fields;
    AlertRules m_accepted;
    Json m_grouping; // the rules' "grouping", kept through the form (not edited here)
    QLabel *m_error = nullptr;
    QCheckBox *m_desktop = nullptr;
    QCheckBox *m_sound = nullptr;
    QCheckBox *m_webhookOn = nullptr;
    QLineEdit *m_webhookUrl = nullptr;
    QLineEdit *m_webhookToken = nullptr;
    QComboBox *m_webhookSeverity = nullptr;
    QLabel *m_webhookResult = nullptr;
};

} // namespace mapi::ui
