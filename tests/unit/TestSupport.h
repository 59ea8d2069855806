// Shared helpers of the unit tests: a guard that turns every Qt warning into a test failure,
// builders for MAP frames, a reader for the recorded captures in tests/data (parsed with
// QJsonDocument, independently of core's parser), a small "wire" that drives a SystemStore
// through a ProtocolPipeline, and a way to run code that may crash in a child process.
#pragma once

#include "pipeline/ProtocolPipeline.h"
#include "map/Dialect.h"
#include "model/SystemStore.h"
#include "protocol/JsonRpc.h"

#include <QFile>
#include <QHash>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRegularExpression>
#include <QStringList>
#include <QtTest>

#include <csignal>
#include <cstdio>
#include <functional>

#ifndef Q_OS_WIN
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#endif

// Whether this program runs under AddressSanitizer (scripts/asan-unit.sh, where CI runs the unit
// tests). Code runs there 5-10 times slower, its allocations most of all: a test that sizes its
// load only to outlast a time slice needs a fraction of it there to do the same.
#if defined(__SANITIZE_ADDRESS__)
inline constexpr bool kUnderAddressSanitizer = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
inline constexpr bool kUnderAddressSanitizer = true;
#else
inline constexpr bool kUnderAddressSanitizer = false;
#endif
#else
inline constexpr bool kUnderAddressSanitizer = false;
#endif

// Readable QCOMPARE failures for JSON values (found by argument-dependent lookup).
NLOHMANN_JSON_NAMESPACE_BEGIN
inline char *toString(const json &value)
{
    return qstrdup(value.dump(-1, ' ', false, json::error_handler_t::replace).c_str());
}
inline char *toString(const ordered_json &value) // also needed to compile QCOMPARE for Windows
{
    return qstrdup(value.dump(-1, ' ', false, ordered_json::error_handler_t::replace).c_str());
}
NLOHMANN_JSON_NAMESPACE_END

