#include "client/StreamTransports.h"

#include "client/ProcessLaunch.h"

#include <QLocalSocket>
#include <QTimer>

#include <utility>

namespace mapi {

QUrl launchUrl(const QString &commandLine)
{
    QUrl url;
    url.setScheme(QStringLiteral("stdio"));
    url.setPath(commandLine.trimmed(), QUrl::DecodedMode);
    return url;
}

QStringList launchCommand(const QUrl &url)
{
    if (url.scheme() != QLatin1String("stdio"))
        return {};
    return QProcess::splitCommand(url.path(QUrl::FullyDecoded));
}

QString connectionTargetText(const QUrl &url)
{
    return url.scheme() == QLatin1String("stdio") ? QStringLiteral("stdio:") + url.path(QUrl::FullyDecoded) : url.toString();
}

QString connectionTargetError(const QUrl &url)
{
    const QString scheme = url.scheme();
    if ((scheme == QLatin1String("ws") || scheme == QLatin1String("wss")) && url.isValid() && !url.host().isEmpty())
        return {};
    if (scheme == QLatin1String("stdio") && !launchCommand(url).isEmpty())
        return {};
    if (scheme == QLatin1String("unix") && !url.path().isEmpty())
        return {};
    return QStringLiteral("a MAP system is ws://HOST:PORT, wss://HOST:PORT, unix:/PATH (a local socket or named pipe) or "
                          "stdio:COMMAND (a command to launch, speaking on its stdin and stdout)");
}

Transport *createTransport(const QUrl &url, qint64 maxIncomingBytes)
{
    if (url.scheme() == QLatin1String("stdio"))
        return new ProcessTransport(maxIncomingBytes);
    if (url.scheme() == QLatin1String("unix"))
        return new LocalSocketTransport(maxIncomingBytes);
    return new WebSocketTransport(maxIncomingBytes);
}

// ---- any NDJSON stream ------------------------------------------------------------------------

StreamTransport::StreamTransport(qint64 maxLineBytes, QObject *parent)
    : Transport(parent)
    , m_framer(maxLineBytes)
{
}

void StreamTransport::sendText(const QByteArray &utf8)
{
    // A JSON text holds no raw newline (JSON escapes it): one message, one line.
    write(utf8 + '\n');
}

QString StreamTransport::frameOrigin() const
{
    return m_currentLine > 0 ? QStringLiteral("line %1 of %2").arg(m_currentLine).arg(streamName()) : QString();
}

void StreamTransport::resetStream()
{
    m_framer = NdjsonFramer(m_framer.maxLineBytes());
}

void StreamTransport::takeBytes(const QByteArray &bytes)
{
    deliver(m_framer.feed(bytes));
}

void StreamTransport::endOfStream()
{
    deliver(m_framer.finish());
}

void StreamTransport::deliver(std::vector<NdjsonFramer::Line> lines)
{
    QPointer<StreamTransport> alive(this); // a receiver may abort (and delete) us
    for (NdjsonFramer::Line &line : lines) {
        if (!alive)
            return;
        if (line.tooLong) {
            Q_EMIT lineDropped(line.number, line.bytes);
            continue;
        }
        m_currentLine = line.number;
        Q_EMIT textReceived(line.text);
        if (alive)
            m_currentLine = 0;
    }
}

// ---- a launched process -------------------------------------------------------------------------

ProcessTransport::ProcessTransport(qint64 maxLineBytes, QObject *parent)
    : StreamTransport(maxLineBytes, parent)
{
}

ProcessTransport::~ProcessTransport()
{
    m_reported = true;
    // Blocking, in the client's thread (a worker; the window may wait on it, hence the short
    // waits): each process ends, with what it started, before the console forgets it, so none is
    // left running behind a closed window. The current one, and any older one still in its grace
    // (a reopen ended it).
    const QList<QProcess *> processes = findChildren<QProcess *>(QString(), Qt::FindDirectChildrenOnly);
    for (QProcess *process : processes) {
        disconnect(process, nullptr, this, nullptr);
        ProcessGroup *group = ProcessGroup::of(process);
        if (process->state() != QProcess::NotRunning) {
            process->closeWriteChannel();
            if (!process->waitForFinished(kDestroyWaitMs)) {
                group->terminate();
                if (!process->waitForFinished(kDestroyWaitMs)) {
                    group->kill();
                    process->waitForFinished(kDestroyWaitMs);
                }
            }
        }
        group->leaderEnded();
    }
}

void ProcessTransport::open(const QUrl &url)
{
    if (QProcess *old = std::exchange(m_process, nullptr)) {
        disconnect(old, nullptr, this, nullptr);
        endProcess(old);
    }
    resetStream();
    m_stderrPartial.clear();
    m_reported = false;
    const QStringList command = launchCommand(url);
    const LaunchPlan plan = planLaunch(command);
    if (!plan.error.isEmpty()) {
        QMetaObject::invokeMethod(this, [this, error = plan.error] { reportClosed(error); }, Qt::QueuedConnection);
        return;
    }
    m_program = command.first();
    auto *process = new QProcess(this);
    m_process = process;
    applyLaunchPlan(process, plan);
    auto *group = new ProcessGroup(process);
    process->setProcessChannelMode(QProcess::SeparateChannels);
    // The group's own connection: it stays when this transport stops listening to the process.
    connect(process, &QProcess::started, group, &ProcessGroup::adopt);
    connect(process, &QProcess::started, this, [this] {
        if (m_reported)
            return; // aborted while it was starting
        m_open = true;
        Q_EMIT opened();
    });
    connect(process, &QProcess::readyReadStandardOutput, this, [this, process] { takeBytes(process->readAllStandardOutput()); });
    connect(process, &QProcess::readyReadStandardError, this, [this] { readStderr(false); });
    connect(process, &QProcess::errorOccurred, this, [this, process](QProcess::ProcessError error) {
        if (error == QProcess::FailedToStart)
            reportClosed(QStringLiteral("cannot start %1: %2").arg(m_program, process->errorString()));
    });
    // The end of its output is the end of the connection (a MAP server closes its side when the
    // session ends: the SDK's stock server does when its writer fails). Its exit code, when it
    // follows soon, is said with it.
    connect(process, &QProcess::readChannelFinished, this, [this, process] {
        QTimer::singleShot(500, process, [this, process] {
            if (process == m_process && process->state() != QProcess::NotRunning)
                reportClosed(QStringLiteral("%1 closed its output and is still running: it is being ended").arg(m_program));
        });
    });
    connect(process, &QProcess::finished, group, &ProcessGroup::leaderEnded); // what it started and left behind goes with it
    connect(process, &QProcess::finished, this, [this, process](int exitCode, QProcess::ExitStatus status) {
        takeBytes(process->readAllStandardOutput());
        readStderr(true);
        reportClosed(status == QProcess::CrashExit ? QStringLiteral("%1 crashed (%2)").arg(m_program, process->errorString())
                                                   : QStringLiteral("%1 ended with exit code %2").arg(m_program).arg(exitCode));
    });
    process->start(QIODevice::ReadWrite);
}

void ProcessTransport::reportClosed(const QString &reason)
{
    if (m_reported)
        return;
    m_reported = true;
    m_open = false;
    endOfStream();
    if (m_process && m_process->state() != QProcess::NotRunning)
        endProcess(m_process); // stays ours until it ends: the destructor waits for it
    Q_EMIT closed(reason);
}

void ProcessTransport::endProcess(QProcess *process)
{
    if (process->state() == QProcess::NotRunning) {
        if (process != m_process)
            process->deleteLater();
        return;
    }
    process->closeWriteChannel(); // a MAP server ends its session on EOF (the SDK's does)
    ProcessGroup *group = ProcessGroup::of(process);
    QTimer::singleShot(kGraceMs, group, &ProcessGroup::terminate);
    QTimer::singleShot(2 * kGraceMs, group, &ProcessGroup::kill);
    if (process != m_process)
        connect(process, &QProcess::finished, process, &QObject::deleteLater);
}

void ProcessTransport::abort()
{
    if (m_process)
        endProcess(m_process);
    if (!m_reported) {
        m_reported = true;
        m_open = false;
        Q_EMIT closed(QStringLiteral("closed by client"));
    }
}

void ProcessTransport::write(const QByteArray &bytes)
{
    if (m_open && m_process)
        m_process->write(bytes);
}

void ProcessTransport::readStderr(bool atEnd)
{
    if (!m_process)
        return;
    m_stderrPartial += m_process->readAllStandardError();
    qsizetype start = 0;
    for (qsizetype nl; (nl = m_stderrPartial.indexOf('\n', start)) >= 0; start = nl + 1) {
        QByteArray line = m_stderrPartial.mid(start, nl - start);
        if (line.endsWith('\r'))
            line.chop(1);
        for (qsizetype at = 0; at < line.size() || at == 0; at += kMaxDiagnosticLineBytes) // a long line in pieces
            Q_EMIT diagnosticLine(line.mid(at, kMaxDiagnosticLineBytes));
    }
    m_stderrPartial.remove(0, start);
    // A line that never ends is said in pieces of kMaxDiagnosticLineBytes: the buffer stays
    // bounded, nothing is dropped.
    while (m_stderrPartial.size() >= kMaxDiagnosticLineBytes) {
        Q_EMIT diagnosticLine(m_stderrPartial.left(kMaxDiagnosticLineBytes));
        m_stderrPartial.remove(0, kMaxDiagnosticLineBytes);
    }
    if (atEnd && !m_stderrPartial.isEmpty()) {
        Q_EMIT diagnosticLine(m_stderrPartial);
        m_stderrPartial.clear();
    }
}

// ---- a local socket ------------------------------------------------------------------------------

LocalSocketTransport::LocalSocketTransport(qint64 maxLineBytes, QObject *parent)
    : StreamTransport(maxLineBytes, parent)
    , m_socket(new QLocalSocket(this))
{
    connect(m_socket, &QLocalSocket::connected, this, [this] {
        m_connecting = false;
        m_reported = false;
        Q_EMIT opened();
    });
    connect(m_socket, &QLocalSocket::readyRead, this, [this] { takeBytes(m_socket->readAll()); });
    connect(m_socket, &QLocalSocket::disconnected, this, [this] {
        if (m_reported)
            return;
        m_reported = true;
        endOfStream();
        Q_EMIT closed(QStringLiteral("the other side closed the socket"));
    });
    // Failed before it opened: said once, as a close, so the client backs off. On Unix the error
    // comes while the socket is still "connecting", and a connection attempt that times out
    // emits no error at all: both are caught here, after the event that reported them.
    const auto connectFailed = [this] {
        if (!m_connecting || m_socket->state() == QLocalSocket::ConnectedState)
            return;
        m_connecting = false;
        const QString why = m_socket->errorString();
        QMetaObject::invokeMethod(this, [this, why] { Q_EMIT closed(why.isEmpty() ? QStringLiteral("cannot connect") : why); },
                                  Qt::QueuedConnection);
    };
    connect(m_socket, &QLocalSocket::errorOccurred, this, connectFailed);
    connect(m_socket, &QLocalSocket::stateChanged, this, [connectFailed](QLocalSocket::LocalSocketState state) {
        if (state == QLocalSocket::UnconnectedState)
            connectFailed();
    });
}

LocalSocketTransport::~LocalSocketTransport()
{
    m_reported = true;
}

void LocalSocketTransport::open(const QUrl &url)
{
    m_reported = true;
    m_connecting = false;
    resetStream();
    m_socket->abort();
    m_connecting = true;
    m_socket->connectToServer(url.path(QUrl::FullyDecoded));
}

void LocalSocketTransport::abort()
{
    const bool wasOpen = !m_reported;
    m_reported = true; // abort() says "disconnected" at once: not the other side's close
    m_connecting = false;
    m_socket->abort();
    if (wasOpen)
        Q_EMIT closed(QStringLiteral("closed by client"));
}

bool LocalSocketTransport::isOpen() const
{
    return m_socket->state() == QLocalSocket::ConnectedState;
}

void LocalSocketTransport::write(const QByteArray &bytes)
{
    m_socket->write(bytes);
}

} // namespace mapi
