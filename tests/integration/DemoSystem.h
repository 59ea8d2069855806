// Helpers for integration tests against the demo MAP system (official MAPServer).
#pragma once

#include "protocol/JsonRpc.h"

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

// Compares the CLI's `state` JSON with the server's /view: agents (id, name, role, state,
// parentId, scopes) and scopes (id, name, parentId, members). Empty when equal, else the
// differences, one per line.
QString diffStateWithView(const Json &state, const Json &view);

} // namespace mapi::test