namespace mapi_test {

using mapi::Json;

// ---- warnings are failures ---------------------------------------------------------------
//
// Usage in every test class:
//   initTestCase() { mapi_test::installWarningGuard(); }
//   init()         { mapi_test::armWarningGuard(); }
//   cleanup()      { MAPI_NO_WARNINGS(); }
//   cleanupTestCase() { MAPI_NO_WARNINGS(); }
// The handler chains to QTest's own handler, so output and QTest::failOnWarning still work.

inline QStringList &collectedWarnings()
{
    static QStringList list;
    return list;
}

inline QtMessageHandler &previousHandler()
{
    static QtMessageHandler handler = nullptr;
    return handler;
}

inline void warningGuardHandler(QtMsgType type, const QMessageLogContext &context, const QString &message)
{
    if (type == QtWarningMsg || type == QtCriticalMsg)
        collectedWarnings() << message;
    if (previousHandler())
        previousHandler()(type, context, message);
}

inline void installWarningGuard()
{
    collectedWarnings().clear();
    previousHandler() = qInstallMessageHandler(warningGuardHandler);
}

inline void armWarningGuard()
{
    // Qt >= 6.3: every warning emitted during the current test function is a failure.
    QTest::failOnWarning(QRegularExpression(QStringLiteral(".*")));
}

inline QString takeWarnings()
{
    const QString all = collectedWarnings().join(QStringLiteral(" | "));
    collectedWarnings().clear();
    return all;
}

#define MAPI_NO_WARNINGS()                                                                                        \
    do {                                                                                                          \
        const QString mapiWarnings = mapi_test::takeWarnings();                                                  \
        QVERIFY2(mapiWarnings.isEmpty(), qPrintable(QStringLiteral("Qt warnings were emitted: ") + mapiWarnings)); \
    } while (false)

// ---- small conversions ---------------------------------------------------------------------

inline QByteArray dump(const Json &json)
{
    return QByteArray::fromStdString(json.dump());
}

inline std::string s(const QString &text)
{
    return text.toStdString();
}

inline QString q(const char *text)
{
    return QString::fromUtf8(text);
}

// ---- frame builders ----------------------------------------------------------------------

inline QByteArray requestFrame(const Json &id, const QString &method, const Json &params = Json::object())
{
    return mapi::FrameCodec::encodeRequest(id, method, params);
}

inline QByteArray resultFrame(const Json &id, const Json &result)
{
    return dump(Json{{"jsonrpc", "2.0"}, {"id", id}, {"result", result}});
}

inline QByteArray errorFrame(const Json &id, int code, const QString &message)
{
    return dump(Json{{"jsonrpc", "2.0"}, {"id", id}, {"error", {{"code", code}, {"message", s(message)}}}});
}

// An [M]-shaped inner event object: {id, type, timestamp, data, source?}.
inline Json innerEvent(const QString &id, const QString &type, qint64 timestampMs, const Json &data,
                       const Json &source = Json())
{
    Json event = {{"id", s(id)}, {"type", s(type)}, {"timestamp", timestampMs}, {"data", data}};
    if (!source.is_null())
        event["source"] = source;
    return event;
}

// An [M]-shaped `map/event` notification around an inner event.
inline QByteArray eventFrame(const QString &subscriptionId, qint64 sequenceNumber, const Json &inner)
{
    Json params = {{"subscriptionId", s(subscriptionId)},
                   {"sequenceNumber", sequenceNumber},
                   {"eventId", inner.value("id", Json())},
                   {"timestamp", inner.value("timestamp", Json())},
                   {"event", inner}};
    return dump(Json{{"jsonrpc", "2.0"}, {"method", "map/event"}, {"params", params}});
}

// An agent record as [M] puts it inside events (RegAgent).
inline Json regAgent(const QString &id, const QString &name, const QString &state = QStringLiteral("idle"),
                     const QString &sessionId = {}, const Json &metadata = Json::object())
{
    Json agent = {{"id", s(id)}, {"name", s(name)}, {"role", "worker"}, {"state", s(state)}, {"metadata", metadata}};
    if (!sessionId.isEmpty())
        agent["sessionId"] = s(sessionId);
    return agent;
}

// ---- recorded captures (tests/data/*.ndjson) -----------------------------------------------

struct CaptureRecord
{
    int line = 0;       // 1-based line in the file
    QString dir;        // send | recv | open | close | ping | pong | note
    double timeMs = 0;
    QByteArray raw;     // exact frame text
    bool binary = false;
};

inline QString dataPath(const QString &name)
{
    return QStringLiteral(MAPI_TEST_DATA "/") + name;
}

// Reads a capture with QJsonDocument (not core's parser). Returns an empty list if unreadable.
inline QList<CaptureRecord> readCapture(const QString &path)
{
    QList<CaptureRecord> out;
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        return out;
    int lineNo = 0;
    while (!file.atEnd()) {
        const QByteArray line = file.readLine().trimmed();
        ++lineNo;
        if (line.isEmpty())
            continue;
        const QJsonObject o = QJsonDocument::fromJson(line).object();
        CaptureRecord r;
        r.line = lineNo;
        r.dir = o.value(QStringLiteral("dir")).toString();
        r.timeMs = o.value(QStringLiteral("t")).toDouble();
        r.raw = o.value(QStringLiteral("raw")).toString().toUtf8();
        r.binary = o.value(QStringLiteral("binary")).toBool();
        out << r;
    }
    return out;
}

// ---- captures parsed independently of core (QJsonDocument) ----------------------------------

inline QJsonObject jsonObject(const QByteArray &frame)
{
    return QJsonDocument::fromJson(frame).object();
}

inline QString idKey(const QJsonValue &id)
{
    if (id.isString())
        return QStringLiteral("s:") + id.toString();
    if (id.isDouble())
        return QStringLiteral("n:") + QString::number(id.toInteger());
    if (id.isNull())
        return QStringLiteral("null");
    return QStringLiteral("other");
}

struct Answer
{
    QString method;
    QJsonObject request;  // the params we sent
    QJsonValue result;
    int line = 0;
};

// Pairs every response of a capture with the request it answers (by id, in order), parsed with
// QJsonDocument. Only successful results are returned.
inline QList<Answer> answers(const QList<CaptureRecord> &records)
{
    QHash<QString, QJsonObject> pending;
    QList<Answer> out;
    for (const CaptureRecord &r : records) {
        const QJsonObject o = jsonObject(r.raw);
        if (r.dir == QLatin1String("send") && o.contains(QStringLiteral("method")) && o.contains(QStringLiteral("id")))
            pending.insert(idKey(o.value(QStringLiteral("id"))), o);
        if (r.dir == QLatin1String("recv") && !o.contains(QStringLiteral("method")) && o.contains(QStringLiteral("result"))) {
            const QJsonObject request = pending.take(idKey(o.value(QStringLiteral("id"))));
            out << Answer{request.value(QStringLiteral("method")).toString(),
                          request.value(QStringLiteral("params")).toObject(), o.value(QStringLiteral("result")), r.line};
        }
    }
    return out;
}

// ---- driving a store through the real pipeline ----------------------------------------------

// Plays the server side of one MAP connection ([M] shapes) into a SystemStore through a
// ProtocolPipeline, exactly as live traffic would arrive. Times advance 10 ms per frame unless
// given explicitly.
class Wire
{
public:
    explicit Wire(mapi::SystemStore &store, QString subscriptionId = QStringLiteral("sub-1"))
        : m_store(store)
        , m_subscriptionId(std::move(subscriptionId))
    {
        m_store.apply(m_pipeline.connectionOpened(QStringLiteral("ws://test"), m_now));
    }

    qint64 now() const { return m_now; }
    void setNow(qint64 t) { m_now = t; }
    // The server's clock against the local one: events arrive at now() and carry now() + this.
    void setServerClockOffset(qint64 ms) { m_serverClockMs = ms; }
    // The sequence number the next event follows.
    void setSequence(qint64 last) { m_sequence = last; }
    mapi::ProtocolPipeline &pipeline() { return m_pipeline; }

