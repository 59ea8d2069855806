// map-inspector-cli: the headless front end on the same core as the window.
//
// Exit codes (documented in the README):
//   0 success · 1 usage error · 2 connection failed · 3 authentication refused ·
//   4 action failed or not supported · 5 action not confirmed in time · 6 trace unreadable ·
//   7 output not writable · 8 an observation is incomplete (a drop, or missed events) ·
//   9 watch --exit-on: an alert of that severity was raised · diff: 0 equal, 1 different
#include "Allocator.h"
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

namespace {

enum Exit {
    Ok = 0,
    Usage = 1,
    ConnectionFailed = 2,
    AuthRefused = 3,
    ActionFailed = 4,
    ActionTimedOut = 5,
    TraceUnreadable = 6,
    OutputUnwritable = 7,
    Different = 1,        // diff: the runs differ (the JSON on stdout says how; a usage error prints none)
    ObservedWithGaps = 8, // an observation (state --url --duration, record, watch) lost the connection or events on the way
    AlertRaised = 9       // watch --exit-on SEVERITY: an alert of that severity or worse was raised
};

int failWith(int code, const QString &message)
{
    std::fprintf(stderr, "map-inspector-cli: %s\n", qPrintable(redactSecrets(message)));
    return code;
}

void printJson(const Json &json)
{
    // Agents' metadata, action parameters and server text can carry credentials: the output is
    // redacted like every other way out (common/Redaction.h).
    std::fputs(redactSecrets(QByteArray::fromStdString(json.dump(2, ' ', false, Json::error_handler_t::replace))).constData(), stdout);
    std::fputc('\n', stdout);
    std::fflush(stdout);
}

struct Common
{
    ClientOptions options;
    double durationS = 0;
    // An observation for a duration the operator asked for (state --url --duration S, record):
    // it survives drops, reports them, and exits with ObservedWithGaps when it lost anything.
    bool observing = false;
    QString tokenFile; // --token-file: read again when the server says the credential expires
};

// A credential file: its text without surrounding white space (a trailing newline is usual).
ErrorOr<QString> readTokenFile(const QString &path)
{
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        return Failure{QStringLiteral("cannot read %1: %2").arg(path, file.errorString())};
    const QByteArray text = file.read(64 * 1024).trimmed(); // a token, not a file of megabytes
    if (text.isEmpty())
        return Failure{QStringLiteral("%1 is empty").arg(path)};
    return QString::fromUtf8(text);
}

ErrorOr<AuthConfig> readAuth(const QCommandLineParser &p)
{
    AuthConfig auth;
    QString token = p.value(QStringLiteral("token"));
    if (p.isSet(QStringLiteral("token-file"))) {
        const ErrorOr<QString> fromFile = readTokenFile(p.value(QStringLiteral("token-file")));
        if (!fromFile)
            return Failure{fromFile.error()};
        token = *fromFile;
    }
    if (p.isSet(QStringLiteral("token-env"))) {
        const QByteArray name = p.value(QStringLiteral("token-env")).toUtf8();
        if (!qEnvironmentVariableIsSet(name.constData()))
            return Failure{QStringLiteral("environment variable %1 is not set").arg(QString::fromUtf8(name))};
        token = qEnvironmentVariable(name.constData());
    }
    if (token.isEmpty())
        return auth;
    const QString method = p.value(QStringLiteral("auth"));
    if (method == QLatin1String("api-key"))
        auth.method = AuthConfig::Method::ApiKey;
    else if (method == QLatin1String("bearer"))
        auth.method = AuthConfig::Method::Bearer;
    else
        return Failure{QStringLiteral("--auth must be api-key or bearer, not \"%1\"").arg(method)};
    auth.credential = token;
    return auth;
}

// The memory budget of a one-shot command (InspectorSession::setMemoryBudget): 40 % of it, 16 MB,
// holds recent history (some 100,000 events: enough to tell a replayed event from a new one), so
// memory grows with agents, scopes and open tasks, not with events.
constexpr qint64 kCliMemoryBudgetBytes = 40 << 20;

// A live command on the core session (the window's, without journal or views): connects, runs
// `onLive` once the connection is first live, and returns the exit code that finish() was given.
// An observation (options.reconnect) survives drops: after the first time live, a lost connection
// is reconnected with the client's backoff (the model re-read from a fresh snapshot, the missed
// events replayed where the server can), and each drop is kept in `drops`.
class LiveRun
{
public:
    // A connection lost while observing: when, why, and when it was back (0: not by the end).
    struct Drop
    {
        qint64 atMs = 0;
        QString reason;
        qint64 backAtMs = 0;
    };

