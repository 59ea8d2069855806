// map-inspector-cli: the headless front end on the same core as the window.
//
// Exit codes (documented in the README):
//   0 success · 1 usage error · 2 connection failed · 3 authentication refused ·
//   4 action failed or not supported · 5 action not confirmed in time · 6 trace unreadable ·
//   7 output not writable · 8 an observation is incomplete (a drop, or missed events) ·
//   9 watch --exit-on: an alert of that severity was raised · diff: 0 equal, 1 different
#include "Allocator.h"
#include "CrashReport.h"
#include "Commands.h"
#include "LiveTelemetry.h"

#include "client/StreamTransports.h"

#include <QCommandLineParser>
#include <QCoreApplication>
#include <QUrl>

#include <climits>

using namespace mapi;
using namespace mapi::cli;

int main(int argc, char **argv)
{
    mapi::installCrashReport("map-inspector-cli");
    QCoreApplication app(argc, argv);
    QCoreApplication::setApplicationName(QStringLiteral("map-inspector-cli"));
    QCoreApplication::setApplicationVersion(QStringLiteral(MAPI_VERSION));

    QCommandLineParser p;
    p.setApplicationDescription(QStringLiteral(
        "Headless MAP Inspector.\n\nCommands:\n"
        "  record  --url URL [--duration S] --out FILE [--rotate-mb N] [--rotate-seconds S] [--keep-parts N] [--keep-mb N]\n"
        "          record every frame to a trace (.jsonl, .jsonl.zst or .jsonl.gz); without --duration until\n"
        "          SIGTERM or Ctrl+C (the first connection then waits for the system); either stops in order,\n"
        "          a second one at once. --keep-*: delete this recording's oldest rotated parts\n"
        "  state   --url URL [--duration S] | --trace FILE   print the system model as JSON\n"
        "  stats   --trace FILE   records, events by type, agents, messages, tasks, time span, bad lines\n"
        "  convert --trace IN --out OUT [--table agents|messages|tasks|turns|checkpoints|acp] [--from T] [--to T]\n"
        "          OUT by extension: .jsonl[.zst|.gz] a trace (recompress, or convert a capture or\n"
        "          a seed-format log), .otlp.json OpenTelemetry (OTLP/JSON, GenAI conventions),\n"
        "          .json a Chrome trace (Perfetto), .csv a table (--table)\n"
        "  inject  --url URL --agent ID --message TEXT|--json JSON [--delivery MODE]\n"
        "  stop|suspend|resume --url URL --agent ID [--reason R] [--force]\n"
        "  watch   --url URL [--rules FILE] [--duration S] [--heartbeat-interval S] [--exit-on SEVERITY] [--group]\n"
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
        "          by the regular expressions and key names; --preview only counts. Opens as a trace\n"
        "  tap     --upstream ws://HOST:PORT/PATH [--listen 127.0.0.1:PORT] [--out FILE] [--duration S]\n"
        "          a passive tap: agents and clients connect to the listening address instead of the\n"
        "          server; every WebSocket message is forwarded unchanged both ways and recorded into\n"
        "          one trace, a connection number per participant. Listens on this machine only; the\n"
        "          upstream is wss:// or on this machine (credentials never cross in clear). JSON lines\n"
        "          on stdout (listening, open, close, summary); ends at --duration, Ctrl+C or SIGTERM\n\n"
        "URL: ws://HOST:PORT or wss://HOST:PORT (WebSocket), unix:/PATH (NDJSON on a Unix domain socket;\n"
        "a named pipe on Windows), or --launch 'COMMAND ARGS' instead of --url: start a MAP system as a\n"
        "child process and speak NDJSON on its stdin/stdout; its stderr is copied to ours (\"[child]\";\n"
        "with several systems, \"[stdio:COMMAND]\"), its end is a disconnect (exit 2, with its exit code\n"
        "said), it is not restarted, and it is ended, with the processes it started, when the command ends.\n\n"
        "Several systems: state and watch take --url and --launch more than once and observe every\n"
        "system at once (launched ones first, then the URLs): state prints {\"systems\": {URL: model}},\n"
        "watch names the system on each line and prints a summary per system; the exit code is the\n"
        "worst system's (a system not observed, then an incomplete observation, then 0).\n\n"
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
                            QStringLiteral("record | state | stats | convert | inject | stop | suspend | resume | watch | rules | chain | diff | bundle | tap"));
    p.addOptions({
        {QStringLiteral("url"), QStringLiteral("MAP system: ws://, wss://, unix:/PATH or stdio:COMMAND."), QStringLiteral("URL")},
        {QStringLiteral("launch"), QStringLiteral("Start this command and speak MAP on its stdin/stdout (instead of --url)."),
         QStringLiteral("COMMAND")},
        {QStringLiteral("token"), QStringLiteral("Credential (visible in the process list: prefer --token-env)."), QStringLiteral("T")},
        {QStringLiteral("token-env"), QStringLiteral("Read the credential from this environment variable."), QStringLiteral("VAR")},
        {QStringLiteral("token-file"), QStringLiteral("Read the credential from this file, and again when the server says it "
                                                      "expires (map/auth/expiring): a renewed token is sent with map/auth/refresh."),
         QStringLiteral("FILE")},
        {QStringLiteral("auth"), QStringLiteral("Credential method: bearer (default) or api-key."), QStringLiteral("METHOD"), QStringLiteral("bearer")},
        {QStringLiteral("duration"), QStringLiteral("Seconds to observe after the snapshot (state: default 1; record: without it, "
                                                    "until SIGTERM or SIGINT)."), QStringLiteral("S")},
        {QStringLiteral("out"), QStringLiteral("File to write (record: the trace; convert: by extension)."), QStringLiteral("FILE")},
        {QStringLiteral("trace"), QStringLiteral("Trace, capture or seed-format log to read instead of connecting."), QStringLiteral("FILE")},
        {QStringLiteral("table"), QStringLiteral("convert to .csv: agents, messages, tasks, turns (conversations), checkpoints or acp."), QStringLiteral("TABLE")},
        {QStringLiteral("from"), QStringLiteral("convert, bundle: start of the time range (epoch ms or ISO 8601)."), QStringLiteral("T")},
        {QStringLiteral("to"), QStringLiteral("convert, bundle: end of the time range (epoch ms or ISO 8601)."), QStringLiteral("T")},
        {QStringLiteral("rotate-mb"), QStringLiteral("record: start a new part after N MiB on disk."), QStringLiteral("N"), QStringLiteral("0")},
        {QStringLiteral("rotate-seconds"), QStringLiteral("record: start a new part every S seconds."), QStringLiteral("S"), QStringLiteral("0")},
        {QStringLiteral("keep-parts"), QStringLiteral("record: keep the newest N parts of this recording, deleting older ones as new "
                                                      "parts start (needs --rotate-mb or --rotate-seconds)."), QStringLiteral("N")},
        {QStringLiteral("keep-mb"), QStringLiteral("record: keep this recording's parts within N MiB on disk, the oldest deleted first; "
                                                   "the part being written is never deleted."), QStringLiteral("N")},
        {QStringLiteral("agent"), QStringLiteral("Target agent: its id, or the name of exactly one present agent."), QStringLiteral("ID|NAME")},
        {QStringLiteral("message"), QStringLiteral("Steering text for inject; chain: the message's id (MAP or envelope id)."), QStringLiteral("TEXT")},
        {QStringLiteral("json"), QStringLiteral("Steering content for inject, as JSON."), QStringLiteral("JSON")},
        {QStringLiteral("delivery"), QStringLiteral("inject delivery: interrupt, queue or best-effort."), QStringLiteral("MODE"), QStringLiteral("best-effort")},
        {QStringLiteral("reason"), QStringLiteral("Reason sent with stop/suspend."), QStringLiteral("R")},
        {QStringLiteral("force"), QStringLiteral("stop: force.")},
        {QStringLiteral("observer"), QStringLiteral("Observer-only: ask the server to observe and nothing more; "
                                                    "inject, stop, suspend and resume are refused without being sent.")},
        {QStringLiteral("gateway"), QStringLiteral("Say participantType \"gateway\" in map/connect: a server that reads it and serves "
                                                   "its federation to gateways answers with its peers and buffers (state's \"federation\"). "
                                                   "The SDK's servers choose the role by the address instead.")},
        {QStringLiteral("allow-token-over-ws"), QStringLiteral("Send the credential even over unencrypted ws:// to a host that is not "
                                                               "loopback (refused otherwise: use wss://).")},
        {QStringLiteral("timeout"), QStringLiteral("Seconds to wait for an action's confirmation (default 10)."), QStringLiteral("S"), QStringLiteral("10")},
        {QStringLiteral("rules"), QStringLiteral("watch, rules: the alert rules file (JSON; see docs/alerts.md)."), QStringLiteral("FILE")},
        {QStringLiteral("heartbeat-interval"), QStringLiteral("watch, rules: the agents' heartbeat interval in seconds (default 30, or the rules file's)."),
         QStringLiteral("S")},
        {QStringLiteral("exit-on"), QStringLiteral("watch: exit (code 9) once an alert of this severity or worse is raised: info, warning or critical."),
         QStringLiteral("SEVERITY")},
        {QStringLiteral("group"), QStringLiteral("watch: alerts of a storm as their group's lines (\"group\", \"title\", \"state\" new|grown|resolved, "
                                                 "counts), one per group and change, as the rules' \"grouping\" says; few alerts stay single.")},
        {QStringLiteral("max-frame-bytes"), QStringLiteral("Refuse frames larger than this (default 16 MiB)."), QStringLiteral("N")},
        {QStringLiteral("max-agents"), QStringLiteral("Model at most N agents (default 100000, about 1.5 KB each); "
                                                      "events naming more are kept and counted."), QStringLiteral("N")},
        {QStringLiteral("redact"), QStringLiteral("bundle: replace every match of this regular expression (repeatable)."), QStringLiteral("REGEX")},
        {QStringLiteral("redact-key"), QStringLiteral("bundle: replace the value of every JSON member of this name, any case (repeatable)."),
         QStringLiteral("NAME")},
        {QStringLiteral("note"), QStringLiteral("bundle: the operator's note about the incident."), QStringLiteral("TEXT")},
        {QStringLiteral("event"), QStringLiteral("chain: the event's id (its message's chain, or its MAP causedBy links)."), QStringLiteral("ID")},
        {QStringLiteral("preview"), QStringLiteral("bundle: count what would be written and redacted; write nothing.")},
        {QStringLiteral("upstream"), QStringLiteral("tap: the MAP server's WebSocket address the participants' traffic goes to."),
         QStringLiteral("URL")},
        {QStringLiteral("listen"), QStringLiteral("tap: the address to listen on (this machine only; port 0: any free port)."),
         QStringLiteral("HOST:PORT"), QStringLiteral("127.0.0.1:0")},
    });
    p.addOptions(mapi::cli::telemetryCommandLineOptions());
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
    if (!diff && !isCommand(command)) {
        const QString near = nearestCommand(command);
        return failWith(Usage, near.isEmpty() ? QStringLiteral("unknown command '%1' (see --help)").arg(command)
                                              : QStringLiteral("unknown command '%1': did you mean '%2'?").arg(command, near));
    }

    Common common;
    if (p.isSet(QStringLiteral("max-frame-bytes"))) {
        bool ok = false;
        common.options.limits.maxFrameBytes = p.value(QStringLiteral("max-frame-bytes")).toLongLong(&ok);
        if (!ok || common.options.limits.maxFrameBytes <= 0)
            return failWith(Usage, QStringLiteral("--max-frame-bytes must be a positive integer"));
    }
    if (p.isSet(QStringLiteral("max-agents"))) {
        bool ok = false;
        common.maxAgents = p.value(QStringLiteral("max-agents")).toInt(&ok);
        if (!ok || common.maxAgents <= 0)
            return failWith(Usage, QStringLiteral("--max-agents must be a positive integer (at most %1)").arg(INT_MAX));
    }
    if (p.isSet(QStringLiteral("duration"))) {
        bool ok = false;
        common.durationS = p.value(QStringLiteral("duration")).toDouble(&ok);
        if (!ok || common.durationS < 0)
            return failWith(Usage, QStringLiteral("--duration must be a number of seconds"));
    } else if (command == QLatin1String("state")) {
        common.durationS = 1; // a look, not an observation
    }
    if (command == QLatin1String("record") && p.isSet(QStringLiteral("duration")) && common.durationS <= 0)
        return failWith(Usage, QStringLiteral("record --duration must be more than 0 seconds (leave it out to record until "
                                              "SIGTERM or SIGINT)"));
    // record without --duration: until a stop signal, an unattended collector (Common::untilStopped).
    common.untilStopped = command == QLatin1String("record") && !p.isSet(QStringLiteral("duration"));
    common.observing = command == QLatin1String("record") // with or without --duration
        || (common.durationS > 0 && command == QLatin1String("state") && p.isSet(QStringLiteral("duration")))
        || command == QLatin1String("watch"); // watch without --duration runs until it is stopped

    if (command == QLatin1String("rules"))
        return commandRules(p);
    if (diff)
        return commandDiff(args[1], args[2], loadOptions(common));
    if (command == QLatin1String("tap"))
        return commandTap(p, common);
    const bool offline = command == QLatin1String("stats") || command == QLatin1String("convert") || command == QLatin1String("chain")
        || command == QLatin1String("bundle");
    const bool needsUrl = !offline && !(command == QLatin1String("state") && p.isSet(QStringLiteral("trace")));
    if (needsUrl) {
        for (const QString &launch : p.values(QStringLiteral("launch")))
            common.urls << launchUrl(launch);
        for (const QString &url : p.values(QStringLiteral("url"))) // stdio:COMMAND as typed ('#', '?' kept)
            common.urls << (url.startsWith(QLatin1String("stdio:")) ? launchUrl(url.mid(6)) : QUrl(url, QUrl::StrictMode));
        if (common.urls.isEmpty())
            return failWith(Usage, QStringLiteral("%1 needs --url URL or --launch COMMAND").arg(command));
        const bool several = command == QLatin1String("state") || command == QLatin1String("watch");
        if (common.urls.size() > 1 && !several)
            return failWith(Usage, QStringLiteral("%1 takes one system (state and watch take several --url)").arg(command));
        for (const QUrl &url : std::as_const(common.urls))
            if (const QString wrong = connectionTargetError(url); !wrong.isEmpty())
                return failWith(Usage, QStringLiteral("--url %1: %2").arg(redactedUrl(url), wrong));
        common.options.url = common.urls.first();
        const ErrorOr<AuthConfig> auth = readAuth(p);
        if (!auth)
            return failWith(Usage, auth.error());
        common.options.auth = *auth;
        common.tokenFile = p.value(QStringLiteral("token-file"));
        common.options.clientName = QStringLiteral("map-inspector-cli");
        // A one-shot command fails fast; an observation reconnects after drops (the first
        // connection still fails fast, except for record without --duration: LiveRun).
        common.options.reconnect = common.observing;
        common.options.observerOnly = p.isSet(QStringLiteral("observer"));
        if (p.isSet(QStringLiteral("gateway")))
            common.options.participantType = QStringLiteral("gateway");
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
    if (command == QLatin1String("record"))
        return commandRecord(p, common);
    if (command == QLatin1String("watch"))
        return commandWatch(p, common);
    if (command == QLatin1String("inject") || command == QLatin1String("stop") || command == QLatin1String("suspend")
        || command == QLatin1String("resume"))
        return commandAction(command, p, common);
    return failWith(Usage, QStringLiteral("unknown command \"%1\" (see --help)").arg(command));
}