    // Pushes one received frame; returns what the pipeline made of it (already applied).
    mapi::InterpretedFrame receive(const QByteArray &frame)
    {
        mapi::InterpretedFrame f = m_pipeline.frameReceived(frame, m_now);
        m_store.apply(f.inputs);
        return f;
    }

    // A map/event with a fresh (increasing) event id, or `id` when given. `at` < 0: now + 10.
    QString event(const QString &type, const Json &data, const Json &source = Json(), QString id = {}, qint64 at = -1)
    {
        m_now = at >= 0 ? at : m_now + 10;
        if (id.isEmpty())
            id = QStringLiteral("%1-evt-%2").arg(m_subscriptionId).arg(++m_eventCounter, 6, 10, QLatin1Char('0'));
        receive(eventFrame(m_subscriptionId, ++m_sequence, innerEvent(id, type, m_now + m_serverClockMs, data, source)));
        return id;
    }

    // An event that arrives 10 ms from now but is stamped `timestampMs` (a broken clock).
    QString eventStampedAt(const QString &type, const Json &data, const Json &source, qint64 timestampMs)
    {
        m_now += 10;
        const QString id = QStringLiteral("%1-evt-%2").arg(m_subscriptionId).arg(++m_eventCounter, 6, 10, QLatin1Char('0'));
        receive(eventFrame(m_subscriptionId, ++m_sequence, innerEvent(id, type, timestampMs, data, source)));
        return id;
    }

    QString registerAgent(const QString &id, const QString &name, const QString &sessionId = {},
                          const Json &metadata = Json::object(), const QString &state = QStringLiteral("idle"),
                          qint64 at = -1)
    {
        Json source = {{"agentId", s(id)}};
        if (!sessionId.isEmpty())
            source["sessionId"] = s(sessionId);
        return event(QStringLiteral("agent.registered"), {{"agent", regAgent(id, name, state, sessionId, metadata)}},
                     source, {}, at);
    }

    QString setState(const QString &id, const QString &name, const QString &state, const QString &previous,
                     qint64 at = -1)
    {
        return event(QStringLiteral("agent.state.changed"),
                     {{"agent", regAgent(id, name, state)}, {"previousState", s(previous)}},
                     {{"agentId", s(id)}}, {}, at);
    }

    // message.sent as [M] emits it: `from` is whatever the server put there (often a session id).
    QString message(const QString &messageId, const QString &from, const Json &to, const Json &payload,
                    qint64 at = -1)
    {
        const qint64 t = at >= 0 ? at : m_now + 10;
        return event(QStringLiteral("message.sent"),
                     {{"message", {{"id", s(messageId)}, {"from", s(from)}, {"to", to}, {"payload", payload},
                                   {"timestamp", t + m_serverClockMs}}}},
                     {{"agentId", s(from)}}, {}, t);
    }

    // One request/response pair: our request, then the server's result.
    mapi::InterpretedFrame call(const QString &method, const Json &params, const Json &result)
    {
        const Json id = m_nextRequestId++;
        m_now += 10;
        m_pipeline.frameSent(requestFrame(id, method, params), m_now);
        m_now += 10;
        return receive(resultFrame(id, result));
    }

private:
    mapi::SystemStore &m_store;
    mapi::ProtocolPipeline m_pipeline;
    QString m_subscriptionId;
    qint64 m_now = 1'000'000;
    qint64 m_serverClockMs = 0;
    qint64 m_sequence = 0;
    int m_eventCounter = 0;
    int m_nextRequestId = 1;
};

// ---- isolation ---------------------------------------------------------------------------

// Runs `body` in a forked child so that a crash or memory corruption cannot take the test
// process down. The child gets default signal handlers, an 8 MiB stack limit and no core dumps.
// Returns the child's exit code (an escaping exception gives 99), or minus the signal number that
// killed it. Windows has no fork(): there the body runs in this process (the same assertions;
// a crash then ends the whole test binary instead of one case).
inline int runIsolated(const std::function<int()> &body)
{
#ifdef Q_OS_WIN
    try {
        return body();
    } catch (...) {
        return 99;
    }
#else
    std::fflush(stdout);
    std::fflush(stderr);
    const pid_t pid = fork();
    if (pid == 0) {
        // QTest's crash handler (stack dump through gdb) must not run in the child.
        for (int sig : {SIGSEGV, SIGBUS, SIGABRT, SIGFPE, SIGILL})
            std::signal(sig, SIG_DFL);
        rlimit noCore{0, 0};
        setrlimit(RLIMIT_CORE, &noCore);
        rlimit stack{8 * 1024 * 1024, 8 * 1024 * 1024};
        setrlimit(RLIMIT_STACK, &stack);
        int rc = 98;
        try {
            rc = body();
        } catch (...) {
            rc = 99;
        }
        _exit(rc);
    }
    if (pid < 0)
        return -1000;
    int status = 0;
    if (waitpid(pid, &status, 0) != pid)
        return -1001;
    if (WIFEXITED(status))
        return WEXITSTATUS(status);
    if (WIFSIGNALED(status))
        return -WTERMSIG(status);
    return -1002;
#endif
}

} // namespace mapi_test
