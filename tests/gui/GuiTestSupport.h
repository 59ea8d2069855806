// Shared by the GUI tests: Qt warnings fail the test, and a store filled from a real capture.
#pragma once

#include "model/SystemStore.h"
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

} // namespace mapi::test
