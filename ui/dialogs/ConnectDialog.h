// Connect…: pick or edit a connection profile (URL, auth, observer-only) and its token. The
// target is a server URL (ws://, wss://, unix:/PATH) or a command to launch (a MAP system as a
// child process, speaking on its stdin/stdout: stdio:COMMAND in profiles and recent servers).
#pragma once

#include "client/MapClient.h"
#include "dialogs/ConnectionProfiles.h"

#include <QDialog>

class QCheckBox;
class QComboBox;
class QLabel;
class QLineEdit;

namespace mapi::ui {

class ConnectDialog : public QDialog
{
    Q_OBJECT
public:
    explicit ConnectDialog(QWidget *parent = nullptr);

    // Valid after accept(). The credential lives only in memory (and in the keychain if asked).
    ClientOptions options() const;
    bool observerOnly() const;
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
};

} // namespace mapi::ui