    explicit LiveRun(const Common &common)
        : m_options(common.options)
    {
        session.setJournaling(false); // nothing is read back: frames are not kept at all
        session.setMemoryBudget(kCliMemoryBudgetBytes);
        // map/auth/expiring: a credential read from a file is read again and handed to the server
        // (whoever renews the token writes the file); otherwise the operator is warned.
        QObject::connect(&session, &InspectorSession::credentialRenewed, &session, [](bool accepted, const QString &why) {
            if (accepted)
                std::fprintf(stderr, "map-inspector-cli: the server accepted the new credential\n");
            else
                std::fprintf(stderr, "map-inspector-cli: %s\n", qPrintable(why));
        });
        QObject::connect(&session, &InspectorSession::credentialExpiring, &session,
                         [this, tokenFile = common.tokenFile](qint64, qint64 expiresInMs) {
            const QString seconds = QString::number(double(expiresInMs) / 1000.0, 'f', 0);
            if (tokenFile.isEmpty()) {
                std::fprintf(stderr, "map-inspector-cli: the server says the credential expires in %s s; give --token-file to "
                                     "renew it without reconnecting\n", qPrintable(seconds));
                return;
            }
            const ErrorOr<QString> token = readTokenFile(tokenFile);
            if (!token || *token == m_options.auth.credential) {
                std::fprintf(stderr, "map-inspector-cli: the credential expires in %s s and %s has no new one%s\n",
                             qPrintable(seconds), qPrintable(tokenFile), token ? "" : qPrintable(QStringLiteral(" (") + token.error() + u')'));
                return;
            }
            m_options.auth.credential = *token;
            session.refreshCredential(*token);
            std::fprintf(stderr, "map-inspector-cli: the credential expires in %s s: sent the new one from %s\n",
                         qPrintable(seconds), qPrintable(tokenFile));
        });
        QObject::connect(&session, &InspectorSession::fatalError, &session, [this](ClientFailure failure, const QString &message) {
            finish(failure == ClientFailure::Transport ? ConnectionFailed
                   : failure == ClientFailure::CredentialInClear ? Usage // the command line must change
                                                                 : AuthRefused,
                   message);
        });
        QObject::connect(&session, &InspectorSession::stateChanged, &session, [this](ClientState state) {
            if (m_finished)
                return;
            const bool lost = state == ClientState::Backoff || state == ClientState::Closed;
            if (state == ClientState::Live && !drops.empty() && drops.back().backAtMs == 0) {
                drops.back().backAtMs = QDateTime::currentMSecsSinceEpoch();
                std::fprintf(stderr, "map-inspector-cli: connection back after %.1f s; the model was read again from the server\n",
                             double(drops.back().backAtMs - drops.back().atMs) / 1000.0);
            } else if (lost && !session.hasBeenLive()) {
                finish(ConnectionFailed, QStringLiteral("cannot connect to %1: %2").arg(redactedUrl(m_options.url), session.lastError()));
            } else if (lost && m_options.reconnect && state == ClientState::Backoff) {
                if (drops.empty() || drops.back().backAtMs != 0) {
                    if (drops.size() == kMaxListedDrops) { // a run of days on a flapping link: the oldest go
                        drops.erase(drops.begin());
                        ++dropsNotListed;
                    }
                    drops.push_back({QDateTime::currentMSecsSinceEpoch(), session.lastError(), 0});
                    std::fprintf(stderr, "map-inspector-cli: connection lost (%s); reconnecting\n", qPrintable(redactSecrets(session.lastError())));
                }
            } else if (state == ClientState::Closed) {
                finish(ConnectionFailed, QStringLiteral("connection lost: %1").arg(session.lastError()));
            }
        });
        QObject::connect(&session, &InspectorSession::wentLive, &session, [this] {
            if (onLive && !m_finished)
                onLive();
        });
        QObject::connect(&session, &InspectorSession::recordingFinished, &session,
                         [this](const QStringList &files, qint64 records, const QString &error) {
                             recordedFiles = files;
                             recordedRecords = records;
                             recordingError = error;
                             m_recordingClosed = true;
                             quitWhenDone();
                         });
    }

    SystemStore &store() { return *session.store(); }

    int run()
    {
        session.connectTo(m_options, m_options.observerOnly);
        QCoreApplication::exec();
        return m_exitCode;
    }
    // Records the connection to `path` from its first frame; false (and `error`) when the file
    // cannot be created.
    int runRecording(const QString &path, const TraceWriterOptions &writerOptions, QString *error)
    {
        if (!session.connectAndRecord(m_options, path, writerOptions, error))
            return Usage;
        m_recording = true;
        QCoreApplication::exec();
        return m_exitCode;
    }

    void finish(int code, const QString &message = {})
    {
        if (m_finished)
            return;
        m_finished = true;
        m_exitCode = code;
        error = message;
        session.store()->advanceTime(QDateTime::currentMSecsSinceEpoch());
        session.disconnectFromServer(); // unsubscribes, then closes; a recording closes after that
        // Let the unsubscribe go out, then leave (once a recording's file is closed).
        QTimer::singleShot(300, &session, [this] {
            m_waited = true;
            quitWhenDone();
        });
    }

