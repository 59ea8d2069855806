// Connect…: pick or edit a connection profile (URL, auth, observer-only) and its token. The
// target is a server URL (ws://, wss://, unix:/PATH) or a command to launch (a MAP system as a
// child process, speaking on its stdin/stdout: stdio:COMMAND in profiles and recent servers).
// "Send to OpenTelemetry": the connection's live export (TelemetryController), a receiver's
// address and one optional header (name and value, e.g. an API key). The address is checked as
// it is typed (OtlpHttpSender::checkEndpoint: with a header, plain http only to this machine),
// the reason shown under it and Connect disabled while it cannot be used. The header's value is
// a password field, kept with the profile in the OS keychain (never in the settings) and never
// shown again once entered (a loaded profile fills it from the keychain, masked).
#pragma once

#include "client/MapClient.h"
#include "dialogs/ConnectionProfiles.h"

#include <QDialog>

class QCheckBox;
class QComboBox;
class QLabel;
class QLineEdit;
class QPushButton;

namespace mapi::ui {

class ConnectDialog : public QDialog
{
    Q_OBJECT
public:
    explicit ConnectDialog(QWidget *parent = nullptr);

    // Valid after accept(). The credential lives only in memory (and in the keychain if asked).
    ClientOptions options() const;
    bool observerOnly() const;
    // The OpenTelemetry export asked for (endpoint empty: none), the header's value in memory.
    OtlpExportSettings otlp() const;
    // Why the OpenTelemetry fields cannot be used as they are; empty: they can (or are empty).
    QString otlpProblem() const;
    void setUrl(const QString &url);

    void accept() override;

private:
    void loadProfile(int index);
    void updateState();

    QVector<ConnectionProfile> m_profiles;
    QComboBox *m_profile = nullptr;
    QLineEdit *m_name = nullptr;
    QComboBox *m_url = nullptr;
    QLineEdit *m_launch = nullptr;
    QUrl target() const; // the launch command's stdio: URL when one is typed, else the server URL
    QComboBox *m_auth = nullptr;
    QLineEdit *m_token = nullptr;
    QCheckBox *m_remember = nullptr;
    QCheckBox *m_observer = nullptr;
    QLabel *m_message = nullptr;
    QLineEdit *m_otlpEndpoint = nullptr;
    QLineEdit *m_otlpHeaderName = nullptr;
    QLineEdit *m_otlpHeaderValue = nullptr;
    QLabel *m_otlpMessage = nullptr; // under the address: why it cannot be used
    QPushButton *m_connectButton = nullptr;
};

} // namespace mapi::ui
