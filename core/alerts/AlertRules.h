// The alert rules: which detectors run, with which thresholds and severities.
//
// A rules file is JSON (docs/alerts.md documents every key and its default):
//   {"version": 1, "heartbeatIntervalS": 30,
//    "rules": {"loop": {"severity": "warning", "exchanges": 20, "windowS": 60}, ...}}
// A key left out keeps its default; an unknown key, a wrong type or a value out of range is an
// error naming the key (a typo must not silently switch a detector off).
// Units: durations in the file are seconds, in the struct milliseconds.
#pragma once

#include "common/ErrorOr.h"
#include "protocol/JsonRpc.h"

#include <QHash>
#include <QString>
#include <QStringList>

#include <array>
#include <optional>

namespace mapi {

enum class AlertKind { Unresponsive, Failed, Loop, Stalled, Deadlock, Budget, NeedsHuman, ErrorStorm };
constexpr int kAlertKindCount = 8;
QString alertKindName(AlertKind kind); // "unresponsive", "failed", "loop", "stalled", "deadlock", "budget", "needs-human", "error-storm"
std::optional<AlertKind> alertKindFromName(const QString &name);

// Ordered: a higher value is more severe.
enum class AlertSeverity { Info, Warning, Critical };
QString alertSeverityName(AlertSeverity severity); // "info", "warning", "critical"
std::optional<AlertSeverity> alertSeverityFromName(const QString &name);

struct AlertRules
{
    // What every rule shares.
    struct Common
    {
        bool enabled = true;
        AlertSeverity severity = AlertSeverity::Warning;
    };
    std::array<Common, kAlertKindCount> common{};
    Common &rule(AlertKind kind) { return common[size_t(kind)]; }
    const Common &rule(AlertKind kind) const { return common[size_t(kind)]; }

    // The heartbeat interval agents keep (seed 000: 30 s); unresponsive is afterIntervals of them
    // without a sign of life (the store's HealthPolicy is set from these).
    qint64 heartbeatIntervalMs = 30000;
    int unresponsiveAfterIntervals = 3;

    // loop: agents in a pair or a ring of three sending each other the same few messages again and
    // again (one to three repeating payload shapes per direction, docs/alerts.md), at least
    // loopExchanges times within loopWindowMs, none of them making task progress meanwhile;
    // or one agent sending loopRateFactor times its usual rate (at least loopRateMinMessages in a
    // window, after loopRateBaselineWindows windows have set the usual rate).
    int loopExchanges = 20;
    qint64 loopWindowMs = 60000;
    double loopRateFactor = 10.0;
    int loopRateMinMessages = 60;
    int loopRateBaselineWindows = 5;

    // stalled: busy, or holding an accepted task, with no progress, status change or message
    // (heartbeats do not count) for this long.
    qint64 stalledAfterMs = 120000;

    // deadlock: a cycle of waits (an open task request, a handoff not taken, an unanswered help
    // request), every wait in it open for this long.
    qint64 deadlockAfterMs = 20000;

    // budget: cost (USD) or tokens an agent reports, over a limit (0: no limit); a role's own limit
    // replaces the per-agent one; a subtree's total (an agent and those below it); spending faster
    // than budgetUsdPerHour over the last budgetRateWindowMs.
    double budgetUsdPerAgent = 10.0;
    QHash<QString, double> budgetUsdPerRole;
    double budgetUsdPerSubtree = 0.0;
    qint64 budgetTokensPerAgent = 0;
    double budgetUsdPerHour = 0.0;
    qint64 budgetRateWindowMs = 600000;

    // needs-human: a help request not answered for this long, or an agent whose state or metadata
    // says that it waits for input.
    qint64 needsHumanAfterMs = 30000;

    // error-storm: error reports of at least errorStormMinSeverity (ERROR or CRITICAL) from one
    // agent, at least errorStormCount within errorStormWindowMs; across all agents, at least
    // errorStormSystemCount in the same window (0: not counted across agents).
    int errorStormCount = 10;
    int errorStormSystemCount = 50;
    qint64 errorStormWindowMs = 60000;
    QString errorStormMinSeverity = QStringLiteral("ERROR");

    // grouping (the file's "grouping" object; AlertGroups.h): open alerts of one kind sharing the
    // labels in groupBy ("scope", "subtree", "role", "cause"; empty: no grouping) are one group;
    // a group of at least groupMinAlerts is one row and one notification, the first after
    // groupWaitMs, the next at most every groupIntervalMs when alerts were added.
    QStringList groupBy = {QStringLiteral("scope")};
    qint64 groupWaitMs = 30000;
    qint64 groupIntervalMs = 300000;
    int groupMinAlerts = 5;

    AlertRules();
};

// The labels AlertRules::groupBy may name.
QStringList alertGroupLabels(); // "scope", "subtree", "role", "cause"

// The keys of one rule beyond "enabled" and "severity", in the order docs/alerts.md gives them.
QStringList alertRuleKeys(AlertKind kind);

// The rules as the file format writes them (every key, defaults included).
Json alertRulesToJson(const AlertRules &rules);
// Reads a rules document over the defaults.
ErrorOr<AlertRules> alertRulesFromJson(const Json &document);
ErrorOr<AlertRules> readAlertRulesFile(const QString &path);

} // namespace mapi
