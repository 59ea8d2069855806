// Shared by the GUI tests: Qt warnings fail the test, and a store filled from a real capture.
#pragma once

#include "model/SystemStore.h"
#include "pipeline/ProtocolPipeline.h"
#include "TraceReplayer.h"
#include "trace/Trace.h"

#include <QtTest>

// Readable QCOMPARE failures for JSON values (found by argument-dependent lookup). Without them,
// QCOMPARE on two ordered_json values does not compile with MinGW: Qt probes for a QDebug
// operator<<, and the values' implicit conversions meet Windows' QDebug << MSG overload.
NLOHMANN_JSON_NAMESPACE_BEGIN
inline char *toString(const ordered_json &value)
{
    return qstrdup(value.dump(-1, ' ', false, ordered_json::error_handler_t::replace).c_str());
}
NLOHMANN_JSON_NAMESPACE_END

namespace mapi::test {

// Call from initTestCase(): any qWarning/qCritical from Qt or our code fails the test. Some
// platform noise of the offscreen plugin is ignored.
inline void failOnQtWarnings()
{
    qInstallMessageHandler([](QtMsgType type, const QMessageLogContext &, const QString &message) {
        if (type == QtDebugMsg || type == QtInfoMsg)
            return;
        if (message.contains(QLatin1String("XDG_RUNTIME_DIR")) || message.contains(QLatin1String("propagateSizeHints"))
            || message.contains(QLatin1String("This plugin does not support")))
            return;
        std::fprintf(stderr, "Qt warning turned into a failure: %s\n", qPrintable(message));
        std::fflush(stderr);
        std::abort();
    });
}

// Replays one of tests/data's captures into `store` (the live pipeline, no server needed).
inline void fillFromCapture(SystemStore &store, const char *name = "scenario-deliver.ndjson")
{
    mapi::test::TraceReplayer replayer(&store);
    TraceReadStats stats;
    QString error;
    replayer.replayFile(QStringLiteral(MAPI_TEST_DATA "/") + QLatin1String(name), stats, &error);
    store.flushChanges();
}

// Frames through the live pipeline into a store, as the client delivers them: MAP events built
// from a type and its data, agents, and seed-000 messages between agents.
class FrameFeed
{
public:
    explicit FrameFeed(SystemStore *store, qint64 startMs = 1790000000000)
        : m_store(store)
    {
        m_store->apply(m_pipeline.connectionOpened(QStringLiteral("ws://test"), startMs));
    }
    void event(const char *type, const Json &data, qint64 t)
    {
        ++m_seq;
        const Json inner = {{"id", "e" + std::to_string(m_seq)}, {"type", type}, {"timestamp", t}, {"data", data}};
        const Json params = {{"subscriptionId", "s"}, {"sequenceNumber", m_seq}, {"eventId", inner["id"]}, {"timestamp", t},
                             {"event", inner}};
        const Json frame = {{"jsonrpc", "2.0"}, {"method", "map/event"}, {"params", params}};
        m_store->apply(m_pipeline.frameReceived(QByteArray::fromStdString(frame.dump()), t).inputs);
    }
    void agent(const char *id, const char *name, qint64 t)
    {
        event("agent.registered", {{"agent", {{"id", id}, {"name", name}, {"role", "worker"}, {"state", "idle"}}}}, t);
    }
    // A message whose `to` is `to` (an id, or an array of ids), carrying a seed-000 envelope.
    void send(const char *from, const Json &to, const char *type, const Json &payload, qint64 t)
    {
        const std::string id = "m" + std::to_string(++m_messages);
        const Json envelope = {{"message_id", id}, {"type", type}, {"from", from}, {"to", to}, {"payload", payload}};
        event("message.sent", {{"message", {{"id", id}, {"from", from}, {"to", to}, {"payload", envelope}, {"timestamp", t}}}}, t);
    }

private:
    SystemStore *m_store;
    ProtocolPipeline m_pipeline;
    qint64 m_seq = 0;
    int m_messages = 0;
};

} // namespace mapi::test
