// The commands that read traces: stats, convert, chain, bundle, diff.
#include "Commands.h"

#include "common/FileIdentity.h"

#include "alerts/AlertEngine.h"
#include "map/PayloadConventions.h"
#include "model/CausalChains.h"
#include "model/StateJson.h"
#include "model/SystemStore.h"
#include "session/InspectorSession.h"
#include "trace/Trace.h"
#include "trace/ModelExport.h"
#include "trace/IncidentBundle.h"
#include "trace/Otlp.h"
#include "trace/RunDiff.h"
#include "trace/TraceLoader.h"

#include <QCommandLineParser>
#include <QCoreApplication>
#include <QDateTime>
#include <QElapsedTimer>
#include <QFile>
#include <QTemporaryDir>
#include <QFileInfo>
#include <QTimer>

#include <algorithm>
#include <cmath>
#ifdef Q_OS_WIN
#include <io.h>
#else
#include <unistd.h>
#endif
#include <cstdio>
#include <functional>
#include <map>
#include <optional>

using namespace mapi;
namespace mapi::cli {

int commandStats(const QCommandLineParser &p, const Common &common)
{
    if (!p.isSet(QStringLiteral("trace")))
        return failWith(Usage, QStringLiteral("stats needs --trace FILE"));
    const QString path = p.value(QStringLiteral("trace"));
    SystemStore store;
    QElapsedTimer timer;
    timer.start();
    ReadProgress progress;
    const TraceLoadResult r = loadTraceInto(store, path, traceLoadFor(store, common, true), progress.callback());
    progress.done();
    if (!r.ok)
        return failWith(TraceUnreadable, r.error);
    const double seconds = double(timer.nsecsElapsed()) / 1e9;
    const TraceReadStats &st = r.stats;

    std::map<std::string, qint64> byDir;
    for (size_t dir = 0; dir < st.recordsByDir.size(); ++dir)
        if (st.recordsByDir[dir] > 0)
            byDir[RecordDir(dir) == RecordDir::Other ? std::string("other") : recordDirName(RecordDir(dir)).toStdString()] =
                st.recordsByDir[dir];
    std::map<std::string, qint64> byType; // counted as appended (the same kind may be read twice)
    for (int typeRow = 0; typeRow < store.events().typeCount(); ++typeRow)
        byType[store.events().typeName(typeRow).toStdString()] += store.events().appendedOfType(typeRow);
    qint64 registered = 0, placeholders = 0, departed = 0;
    for (const Agent &a : store.agents()) {
        if (a.unregistered)
            ++departed;
        else if (a.placeholder)
            ++placeholders;
        else
            ++registered;
    }
    std::map<std::string, qint64> byConvention; // counted as appended: the history is not all kept
    for (int kind = int(ConventionKind::None) + 1; kind <= int(ConventionKind::SteeringAck); ++kind)
        if (const qint64 count = store.messages().appendedOfConvention(ConventionKind(kind)))
            byConvention[conventionName(ConventionKind(kind)).toStdString()] = count;
    std::map<std::string, qint64> byStatus;
    for (const Task &t : store.tasks())
        ++byStatus[t.status.toStdString()];
    qint64 liveScopes = 0;
    for (const Scope &sc : store.scopes())
        liveScopes += sc.deleted ? 0 : 1;

    Json out = {{"file", path.toStdString()},
                {"format", st.format.toStdString()},
                {"compression", st.compression.toStdString()},
                {"bytes", st.bytesTotal},
                {"lines", st.lines},
                {"records", st.records},
                {"recordsByDir", byDir},
                {"events", store.counters().eventsApplied},
                {"eventsByType", byType},
                {"duplicateEvents", store.counters().duplicateEvents},
                {"agents", {{"total", store.agents().size()}, {"registered", registered}, {"placeholders", placeholders}, {"departed", departed}}},
                {"scopes", liveScopes},
                {"messages", store.counters().messages},
                {"messagesByConvention", byConvention},
                {"tasks", {{"total", store.counters().tasks}, {"byStatus", byStatus}}},
                {"gaps", store.counters().gaps},
                {"problems", store.counters().problems},
                {"badLines", {{"count", st.badLineCount}, {"lines", badLinesJson(st, 100)}}},
                {"loadSeconds", std::round(seconds * 1000) / 1000}};
    if (st.records > 0)
        out["timeSpan"] = {{"firstMs", st.firstTimeMs},
                           {"lastMs", st.lastTimeMs},
                           {"durationMs", st.lastTimeMs - st.firstTimeMs},
                           {"first", isoTime(st.firstTimeMs).toStdString()},
                           {"last", isoTime(st.lastTimeMs).toStdString()}};
    if (!st.streamError.isEmpty())
        out["streamError"] = st.streamError.toStdString();
    if (const std::optional<IncidentInfo> bundle = incidentFromHeader(st.header)) {
        Json pictures = Json::array();
        for (const BundlePicture &pic : bundle->content.pictures)
            pictures.push_back({{"view", pic.view.toStdString()}, {"width", pic.width}, {"height", pic.height}, {"bytes", pic.png.size()}});
        out["bundle"] = {{"note", bundle->content.note.toStdString()},
                         {"from", bundle->fromMs ? Json(isoTime(*bundle->fromMs).toStdString()) : Json()},
                         {"to", bundle->toMs ? Json(isoTime(*bundle->toMs).toStdString()) : Json()},
                         {"bookmarks", bundle->content.bookmarks.size()},
                         {"alerts", bundle->content.alerts.size()},
                         {"selectedAgents", bundle->content.selectedAgents.size()},
                         {"pictures", pictures},
                         {"replacements", bundle->replacements},
                         {"leftOutBeforeFrom", bundle->recordsLeftOutBeforeFrom},
                         {"damagedMembers", bundle->damagedMembers}};
    }
    printJson(out);
    reportDamage(st, store);
    return Ok;
}

// Trace (any readable format) to a trace: recompress, convert imports and captures, cut a range.
int convertToTrace(const QString &in, const QString &outPath, std::optional<qint64> from, std::optional<qint64> to)
{
    const TraceSlice slice = writeTraceSlice(in, outPath, from, to);
    switch (slice.failure) {
    case TraceSlice::Failure::InputUnreadable: return failWith(TraceUnreadable, slice.error);
    case TraceSlice::Failure::OutputUnwritable:
    case TraceSlice::Failure::OutputIsInput: return failWith(OutputUnwritable, slice.error);
    case TraceSlice::Failure::None: break;
    }
    std::fprintf(stderr, "map-inspector-cli: %lld records (%s) written to %s (%s)\n", static_cast<long long>(slice.written),
                 qPrintable(slice.stats.format), qPrintable(outPath), qPrintable(compressionName(compressionFromPath(outPath))));
    reportDamage(slice.stats);
    return Ok;
}

int commandConvert(const QCommandLineParser &p, const Common &common)
{
    if (!p.isSet(QStringLiteral("trace")) || !p.isSet(QStringLiteral("out")))
        return failWith(Usage, QStringLiteral("convert needs --trace IN and --out OUT"));
    const QString in = p.value(QStringLiteral("trace"));
    const QString outPath = p.value(QStringLiteral("out"));
    if (const QString same = outputOverwritesInput(outPath, {in}); !same.isEmpty())
        return failWith(OutputUnwritable, same);
    const ErrorOr<TimeRange> range = timeRangeOption(p);
    if (!range)
        return failWith(Usage, range.error());
    const std::optional<qint64> from = range->from, to = range->to;
    const QString lower = outPath.toLower();
    const bool csv = lower.endsWith(QLatin1String(".csv"));
    const bool otlp = lower.endsWith(QLatin1String(".otlp.json")) || lower.endsWith(QLatin1String(".otlp.jsonl"));
    const bool chrome = !otlp && lower.endsWith(QLatin1String(".json"));
    if (!csv && !chrome && !otlp) {
        if (p.isSet(QStringLiteral("table")))
            return failWith(Usage, QStringLiteral("--table goes with a .csv output"));
        // A trace, and only under a name that says so: x.txt is a slip, not a request for a trace.
        if (!lower.endsWith(QLatin1String(".jsonl")) && !lower.endsWith(QLatin1String(".jsonl.zst"))
            && !lower.endsWith(QLatin1String(".jsonl.gz")))
            return failWith(Usage, QStringLiteral("--out %1: the output's name says what to write: .jsonl, .jsonl.zst or .jsonl.gz "
                                                  "(a trace), .json (Chrome trace), .otlp.json (OpenTelemetry), .csv (a table)")
                                       .arg(outPath));
        return convertToTrace(in, outPath, from, to);
    }
    CsvTable table = CsvTable::Agents;
    if (csv && !csvTableFromName(p.value(QStringLiteral("table")), table))
        return failWith(Usage, QStringLiteral("a .csv output needs --table agents|messages|tasks|turns|checkpoints|acp"));

    SystemStore store;
    TraceLoadOptions options = traceLoadFor(store, common);
    if (to)
        options.untilTimeMs = *to;
    ReadProgress progress;
    const TraceLoadResult r = loadTraceInto(store, in, options, progress.callback());
    progress.done();
    if (!r.ok)
        return failWith(TraceUnreadable, r.error);
    if (to)
        store.advanceTime(*to);
    if (otlp) {
        if (from)
            return failWith(Usage, QStringLiteral("--from does not go with an OTLP output: cut the trace first (convert --from to a .jsonl.zst)"));
        QString error;
        OtlpOptions otlpOptions;
        const QString url = jsonString(r.stats.header, "url");
        otlpOptions.serviceName = url.isEmpty() ? QStringLiteral("MAP system (%1)").arg(QFileInfo(in).fileName())
                                                : QStringLiteral("MAP system (%1)").arg(redactSecrets(url));
        OtlpCounts counts;
        if (!writeOtlpJson(store, outPath, otlpOptions, &counts, &error))
            return failWith(OutputUnwritable, error);
        std::fprintf(stderr, "map-inspector-cli: OTLP/JSON with %lld agent spans, %lld task spans, %lld message events "
                             "(%lld lines) written to %s\n",
                     static_cast<long long>(counts.agentSpans), static_cast<long long>(counts.taskSpans),
                     static_cast<long long>(counts.messageEvents), static_cast<long long>(counts.lines), qPrintable(outPath));
    } else if (csv) {
        const ErrorOr<qint64> rows = writeCsv(store, table, outPath);
        if (!rows)
            return failWith(OutputUnwritable, rows.error());
        std::fprintf(stderr, "map-inspector-cli: %lld %s written to %s\n", static_cast<long long>(*rows),
                     qPrintable(p.value(QStringLiteral("table"))), qPrintable(outPath));
    } else {
        QString error;
        ChromeTraceOptions chromeOptions;
        if (from)
            chromeOptions.fromMs = *from;
        if (to)
            chromeOptions.toMs = *to;
        chromeOptions.timeline = r.timeline.get();
        const QString url = jsonString(r.stats.header, "url");
        chromeOptions.processName = url.isEmpty() ? QStringLiteral("MAP system (%1)").arg(QFileInfo(in).fileName())
                                                  : QStringLiteral("MAP system (%1)").arg(url);
        ChromeTraceCounts counts;
        if (!writeChromeTrace(store, outPath, chromeOptions, &counts, &error))
            return failWith(OutputUnwritable, error);
        std::fprintf(stderr, "map-inspector-cli: Chrome trace with %lld events, %lld tasks, %lld threads written to %s\n",
                     static_cast<long long>(counts.instantEvents), static_cast<long long>(counts.taskEvents),
                     static_cast<long long>(counts.threads), qPrintable(outPath));
    }
    reportDamage(r.stats, store);
    return Ok;
}

// A message's causal chain (model/CausalChains.h): what caused it, root first, and what it led to.
int commandChain(const QCommandLineParser &p, const Common &common)
{
    if (!p.isSet(QStringLiteral("trace")) || p.isSet(QStringLiteral("message")) == p.isSet(QStringLiteral("event")))
        return failWith(Usage, QStringLiteral("chain needs --trace FILE and --message ID or --event ID"));
    SystemStore store;
    ReadProgress progress;
    const TraceLoadResult r = loadTraceInto(store, p.value(QStringLiteral("trace")), traceLoadFor(store, common), progress.callback());
    progress.done();
    if (!r.ok)
        return failWith(TraceUnreadable, r.error);
    int row = -1;
    if (p.isSet(QStringLiteral("event"))) {
        // An event: the chain of the message it carried; else its MAP causedBy links to events.
        const QString eventId = p.value(QStringLiteral("event"));
        const EventLog &events = store.events();
        const int event = events.find(eventId, IdIndex::hashOf(eventId));
        if (event < 0)
            return failWith(Usage, QStringLiteral("no event %1 in the trace").arg(eventId));
        row = events[size_t(event)].messageIndex();
        if (row < 0 || !store.messages().isKept(size_t(row))) {
            auto brief = [&](int e) {
                const EventEntry &entry = events[size_t(e)];
                return Json{{"id", events.eventId(size_t(e)).toStdString()},
                            {"type", events.type(entry).toStdString()},
                            {"agent", store.agentName(events.agentId(entry)).toStdString()},
                            {"time", isoTime(entry.timestampMs).toStdString()}};
            };
            Json causedBy = Json::array();
            std::vector<int> seen{event};
            for (int at = event; causedBy.size() < 1000;) {
                const std::vector<int> up = events.causesOf(size_t(at));
                if (up.empty() || std::find(seen.begin(), seen.end(), up.front()) != seen.end())
                    break;
                seen.push_back(up.front());
                causedBy.insert(causedBy.begin(), brief(up.front()));
                at = up.front();
            }
            int shown = 0;
            std::function<Json(int, int)> tree = [&](int e, int depth) {
                Json node = brief(e);
                Json effects = Json::array();
                for (const int effect : events.effectsOf(size_t(e)))
                    if (depth < 100 && ++shown <= 1000)
                        effects.push_back(tree(effect, depth + 1));
                node["ledTo"] = effects;
                return node;
            };
            printJson({{"event", tree(event, 0)}, {"causedBy", causedBy}, {"truncated", shown > 1000}});
            reportDamage(r.stats, store);
            return Ok;
        }
    } else {
        const QString id = p.value(QStringLiteral("message"));
        row = store.messages().find(id);
        if (row < 0)
            row = store.messages().findByEnvelopeOrSpan(id);
        if (row < 0)
            return failWith(Usage, QStringLiteral("no message %1 in the trace").arg(id));
    }
    CausalChains chains(store);
    chains.update();
    const MessageLog &messages = store.messages();
    auto brief = [&](int m) {
        Json j = {{"id", messages.id(size_t(m)).toStdString()},
                  {"time", isoTime(messages.timestampMs(size_t(m))).toStdString()},
                  {"from", store.agentName(messages.fromAgentId(size_t(m))).toStdString()},
                  {"type", (messages.payloadType(size_t(m)).isEmpty() ? conventionName(messages.convention(size_t(m)))
                                                                      : messages.payloadType(size_t(m))).toStdString()}};
        Json to = Json::array();
        for (int i = 0; i < messages.recipientCount(size_t(m)) && i < 8; ++i)
            to.push_back(store.agentName(messages.recipient(size_t(m), i)).toStdString());
        j["to"] = to;
        if (const QString envelope = messages.envelopeId(size_t(m)); !envelope.isEmpty())
            j["envelopeId"] = envelope.toStdString();
        if (chains.causeOf(m) >= 0)
            j["causedByLink"] = CausalChains::linkName(chains.linkOf(m)).toStdString();
        return j;
    };
    Json causedBy = Json::array();
    const std::vector<int> chain = chains.chainTo(row);
    for (size_t i = 0; i + 1 < chain.size(); ++i)
        causedBy.push_back(brief(chain[i]));
    // What it led to, as a tree (depth first), at most kMaxShown messages.
    constexpr int kMaxShown = 1000;
    int shown = 0;
    std::function<Json(int)> tree = [&](int m) {
        Json node = brief(m);
        Json effects = Json::array();
        for (const int e : chains.effectsOf(m)) {
            if (++shown > kMaxShown)
                break;
            effects.push_back(tree(e));
        }
        node["ledTo"] = effects;
        return node;
    };
    Json out = {{"message", tree(row)}, {"causedBy", causedBy}, {"ledToCount", qint64(chains.ledTo(row, 1 << 30).size()) - 1},
                {"truncated", shown > kMaxShown}};
    printJson(out);
    reportDamage(r.stats, store);
    return Ok;
}

// bundle: an incident bundle (trace/IncidentBundle.h) of a trace's range, with the bookmarks kept
// beside the trace, the alerts that are open when the range ends (the detectors replayed over the
// redacted slice, with --rules), a note, and the operator's redaction. --preview counts only.
int commandBundle(const QCommandLineParser &p, const Common &common)
{
    const bool preview = p.isSet(QStringLiteral("preview"));
    if (!p.isSet(QStringLiteral("trace")) || (!preview && !p.isSet(QStringLiteral("out"))))
        return failWith(Usage, QStringLiteral("bundle needs --trace IN and --out FILE (or --preview)"));
    const QString in = p.value(QStringLiteral("trace"));
    const QString outPath = preview ? QString() : p.value(QStringLiteral("out"));
    if (const QString same = outputOverwritesInput(outPath, {in}); !same.isEmpty())
        return failWith(OutputUnwritable, same);
    const ErrorOr<TimeRange> range = timeRangeOption(p);
    if (!range)
        return failWith(Usage, range.error());
    const ErrorOr<AlertRules> rules = rulesOption(p);
    if (!rules)
        return failWith(Usage, rules.error());
    BundleOptions options;
    options.fromMs = range->from;
    options.toMs = range->to;
    options.redactPatterns = p.values(QStringLiteral("redact"));
    options.redactKeyNames = p.values(QStringLiteral("redact-key"));
    options.content.note = p.value(QStringLiteral("note"));
    if (const ErrorOr<QList<Bookmark>> marks = loadBookmarks(in))
        options.content.bookmarks = *marks;
    else
        std::fprintf(stderr, "map-inspector-cli: bookmarks beside the trace not read: %s\n", qPrintable(marks.error()));

    auto failed = [](const BundleResult &r) {
        switch (r.failure) {
        case BundleResult::Failure::BadOptions: return failWith(Usage, r.error);
        case BundleResult::Failure::InputUnreadable: return failWith(TraceUnreadable, r.error);
        default: return failWith(OutputUnwritable, r.error);
        }
    };
    // The slice first (redacted), then the alerts found replaying it, then the bundle with them.
    // A preview makes the slice too, in a temporary folder, so that it counts the alerts the
    // bundle would hold (it said 0 where the bundle then held 1).
    QTemporaryDir previewDir;
    if (preview && !previewDir.isValid())
        return failWith(OutputUnwritable, QStringLiteral("no temporary folder for the preview: %1").arg(previewDir.errorString()));
    const QString slicePath = preview ? previewDir.filePath(QStringLiteral("preview.slice.jsonl.zst"))
                                      : outPath + QStringLiteral(".slice.jsonl.zst");
    const BundleResult slice = writeIncidentBundle(in, slicePath, options);
    if (!slice.ok())
        return failed(slice);
    BundleResult written = slice;
    {
        SystemStore store;
        store.setHealthPolicy(healthPolicyForRules(*rules, store.healthPolicy()));
        const TraceLoadResult loaded = loadTraceInto(store, slicePath, traceLoadFor(store, common));
        if (!loaded.ok) {
            QFile::remove(slicePath);
            return failWith(TraceUnreadable, loaded.error);
        }
        AlertEngine engine(*rules);
        engine.update(store);
        while (engine.isBehind(store))
            engine.update(store);
        for (const auto &[key, alert] : engine.openAlerts())
            options.content.alerts.push_back(alertChangeToJson(AlertChange{alert, true, alert.sinceMs}));
        if (preview) {
            written.alertsWritten = qint64(options.content.alerts.size()); // what the bundle would hold
        } else {
            written = rewriteIncidentBundle(slicePath, outPath, options, slice);
            QFile::remove(slicePath);
            if (!written.ok())
                return failed(written);
        }
    }
    Json keys = Json::array(), patterns = Json::array();
    for (size_t i = 0; i < slice.redaction.perKeyName.size() && i < size_t(slice.keyNames.size()); ++i)
        keys.push_back({{"keyName", slice.keyNames[int(i)].toStdString()}, {"replacements", slice.redaction.perKeyName[i]}});
    // The patterns by number only (their place among the --redact given): a pattern may spell
    // the very secret it removes.
    for (size_t i = 0; i < slice.redaction.perPattern.size() && i < slice.patternNumbers.size(); ++i)
        patterns.push_back({{"pattern", slice.patternNumbers[i]}, {"replacements", slice.redaction.perPattern[i]}});
    Json out = {{"records", slice.recordsWritten},
                {"leftOutBeforeFrom", slice.recordsLeftOutBeforeFrom},
                {"recordsChanged", slice.redaction.recordsChanged},
                {"binaryFramesLeftOut", slice.redaction.binaryFramesLeftOut},
                {"keyNames", keys},
                {"patterns", patterns},
                {"replacements", slice.redaction.total()},
                {"dataReplacements", written.dataReplacements},
                {"bookmarks", slice.bookmarksInRange},
                {"alerts", written.alertsWritten}};
    if (!preview)
        out["file"] = outPath.toStdString();
    printJson(out);
    reportDamage(slice.stats);
    return Ok;
}

// The diff for people, a few lines (the JSON on stdout has it all): equal or not, the agents only
// in one run or changed, where the runs first part, and the counts that moved.
static QString diffSummary(const Json &d)
{
    static const Json kNone = Json::object();
    const auto child = [](const Json &j, const char *key) -> const Json & {
        const Json *c = jsonChild(j, key);
        return c && c->is_object() ? *c : kNone;
    };
    const auto size = [](const Json &j, const char *key) {
        const Json *c = jsonChild(j, key);
        return c && c->is_array() ? int(c->size()) : 0;
    };
    const Json &agents = child(d, "agents");
    const Json &conversations = child(d, "conversations");
    const Json *equal = jsonChild(d, "equal");
    QString out = equal && equal->is_boolean() && equal->get<bool>() ? QStringLiteral("the runs are equal\n")
                                                                     : QStringLiteral("the runs differ\n");
    out += QStringLiteral("  agents: %1 matched, %2 only in A, %3 only in B, %4 changed\n")
               .arg(jsonInt(agents, "matched"))
               .arg(size(agents, "onlyA"))
               .arg(size(agents, "onlyB"))
               .arg(size(agents, "changed"));
    out += QStringLiteral("  conversations: %1 compared, %2 differing, %3 only in A, %4 only in B\n")
               .arg(jsonInt(conversations, "compared"))
               .arg(size(conversations, "differing"))
               .arg(size(conversations, "onlyA"))
               .arg(size(conversations, "onlyB"));
    if (const Json &first = child(d, "firstDivergence"); !first.empty()) {
        QStringList who;
        if (const Json *list = jsonChild(first, "agents"); list && list->is_array())
            for (const Json &a : *list)
                who << toQString(a);
        out += QStringLiteral("  first divergence: %1 s in, %2 (%3)\n")
                   .arg(double(jsonInt(first, "offsetMs")) / 1000.0, 0, 'f', 3)
                   .arg(jsonString(first, "kind"), who.join(QStringLiteral(" → ")));
    }
    const Json &deltas = child(d, "deltas");
    for (auto it = deltas.begin(); it != deltas.end(); ++it) {
        const Json *delta = jsonChild(*it, "delta");
        const Json *a = jsonChild(*it, "a");
        const Json *b = jsonChild(*it, "b");
        if (delta && a && b && delta->is_number() && delta->get<double>() != 0)
            out += QStringLiteral("  %1: %2 → %3\n").arg(QString::fromStdString(it.key()), toQString(*a), toQString(*b));
    }
    return out;
}

int commandDiff(const QString &pathA, const QString &pathB, const TraceLoadOptions &options)
{
    SystemStore a, b;
    for (const auto &[store, path] : {std::pair<SystemStore *, QString>{&a, pathA}, {&b, pathB}}) {
        ReadProgress progress;
        const TraceLoadResult r = loadTraceInto(*store, path, options, progress.callback());
        progress.done();
        if (!r.ok)
            return failWith(TraceUnreadable, r.error);
        reportDamage(r.stats, *store);
    }
    const Json result = diffRuns(profileRun(a, QFileInfo(pathA).fileName()), profileRun(b, QFileInfo(pathB).fileName()), &a, &b);
    printJson(result);
    std::fprintf(stderr, "%s", qPrintable(diffSummary(result)));
    return result.value("equal", false) ? Ok : Different;
}

} // namespace mapi::cli
