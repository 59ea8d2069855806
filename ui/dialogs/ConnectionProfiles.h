// Connection profiles (URL, auth method, observer-only, live OpenTelemetry export) kept in
// QSettings, and their secrets (the token, the OpenTelemetry header's value) kept in the OS
// keychain through QtKeychain — never in settings files or logs.
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
    // The connection's live OpenTelemetry export (TelemetryController): the receiver's base URL
    // as OTEL_EXPORTER_OTLP_ENDPOINT reads it (empty: off), and one header sent with every
    // request (empty: none). The header's value is a secret: in the OS keychain under
    // otlpKeychainKey(name), never here. (`= {}`: aggregate initialisations of the four fields
    // above stay warning-free.)
    QString otlpEndpoint = {};
    QString otlpHeaderName = {};
};

// What a connection sends to an OpenTelemetry receiver: a profile's two settings and, in memory
// only, the header's value (from the Connect dialog or the keychain).
struct OtlpExportSettings
{
    QString endpoint;    // empty: no export
    QString headerName;  // empty: no header
    QString headerValue; // a secret: never in settings, logs, tooltips
    bool isOn() const { return !endpoint.trimmed().isEmpty(); }
};

class ConnectionProfiles
{
public:
    static QVector<ConnectionProfile> load();
    static void save(const QVector<ConnectionProfile> &profiles);
    static void upsert(const ConnectionProfile &profile);
    // Also forgets its secrets in the keychain (token, OpenTelemetry header).
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

    // The keychain key of a profile's OpenTelemetry header value: "otlp:" + the profile's name.
    static QString otlpKeychainKey(const QString &profileName);
    // `profile`'s export, its header's value read from the keychain when it names a header
    // (`done` at once, in this call, when it does not). `error`: why the value could not be read
    // (not in the keychain, or the keychain is not available): the export comes back off then,
    // rather than sent without the credential its receiver expects.
    static void readOtlpExport(const ConnectionProfile &profile, QObject *context,
                               std::function<void(const OtlpExportSettings &otlp, const QString &error)> done);
};

} // namespace mapi::ui
