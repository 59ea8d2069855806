// MAP over a byte stream, framed as NDJSON (one JSON-RPC message per line), the binding the MAP
// specification names for subprocess agents and the SDK implements as ndJsonStream():
//
//   stdio:COMMAND ARGS   the console starts COMMAND and speaks on its stdin/stdout; its stderr
//                        comes out as diagnosticLine(); the end of its output is a disconnect that
//                        names the exit code; it is never restarted by the client itself
//                        (reopensByItself() is false); closing ends the process (stdin closed,
//                        then terminate, then kill).
//   unix:/PATH           a local socket (a Unix domain socket; on Windows a named pipe, by name).
//                        A connection that fails is said as a close, so the client backs off.
//
// Lines that cannot be MAP messages (a child's own log lines on stdout) are delivered like any
// text frame, so they are counted and recorded as frames that do not parse; frameOrigin() names
// their line. Lines longer than the frame limit are dropped with lineDropped().
//
// Thread: the thread the transport lives in (the client's).
#pragma once

#include "client/NdjsonFramer.h"
#include "client/Transport.h"

#include <QPointer>
#include <QProcess>

class QLocalSocket;

namespace mapi {

// The URL of "launch this command": stdio: and the command line as typed.
QUrl launchUrl(const QString &commandLine);
// The program and its arguments of a stdio: URL (empty when there is none).
QStringList launchCommand(const QUrl &url);
// `url` as the operator typed it, for settings and lists: a launch command as "stdio:" and the
// command itself ('#', '?' and '%' as they are), anything else its URL text.
QString connectionTargetText(const QUrl &url);
// Empty when `url` is something the console can connect to (ws://HOST, wss://HOST, unix:/PATH,
// stdio:COMMAND); else a sentence saying what is accepted.
QString connectionTargetError(const QUrl &url);
// The transport for `url`'s scheme (WebSocketTransport for ws/wss).
Transport *createTransport(const QUrl &url, qint64 maxIncomingBytes);

class StreamTransport : public Transport
{
    Q_OBJECT
public:
    explicit StreamTransport(qint64 maxLineBytes, QObject *parent = nullptr);
    void sendText(const QByteArray &utf8) final;
    QString frameOrigin() const final;

protected:
    virtual void write(const QByteArray &bytes) = 0;
    virtual QString streamName() const = 0; // "the process's output"
    void resetStream();
    void takeBytes(const QByteArray &bytes);
    void endOfStream();

private:
    void deliver(std::vector<NdjsonFramer::Line> lines);
    NdjsonFramer m_framer;
    qint64 m_currentLine = 0;
};

class ProcessTransport final : public StreamTransport
{
    Q_OBJECT
public:
    static constexpr qsizetype kMaxDiagnosticLineBytes = 4096;
    // After stdin closes, the process has this long to end by itself, then as long again after
    // SIGTERM (TerminateProcess on Windows), then it is killed. When the transport itself goes
    // (its client deleted in the worker, which a window may be waiting for), the waits are
    // kDestroyWaitMs each instead: at most about a second, then kill.
    static constexpr int kGraceMs = 2000;
    static constexpr int kDestroyWaitMs = 300;

    explicit ProcessTransport(qint64 maxLineBytes, QObject *parent = nullptr);
    ~ProcessTransport() override;

    void open(const QUrl &url) override;
    void abort() override;
    bool isOpen() const override { return m_open; }
    bool reopensByItself() const override { return false; }

private:
    void write(const QByteArray &bytes) override;
    QString streamName() const override { return QStringLiteral("the process's output"); }
    void readStderr(bool atEnd);
    void reportClosed(const QString &reason);
    void endProcess(QProcess *process);

    QProcess *m_process = nullptr;
    QString m_program;
    bool m_open = false;
    bool m_reported = true;
    QByteArray m_stderrPartial;
};

class LocalSocketTransport final : public StreamTransport
{
    Q_OBJECT
public:
    explicit LocalSocketTransport(qint64 maxLineBytes, QObject *parent = nullptr);
    ~LocalSocketTransport() override;

    void open(const QUrl &url) override;
    void abort() override;
    bool isOpen() const override;

private:
    void write(const QByteArray &bytes) override;
    QString streamName() const override { return QStringLiteral("the socket's stream"); }

    QLocalSocket *m_socket = nullptr;
    bool m_reported = true;
    bool m_connecting = false; // connectToServer() asked, neither connected nor said closed yet
};

} // namespace mapi
