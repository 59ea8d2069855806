#include "dialogs/ConnectionProfiles.h"

#include <QSettings>

#include <qt6keychain/keychain.h>

namespace mapi::ui {

static const QString kKeychainService = QStringLiteral("MAP Inspector");

QVector<ConnectionProfile> ConnectionProfiles::load()
{
    QSettings s;
    QVector<ConnectionProfile> out;
    const int n = s.beginReadArray(QStringLiteral("profiles"));
    for (int i = 0; i < n; ++i) {
        s.setArrayIndex(i);
        ConnectionProfile p;
        p.name = s.value(QStringLiteral("name")).toString();
        p.url = s.value(QStringLiteral("url")).toString();
        p.authMethod = s.value(QStringLiteral("auth"), QStringLiteral("none")).toString();
        p.observerOnly = s.value(QStringLiteral("observer"), false).toBool();
        p.otlpEndpoint = s.value(QStringLiteral("otlpEndpoint")).toString();
        p.otlpHeaderName = s.value(QStringLiteral("otlpHeader")).toString();
        if (!p.name.isEmpty())
            out << p;
    }
    s.endArray();
    return out;
}

void ConnectionProfiles::save(const QVector<ConnectionProfile> &profiles)
{
    QSettings s;
    s.beginWriteArray(QStringLiteral("profiles"), int(profiles.size()));
    for (int i = 0; i < profiles.size(); ++i) {
        s.setArrayIndex(i);
        s.setValue(QStringLiteral("name"), profiles[i].name);
        s.setValue(QStringLiteral("url"), profiles[i].url);
        s.setValue(QStringLiteral("auth"), profiles[i].authMethod);
        s.setValue(QStringLiteral("observer"), profiles[i].observerOnly);
        // The export's address and header name only: the header's value is the keychain's.
        if (!profiles[i].otlpEndpoint.isEmpty())
            s.setValue(QStringLiteral("otlpEndpoint"), profiles[i].otlpEndpoint);
        else
            s.remove(QStringLiteral("otlpEndpoint"));
        if (!profiles[i].otlpHeaderName.isEmpty())
            s.setValue(QStringLiteral("otlpHeader"), profiles[i].otlpHeaderName);
        else
            s.remove(QStringLiteral("otlpHeader"));
    }
    s.endArray();
}

void ConnectionProfiles::upsert(const ConnectionProfile &profile)
{
    auto profiles = load();
    bool replaced = false;
    for (auto &p : profiles)
        if (p.name == profile.name) {
            p = profile;
            replaced = true;
        }
    if (!replaced)
        profiles << profile;
    save(profiles);
}

void ConnectionProfiles::remove(const QString &name)
{
    auto profiles = load();
    profiles.erase(std::remove_if(profiles.begin(), profiles.end(), [&](const ConnectionProfile &p) { return p.name == name; }),
                   profiles.end());
    save(profiles);
    deleteSecret(name);
    deleteKeychain(otlpKeychainKey(name));
}

static QStringList addRecent(const QString &key, const QString &value)
{
    QSettings s;
    QStringList list = s.value(key).toStringList();
    list.removeAll(value);
    list.prepend(value);
    while (list.size() > 8)
        list.removeLast();
    s.setValue(key, list);
    return list;
}

QStringList ConnectionProfiles::fleets()
{
    QSettings s;
    s.beginGroup(QStringLiteral("fleets"));
    QStringList names;
    for (const QString &key : s.childKeys())
        names << QString::fromUtf8(QByteArray::fromPercentEncoding(key.toLatin1()));
    names.sort(Qt::CaseInsensitive);
    return names;
}

// A fleet's settings key: its name percent-encoded (QSettings keys may not hold '/' or '\\').
static QString fleetKey(const QString &fleet)
{
    return QStringLiteral("fleets/") + QString::fromLatin1(fleet.toUtf8().toPercentEncoding());
}

QStringList ConnectionProfiles::fleetProfiles(const QString &fleet)
{
    return QSettings().value(fleetKey(fleet)).toStringList();
}

void ConnectionProfiles::saveFleet(const QString &fleet, const QStringList &profileNames)
{
    QSettings().setValue(fleetKey(fleet), profileNames);
}

void ConnectionProfiles::removeFleet(const QString &fleet)
{
    QSettings().remove(fleetKey(fleet));
}

QStringList ConnectionProfiles::recentServers()
{
    return QSettings().value(QStringLiteral("recent/servers")).toStringList();
}

void ConnectionProfiles::addRecentServer(const QString &url)
{
    addRecent(QStringLiteral("recent/servers"), url);
}

QString ConnectionProfiles::lastProfile()
{
    return QSettings().value(QStringLiteral("recent/profile")).toString();
}

void ConnectionProfiles::setLastProfile(const QString &name)
{
    QSettings().setValue(QStringLiteral("recent/profile"), name);
}

QStringList ConnectionProfiles::recentTraces()
{
    return QSettings().value(QStringLiteral("recent/traces")).toStringList();
}

void ConnectionProfiles::addRecentTrace(const QString &path)
{
    addRecent(QStringLiteral("recent/traces"), path);
}

void ConnectionProfiles::readSecret(const QString &profileName, QObject *context,
                                    std::function<void(const QString &, const QString &)> done)
{
    readKeychain(QStringLiteral("profile:") + profileName, context, std::move(done));
}

void ConnectionProfiles::writeSecret(const QString &profileName, const QString &secret, QObject *context,
                                     std::function<void(const QString &)> done)
{
    writeKeychain(QStringLiteral("profile:") + profileName, secret, context, std::move(done));
}

void ConnectionProfiles::deleteSecret(const QString &profileName)
{
    deleteKeychain(QStringLiteral("profile:") + profileName);
}

void ConnectionProfiles::readKeychain(const QString &key, QObject *context,
                                      std::function<void(const QString &, const QString &)> done)
{
    auto *job = new QKeychain::ReadPasswordJob(kKeychainService);
    job->setAutoDelete(true);
    job->setKey(key);
    QObject::connect(job, &QKeychain::Job::finished, context, [done](QKeychain::Job *j) {
        auto *read = static_cast<QKeychain::ReadPasswordJob *>(j);
        if (read->error() == QKeychain::NoError)
            done(read->textData(), QString());
        else if (read->error() == QKeychain::EntryNotFound)
            done(QString(), QString());
        else
            done(QString(), read->errorString());
    });
    job->start();
}

void ConnectionProfiles::writeKeychain(const QString &key, const QString &secret, QObject *context,
                                       std::function<void(const QString &)> done)
{
    auto *job = new QKeychain::WritePasswordJob(kKeychainService);
    job->setAutoDelete(true);
    job->setKey(key);
    job->setTextData(secret);
    QObject::connect(job, &QKeychain::Job::finished, context, [done](QKeychain::Job *j) {
        done(j->error() == QKeychain::NoError ? QString() : j->errorString());
    });
    job->start();
}

void ConnectionProfiles::deleteKeychain(const QString &key)
{
    auto *job = new QKeychain::DeletePasswordJob(kKeychainService);
    job->setAutoDelete(true);
    job->setKey(key);
    job->start();
}

QString ConnectionProfiles::otlpKeychainKey(const QString &profileName)
{
    return QStringLiteral("otlp:") + profileName;
}

void ConnectionProfiles::readOtlpExport(const ConnectionProfile &profile, QObject *context,
                                        std::function<void(const OtlpExportSettings &, const QString &)> done)
{
    OtlpExportSettings otlp{profile.otlpEndpoint, profile.otlpHeaderName, QString()};
    if (!otlp.isOn() || otlp.headerName.isEmpty()) {
        done(otlp, QString());
        return;
    }
    readKeychain(otlpKeychainKey(profile.name), context, [otlp, done](const QString &secret, const QString &error) {
        if (!error.isEmpty() || secret.isEmpty()) {
            done(OtlpExportSettings(), error.isEmpty() ? QObject::tr("the value of its header %1 is not in the OS keychain (connect it "
                                                                     "from the Connect dialog)").arg(otlp.headerName)
                                                       : QObject::tr("the OS keychain is not available (%1)").arg(error));
            return;
        }
        OtlpExportSettings read = otlp;
        read.headerValue = secret;
        done(read, QString());
    });
}

} // namespace mapi::ui