    InspectorSession session;
    std::function<void()> onLive;
    // The newest kMaxListedDrops drops; dropsNotListed counts the older ones.
    static constexpr size_t kMaxListedDrops = 1000;
    std::vector<Drop> drops;
    qint64 dropsNotListed = 0;
    QString error;
    QStringList recordedFiles;
    qint64 recordedRecords = 0;
    QString recordingError;

private:
    void quitWhenDone()
    {
        if (m_waited && (!m_recording || m_recordingClosed))
            QCoreApplication::exit(0);
    }

    ClientOptions m_options;
    bool m_finished = false;
    bool m_waited = false;
    bool m_recording = false;
    bool m_recordingClosed = false;
    int m_exitCode = Ok;
};

// ---- traces ------------------------------------------------------------------------------

Json badLinesJson(const TraceReadStats &stats, int max = -1)
{
    Json bad = Json::array();
    for (qint64 line : std::as_const(stats.badLines)) {
        if (max >= 0 && qsizetype(bad.size()) >= max)
            break;
        bad.push_back(line);
    }
    return bad;
}

// Warnings about a damaged file, on stderr (the data that could be read is still used).
void reportDamage(const TraceReadStats &stats)
{
    if (stats.badLineCount > 0) {
        // Named by number, the first 20 (the JSON of state and stats lists them too).
        QStringList first;
        for (qint64 line : stats.badLines.mid(0, 20))
            first << QString::number(line);
        std::fprintf(stderr, "map-inspector-cli: %lld unreadable line(s) skipped: %s%s\n",
                     static_cast<long long>(stats.badLineCount), qPrintable(first.join(QStringLiteral(", "))),
                     stats.badLineCount > first.size() ? ", ..." : "");
    }
    if (!stats.streamError.isEmpty())
        std::fprintf(stderr, "map-inspector-cli: %s; what came before was read\n", qPrintable(stats.streamError));
}

// The same, and the model's bounds that the trace reached (SystemStore::maxAgents()).
void reportDamage(const TraceReadStats &stats, const SystemStore &store)
{
    reportDamage(stats);
    for (const ProtocolProblem &p : store.problems())
        if (p.kind == ProblemKind::LimitReached)
            std::fprintf(stderr, "map-inspector-cli: %s (%lld)\n", qPrintable(p.detail),
                         static_cast<long long>(store.counters().agentsNotKept));
}

// A long read's progress on stderr, for a person at a terminal: from 2 s on, every 2 s, "read 1,234
// of 3,456 MB (35 %)" on one line; nothing for a script (stderr is not a terminal) or a short read.
// Ctrl+C stops the command, as any other.
class ReadProgress
{
public:
    ReadProgress()
        : m_terminal(stderrIsTerminal())
    {
        m_clock.start();
    }
    ~ReadProgress() { done(); }
    // Ends the progress line (before anything else is printed).
    void done()
    {
        if (m_shown)
            std::fputc('\n', stderr);
        m_shown = false;
        m_terminal = false;
    }
    std::function<void(const TraceLoadBatch &)> callback()
    {
        if (!m_terminal)
            return {};
        return [this](const TraceLoadBatch &b) {
            if (m_clock.elapsed() < m_nextMs || b.bytesTotal <= 0)
                return;
            m_nextMs = m_clock.elapsed() + 2000;
            m_shown = true;
            std::fprintf(stderr, "\rmap-inspector-cli: read %lld of %lld MB (%d %%), %lld records",
                         static_cast<long long>(b.bytesRead >> 20), static_cast<long long>(b.bytesTotal >> 20),
                         int(100 * b.bytesRead / b.bytesTotal), static_cast<long long>(b.recordsRead));
            std::fflush(stderr);
        };
    }

private:
    static bool stderrIsTerminal()
    {
#ifdef Q_OS_WIN
        return _isatty(_fileno(stderr)) != 0;
#else
        return isatty(fileno(stderr)) != 0;
#endif
    }
    QElapsedTimer m_clock;
    qint64 m_nextMs = 2000;
    bool m_terminal = false;
    bool m_shown = false;
};

TraceLoadOptions loadOptions(const Common &common)
{
    TraceLoadOptions options;
    options.limits = common.options.limits;
    return options;
}

QString isoTime(qint64 ms)
{
    return QDateTime::fromMSecsSinceEpoch(ms).toUTC().toString(Qt::ISODateWithMs);
}

// An optional time: nullopt when the option is not given.
ErrorOr<std::optional<qint64>> timeOption(const QCommandLineParser &p, const QString &name)
{
    if (!p.isSet(name))
        return std::optional<qint64>();
    const QString text = p.value(name);
    bool ok = false;
    const qint64 ms = text.toLongLong(&ok);
    if (ok)
        return std::optional<qint64>(ms);
    const QDateTime t = QDateTime::fromString(text, Qt::ISODateWithMs);
    if (t.isValid())
        return std::optional<qint64>(t.toMSecsSinceEpoch());
    return Failure{QStringLiteral("--%1 must be epoch milliseconds or an ISO 8601 time").arg(name)};
}

int commandStats(const QCommandLineParser &p, const Common &common)
{
    if (!p.isSet(QStringLiteral("trace")))
        return failWith(Usage, QStringLiteral("stats needs --trace FILE"));
    const QString path = p.value(QStringLiteral("trace"));
    SystemStore store;
    QElapsedTimer timer;
    timer.start();
    ReadProgress progress;
    const TraceLoadResult r = loadTraceInto(store, path, loadOptions(common), progress.callback());
    progress.done();
    if (!r.ok)
        return failWith(TraceUnreadable, r.error);
    const double seconds = double(timer.nsecsElapsed()) / 1e9;
    const TraceReadStats &st = r.stats;

    std::map<std::string, qint64> byDir;
    if (r.timeline)
        for (qint64 i = 0; i < r.timeline->recordCount(); ++i)
            {
                const RecordDir dir = r.timeline->recordDirOf(i);
                ++byDir[dir == RecordDir::Other ? std::string("other") : recordDirName(dir).toStdString()];
            }
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
    std::map<std::string, qint64> byConvention;
    for (const Message &m : store.messages())
        if (m.convention != ConventionKind::None)
            ++byConvention[conventionName(m.convention).toStdString()];
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
    case TraceSlice::Failure::OutputUnwritable: return failWith(OutputUnwritable, slice.error);
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
    const ErrorOr<std::optional<qint64>> fromOption = timeOption(p, QStringLiteral("from"));
    const ErrorOr<std::optional<qint64>> toOption = timeOption(p, QStringLiteral("to"));
    for (const auto *option : {&fromOption, &toOption})
        if (!*option)
            return failWith(Usage, option->error());
    const std::optional<qint64> from = *fromOption, to = *toOption;
    const QString lower = outPath.toLower();
    const bool csv = lower.endsWith(QLatin1String(".csv"));
    const bool otlp = lower.endsWith(QLatin1String(".otlp.json")) || lower.endsWith(QLatin1String(".otlp.jsonl"));
    const bool chrome = !otlp && lower.endsWith(QLatin1String(".json"));
    if (!csv && !chrome && !otlp) {
        if (p.isSet(QStringLiteral("table")))
            return failWith(Usage, QStringLiteral("--table goes with a .csv output"));
        return convertToTrace(in, outPath, from, to);
    }
    CsvTable table = CsvTable::Agents;
    if (csv && !csvTableFromName(p.value(QStringLiteral("table")), table))
        return failWith(Usage, QStringLiteral("a .csv output needs --table agents|messages|tasks"));

    SystemStore store;
    TraceLoadOptions options = loadOptions(common);
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

// What an observation lost on the way: its drops (each with its reason and when the connection
// was back, null when not by the end) and the gaps the model recorded (reconnects, jumps in the
// events' sequence numbers, events the server could not replay).
Json observationJson(const LiveRun &run, const SystemStore &store, double durationS)
{
    Json drops = Json::array();
    for (const LiveRun::Drop &d : run.drops)
        drops.push_back({{"at", isoTime(d.atMs).toStdString()},
                         {"reason", d.reason.toStdString()},
                         {"backAt", d.backAtMs ? Json(isoTime(d.backAtMs).toStdString()) : Json()}});
    const bool complete = run.drops.empty() && store.counters().gaps == 0;
    return {{"durationS", durationS}, {"complete", complete}, {"drops", drops},
            {"dropsNotListed", run.dropsNotListed}, {"gaps", store.counters().gaps}};
}

// Ok for a whole observation; ObservedWithGaps, said on stderr, when it lost anything.
int observationExit(const LiveRun &run, const SystemStore &store)
{
    if (run.drops.empty() && store.counters().gaps == 0)
        return Ok;
    const bool backAtEnd = run.drops.empty() || run.drops.back().backAtMs != 0;
    std::fprintf(stderr, "map-inspector-cli: the observation is incomplete: %zu connection drop(s), %lld gap(s) in the model%s\n",
                 run.drops.size() + size_t(run.dropsNotListed), static_cast<long long>(store.counters().gaps),
                 backAtEnd ? "" : "; not reconnected by the end");
    return ObservedWithGaps;
}

int commandState(const QCommandLineParser &p, const Common &common)
{
    if (p.isSet(QStringLiteral("trace"))) {
        SystemStore store;
        ReadProgress progress;
        const TraceLoadResult r = loadTraceInto(store, p.value(QStringLiteral("trace")), loadOptions(common), progress.callback());
        progress.done();
        if (!r.ok)
            return failWith(TraceUnreadable, r.error);
        const TraceReadStats &stats = r.stats;
        Json out = stateToJson(store);
        out["trace"] = {{"records", stats.records},
                        {"format", stats.format.toStdString()},
                        {"compression", stats.compression.toStdString()},
                        {"badLines", badLinesJson(stats)}};
        if (!stats.streamError.isEmpty())
            out["trace"]["streamError"] = stats.streamError.toStdString();
        printJson(out);
        reportDamage(stats, store);
        return Ok;
    }
    LiveRun run(common);
    run.onLive = [&] {
        QTimer::singleShot(int(common.durationS * 1000), &run.session, [&] { run.finish(Ok); });
    };
    const int code = run.run();
    if (code != Ok)
        return failWith(code, run.error);
    Json out = stateToJson(run.store());
    if (common.observing)
        out["observation"] = observationJson(run, run.store(), common.durationS);
    printJson(out);
    return common.observing ? observationExit(run, run.store()) : Ok;
}

// A message's causal chain (model/CausalChains.h): what caused it, root first, and what it led to.
int commandChain(const QCommandLineParser &p, const Common &common)
{
    if (!p.isSet(QStringLiteral("trace")) || p.isSet(QStringLiteral("message")) == p.isSet(QStringLiteral("event")))
        return failWith(Usage, QStringLiteral("chain needs --trace FILE and --message ID or --event ID"));
    SystemStore store;
    ReadProgress progress;
    const TraceLoadResult r = loadTraceInto(store, p.value(QStringLiteral("trace")), loadOptions(common), progress.callback());
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

// rulesOption is defined further down (watch and rules share it).
ErrorOr<AlertRules> rulesOption(const QCommandLineParser &p);

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
    const ErrorOr<std::optional<qint64>> fromOption = timeOption(p, QStringLiteral("from"));
    const ErrorOr<std::optional<qint64>> toOption = timeOption(p, QStringLiteral("to"));
    for (const auto *option : {&fromOption, &toOption})
        if (!*option)
            return failWith(Usage, option->error());
    const ErrorOr<AlertRules> rules = rulesOption(p);
    if (!rules)
        return failWith(Usage, rules.error());
    BundleOptions options;
    options.fromMs = *fromOption;
    options.toMs = *toOption;
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
    const QString slicePath = preview ? QString() : outPath + QStringLiteral(".slice.jsonl.zst");
    const BundleResult slice = writeIncidentBundle(in, slicePath, options);
    if (!slice.ok())
        return failed(slice);
    BundleResult written = slice;
    if (!preview) {
        SystemStore store;
        store.setHealthPolicy(healthPolicyForRules(*rules, store.healthPolicy()));
        const TraceLoadResult loaded = loadTraceInto(store, slicePath, loadOptions(common));
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
        written = rewriteIncidentBundle(slicePath, outPath, options, slice);
        QFile::remove(slicePath);
        if (!written.ok())
            return failed(written);
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

// Two runs compared (trace/RunDiff.h): JSON on stdout; 0 when equal, 1 when they differ.
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
    return result.value("equal", false) ? Ok : Different;
}

int commandRecord(const QCommandLineParser &p, const Common &common)
{
    if (!p.isSet(QStringLiteral("out")))
        return failWith(Usage, QStringLiteral("record needs --out FILE"));
    LiveRun run(common);
    TraceWriterOptions writerOptions;
    writerOptions.maxBytes = qint64(p.value(QStringLiteral("rotate-mb")).toDouble() * 1024 * 1024);
    writerOptions.maxSeconds = p.value(QStringLiteral("rotate-seconds")).toLongLong();
    if (common.durationS > 0)
        QTimer::singleShot(int(common.durationS * 1000), &run.session, [&] { run.finish(Ok); });
    // Without --duration: record until interrupted is not supported headless (no signal
    // handling across platforms); a duration keeps runs bounded.
    QString error;
    const int code = run.runRecording(p.value(QStringLiteral("out")), writerOptions, &error);
    if (code == Usage)
        return failWith(Usage, error);
    if (code != Ok)
        return failWith(code, run.error);
    std::fprintf(stderr, "map-inspector-cli: recorded %lld records, %lld events to %s\n",
                 static_cast<long long>(run.recordedRecords), static_cast<long long>(run.store().counters().eventsApplied),
                 qPrintable(run.recordedFiles.join(QStringLiteral(", "))));
    if (!run.recordingError.isEmpty())
        return failWith(OutputUnwritable, run.recordingError);
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
    LiveRun run(common);
    SystemStore &store = run.store();
    store.setHealthPolicy(healthPolicyForRules(*rules, store.healthPolicy()));
    AlertEngine engine(*rules);
    QObject::connect(&store, &SystemStore::wasReset, &store, [&engine] { engine.restartReading(); });
    qint64 raised = 0;
    QTimer tick;
    tick.setInterval(1000); // the rules are defined in seconds; a second is the resolution they need
    QObject::connect(&tick, &QTimer::timeout, &store, [&] {
        store.advanceTime(QDateTime::currentMSecsSinceEpoch());
        std::vector<AlertChange> changes = engine.update(store);
        while (engine.isBehind(store)) // nothing to keep responsive here: read it all now
            changes = engine.update(store);
        for (const AlertChange &change : changes) {
            const QByteArray line = QByteArray::fromStdString(alertChangeToJson(change).dump(-1, ' ', false, Json::error_handler_t::replace));
            std::fputs(redactSecrets(line).constData(), stdout);
            std::fputc('\n', stdout);
            std::fflush(stdout);
            if (change.raised) {
                ++raised;
                if (exitOn && change.alert.severity >= *exitOn)
                    run.finish(AlertRaised, QStringLiteral("a %1 alert was raised (--exit-on %2)")
                                                .arg(alertSeverityName(change.alert.severity), alertSeverityName(*exitOn)));
            }
        }
    });
    run.onLive = [&] {
        tick.start();
        if (common.durationS > 0)
            QTimer::singleShot(int(common.durationS * 1000), &run.session, [&] { run.finish(Ok); });
    };
    const int code = run.run();
    if (code == AlertRaised) {
        std::fprintf(stderr, "map-inspector-cli: %s\n", qPrintable(run.error));
        return AlertRaised;
    }
    if (code != Ok)
        return failWith(code, run.error);
    Json summary = observationJson(run, store, common.durationS);
    summary["alertsRaised"] = raised;
    summary["alertsOpen"] = engine.openAlerts().size();
    summary["notTracked"] = engine.notTracked();
    std::fputs(QByteArray::fromStdString(Json{{"summary", summary}}.dump()).constData(), stdout);
    std::fputc('\n', stdout);
    std::fflush(stdout);
    return observationExit(run, store);
}

int commandAction(const QString &command, const QCommandLineParser &p, const Common &common)
{
    const QString agentId = p.value(QStringLiteral("agent"));
    if (agentId.isEmpty())
        return failWith(Usage, QStringLiteral("%1 needs --agent ID").arg(command));
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
            if (store.now() - a->sentAtMs > policy.actionConfirmTimeoutMs)
                run.finish(ActionTimedOut);
            break;
        default: break;
        }
    });
    run.onLive = [&] {
        const QString reason = p.value(QStringLiteral("reason"));
        const QStringList agents{agentId};
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

} // namespace

int main(int argc, char **argv)
{
    QCoreApplication app(argc, argv);
    QCoreApplication::setApplicationName(QStringLiteral("map-inspector-cli"));
    QCoreApplication::setApplicationVersion(QStringLiteral(MAPI_VERSION));

    QCommandLineParser p;
    p.setApplicationDescription(QStringLiteral(
        "Headless MAP Inspector.\n\nCommands:\n"
        "  record  --url URL --duration S --out FILE [--rotate-mb N] [--rotate-seconds S]\n"
        "          record every frame to a trace (.jsonl, .jsonl.zst or .jsonl.gz)\n"
        "  state   --url URL [--duration S] | --trace FILE   print the system model as JSON\n"
        "  stats   --trace FILE   records, events by type, agents, messages, tasks, time span, bad lines\n"
        "  convert --trace IN --out OUT [--table agents|messages|tasks] [--from T] [--to T]\n"
        "          OUT by extension: .jsonl[.zst|.gz] a trace (recompress, or convert a capture or\n"
        "          a seed-format log), .otlp.json OpenTelemetry (OTLP/JSON, GenAI conventions),\n"
        "          .json a Chrome trace (Perfetto), .csv a table (--table)\n"
        "  inject  --url URL --agent ID --message TEXT|--json JSON [--delivery MODE]\n"
        "  stop|suspend|resume --url URL --agent ID [--reason R] [--force]\n"
        "  watch   --url URL [--rules FILE] [--duration S] [--heartbeat-interval S] [--exit-on SEVERITY]\n"
        "          one JSON line per alert raised or cleared (unresponsive, failed, loop, stalled,\n"
        "          deadlock, budget, needs-human, error-storm), then a summary line\n"
        "  rules   [--rules FILE]   print the alert rules in effect (the defaults, or FILE completed)\n"
        "  chain   --trace FILE --message ID | --event ID   what caused a message or an event (root\n"
        "          first) and what it led to\n"
        "  diff    A B   compare two runs (traces): agents matched by name, role and place in the tree,\n"
        "          only in A, only in B, changed; conversations aligned; the first divergence; deltas of\n"
        "          counts, task durations, tokens and cost. JSON; exit 0 when equal, 1 when different\n"
        "  bundle  --trace IN --out FILE [--from T] [--to T] [--redact REGEX]... [--redact-key NAME]...\n"
        "          [--note TEXT] [--rules FILE] [--preview]   an incident bundle: the range's trace (with\n"
        "          the state at T), the bookmarks, the alerts open at its end and the note, redacted\n"
        "          by the regular expressions and key names; --preview only counts. Opens as a trace\n\n"
        "--observer (any command with --url): ask the server to observe and nothing more; the control\n"
        "commands (inject, stop, suspend, resume) are then refused without being sent (exit 4).\n\n"
        "--trace reads MAP Inspector traces, raw captures and message logs in the seed envelope\n"
        "formats 000/002/003/004 (JSON Lines or a JSON array), OpenTelemetry OTLP/JSON traces, plain,\n"
        ".gz or .zst.\n\n"
        "Exit codes: 0 ok, 1 usage (diff: the runs differ, with the JSON on stdout), 2 connection failed,\n"
        "3 authentication refused,\n"
        "4 action failed or unsupported, 5 action not confirmed in time, 6 trace unreadable,\n"
        "7 output not writable, 8 an observation (state --url --duration, record, watch) is incomplete:\n"
        "the connection dropped (it was re-established and the model read again) or events were missed,\n"
        "9 watch --exit-on: an alert of that severity or worse was raised."));
    p.addHelpOption();
    p.addVersionOption();
    p.addPositionalArgument(QStringLiteral("command"),
                            QStringLiteral("record | state | stats | convert | inject | stop | suspend | resume | watch | rules | chain | diff | bundle"));
    p.addOptions({
        {QStringLiteral("url"), QStringLiteral("MAP server WebSocket URL (ws:// or wss://)."), QStringLiteral("URL")},
        {QStringLiteral("token"), QStringLiteral("Credential (visible in the process list: prefer --token-env)."), QStringLiteral("T")},
        {QStringLiteral("token-env"), QStringLiteral("Read the credential from this environment variable."), QStringLiteral("VAR")},
        {QStringLiteral("token-file"), QStringLiteral("Read the credential from this file, and again when the server says it "
                                                      "expires (map/auth/expiring): a renewed token is sent with map/auth/refresh."),
         QStringLiteral("FILE")},
        {QStringLiteral("auth"), QStringLiteral("Credential method: bearer (default) or api-key."), QStringLiteral("METHOD"), QStringLiteral("bearer")},
        {QStringLiteral("duration"), QStringLiteral("Seconds to observe after the snapshot (state: default 1; record: required)."), QStringLiteral("S")},
        {QStringLiteral("out"), QStringLiteral("File to write (record: the trace; convert: by extension)."), QStringLiteral("FILE")},
        {QStringLiteral("trace"), QStringLiteral("Trace, capture or seed-format log to read instead of connecting."), QStringLiteral("FILE")},
        {QStringLiteral("table"), QStringLiteral("convert to .csv: agents, messages or tasks."), QStringLiteral("TABLE")},
        {QStringLiteral("from"), QStringLiteral("convert, bundle: start of the time range (epoch ms or ISO 8601)."), QStringLiteral("T")},
        {QStringLiteral("to"), QStringLiteral("convert, bundle: end of the time range (epoch ms or ISO 8601)."), QStringLiteral("T")},
        {QStringLiteral("rotate-mb"), QStringLiteral("record: start a new part after N MiB on disk."), QStringLiteral("N"), QStringLiteral("0")},
        {QStringLiteral("rotate-seconds"), QStringLiteral("record: start a new part every S seconds."), QStringLiteral("S"), QStringLiteral("0")},
        {QStringLiteral("agent"), QStringLiteral("Target agent id."), QStringLiteral("ID")},
        {QStringLiteral("message"), QStringLiteral("Steering text for inject; chain: the message's id (MAP or envelope id)."), QStringLiteral("TEXT")},
        {QStringLiteral("json"), QStringLiteral("Steering content for inject, as JSON."), QStringLiteral("JSON")},
        {QStringLiteral("delivery"), QStringLiteral("inject delivery: interrupt, queue or best-effort."), QStringLiteral("MODE"), QStringLiteral("best-effort")},
        {QStringLiteral("reason"), QStringLiteral("Reason sent with stop/suspend."), QStringLiteral("R")},
        {QStringLiteral("force"), QStringLiteral("stop: force.")},
        {QStringLiteral("observer"), QStringLiteral("Observer-only: ask the server to observe and nothing more; "
                                                    "inject, stop, suspend and resume are refused without being sent.")},
        {QStringLiteral("allow-token-over-ws"), QStringLiteral("Send the credential even over unencrypted ws:// to a host that is not "
                                                               "loopback (refused otherwise: use wss://).")},
        {QStringLiteral("timeout"), QStringLiteral("Seconds to wait for an action's confirmation (default 10)."), QStringLiteral("S"), QStringLiteral("10")},
        {QStringLiteral("rules"), QStringLiteral("watch, rules: the alert rules file (JSON; see docs/alerts.md)."), QStringLiteral("FILE")},
        {QStringLiteral("heartbeat-interval"), QStringLiteral("watch, rules: the agents' heartbeat interval in seconds (default 30, or the rules file's)."),
         QStringLiteral("S")},
        {QStringLiteral("exit-on"), QStringLiteral("watch: exit (code 9) once an alert of this severity or worse is raised: info, warning or critical."),
         QStringLiteral("SEVERITY")},
        {QStringLiteral("max-frame-bytes"), QStringLiteral("Refuse frames larger than this (default 16 MiB)."), QStringLiteral("N")},
        {QStringLiteral("redact"), QStringLiteral("bundle: replace every match of this regular expression (repeatable)."), QStringLiteral("REGEX")},
        {QStringLiteral("redact-key"), QStringLiteral("bundle: replace the value of every JSON member of this name, any case (repeatable)."),
         QStringLiteral("NAME")},
        {QStringLiteral("note"), QStringLiteral("bundle: the operator's note about the incident."), QStringLiteral("TEXT")},
        {QStringLiteral("event"), QStringLiteral("chain: the event's id (its message's chain, or its MAP causedBy links)."), QStringLiteral("ID")},
        {QStringLiteral("preview"), QStringLiteral("bundle: count what would be written and redacted; write nothing.")},
    });
    if (!p.parse(QCoreApplication::arguments()))
        return failWith(Usage, p.errorText());
    if (p.isSet(QStringLiteral("help")))
        p.showHelp(Ok);
    if (p.isSet(QStringLiteral("version"))) {
        std::printf("%s %s\nallocator: %s\n", qPrintable(QCoreApplication::applicationName()),
                    qPrintable(QCoreApplication::applicationVersion()), mapi::allocatorName().c_str());
        return Ok;
    }

    const QStringList args = p.positionalArguments();
    const bool diff = !args.isEmpty() && args.first() == QLatin1String("diff");
    if (diff && args.size() != 3)
        return failWith(Usage, QStringLiteral("diff needs two traces: diff A B"));
    if (!diff && args.size() != 1)
        return failWith(Usage, QStringLiteral("give exactly one command (see --help)"));
    const QString command = args.first();

    Common common;
    if (p.isSet(QStringLiteral("max-frame-bytes"))) {
        bool ok = false;
        common.options.limits.maxFrameBytes = p.value(QStringLiteral("max-frame-bytes")).toLongLong(&ok);
        if (!ok || common.options.limits.maxFrameBytes <= 0)
            return failWith(Usage, QStringLiteral("--max-frame-bytes must be a positive integer"));
    }
    if (p.isSet(QStringLiteral("duration"))) {
        bool ok = false;
        common.durationS = p.value(QStringLiteral("duration")).toDouble(&ok);
        if (!ok || common.durationS < 0)
            return failWith(Usage, QStringLiteral("--duration must be a number of seconds"));
    } else if (command == QLatin1String("state")) {
        common.durationS = 1; // a look, not an observation
    }
    common.observing = (common.durationS > 0
                        && (command == QLatin1String("record") || (command == QLatin1String("state") && p.isSet(QStringLiteral("duration")))))
        || command == QLatin1String("watch"); // watch without --duration runs until it is stopped

    if (command == QLatin1String("rules"))
        return commandRules(p);
    if (diff)
        return commandDiff(args[1], args[2], loadOptions(common));
    const bool offline = command == QLatin1String("stats") || command == QLatin1String("convert") || command == QLatin1String("chain")
        || command == QLatin1String("bundle");
    const bool needsUrl = !offline && !(command == QLatin1String("state") && p.isSet(QStringLiteral("trace")));
    if (needsUrl) {
        if (!p.isSet(QStringLiteral("url")))
            return failWith(Usage, QStringLiteral("%1 needs --url URL").arg(command));
        const QUrl url(p.value(QStringLiteral("url")), QUrl::StrictMode);
        if (!url.isValid() || (url.scheme() != QLatin1String("ws") && url.scheme() != QLatin1String("wss")))
            return failWith(Usage, QStringLiteral("--url must be a ws:// or wss:// URL"));
        common.options.url = url;
        const ErrorOr<AuthConfig> auth = readAuth(p);
        if (!auth)
            return failWith(Usage, auth.error());
        common.options.auth = *auth;
        common.tokenFile = p.value(QStringLiteral("token-file"));
        common.options.clientName = QStringLiteral("map-inspector-cli");
        // A one-shot command fails fast; an observation for a duration reconnects after drops
        // (the first connection still fails fast: LiveRun).
        common.options.reconnect = common.observing;
        common.options.observerOnly = p.isSet(QStringLiteral("observer"));
        common.options.allowCredentialInClear = p.isSet(QStringLiteral("allow-token-over-ws"));
    }

    if (command == QLatin1String("state"))
        return commandState(p, common);
    if (command == QLatin1String("stats"))
        return commandStats(p, common);
    if (command == QLatin1String("convert"))
        return commandConvert(p, common);
    if (command == QLatin1String("chain"))
        return commandChain(p, common);
    if (command == QLatin1String("bundle"))
        return commandBundle(p, common);
    if (command == QLatin1String("record")) {
        if (common.durationS <= 0)
            return failWith(Usage, QStringLiteral("record needs --duration S"));
        return commandRecord(p, common);
    }
    if (command == QLatin1String("watch"))
        return commandWatch(p, common);
    if (command == QLatin1String("inject") || command == QLatin1String("stop") || command == QLatin1String("suspend")
        || command == QLatin1String("resume"))
        return commandAction(command, p, common);
    return failWith(Usage, QStringLiteral("unknown command \"%1\" (see --help)").arg(command));
}
