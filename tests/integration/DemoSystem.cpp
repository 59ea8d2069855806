#include "DemoSystem.h"

#include <QCoreApplication>
#include <QDeadlineTimer>
#include <QElapsedTimer>
#include <QFileInfo>
#include <QJsonDocument>
#include <QTcpServer>
#include <QEventLoop>
#include <QFile>
#include <QNetworkAccessManager>
#include <QNetworkReply>
#include <QRegularExpression>
#include <QTimer>
#include <QUrl>

#include <map>

namespace mapi::test {

QString fixtureUrl()
{
    QFile file(qEnvironmentVariable("MAPI_DEMO_URL_FILE"));
    if (!file.open(QIODevice::ReadOnly))
        return {};
    return QString::fromUtf8(file.readAll()).trimmed();
}

DemoProcess::~DemoProcess()
{
    if (m_process.state() != QProcess::NotRunning) {
        m_process.terminate();
        if (!m_process.waitForFinished(3000))
            m_process.kill();
        m_process.waitForFinished(3000);
    }
}

bool DemoProcess::start(const QString &mode, int port, const QStringList &extraArgs)
{
    m_url.clear();
    m_process.setProgram(QStringLiteral("node"));
    m_process.setArguments(QStringList{QStringLiteral(MAPI_DEMO_SCRIPT), QStringLiteral("--mode"), mode,
                                       QStringLiteral("--port"), QString::number(port)}
                           + extraArgs);
    m_process.setProcessChannelMode(QProcess::SeparateChannels);
    m_process.setStandardErrorFile(QProcess::nullDevice());
    m_process.start();
    if (!m_process.waitForStarted(10000)) {
        m_error = QStringLiteral("node did not start: %1").arg(m_process.errorString());
        return false;
    }
    QDeadlineTimer deadline(30000);
    QByteArray out;
    static const QRegularExpression urlPattern(QStringLiteral("ws://[^\\s]+"));
    while (!deadline.hasExpired()) {
        if (m_process.waitForReadyRead(200))
            out += m_process.readAllStandardOutput();
        const auto match = urlPattern.match(QString::fromUtf8(out));
        if (match.hasMatch()) {
            m_url = match.captured();
            return true;
        }
        if (m_process.state() == QProcess::NotRunning) {
            m_error = QStringLiteral("demo system exited with %1").arg(m_process.exitCode());
            return false;
        }
    }
    m_error = QStringLiteral("no URL within 30 s");
    return false;
}

void DemoProcess::kill()
{
    m_process.kill();
    m_process.waitForFinished(5000);
}

int DemoProcess::port() const
{
    return QUrl(m_url).port();
}

Json demoHttp(const QString &wsUrl, const QString &path, bool post, QString *error)
{
    QUrl url(wsUrl);
    url.setScheme(QStringLiteral("http"));
    url.setPath(path);
    url.setQuery(QString());
    QNetworkAccessManager nam;
    QNetworkRequest request(url);
    request.setHeader(QNetworkRequest::ContentTypeHeader, QStringLiteral("application/json"));
    request.setTransferTimeout(15000);
    QNetworkReply *reply = post ? nam.post(request, QByteArray("{}")) : nam.get(request);
    QEventLoop loop;
    QObject::connect(reply, &QNetworkReply::finished, &loop, &QEventLoop::quit);
    loop.exec();
    const QByteArray body = reply->readAll();
    const bool ok = reply->error() == QNetworkReply::NoError;
    if (!ok && error)
        *error = reply->errorString();
    reply->deleteLater();
    if (!ok)
        return Json();
    Json doc = Json::parse(body.constBegin(), body.constEnd(), nullptr, false);
    if (doc.is_discarded()) {
        if (error)
            *error = QStringLiteral("not JSON: %1").arg(QString::fromUtf8(body.left(200)));
        return Json();
    }
    return doc;
}

Json CliResult::json() const
{
    Json doc = Json::parse(out.constBegin(), out.constEnd(), nullptr, false);
    return doc.is_discarded() ? Json() : doc;
}

CliResult runCli(const QStringList &args, int timeoutMs)
{
    QProcess process;
    process.start(QStringLiteral(MAPI_CLI_PATH), args);
    if (!process.waitForStarted(10000))
        return CliResult();
    return finishCli(process, timeoutMs);
}

CliResult finishCli(QProcess &process, int timeoutMs)
{
    CliResult result;
    // Keep the event loop turning while waiting: the test may own servers in this thread.
    QDeadlineTimer deadline(timeoutMs);
    while (process.state() != QProcess::NotRunning && !deadline.hasExpired()) {
        QCoreApplication::processEvents(QEventLoop::AllEvents, 50);
        process.waitForFinished(50);
    }
    if (process.state() != QProcess::NotRunning) {
        process.kill();
        process.waitForFinished(3000);
        return result;
    }
    result.crashed = process.exitStatus() != QProcess::NormalExit;
    result.exitCode = result.crashed ? -1 : process.exitCode();
    result.out = process.readAllStandardOutput();
    result.err = process.readAllStandardError();
    return result;
}

int freePort()
{
    QTcpServer s;
    s.listen(QHostAddress::LocalHost, 0);
    return s.serverPort();
}

Launcher::~Launcher()
{
    if (m_process.state() != QProcess::NotRunning) {
        m_process.terminate();
        if (!m_process.waitForFinished(5000))
            m_process.kill();
        m_process.waitForFinished(3000);
    }
}

bool Launcher::start(const QString &node, const QString &script, const QStringList &args)
{
    m_process.setProcessChannelMode(QProcess::SeparateChannels);
    m_process.setWorkingDirectory(QFileInfo(script).absolutePath());
    m_process.start(node, QStringList{QStringLiteral("--experimental-websocket"), script} + args);
    return m_process.waitForStarted(10000);
}

QJsonObject Launcher::waitFor(const QString &key, int ms)
{
    QElapsedTimer clock;
    clock.start();
    while (clock.elapsed() < ms) {
        while (m_process.canReadLine())
            m_lines << QJsonDocument::fromJson(m_process.readLine()).object();
        for (const QJsonObject &o : std::as_const(m_lines))
            if (o.value(key).toBool())
                return o;
        if (m_process.state() == QProcess::NotRunning)
            break;
        QCoreApplication::processEvents(QEventLoop::AllEvents, 50);
        m_process.waitForReadyRead(50);
    }
    qWarning("no %s line; stderr: %s", qPrintable(key), m_process.readAllStandardError().right(3000).constData());
    return {};
}

static std::string str(const Json &j, const char *key)
{
    const Json *v = jsonChild(j, key);
    if (!v || v->is_null())
        return "null";
    return v->is_string() ? v->get<std::string>() : v->dump();
}

static std::string sortedList(const Json &j, const char *key)
{
    std::vector<std::string> items;
    if (const Json *v = jsonChild(j, key); v && v->is_array())
        for (const Json &item : *v)
            items.push_back(item.is_string() ? item.get<std::string>() : item.dump());
    std::sort(items.begin(), items.end());
    std::string out;
    for (const auto &s : items)
        out += s + ",";
    return out;
}

QString diffStateWithView(const Json &state, const Json &view)
{
    QStringList diffs;
    auto compare = [&](const char *listKey, std::initializer_list<const char *> fields, std::initializer_list<const char *> lists) {
        std::map<std::string, const Json *> mine, theirs;
        if (const Json *l = jsonChild(state, listKey); l && l->is_array())
            for (const Json &item : *l)
                mine[str(item, "id")] = &item;
        if (const Json *l = jsonChild(view, listKey); l && l->is_array())
            for (const Json &item : *l)
                theirs[str(item, "id")] = &item;
        for (const auto &[id, item] : theirs) {
            auto it = mine.find(id);
            if (it == mine.end()) {
                diffs << QStringLiteral("%1 %2 missing from the inspector").arg(QLatin1String(listKey), QString::fromStdString(id));
                continue;
            }
            for (const char *f : fields)
                if (str(*item, f) != str(*it->second, f))
                    diffs << QStringLiteral("%1 %2 .%3: server %4, inspector %5")
                                 .arg(QLatin1String(listKey), QString::fromStdString(id), QLatin1String(f),
                                      QString::fromStdString(str(*item, f)), QString::fromStdString(str(*it->second, f)));
            for (const char *f : lists)
                if (sortedList(*item, f) != sortedList(*it->second, f))
                    diffs << QStringLiteral("%1 %2 .%3: server [%4], inspector [%5]")
                                 .arg(QLatin1String(listKey), QString::fromStdString(id), QLatin1String(f),
                                      QString::fromStdString(sortedList(*item, f)),
                                      QString::fromStdString(sortedList(*it->second, f)));
        }
        for (const auto &[id, item] : mine)
            if (!theirs.count(id))
                diffs << QStringLiteral("%1 %2 shown by the inspector but not on the server")
                             .arg(QLatin1String(listKey), QString::fromStdString(id));
    };
    compare("agents", {"name", "role", "state", "parentId"}, {"scopes"});
    compare("scopes", {"name", "parentId"}, {"members"});
    return diffs.join(QLatin1Char('\n'));
}

} // namespace mapi::test
