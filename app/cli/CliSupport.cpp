#include "CliSupport.h"

#include "common/Redaction.h"
#include "model/StateJson.h"
#include "model/SystemStore.h"

#include <QDateTime>
#include <QFile>
#include <QTimer>

#include <algorithm>
#include <atomic>
#include <csignal>
#include <vector>

#ifdef Q_OS_WIN
#include <io.h>
#else
#include <unistd.h>
#endif

namespace mapi::cli {

int failWith(int code, const QString &message)
{
    std::fprintf(stderr, "map-inspector-cli: %s\n", qPrintable(redactSecrets(message)));
    return code;
}

void printJson(const Json &json, int indent)
{
    // Agents' names and metadata, action parameters and server text can carry credentials: the
    // output is redacted like every other way out (common/Redaction.h).
    std::fputs(redactSecrets(QByteArray::fromStdString(json.dump(indent, ' ', false, Json::error_handler_t::replace))).constData(), stdout);
    std::fputc('\n', stdout);
    std::fflush(stdout);
}

namespace {

// Lock-free, so that the handler may set it (C++17 [support.signal]); on Windows the handler
// runs on the console-control thread, which an atomic also covers.
std::atomic<int> g_stopSignal{0};
static_assert(std::atomic<int>::is_always_lock_free, "a signal handler may only touch lock-free atomics");

extern "C" void askStop(int signal)
{
    int none = 0;
    g_stopSignal.compare_exchange_strong(none, signal);
    // The second one of this kind ends the process (calling signal() for the signal being
    // handled is allowed in a handler; Windows has reset it to SIG_DFL before the call already).
    std::signal(signal, SIG_DFL);
}

} // namespace

void catchStopSignals()
{
    std::signal(SIGINT, askStop);
    std::signal(SIGTERM, askStop);
#ifdef SIGBREAK
    std::signal(SIGBREAK, askStop);
#endif
}

int stopSignalReceived()
{
    return g_stopSignal.load();
}

StopSignalWatch::StopSignalWatch(std::function<void()> stop)
    : m_poll(std::make_unique<QTimer>())
{
    m_poll->setInterval(100);
    QObject::connect(m_poll.get(), &QTimer::timeout, m_poll.get(), [this, stop = std::move(stop)] {
        if (g_stopSignal.load() == 0)
            return;
        m_poll->stop(); // once
        const std::function<void()> act = stop; // a copy: safe even if `stop` ends this watch
        act();
    });
    m_poll->start();
}

StopSignalWatch::~StopSignalWatch() = default;

namespace {

void putRedacted(const std::string &text)
{
    const QByteArray redacted = redactSecrets(QByteArray::fromStdString(text));
    std::fwrite(redacted.constData(), 1, size_t(redacted.size()), stdout);
}

// A value dumped with its own indentation, as it stands `depth` spaces in (a JSON text holds no
// raw line break but those of its indentation).
std::string indentedBy(const Json &value, int indent, int depth)
{
    const std::string text = value.dump(indent, ' ', false, Json::error_handler_t::replace);
    std::string out;
    out.reserve(text.size());
    for (const char c : text) {
        out += c;
        if (c == '\n')
            out.append(size_t(depth), ' ');
    }
    return out;
}

} // namespace

void printStateJson(const SystemStore &store, const Json &state)
{
    constexpr int kIndent = 2;
    const std::string pad(kIndent, ' ');
    std::fputc('{', stdout);
    bool first = true;
    for (auto it = state.begin(); it != state.end(); ++it) {
        std::fputs(first ? "\n" : ",\n", stdout);
        first = false;
        // The members' names are stateToJson's own (none names a secret); each value is whole
        // JSON, so the redaction reads it as JSON, as it read the whole document.
        const std::string member = pad + Json(it.key()).dump() + ": ";
        std::fputs(member.c_str(), stdout);
        const bool agents = it.key() == "agents" || it.key() == "departedAgents";
        if (!agents || !it.value().empty()) {
            putRedacted(indentedBy(it.value(), kIndent, kIndent));
            continue;
        }
        bool any = false;
        forEachAgentJson(store, it.key() == "departedAgents", [&](const Json &agent) {
            std::fputs(any ? ",\n" : "[\n", stdout);
            any = true;
            putRedacted(pad + pad + indentedBy(agent, kIndent, 2 * kIndent));
        });
        std::fputs(any ? ("\n" + pad + "]").c_str() : "[]", stdout);
    }
    std::fputs(first ? "}\n" : "\n}\n", stdout);
    std::fflush(stdout);
}

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

// ---- traces ------------------------------------------------------------------------------

Json badLinesJson(const TraceReadStats &stats, int max)
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
            std::fprintf(stderr, "map-inspector-cli: %s\n", qPrintable(p.detail));
    const StoreCounters &c = store.counters();
    if (c.agentsNotKept > 0 || c.historyNotKept > 0)
        std::fprintf(stderr, "map-inspector-cli: counts.agentsNotKept %lld, counts.historyNotKept %lld\n",
                     static_cast<long long>(c.agentsNotKept), static_cast<long long>(c.historyNotKept));
}

