// map-inspector-cli tap: the passive tap (core/tap/WebSocketTap.h) from the command line.
//
// stdout, JSON Lines: {"listening": URL, "upstream": URL} once listening (scripts wait for it),
// then {"open": conn, "url": …} and {"close": conn, "by": …, "code": …, "reason": …} per
// participant, then {"summary": counts} at the end (--duration S, Ctrl+C or SIGTERM).
#include "Commands.h"

#include "tap/WebSocketTap.h"

#include <QCoreApplication>
#include <QDateTime>
#include <QTimer>

#include <chrono>

namespace mapi::cli {

namespace {

// "127.0.0.1:8080", "[::1]:8080", "8080" (on 127.0.0.1).
ErrorOr<std::pair<QHostAddress, quint16>> parseListen(const QString &text)
{
    QString host = QStringLiteral("127.0.0.1");
    QString port = text;
    if (const qsizetype colon = text.lastIndexOf(QLatin1Char(':')); colon >= 0) {
        host = text.left(colon);
        port = text.mid(colon + 1);
        if (host.startsWith(QLatin1Char('[')) && host.endsWith(QLatin1Char(']')))
            host = host.mid(1, host.size() - 2);
    }
    bool ok = false;
    const uint number = port.toUInt(&ok);
    if (!ok || number > 65535)
        return Failure{QStringLiteral("--listen %1: HOST:PORT (a port from 0 to 65535; 0: chosen by the system)").arg(text)};
    const QHostAddress address = host.compare(QLatin1String("localhost"), Qt::CaseInsensitive) == 0
        ? QHostAddress(QHostAddress::LocalHost) : QHostAddress(host);
    return std::pair{address, quint16(number)};
}

Json countsJson(const TapCounts &c)
{
    return {{"participants", c.participants},       {"open", c.open},
            {"framesToServer", c.framesToServer},   {"framesToParticipants", c.framesToParticipants},
            {"bytesToServer", c.bytesToServer},     {"bytesToParticipants", c.bytesToParticipants},
            {"upstreamFailures", c.upstreamFailures}, {"undelivered", c.undelivered}, {"recordsWritten", c.recordsWritten},
            {"recordsNotWritten", c.recordsNotWritten}};
}

} // namespace

int commandTap(const QCommandLineParser &p, const Common &common)
{
    if (!p.isSet(QStringLiteral("upstream")))
        return failWith(Usage, QStringLiteral("tap needs --upstream ws://HOST:PORT/PATH (or wss://)"));
    TapOptions options;
    options.upstream = QUrl(p.value(QStringLiteral("upstream")), QUrl::StrictMode);
    const ErrorOr<std::pair<QHostAddress, quint16>> listen = parseListen(p.value(QStringLiteral("listen")));
    if (!listen)
        return failWith(Usage, listen.error());
    options.listenAddress = listen->first;
    options.listenPort = listen->second;
    if (const QString why = WebSocketTap::upstreamError(options.upstream); !why.isEmpty())
        return failWith(Usage, QStringLiteral("--upstream %1: %2").arg(options.upstream.toString(QUrl::RemoveUserInfo), why));
    if (const QString why = WebSocketTap::listenError(options.listenAddress); !why.isEmpty())
        return failWith(Usage, QStringLiteral("--listen %1: %2").arg(p.value(QStringLiteral("listen")), why));
    options.tracePath = p.value(QStringLiteral("out"));
    bool okBytes = false;
    bool okSeconds = false;
    const double rotateMb = p.value(QStringLiteral("rotate-mb")).toDouble(&okBytes);
    const double rotateSeconds = p.value(QStringLiteral("rotate-seconds")).toDouble(&okSeconds);
    if (!okBytes || !okSeconds || rotateMb < 0 || rotateSeconds < 0)
        return failWith(Usage, QStringLiteral("--rotate-mb and --rotate-seconds take a number (0: no rotation)"));
    options.traceOptions.maxBytes = qint64(rotateMb * 1024 * 1024);
    options.traceOptions.maxSeconds = qint64(rotateSeconds);

    // Before anything listens: a supervisor may signal as soon as it reads the first line. The
    // first Ctrl+C or SIGTERM ends the tap in order (everyone closed, the trace written out); a
    // second one ends the process at once (CliSupport.h).
    catchStopSignals();
    WebSocketTap tap;
    QString error;
    if (!tap.start(options, &error))
        return failWith(error.contains(QLatin1String("trace")) ? OutputUnwritable : ConnectionFailed, error);
    int exitCode = Ok;
    QObject::connect(&tap, &WebSocketTap::participantOpened, [](int conn, const QUrl &url) {
        printJson({{"open", conn}, {"time", QDateTime::currentMSecsSinceEpoch()},
                   {"url", WebSocketTap::shownUrl(url).toStdString()}}, -1);
    });
    QObject::connect(&tap, &WebSocketTap::participantClosed, [](int conn, const QString &by, int code, const QString &reason) {
        printJson({{"close", conn}, {"time", QDateTime::currentMSecsSinceEpoch()}, {"by", by.toStdString()},
                   {"code", code}, {"reason", reason.toStdString()}}, -1);
    });
    QObject::connect(&tap, &WebSocketTap::recordingFailed, [&exitCode](const QString &why) {
        failWith(OutputUnwritable, QStringLiteral("the trace cannot be written (the relay goes on): %1").arg(why));
        exitCode = OutputUnwritable;
    });
    printJson({{"listening", tap.listenUrl().toString().toStdString()},
               {"upstream", options.upstream.toString(QUrl::RemoveUserInfo).toStdString()},
               {"trace", options.tracePath.toStdString()}}, -1);

    const StopSignalWatch stopWatch([] { QCoreApplication::quit(); });
    if (common.durationS > 0)
        QTimer::singleShot(std::chrono::milliseconds(qint64(common.durationS * 1000)), [] { QCoreApplication::quit(); });
    QCoreApplication::exec();

    tap.stop();
    // The close frames just sent leave their sockets before the process ends (at most the
    // sockets' grace, WebSocketTap::kSocketGraceMs).
    QTimer::singleShot(500, [] { QCoreApplication::quit(); });
    QCoreApplication::exec();
    const TapCounts counts = tap.counts();
    printJson({{"summary", countsJson(counts)}, {"files", [&] {
                   Json files = Json::array();
                   for (const QString &f : tap.traceFiles())
                       files.push_back(f.toStdString());
                   return files;
               }()}}, -1);
    if (counts.recordsNotWritten > 0) {
        failWith(ObservedWithGaps, QStringLiteral("%1 frame(s) were relayed but not recorded (the disk fell behind)")
                                       .arg(counts.recordsNotWritten));
        return exitCode == Ok ? int(ObservedWithGaps) : exitCode;
    }
    return exitCode;
}

} // namespace mapi::cli
