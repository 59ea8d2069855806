// The commands that connect to a server: state --url, record, watch, rules, inject, stop,
// suspend, resume.
#include "Commands.h"
#include "LiveRun.h"
#include "LiveTelemetry.h"

#include "alerts/AlertEngine.h"
#include "alerts/AlertGroups.h"
#include "map/PayloadConventions.h"
#include "model/AgentLookup.h"
#include "model/CausalChains.h"
#include "model/StateJson.h"
#include "model/SystemStore.h"
#include "session/InspectorSession.h"
#include "trace/Trace.h"
#include "trace/ModelExport.h"
#include "trace/IncidentBundle.h"
#include "trace/Otlp.h"
#include "trace/PartRetention.h"
#include "trace/RunDiff.h"
#include "trace/TraceLoader.h"

#include <QCommandLineParser>
#include <QCoreApplication>
#include <QDateTime>
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QTimer>

#include <algorithm>
#include <cmath>
#ifdef Q_OS_WIN
#include <io.h>
#else
#include <unistd.h>
#endif
#include <csignal>
#include <cstdio>
#include <functional>
#include <map>
#include <optional>
#include <set>

using namespace mapi;
namespace mapi::cli {

// What an observation lost on the way: its drops (each with its reason and when the connection
// was back, null when not by the end), the gaps the model recorded (reconnects, jumps in the
// events' sequence numbers, events the server could not replay) and what the server did not
// give (failed methods, a silent server, drift from its own agent list: ObservationNotes).
Json observationJson(const LiveRun &run, const SystemStore &store, double durationS)
{
    Json drops = Json::array();
    for (const LiveRun::Drop &d : run.drops)
        drops.push_back({{"at", isoTime(d.atMs).toStdString()},
                         {"reason", d.reason.toStdString()},
                         {"backAt", d.backAtMs ? Json(isoTime(d.backAtMs).toStdString()) : Json()}});
    Json missing = Json::array();
    for (const QString &reason : store.observation().missing())
        missing.push_back(reason.toStdString());
    const bool complete = run.drops.empty() && store.counters().gaps == 0 && store.observation().complete();
    return {{"durationS", durationS}, {"complete", complete}, {"drops", drops},
            {"dropsNotListed", run.dropsNotListed}, {"gaps", store.counters().gaps}, {"missing", missing}};
}

// Ok for a whole observation; ObservedWithGaps, said on stderr, when it lost anything.
int observationExit(const LiveRun &run, const SystemStore &store)
{
    const ObservationNotes &notes = store.observation();
    if (run.drops.empty() && store.counters().gaps == 0 && notes.complete())
        return Ok;
    const bool backAtEnd = run.drops.empty() || run.drops.back().backAtMs != 0;
    std::fprintf(stderr, "map-inspector-cli: the observation is incomplete: %zu connection drop(s), %lld gap(s) in the model%s\n",
                 run.drops.size() + size_t(run.dropsNotListed), static_cast<long long>(store.counters().gaps),
                 backAtEnd ? "" : "; not reconnected by the end");
    for (const QString &reason : notes.missing())
        std::fprintf(stderr, "map-inspector-cli: %s\n", qPrintable(redactSecrets(reason)));
    return ObservedWithGaps;
}

// One LiveRun per system of common.urls, each given to `prepare` and started; returns when every
// one finished (the event loop runs meanwhile).
std::vector<std::unique_ptr<LiveRun>> startRuns(const Common &common, const std::function<void(LiveRun &)> &prepare);
// The code of several systems' observations: the worst of `codes` (see there).
int worstExitCode(const std::vector<int> &codes);

int commandState(const QCommandLineParser &p, const Common &common)
{
    if (p.isSet(QStringLiteral("trace"))) {
        SystemStore store;
        ReadProgress progress;
        const TraceLoadResult r = loadTraceInto(store, p.value(QStringLiteral("trace")), traceLoadFor(store, common, true),
                                                  progress.callback());
        progress.done();
        if (!r.ok)
            return failWith(TraceUnreadable, r.error);
        const TraceReadStats &stats = r.stats;
        StateJsonOptions options;
        options.listAgents = false; // printStateJson writes them one at a time
        Json out = stateToJson(store, options);
        out["trace"] = {{"records", stats.records},
                        {"format", stats.format.toStdString()},
                        {"compression", stats.compression.toStdString()},
                        {"badLines", badLinesJson(stats)}};
        if (!stats.streamError.isEmpty())
            out["trace"]["streamError"] = stats.streamError.toStdString();
        printStateJson(store, out);
        reportDamage(stats, store);
        return Ok;
    }
    std::vector<std::unique_ptr<LiveRun>> runs = startRuns(common, [&](LiveRun &run) {
        run.onLive = [&run, &common] {
            QTimer::singleShot(int(common.durationS * 1000), &run.session, [&run] { run.finishAfterCheck(Ok); });
        };
    });
    // A look (no --duration) says what it could not learn too: a server that failed a method,
    // stopped answering or drifted from its own list is no complete picture.
    const auto stateOf = [&](LiveRun &run, bool listAgents) {
        StateJsonOptions options;
        options.listAgents = listAgents;
        Json out = stateToJson(run.store(), options);
        out["observation"] = observationJson(run, run.store(), common.durationS);
        return out;
    };
    if (runs.size() == 1) {
        LiveRun &run = *runs.front();
        if (run.exitCode() != Ok)
            return failWith(run.exitCode(), run.error);
        printStateJson(run.store(), stateOf(run, false));
        return observationExit(run, run.store());
    }
    Json systems = Json::object();
    std::vector<int> codes;
    for (const auto &run : runs) {
        std::string key = run->label().toStdString();
        for (int n = 2; systems.contains(key); ++n) // the same system twice (or URLs equal once redacted)
            key = run->label().toStdString() + " #" + std::to_string(n);
        if (run->exitCode() != Ok) {
            std::fprintf(stderr, "map-inspector-cli: %s: %s\n", key.c_str(), qPrintable(redactSecrets(run->error)));
            systems[key] = {{"error", redactSecrets(run->error).toStdString()}, {"exitCode", run->exitCode()}};
            codes.push_back(run->exitCode());
            continue;
        }
        systems[key] = stateOf(*run, true);
        codes.push_back(observationExit(*run, run->store()));
    }
    printJson({{"systems", systems}});
    return worstExitCode(codes);
}

std::vector<std::unique_ptr<LiveRun>> startRuns(const Common &common, const std::function<void(LiveRun &)> &prepare)
{
    std::vector<std::unique_ptr<LiveRun>> runs;
    int running = int(common.urls.size());
    for (const QUrl &url : common.urls) {
        runs.push_back(std::make_unique<LiveRun>(common, url));
        prepare(*runs.back());
    }
    for (const auto &run : runs)
        run->start([&running] {
            if (--running == 0)
                QCoreApplication::exit(0);
        });
    QCoreApplication::exec();
    return runs;
}

int worstExitCode(const std::vector<int> &codes)
{
    // A system that could not be observed (a connection or credential refused, ...) is worse
    // than an observation with gaps, which is worse than a whole one; the first such code wins.
    for (const int code : codes)
        if (code != Ok && code != ObservedWithGaps)
            return code;
    for (const int code : codes)
        if (code == ObservedWithGaps)
            return code;
    return Ok;
}

ErrorOr<AlertRules> rulesOption(const QCommandLineParser &p);

namespace {

// --keep-parts N and --keep-mb N (trace/PartRetention.h), which need rotation: without it a
// recording is one part, the one being written, which is never deleted.
ErrorOr<RetentionPolicy> retentionOption(const QCommandLineParser &p, const TraceWriterOptions &writerOptions)
{
    RetentionPolicy policy;
    if (p.isSet(QStringLiteral("keep-parts"))) {
        bool ok = false;
        policy.keepParts = p.value(QStringLiteral("keep-parts")).toInt(&ok);
        if (!ok || policy.keepParts < 1)
            return Failure{QStringLiteral("--keep-parts must be a whole number of parts, 1 or more")};
    }
    if (p.isSet(QStringLiteral("keep-mb"))) {
        bool ok = false;
        const double mb = p.value(QStringLiteral("keep-mb")).toDouble(&ok);
        if (!ok || !(mb > 0) || mb > 1e9)
            return Failure{QStringLiteral("--keep-mb must be a positive number of MiB")};
        policy.keepBytes = std::max<qint64>(1, qint64(mb * 1024 * 1024));
    }
    if (policy.any() && writerOptions.maxBytes <= 0 && writerOptions.maxSeconds <= 0)
        return Failure{QStringLiteral("--keep-parts and --keep-mb need --rotate-mb or --rotate-seconds (without rotation a "
                                      "recording is one part, and the part being written is never deleted)")};
    return policy;
}

const char *signalName(int signal)
{
    switch (signal) {
    case SIGINT: return "SIGINT";
    case SIGTERM: return "SIGTERM";
#ifdef SIGBREAK
    case SIGBREAK: return "SIGBREAK";
#endif
    default: return "a stop signal";
    }
}

} // namespace

// record: every frame of one connection to a trace, until --duration ends or, without it, until
// SIGTERM or SIGINT (an unattended collector, docs/fleet.md). Either way the first such signal
// stops it in order: the server's agent list compared (LiveRun::finishAfterCheck, at most the
// probe's timeout and 2 s), the connection closed, the trace's last part closed whole, the
// telemetry's last batch sent (LiveTelemetry::kFinishWithinMs), the "recorded" line, exit 0 or
// 8 as for a duration; a second signal ends the process at once (CliSupport.h).
int commandRecord(const QCommandLineParser &p, const Common &common)
{
    if (!p.isSet(QStringLiteral("out")))
        return failWith(Usage, QStringLiteral("record needs --out FILE"));
    const QString outPath = p.value(QStringLiteral("out"));
    const ErrorOr<TelemetryOptions> telemetryWanted = telemetryOptions(p);
    if (!telemetryWanted)
        return failWith(Usage, telemetryWanted.error());
    const ErrorOr<AlertRules> rules = rulesOption(p); // the detectors behind the telemetry's alerts
    if (!rules)
        return failWith(Usage, rules.error());
    TraceWriterOptions writerOptions;
    writerOptions.maxBytes = qint64(p.value(QStringLiteral("rotate-mb")).toDouble() * 1024 * 1024);
    writerOptions.maxSeconds = p.value(QStringLiteral("rotate-seconds")).toLongLong();
    const ErrorOr<RetentionPolicy> retentionWanted = retentionOption(p, writerOptions);
    if (!retentionWanted)
        return failWith(Usage, retentionWanted.error());
    // Before the metrics responder listens and the file exists: a supervisor may stop the
    // collector as soon as it sees either.
    catchStopSignals();
    LiveRun run(common);
    LiveTelemetry telemetry(*telemetryWanted);
    telemetry.add(run, nullptr, *rules);
    if (QString why; !telemetry.start(&why))
        return failWith(Usage, QStringLiteral("--metrics: %1").arg(why));
    if (common.durationS > 0)
        QTimer::singleShot(int(common.durationS * 1000), &run.session, [&] { run.finishAfterCheck(Ok); });
    const StopSignalWatch stopWatch([&run] {
        std::fprintf(stderr, "map-inspector-cli: %s: stopping (closing the trace; a second signal ends at once)\n",
                     signalName(stopSignalReceived()));
        run.finishAfterCheck(Ok);
    });

    // Retention: each part the recording starts is told (the session says a rotation as a
    // recordingChanged with the new part's path), and the policy is applied then; a byte limit
    // also every 10 s, as the part being written grows.
    std::optional<PartRetention> retention;
    QTimer retentionTick;
    if (retentionWanted->any())
        retention.emplace(outPath, *retentionWanted);
    const auto applyRetention = [&retention] {
        for (const PartRetention::Outcome &o : retention->apply()) {
            const QString path = QDir::toNativeSeparators(o.path);
            if (o.error.isEmpty())
                std::fprintf(stderr, "map-inspector-cli: retention deleted the old part %s (%.1f MiB)\n", qPrintable(path),
                             double(o.bytes) / (1024.0 * 1024.0));
            else
                std::fprintf(stderr, "map-inspector-cli: retention could not delete the old part %s (%s); it is no longer counted\n",
                             qPrintable(path), qPrintable(o.error));
        }
    };
    QMetaObject::Connection partsTold;
    if (retention) {
        partsTold = QObject::connect(&run.session, &InspectorSession::recordingChanged, &run.session, [&run, &retention, &applyRetention](bool on) {
            const QString part = run.session.recordingPath();
            if (on && !part.isEmpty() && retention->partStarted(part)) // also said for other changes: told once
                applyRetention();
        });
        if (retentionWanted->keepBytes > 0) {
            retentionTick.setInterval(10000);
            QObject::connect(&retentionTick, &QTimer::timeout, &retentionTick, applyRetention);
            retentionTick.start();
        }
    }

    QString error;
    const int code = run.runRecording(outPath, writerOptions, &error);
    QObject::disconnect(partsTold); // the session outlives what the slot uses
    retentionTick.stop();
    telemetry.finish();
    if (code == OutputUnwritable && !error.isEmpty()) // the file could not be created
        return failWith(OutputUnwritable, error);
    if (code != Ok)
        return failWith(code, run.error);
    QStringList files = run.recordedFiles;
    QString deletedNote;
    if (retention) {
        applyRetention(); // the last part's final size (a byte limit)
        for (const QString &gone : retention->deleted())
            files.removeAll(gone);
        if (!retention->deleted().isEmpty())
            deletedNote = QStringLiteral(" (and %1 older part(s), deleted by retention)").arg(retention->deleted().size());
    }
    std::fprintf(stderr, "map-inspector-cli: recorded %lld records, %lld events to %s%s\n",
                 static_cast<long long>(run.recordedRecords), static_cast<long long>(run.store().counters().eventsApplied),
                 qPrintable(files.join(QStringLiteral(", "))), qPrintable(deletedNote));
    if (!run.recordingError.isEmpty())
        return failWith(OutputUnwritable, run.recordingError);
    // Stopped before the system was ever reached (an unattended collector waits for it): nothing
    // of it was recorded, which no exit 0 may hide.
    if (common.untilStopped && !run.session.hasBeenLive())
        return failWith(ConnectionFailed, QStringLiteral("stopped before the first connection to %1 (%2)")
                                              .arg(run.label(), run.session.lastError()));
    return observationExit(run, run.store());
}

// The alert rules of --rules FILE (defaults without it) with --heartbeat-interval over them.
ErrorOr<AlertRules> rulesOption(const QCommandLineParser &p)
{
    AlertRules rules;
    if (p.isSet(QStringLiteral("rules"))) {
        ErrorOr<AlertRules> read = readAlertRulesFile(p.value(QStringLiteral("rules")));
        if (!read)
            return Failure{read.error()};
        rules = *read;
    }
    if (p.isSet(QStringLiteral("heartbeat-interval"))) {
        bool ok = false;
        const double s = p.value(QStringLiteral("heartbeat-interval")).toDouble(&ok);
        if (!ok || !(s >= 0.1 && s <= 86400))
            return Failure{QStringLiteral("--heartbeat-interval must be a number of seconds from 0.1 to 86400")};
        rules.heartbeatIntervalMs = qint64(std::llround(s * 1000));
    }
    return rules;
}

// rules: the alert rules in effect (the defaults, or --rules FILE checked and completed).
int commandRules(const QCommandLineParser &p)
{
    const ErrorOr<AlertRules> rules = rulesOption(p);
    if (!rules)
        return failWith(Usage, rules.error());
    printJson(alertRulesToJson(*rules));
    return Ok;
}

// watch --group: one line per group notice ("state": new, grown or resolved), with its system
// when several are watched.
void printGroupNotices(const std::vector<AlertGroups::Notice> &notices, qint64 atMs, const QString &system)
{
    for (const AlertGroups::Notice &notice : notices)
        printJson(AlertGroups::noticeToJson(notice, atMs, system), -1);
}

// watch: the detectors over a live connection, one JSON line per alert raised or cleared, until
// --duration ends (or forever); then one "summary" line. Survives drops like every observation.
int commandWatch(const QCommandLineParser &p, const Common &common)
{
    const ErrorOr<AlertRules> rules = rulesOption(p);
    if (!rules)
        return failWith(Usage, rules.error());
    std::optional<AlertSeverity> exitOn;
    if (p.isSet(QStringLiteral("exit-on"))) {
        exitOn = alertSeverityFromName(p.value(QStringLiteral("exit-on")));
        if (!exitOn)
            return failWith(Usage, QStringLiteral("--exit-on must be info, warning or critical"));
    }
    // --group: alerts of a group large enough (AlertGroups, the rules' "grouping") are told as
    // their group's notices, one line per group and change; the others as before.
    const bool grouped = p.isSet(QStringLiteral("group"));
    const ErrorOr<TelemetryOptions> telemetryWanted = telemetryOptions(p);
    if (!telemetryWanted)
        return failWith(Usage, telemetryWanted.error());
    LiveTelemetry telemetry(*telemetryWanted);
    if (QString why; !telemetry.start(&why)) // listening before the systems are added: a scrape reads them as they come
        return failWith(Usage, QStringLiteral("--metrics: %1").arg(why));
    // Per system: its own model, detectors and tick. Each line names its system.
    struct Watched
    {
        explicit Watched(const AlertRules &rules) : engine(rules) { groups.setRules(rules); }
        AlertEngine engine;
        AlertGroups groups;
        std::set<QString> withheld; // alerts whose raise a group's line told (--group)
        QTimer tick;
        qint64 raised = 0;
    };
    std::vector<std::unique_ptr<Watched>> watched;
    std::vector<LiveRun *> all;
    std::vector<std::unique_ptr<LiveRun>> runs = startRuns(common, [&](LiveRun &run) {
        all.push_back(&run);
        watched.push_back(std::make_unique<Watched>(*rules));
        Watched &w = *watched.back();
        const size_t index = watched.size() - 1;
        telemetry.add(run, &w.engine);
        SystemStore &store = run.store();
        store.setHealthPolicy(healthPolicyForRules(*rules, store.healthPolicy()));
        QObject::connect(&store, &SystemStore::wasReset, &store, [&w] { w.engine.restartReading(); });
        w.tick.setInterval(1000); // the rules are defined in seconds; a second is the resolution they need
        QObject::connect(&w.tick, &QTimer::timeout, &store, [&, &run = run, &w = w, index] {
            SystemStore &s = run.store();
            s.advanceTime(QDateTime::currentMSecsSinceEpoch());
            std::vector<AlertChange> changes = evaluateToTheEnd(w.engine, s);
            telemetry.noteAlerts(index, changes);
            // A raise is withheld when its group is a group (its group's lines tell it); a clear
            // is withheld exactly when its raise was, so that every line printed has its pair.
            std::vector<bool> inGroup(changes.size(), false);
            if (grouped) {
                w.groups.apply(changes, s, s.now());
                for (size_t i = 0; i < changes.size(); ++i) {
                    const QString key = changes[i].alert.key();
                    if (!changes[i].raised)
                        inGroup[i] = w.withheld.erase(key) > 0;
                    else if (w.groups.isGrouped(key))
                        inGroup[i] = w.withheld.insert(key).second;
                }
            }
            for (size_t i = 0; i < changes.size(); ++i) {
                const AlertChange &change = changes[i];
                if (!inGroup[i]) {
                    Json line = alertChangeToJson(change, &s);
                    if (common.urls.size() > 1) // one system: its lines as they always were
                        line["system"] = run.label().toStdString();
                    printJson(line, -1);
                }
                if (!change.raised)
                    continue;
                ++w.raised;
                if (exitOn && change.alert.severity >= *exitOn) {
                    const QString on = common.urls.size() > 1 ? QStringLiteral(" on ") + run.label() : QString();
                    const QString why = QStringLiteral("a %1 alert was raised%2 (--exit-on %3)")
                                            .arg(alertSeverityName(change.alert.severity), on, alertSeverityName(*exitOn));
                    for (LiveRun *other : all) // one system's alert ends the whole watch
                        other->finish(AlertRaised, why);
                }
            }
            if (grouped)
                printGroupNotices(w.groups.due(s.now()), s.now(), common.urls.size() > 1 ? run.label() : QString());
        });
        run.onLive = [&run, &w, &common] {
            w.tick.start();
            if (common.durationS > 0)
                QTimer::singleShot(int(common.durationS * 1000), &run.session, [&run] { run.finishAfterCheck(Ok); });
        };
    });
    for (const auto &w : watched)
        w->tick.stop();
    telemetry.finish();
    std::vector<int> codes;
    for (size_t i = 0; i < runs.size(); ++i) {
        LiveRun &run = *runs[i];
        Watched &w = *watched[i];
        const int code = run.exitCode();
        if (code == AlertRaised) {
            std::fprintf(stderr, "map-inspector-cli: %s\n", qPrintable(redactSecrets(run.error)));
            return AlertRaised;
        }
        if (code != Ok) {
            if (runs.size() == 1)
                return failWith(code, run.error);
            std::fprintf(stderr, "map-inspector-cli: %s: %s\n", qPrintable(run.label()), qPrintable(redactSecrets(run.error)));
            codes.push_back(code);
            continue;
        }
        if (grouped) // the groups still within their wait or interval: told before the summary
            printGroupNotices(w.groups.flush(), run.store().now(), runs.size() > 1 ? run.label() : QString());
        Json summary = observationJson(run, run.store(), common.durationS);
        if (runs.size() > 1)
            summary["system"] = run.label().toStdString();
        summary["alertsRaised"] = w.raised;
        summary["alertsOpen"] = w.engine.openAlerts().size();
        summary["notTracked"] = w.engine.notTracked();
        printJson(Json{{"summary", summary}}, -1); // its "missing" lines name agents
        codes.push_back(observationExit(run, run.store()));
    }
    return worstExitCode(codes);
}

int commandAction(const QString &command, const QCommandLineParser &p, const Common &common)
{
    const QString agentArg = p.value(QStringLiteral("agent"));
    if (agentArg.isEmpty())
        return failWith(Usage, QStringLiteral("%1 needs --agent ID|NAME").arg(command));
    MapClient::Delivery delivery = MapClient::Delivery::BestEffort;
    Json content;
    if (command == QLatin1String("inject")) {
        const QString mode = p.value(QStringLiteral("delivery"));
        if (mode == QLatin1String("interrupt"))
            delivery = MapClient::Delivery::Interrupt;
        else if (mode == QLatin1String("queue"))
            delivery = MapClient::Delivery::Queue;
        else if (mode != QLatin1String("best-effort"))
            return failWith(Usage, QStringLiteral("--delivery must be interrupt, queue or best-effort"));
        if (p.isSet(QStringLiteral("json"))) {
            const QByteArray text = p.value(QStringLiteral("json")).toUtf8();
            content = Json::parse(text.constBegin(), text.constEnd(), nullptr, false);
            if (content.is_discarded())
                return failWith(Usage, QStringLiteral("--json is not valid JSON"));
        } else if (p.isSet(QStringLiteral("message"))) {
            content = p.value(QStringLiteral("message")).toStdString();
        } else {
            return failWith(Usage, QStringLiteral("inject needs --message TEXT or --json JSON"));
        }
    }
    HealthPolicy policy;
    policy.actionConfirmTimeoutMs = qint64(p.value(QStringLiteral("timeout")).toDouble() * 1000);
    if (policy.actionConfirmTimeoutMs <= 0)
        return failWith(Usage, QStringLiteral("--timeout must be a positive number of seconds"));
    LiveRun run(common);
    SystemStore &store = run.store();
    store.setHealthPolicy(policy);
    QString actionId;
    QTimer poll;
    poll.setInterval(100);
    QObject::connect(&poll, &QTimer::timeout, &run.session, [&] {
        store.advanceTime(QDateTime::currentMSecsSinceEpoch());
        const OperatorAction *a = store.action(actionId);
        if (!a)
            return;
        switch (a->status) {
        case ActionStatus::Confirmed: run.finish(Ok); break;
        case ActionStatus::Failed:
        case ActionStatus::Unsupported: run.finish(ActionFailed); break;
        case ActionStatus::TimedOut: run.finish(ActionTimedOut); break;
        case ActionStatus::Unknown: // its answer was lost: wait for its event until the timeout
            if (QDateTime::currentMSecsSinceEpoch() - a->sentAtMs > policy.actionConfirmTimeoutMs) // the actions' clock: ours
                run.finish(ActionTimedOut);
            break;
        default: break;
        }
    });
    run.onLive = [&] {
        const QString reason = p.value(QStringLiteral("reason"));
        const ErrorOr<QString> agentId = resolveAgentReference(store, agentArg);
        if (!agentId) {
            run.finish(Usage, agentId.error());
            return;
        }
        const QStringList agents{agentId.value()};
        ActionStart start;
        if (command == QLatin1String("inject"))
            start = run.session.inject(agents, content, delivery);
        else if (command == QLatin1String("stop"))
            start = run.session.stop(agents, reason, p.isSet(QStringLiteral("force")));
        else if (command == QLatin1String("suspend"))
            start = run.session.suspend(agents, reason);
        else
            start = run.session.resume(agents);
        if (start.refused != ActionBlock::None) {
            run.finish(ActionFailed, describeActionBlock(start.refused));
            return;
        }
        actionId = start.actionIds.value(0);
        poll.start();
    };
    const int code = run.run();
    poll.stop();
    const OperatorAction *a = store.action(actionId);
    if (!a)
        return failWith(code == Ok ? ConnectionFailed : code, run.error);
    printJson(actionToJson(*a));
    if (code == ActionFailed)
        return failWith(code, QStringLiteral("%1 %2: %3").arg(command, actionStatusName(a->status), a->detail));
    if (code == ActionTimedOut)
        return failWith(code, QStringLiteral("%1 not confirmed: %2").arg(command, a->detail));
    if (code != Ok)
        return failWith(code, run.error);
    if (a->fallback)
        std::fprintf(stderr, "map-inspector-cli: fallback used: %s\n", qPrintable(a->note));
    return Ok;
}

} // namespace mapi::cli
