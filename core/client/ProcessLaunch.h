// What launching a MAP system as a child process (stdio:COMMAND) needs beyond QProcess:
//
// - finding the program the way the operator meant it: on the PATH, and on macOS also in
//   Homebrew's folders, which a program started from the Finder does not have on its PATH (`npx`,
//   `node`); on Windows a `.cmd` or `.bat` (npm's `npx.cmd`) is run through the command
//   interpreter, which CreateProcess needs for them;
// - ending the command together with the processes it started (`npx` starts `node`, a shell
//   starts its pipeline): on Unix the child leads a process group of its own and the group is
//   signalled; on Windows the child is put in a job object that is closed with it, and the job
//   is terminated.
//
// Thread: the thread of the QProcess (the client's).
#pragma once

#include <QObject>
#include <QString>
#include <QStringList>

class QProcess;

namespace mapi {

struct LaunchPlan
{
    QString program;        // what QProcess starts (a full path when it was found)
    QStringList arguments;  // its arguments (empty when nativeArguments carries them)
    QString nativeArguments; // Windows: the command line for the command interpreter
    QString pathPrefix;     // a folder to put first on the child's PATH (found outside the PATH)
    QString error;          // non-empty: the program cannot be started, in a sentence
};

// How to start `command` (program, then its arguments) on this platform. `searchPath` is the
// PATH to search (the environment's when null); `extraFolders` are searched after it (the
// platform's defaults when null: Homebrew's on macOS, none elsewhere).
LaunchPlan planLaunch(const QStringList &command, const QString *searchPath = nullptr, const QStringList *extraFolders = nullptr);

// Applies `plan` to `process` (program, arguments, PATH), before start().
void applyLaunchPlan(QProcess *process, const LaunchPlan &plan);

// The launched command and the processes it started, ended together. Created before start()
// as a child of the QProcess (it goes with it); adopt() once the process has started.
class ProcessGroup : public QObject
{
    Q_OBJECT
public:
    explicit ProcessGroup(QProcess *process);
    ~ProcessGroup() override;

    void adopt();     // after QProcess::started
    void terminate(); // SIGTERM to the group (Unix); the leader's terminate() on Windows
    void kill();      // SIGKILL to the group (Unix); the whole job (Windows)
    // The leader ended: what it started and left behind is ended too (SIGTERM on Unix, the job
    // terminated on Windows). Call at once from QProcess::finished, while its id cannot have
    // been taken by another process.
    void leaderEnded();
    static ProcessGroup *of(QProcess *process); // the group made for it (nullptr: none)

private:
    QProcess *m_process;
    qint64 m_pid = 0;        // the leader's, also its group's id (Unix)
    void *m_job = nullptr;   // Windows: the job object's handle
};

} // namespace mapi
