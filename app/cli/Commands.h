// The commands of map-inspector-cli, one function each; they return the process's exit code
// (CliSupport.h). TraceCommands.cpp: the ones that read files; LiveCommands.cpp: the ones that
// connect to a server.
#pragma once

#include "CliSupport.h"
#include "alerts/AlertRules.h"

namespace mapi::cli {

int commandStats(const QCommandLineParser &p, const Common &common);
int commandConvert(const QCommandLineParser &p, const Common &common);
int commandChain(const QCommandLineParser &p, const Common &common);
int commandBundle(const QCommandLineParser &p, const Common &common);
// Two runs compared (trace/RunDiff.h): JSON on stdout; 0 when equal, 1 when they differ.
int commandDiff(const QString &pathA, const QString &pathB, const TraceLoadOptions &options);

int commandState(const QCommandLineParser &p, const Common &common);
// Records one connection until --duration S or, without it, until SIGTERM/SIGINT (an unattended
// collector: Common::untilStopped); --keep-parts/--keep-mb delete its oldest rotated parts.
int commandRecord(const QCommandLineParser &p, const Common &common);
int commandRules(const QCommandLineParser &p);
// The alert rules of --rules FILE (defaults without it) with --heartbeat-interval over them
// (watch, rules, bundle).
ErrorOr<AlertRules> rulesOption(const QCommandLineParser &p);
int commandWatch(const QCommandLineParser &p, const Common &common);
// inject, stop, suspend, resume
int commandAction(const QString &command, const QCommandLineParser &p, const Common &common);
// The passive tap (TapCommand.cpp): relays and records until --duration S, Ctrl+C or SIGTERM.
int commandTap(const QCommandLineParser &p, const Common &common);

} // namespace mapi::cli
