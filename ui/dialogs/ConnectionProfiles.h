// Connection profiles (URL, auth method, observer-only) kept in QSettings, and their secrets
// kept in the OS keychain through QtKeychain — never in settings files or logs.
#pragma once

#include <QObject>
#include <QString>
#include <QStringList>
#include <QVector>

#include <functional>

namespace mapi::ui {

struct ConnectionProfile
{
    QString name;
    QString url;
    QString authMethod = QStringLiteral("none"); // none | api-key | bearer
    bool observerOnly = false;
};

class ConnectionProfiles
{
public:
    static QVector<ConnectionProfile> load();
    static void save(const QVector<ConnectionProfile> &profiles);
    static void upsert(const ConnectionProfile &profile);
    static void remove(const QString &name);

    // Fleets: profiles that open together, each in a system of its own ("my fleet": staging and
    // production). Kept in the settings as a fleet's name and its profiles' names, nothing more
    // (the profiles keep their URLs; their tokens stay in the keychain).
    static QStringList fleets();
    static QStringList fleetProfiles(const QString &fleet);
    static void saveFleet(const QString &fleet, const QStringList &profileNames);
    static void removeFleet(const QString &fleet);

    static QStringList recentServers();
    static void addRecentServer(const QString &url);   // the caller passes a credential-free URL
    // The profile of the last connection made from the dialog (empty: none or a new one).
    static QString lastProfile();
    static void setLastProfile(const QString &name);
    static QStringList recentTraces();
    static void addRecentTrace(const QString &path);

    // Keychain (asynchronous; callbacks run in the GUI thread). `error` is empty on success.
    static void readSecret(const QString &profileName, QObject *context,
                           std::function<void(const QString &secret, const QString &error)> done);
    static void writeSecret(const QString &profileName, const QString &secret, QObject *context,
                            std::function<void(const QString &error)> done);
    static void deleteSecret(const QString &profileName);
    // Any other secret the window keeps (e.g. "alerts:webhook"), by its full keychain key.
    static void readKeychain(const QString &key, QObject *context,
                             std::function<void(const QString &secret, const QString &error)> done);
    static void writeKeychain(const QString &key, const QString &secret, QObject *context,
                              std::function<void(const QString &error)> done);
    static void deleteKeychain(const QString &key);
};

} // namespace mapi::ui
