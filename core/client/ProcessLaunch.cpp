#include "client/ProcessLaunch.h"

#include <QDir>
#include <QFileInfo>
#include <QProcess>
#include <QProcessEnvironment>
#include <QStandardPaths>

#if defined(Q_OS_WIN)
#include <QRegularExpression>
#include <windows.h>
#elif defined(Q_OS_UNIX)
#include <csignal>
#include <sys/types.h>
#include <unistd.h>
#endif

namespace mapi {

namespace {

QStringList defaultExtraFolders()
{
#ifdef Q_OS_MACOS
    // A program started from the Finder or the Dock gets PATH=/usr/bin:/bin:/usr/sbin:/sbin;
    // Homebrew (Apple silicon, then Intel) is where node and npx usually are.
    return {QStringLiteral("/opt/homebrew/bin"), QStringLiteral("/usr/local/bin")};
#else
    return {};
#endif
}

#ifdef Q_OS_WIN
// One argument of a command line as the C runtime reads it back (quotes, and backslashes before
// a quote, escaped). The command interpreter still expands %VARIABLES% in it: said in the README.
QString quotedArgument(const QString &argument)
{
    if (!argument.isEmpty() && !argument.contains(QRegularExpression(QStringLiteral("[\\s\"&|<>^()=,;]"))))
        return argument;
    QString out = QStringLiteral("\"");
    int backslashes = 0;
    for (const QChar c : argument) {
        if (c == u'\\') {
            ++backslashes;
            continue;
        }
        if (c == u'"')
            out += QString(backslashes * 2 + 1, u'\\');
        else
            out += QString(backslashes, u'\\');
        backslashes = 0;
        out += c;
    }
    out += QString(backslashes * 2, u'\\');
    out += u'"';
    return out;
}
#endif

} // namespace

LaunchPlan planLaunch(const QStringList &command, const QString *searchPath, const QStringList *extraFolders)
{
    LaunchPlan plan;
    if (command.isEmpty() || command.first().isEmpty()) {
        plan.error = QStringLiteral("no command to launch");
        return plan;
    }
    const QString program = command.first();
    plan.arguments = command.mid(1);
    QString found = program;
    if (!program.contains(u'/') && !program.contains(u'\\')) { // a name: looked for as a shell would
        QString path = searchPath ? *searchPath : qEnvironmentVariable("PATH");
#ifdef Q_OS_UNIX
        if (!searchPath && !qEnvironmentVariableIsSet("PATH"))
            path = QStringLiteral("/usr/bin:/bin"); // as execvp() does without one
#endif
        const QStringList folders = path.split(QDir::listSeparator(), Qt::SkipEmptyParts);
        found = folders.isEmpty() ? QString() : QStandardPaths::findExecutable(program, folders);
        if (found.isEmpty()) {
            const QStringList extra = extraFolders ? *extraFolders : defaultExtraFolders();
            found = extra.isEmpty() ? QString() : QStandardPaths::findExecutable(program, extra);
            if (!found.isEmpty()) // what it starts in turn (npx starts node) is found beside it
                plan.pathPrefix = QDir::toNativeSeparators(QFileInfo(found).absolutePath());
        }
        if (found.isEmpty()) {
            const QStringList extra = extraFolders ? *extraFolders : defaultExtraFolders();
            plan.error = QStringLiteral("%1 is not found on this computer's PATH%2: give its full path, or start the console "
                                        "where the PATH has it")
                             .arg(program, extra.isEmpty() ? QString() : QStringLiteral(" (nor in %1)").arg(extra.join(QStringLiteral(", "))));
            return plan;
        }
    }
    plan.program = found;
#ifdef Q_OS_WIN
    // npm's npx, and many tools installed by it, are .cmd scripts: CreateProcess runs those only
    // through the command interpreter.
    if (found.endsWith(QLatin1String(".cmd"), Qt::CaseInsensitive) || found.endsWith(QLatin1String(".bat"), Qt::CaseInsensitive)) {
        for (const QString &argument : std::as_const(plan.arguments))
            if (argument.contains(u'"')) { // the interpreter's quoting cannot carry one safely
                plan.error = QStringLiteral("%1 is a batch script: its arguments cannot contain a double quote (\"); run the "
                                            "program it starts directly instead")
                                 .arg(program);
                return plan;
            }
        QStringList parts{quotedArgument(QDir::toNativeSeparators(found))};
        for (const QString &argument : std::as_const(plan.arguments))
            parts << quotedArgument(argument);
        // The system's own interpreter, never a cmd.exe of the working folder.
        wchar_t system[MAX_PATH] = {};
        const UINT length = GetSystemDirectoryW(system, MAX_PATH);
        plan.program = length > 0 && length < MAX_PATH ? QString::fromWCharArray(system, int(length)) + QStringLiteral("\\cmd.exe")
                                                      : qEnvironmentVariable("ComSpec");
        plan.nativeArguments = QStringLiteral("/d /s /c \"%1\"").arg(parts.join(u' '));
        plan.arguments.clear();
    }
#endif
    return plan;
}

void applyLaunchPlan(QProcess *process, const LaunchPlan &plan)
{
    process->setProgram(plan.program);
    process->setArguments(plan.arguments);
#ifdef Q_OS_WIN
    if (!plan.nativeArguments.isEmpty())
        process->setNativeArguments(plan.nativeArguments);
#endif
    if (!plan.pathPrefix.isEmpty()) {
        QProcessEnvironment environment = QProcessEnvironment::systemEnvironment();
        const QString path = environment.value(QStringLiteral("PATH"));
        environment.insert(QStringLiteral("PATH"), path.isEmpty() ? plan.pathPrefix : plan.pathPrefix + QDir::listSeparator() + path);
        process->setProcessEnvironment(environment);
    }
}

// ---- the group ---------------------------------------------------------------------------------

ProcessGroup::ProcessGroup(QProcess *process)
    : QObject(process)
    , m_process(process)
{
#if defined(Q_OS_UNIX)
    // In the child, before exec: a process group of its own, led by it, so that what it starts
    // (in that group unless it makes its own) is signalled with it.
    process->setChildProcessModifier([] { ::setpgid(0, 0); });
#endif
}

ProcessGroup::~ProcessGroup()
{
#ifdef Q_OS_WIN
    if (m_job)
        CloseHandle(static_cast<HANDLE>(m_job)); // KILL_ON_JOB_CLOSE: what is left of it ends
#endif
}

ProcessGroup *ProcessGroup::of(QProcess *process)
{
    return process->findChild<ProcessGroup *>(QString(), Qt::FindDirectChildrenOnly);
}

void ProcessGroup::adopt()
{
    m_pid = m_process->processId();
#ifdef Q_OS_WIN
    if (m_pid <= 0 || m_job)
        return;
    HANDLE job = CreateJobObjectW(nullptr, nullptr);
    if (!job)
        return;
    JOBOBJECT_EXTENDED_LIMIT_INFORMATION limits{};
    limits.BasicLimitInformation.LimitFlags = JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE;
    HANDLE handle = OpenProcess(PROCESS_SET_QUOTA | PROCESS_TERMINATE, FALSE, DWORD(m_pid));
    const bool adopted = handle && SetInformationJobObject(job, JobObjectExtendedLimitInformation, &limits, sizeof limits)
                         && AssignProcessToJobObject(job, handle);
    if (handle)
        CloseHandle(handle);
    if (!adopted) { // the leader alone, as QProcess ends it
        CloseHandle(job);
        return;
    }
    m_job = job;
#endif
}

void ProcessGroup::terminate()
{
#if defined(Q_OS_UNIX)
    if (m_pid > 0 && m_process->state() != QProcess::NotRunning && ::kill(-pid_t(m_pid), SIGTERM) == 0)
        return; // else no such group (its setpgid failed): the leader alone
#endif
    m_process->terminate();
}

void ProcessGroup::kill()
{
#if defined(Q_OS_UNIX)
    if (m_pid > 0 && m_process->state() != QProcess::NotRunning && ::kill(-pid_t(m_pid), SIGKILL) == 0)
        return;
#elif defined(Q_OS_WIN)
    if (m_job) {
        TerminateJobObject(static_cast<HANDLE>(m_job), 1);
        return;
    }
#endif
    m_process->kill();
}

void ProcessGroup::leaderEnded()
{
#if defined(Q_OS_UNIX)
    // The group's id stays the leader's while any member is alive, so it names nobody else.
    if (m_pid > 0)
        ::kill(-pid_t(m_pid), SIGTERM);
#elif defined(Q_OS_WIN)
    if (m_job)
        TerminateJobObject(static_cast<HANDLE>(m_job), 1);
#endif
    m_pid = 0;
}

} // namespace mapi