bool ReadProgress::stderrIsTerminal()
{
#ifdef Q_OS_WIN
    return _isatty(_fileno(stderr)) != 0;
#else
    return isatty(fileno(stderr)) != 0;
#endif
}

TraceLoadOptions loadOptions(const Common &common)
{
    TraceLoadOptions options;
    options.limits = common.options.limits;
    return options;
}

TraceLoadOptions traceLoadFor(SystemStore &store, const Common &common, bool modelOnly)
{
    store.setMaxAgents(common.maxAgents);
    TraceLoadOptions options = loadOptions(common);
    if (modelOnly) {
        store.setHistoryBudget(size_t(kCliMemoryBudgetBytes * 2 / 5));
        options.keepTimeline = false;
    }
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

ErrorOr<TimeRange> timeRangeOption(const QCommandLineParser &p)
{
    const ErrorOr<std::optional<qint64>> from = timeOption(p, QStringLiteral("from"));
    if (!from)
        return Failure{from.error()};
    const ErrorOr<std::optional<qint64>> to = timeOption(p, QStringLiteral("to"));
    if (!to)
        return Failure{to.error()};
    return TimeRange{*from, *to};
}

namespace {

const QStringList kCommands = {QStringLiteral("state"),  QStringLiteral("stats"),  QStringLiteral("convert"), QStringLiteral("chain"),
                               QStringLiteral("bundle"), QStringLiteral("record"), QStringLiteral("watch"),   QStringLiteral("inject"),
                               QStringLiteral("stop"),   QStringLiteral("suspend"), QStringLiteral("resume"), QStringLiteral("rules"),
                               QStringLiteral("diff"),   QStringLiteral("tap")};

// Levenshtein distance (command names are short: a full table is nothing).
int editDistance(const QString &a, const QString &b)
{
    std::vector<int> row(size_t(b.size()) + 1);
    for (size_t j = 0; j < row.size(); ++j)
        row[j] = int(j);
    for (qsizetype i = 1; i <= a.size(); ++i) {
        int diagonal = row[0];
        row[0] = int(i);
        for (qsizetype j = 1; j <= b.size(); ++j) {
            const int above = row[size_t(j)];
            row[size_t(j)] = std::min({above + 1, row[size_t(j - 1)] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
            diagonal = above;
        }
    }
    return row.back();
}

} // namespace

bool isCommand(const QString &name)
{
    return kCommands.contains(name);
}

QString nearestCommand(const QString &name)
{
    QString best;
    int bestDistance = 3; // more than two edits away: no guess
    for (const QString &command : kCommands)
        if (const int d = editDistance(name.toLower(), command); d < bestDistance) {
            bestDistance = d;
            best = command;
        }
    return best;
}

} // namespace mapi::cli
