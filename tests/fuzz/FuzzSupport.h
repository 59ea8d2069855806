// What the harnesses of tests/fuzz share: the process set-up done once (a QCoreApplication for
// the code whose timers need an event dispatcher; Qt's messages kept quiet), the requests the
// live client sends on each connection, a file in memory for the readers that open a path, and
// what the views and the CLI read of a model once it is filled.
//
// Nothing here carries state from one input to the next, except that set-up and the constant
// request frames.
#pragma once

#include "model/ItemJson.h"
#include "model/StateJson.h"
#include "model/SystemStore.h"
#include "pipeline/ProtocolPipeline.h"

#include <QByteArray>
#include <QCoreApplication>
#include <QDir>
#include <QFile>
#include <QString>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#ifdef __linux__
#include <sys/mman.h>
#include <unistd.h>
#endif

namespace mapi::fuzz {

// Frames and records are stamped from here on (the captures' epoch), ms since the epoch.
constexpr qint64 kStartMs = 1795251940000;

// Qt's debug, info and warning messages are dropped: a damaged frame may make the code warn, and
// printing costs more than decoding. MAPI_FUZZ_VERBOSE=1 prints them all. Criticals are printed;
// qFatal still aborts, which libFuzzer reports as a crash.
inline void messageHandler(QtMsgType type, const QMessageLogContext &, const QString &message)
{
    static const bool verbose = qEnvironmentVariableIsSet("MAPI_FUZZ_VERBOSE");
    if (verbose || type == QtCriticalMsg || type == QtFatalMsg)
        std::fprintf(stderr, "%s\n", message.toLocal8Bit().constData());
}

enum class EventDispatcher { NotNeeded, Needed };

// Once per process, from LLVMFuzzerInitialize. `Needed`: SystemStore coalesces its changes with a
// QTimer, which needs the thread's event dispatcher, which QCoreApplication creates (without it
// every apply() warns "Timers can only be used with threads started with QThread"). No event loop
// runs: the harnesses call SystemStore::flushChanges() themselves.
inline void initProcess(EventDispatcher dispatcher)
{
    qInstallMessageHandler(messageHandler);
    if (dispatcher == EventDispatcher::Needed && !QCoreApplication::instance()) {
        // Not libFuzzer's argc/argv: Qt would read its flags.
        static int argc = 1;
        static char name[] = "mapi-fuzz";
        static char *argv[] = {name, nullptr};
        new QCoreApplication(argc, argv); // lives as long as the process
    }
}

// The harnesses' own checks (a round trip that must give back what went in) are findings like
// crashes: they abort. MAPI_FUZZ_NO_INVARIANTS=1 turns them off, leaving crashes, sanitizer
// reports, leaks and timeouts.
inline bool checkInvariants()
{
    static const bool on = !qEnvironmentVariableIsSet("MAPI_FUZZ_NO_INVARIANTS");
    return on;
}

[[noreturn]] inline void invariantBroken(const char *what, const QByteArray &detail = {})
{
    std::fprintf(stderr, "==mapi-fuzz== invariant broken: %s\n%s\n", what, detail.left(4096).constData());
    std::abort();
}

// ---- the client's side of a connection -----------------------------------------------------

// The requests MapClient sends on a connection (map/connect, map/subscribe, the snapshot, the gap
// replay, the liveness probe), and the partial queries whose answers the pipeline must not take
// for the whole truth. They are "sent" with these ids on every connection, so that a response
// with one of them is interpreted as that method's answer (agents, scopes, members, replayed
// events) rather than reported as unmatched. make_corpus.py gives the captures' responses these
// ids, and json.dict lists them.
struct ClientRequest
{
    int id;
    const char *method;
    const char *params; // JSON
};

inline constexpr ClientRequest kClientRequests[] = {
    {1, "map/connect",
     R"({"protocolVersion":1,"participantType":"client","name":"map-inspector","capabilities":{"observation":{"canObserve":true,"canQuery":true},"messaging":{"canSend":true,"canReceive":true},"lifecycle":{"canSteer":true,"canStop":true}}})"},
    {2, "map/subscribe", R"({"filter":{}})"},
    {3, "map/agents/list", "{}"},
    {4, "map/scopes/list", "{}"},
    {5, "map/scopes/members", R"({"scopeId":"scope-1"})"},
    {6, "map/replay", R"({"subscriptionId":"sub-1","since":"evt-1","afterEventId":"evt-1","limit":1000})"},
    {7, "map/agents/get", R"({"agentId":"agent-1"})"},
    {8, "map/authenticate", R"({"method":"bearer","credential":"REDACTED"})"},
    {9, "map/agents/list", R"({"filter":{"state":"busy"}})"}, // filtered: agents missing from it stay
    {10, "map/scopes/list", R"({"parentId":"scope-1"})"}, // partial: scopes missing from it stay
    {11, "map/session/info", "{}"}, // the liveness probe
};

inline const std::vector<QByteArray> &clientRequestFrames()
{
    static const std::vector<QByteArray> frames = [] {
        std::vector<QByteArray> out;
        for (const ClientRequest &r : kClientRequests)
            out.push_back(FrameCodec::encodeRequest(Json(r.id), QString::fromLatin1(r.method), Json::parse(r.params)));
        return out;
    }();
    return frames;
}

// What MapClient does once a socket is open: every request frame goes through the pipeline as
// sent (ProtocolPipeline::frameSent), which remembers it until its response comes.
inline void sendClientRequests(ProtocolPipeline &pipeline, qint64 timeMs)
{
    for (const QByteArray &frame : clientRequestFrames())
        pipeline.frameSent(frame, timeMs);
}

// ---- reading a filled model ----------------------------------------------------------------

// What the views and the CLI read of a model: the inspector's JSON of the newest events, messages,
// agents and tasks (ItemJson; frames and payloads read back from where the session keeps them:
// the journal, the trace file), and `map-inspector-cli state` (StateJson). Returns the bytes
// written, so that nothing of it is optimised away.
inline size_t readModelBack(const SystemStore &store, size_t newest = 32)
{
    size_t bytes = 0;
    const auto dumped = [&bytes](const auto &json) {
        bytes += json.dump(-1, ' ', false, Json::error_handler_t::replace).size();
    };
    const EventLog &events = store.events();
    for (size_t row = std::max(events.firstRow(), events.size() - std::min(events.size(), newest)); row < events.size();
         ++row)
        dumped(eventJson(store, int(row), store.eventFrame(int(row))));
    const MessageLog &messages = store.messages();
    for (size_t row = std::max(messages.firstRow(), messages.size() - std::min(messages.size(), newest));
         row < messages.size(); ++row)
        dumped(messageJson(store, int(row)));
    const size_t agents = std::min(store.agents().size(), newest);
    for (size_t row = 0; row < agents; ++row)
        dumped(agentJson(store, store.agents()[row]));
    const size_t tasks = std::min(store.tasks().size(), newest);
    for (size_t row = 0; row < tasks; ++row)
        dumped(taskJson(store, store.tasks()[row]));
    dumped(stateToJson(store));
    return bytes;
}

// ---- a file in memory ------------------------------------------------------------------------

// The trace readers open paths (TraceFileReader, DecompressingReader and ContentIndex each open
// the file themselves, the index a handle of its own), so each input is written to one file per
// process: in memory on Linux (memfd_create, opened again through /proc/self/fd/N, which gives
// every opener its own offset), else in the temporary folder (removed at exit).
class InputFile
{
public:
    InputFile()
    {
#ifdef __linux__
        m_fd = memfd_create("mapi-fuzz-input", 0);
        if (m_fd >= 0)
            m_path = QStringLiteral("/proc/self/fd/%1").arg(m_fd);
#endif
        if (m_path.isEmpty()) {
            m_path =
                QDir::temp().filePath(QStringLiteral("mapi-fuzz-%1.input").arg(QCoreApplication::applicationPid()));
            m_onDisk = true;
        }
    }
    ~InputFile()
    {
#ifdef __linux__
        if (m_fd >= 0)
            ::close(m_fd);
#endif
        if (m_onDisk)
            QFile::remove(m_path);
    }
    Q_DISABLE_COPY(InputFile)

    const QString &path() const
    {
        return m_path;
    }

    // Replaces the file's content with `data`. false: it could not be written.
    bool write(const uint8_t *data, size_t size)
    {
#ifdef __linux__
        if (m_fd >= 0) {
            if (::ftruncate(m_fd, 0) != 0)
                return false;
            size_t done = 0;
            while (done < size) {
                const ssize_t n = ::pwrite(m_fd, data + done, size - done, off_t(done));
                if (n <= 0)
                    return false;
                done += size_t(n);
            }
            return true;
        }
#endif
        QFile file(m_path);
        return file.open(QIODevice::WriteOnly | QIODevice::Truncate) &&
            file.write(reinterpret_cast<const char *>(data), qint64(size)) == qint64(size);
    }

private:
    QString m_path;
    bool m_onDisk = false;
#ifdef __linux__
    int m_fd = -1;
#endif
};

} // namespace mapi::fuzz
