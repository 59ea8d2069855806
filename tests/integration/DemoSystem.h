// Helpers for integration tests against the demo MAP system (official MAPServer).
#pragma once

#include "protocol/JsonRpc.h"

#include <QJsonObject>
#include <QList>
#include <QProcess>
#include <QString>
#include <QStringList>

namespace mapi::test {

// The URL of the CTest fixture's demo system (MAPI_DEMO_URL_FILE), or empty.
QString fixtureUrl();

// A demo system owned by one test (for kill/restart scenarios).
class DemoProcess
{
public:
    ~DemoProcess();
    // Starts node demo-system.mjs; returns false (with the reason in error()) if no URL within 30 s.
    bool start(const QString &mode, int port = 0, const QStringList &extraArgs = {});
    void kill();                    // SIGKILL, as a crash would
    QString url() const { return m_url; }
    int port() const;
    QString error() const { return m_error; }

private:
    QProcess m_process;
    QString m_url;
    QString m_error;
};

// HTTP on the demo system's port: GET /view, GET /stats, POST /control/quiesce, /control/activity.
// Returns null JSON on failure (with `error` set).
Json demoHttp(const QString &wsUrl, const QString &path, bool post = false, QString *error = nullptr);

struct CliResult
{
    int exitCode = -1;              // -1: it crashed (signal) or did not finish in time
    bool crashed = false;
    QByteArray out;
    QByteArray err;
    Json json() const;              // stdout parsed, or null
};
CliResult runCli(const QStringList &args, int timeoutMs = 60000);
// Waits for a CLI started by the caller (the event loop turning meanwhile), then its result;
// killed when still running after `timeoutMs` (exitCode -1).
CliResult finishCli(QProcess &process, int timeoutMs);

// A free TCP port on 127.0.0.1 (free when asked: another process may take it meanwhile).
int freePort();

// A MAP program started for one test (tools/interop's launchers, tools/demo-system's
// extensions demo): its stdout is one JSON object a line (ready, trafficDone, summary). Stopped
// (SIGTERM, then killed) when destroyed.
class Launcher
{
public:
    ~Launcher();
    // node [--experimental-websocket] `script` `args`, in `script`'s folder.
    bool start(const QString &node, const QString &script, const QStringList &args);
    // The first line with `key` true, within `ms` (the event loop turns meanwhile); empty (and
    // the launcher's stderr in a warning) when none came.
    QJsonObject waitFor(const QString &key, int ms);

private:
    QProcess m_process;
    QList<QJsonObject> m_lines;
};

// The CLI, started now and left running while the test waits for something else.
struct RunningCli
{
    QProcess process;
    void start(const QStringList &args) { process.start(QStringLiteral(MAPI_CLI_PATH), args); }
    CliResult finish(int ms) { return finishCli(process, ms); }
};

// Compares the CLI's `state` JSON with the server's /view: agents (id, name, role, state,
// parentId, scopes) and scopes (id, name, parentId, members). Empty when equal, else the
// differences, one per line.
QString diffStateWithView(const Json &state, const Json &view);

} // namespace mapi::test
