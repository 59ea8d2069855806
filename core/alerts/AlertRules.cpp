#include "alerts/AlertRules.h"

#include <QFile>

#include <cmath>
#include <functional>
#include <vector>

namespace mapi {

namespace {

constexpr const char *kKindNames[kAlertKindCount] = {"unresponsive", "failed", "loop", "stalled",
                                                      "deadlock", "budget", "needs-human", "error-storm"};
constexpr const char *kSeverityNames[] = {"info", "warning", "critical"};

// One key of a rule: how it is written and read. Durations are seconds in the file.
struct Field
{
    const char *key;
    std::function<Json(const AlertRules &)> write;
    // Reads `value` into `rules`; an empty string when done, else what is wrong with it.
    std::function<QString(AlertRules &, const Json &)> read;
};

Field seconds(const char *key, qint64 AlertRules::*member, double minimum)
{
    return {key, [member](const AlertRules &r) { return Json(double(r.*member) / 1000.0); },
            [member, minimum](AlertRules &r, const Json &v) {
                if (!v.is_number() || !std::isfinite(v.get<double>()) || v.get<double>() < minimum || v.get<double>() > 30 * 86400.0)
                    return QStringLiteral("a number of seconds from %1 to 2592000").arg(minimum);
                r.*member = qint64(std::llround(v.get<double>() * 1000.0));
                return QString();
            }};
}

Field count(const char *key, int AlertRules::*member, int minimum)
{
    return {key, [member](const AlertRules &r) { return Json(r.*member); },
            [member, minimum](AlertRules &r, const Json &v) {
                if (!v.is_number_integer() || v.get<qint64>() < minimum || v.get<qint64>() > 100000000)
                    return QStringLiteral("a whole number from %1 to 100000000").arg(minimum);
                r.*member = int(v.get<qint64>());
                return QString();
            }};
}

Field number(const char *key, double AlertRules::*member, double minimum)
{
    return {key, [member](const AlertRules &r) { return Json(r.*member); },
            [member, minimum](AlertRules &r, const Json &v) {
                if (!v.is_number() || !std::isfinite(v.get<double>()) || v.get<double>() < minimum)
                    return QStringLiteral("a number of at least %1").arg(minimum);
                r.*member = v.get<double>();
                return QString();
            }};
}

Field tokens(const char *key, qint64 AlertRules::*member)
{
    return {key, [member](const AlertRules &r) { return Json(r.*member); },
            [member](AlertRules &r, const Json &v) {
                if (!v.is_number_integer() || v.get<qint64>() < 0)
                    return QStringLiteral("a whole number of at least 0");
                r.*member = v.get<qint64>();
                return QString();
            }};
}

// The keys of each rule beyond "enabled" and "severity", in kind order.
const std::vector<Field> &fieldsOf(AlertKind kind)
{
    static const std::vector<Field> table[kAlertKindCount] = {
        // unresponsive
        {count("afterIntervals", &AlertRules::unresponsiveAfterIntervals, 1)},
        // failed
        {},
        // loop
        {count("exchanges", &AlertRules::loopExchanges, 2), seconds("windowS", &AlertRules::loopWindowMs, 1),
         number("rateFactor", &AlertRules::loopRateFactor, 1.5), count("rateMinMessages", &AlertRules::loopRateMinMessages, 1),
         count("rateBaselineWindows", &AlertRules::loopRateBaselineWindows, 1)},
        // stalled
        {seconds("afterS", &AlertRules::stalledAfterMs, 1)},
        // deadlock
        {seconds("afterS", &AlertRules::deadlockAfterMs, 0)},
        // budget
        {number("usdPerAgent", &AlertRules::budgetUsdPerAgent, 0),
         {"usdPerRole",
          [](const AlertRules &r) {
              Json roles = Json::object();
              for (auto it = r.budgetUsdPerRole.cbegin(); it != r.budgetUsdPerRole.cend(); ++it)
                  roles[it.key().toStdString()] = it.value();
              return roles;
          },
          [](AlertRules &r, const Json &v) {
              if (!v.is_object())
                  return QStringLiteral("an object of role names to amounts in USD");
              QHash<QString, double> roles;
              for (auto it = v.begin(); it != v.end(); ++it) {
                  if (!it.value().is_number() || !std::isfinite(it.value().get<double>()) || it.value().get<double>() < 0)
                      return QStringLiteral("an object of role names to amounts in USD (role \"%1\")").arg(QString::fromStdString(it.key()));
                  roles.insert(QString::fromStdString(it.key()), it.value().get<double>());
              }
              r.budgetUsdPerRole = roles;
              return QString();
          }},
         number("usdPerSubtree", &AlertRules::budgetUsdPerSubtree, 0), tokens("tokensPerAgent", &AlertRules::budgetTokensPerAgent),
         number("usdPerHour", &AlertRules::budgetUsdPerHour, 0), seconds("rateWindowS", &AlertRules::budgetRateWindowMs, 10)},
        // needs-human
        {seconds("afterS", &AlertRules::needsHumanAfterMs, 0)},
        // error-storm
        {count("count", &AlertRules::errorStormCount, 1), count("systemCount", &AlertRules::errorStormSystemCount, 0),
         seconds("windowS", &AlertRules::errorStormWindowMs, 1),
         {"minSeverity", [](const AlertRules &r) { return Json(r.errorStormMinSeverity.toStdString()); },
          [](AlertRules &r, const Json &v) {
              const QString s = v.is_string() ? QString::fromStdString(v.get<std::string>()).toUpper() : QString();
              if (s != QLatin1String("ERROR") && s != QLatin1String("CRITICAL"))
                  return QStringLiteral("\"ERROR\" or \"CRITICAL\"");
              r.errorStormMinSeverity = s;
              return QString();
          }}},
    };
    return table[size_t(kind)];
}

} // namespace

QString alertKindName(AlertKind kind)
{
    return QString::fromLatin1(kKindNames[size_t(kind)]);
}

std::optional<AlertKind> alertKindFromName(const QString &name)
{
    for (int i = 0; i < kAlertKindCount; ++i)
        if (name == QLatin1String(kKindNames[i]))
            return AlertKind(i);
    return std::nullopt;
}

QString alertSeverityName(AlertSeverity severity)
{
    return QString::fromLatin1(kSeverityNames[size_t(severity)]);
}

std::optional<AlertSeverity> alertSeverityFromName(const QString &name)
{
    for (int i = 0; i < 3; ++i)
        if (name.compare(QLatin1String(kSeverityNames[i]), Qt::CaseInsensitive) == 0)
            return AlertSeverity(i);
    return std::nullopt;
}

AlertRules::AlertRules()
{
    rule(AlertKind::Failed).severity = AlertSeverity::Critical;
    rule(AlertKind::Deadlock).severity = AlertSeverity::Critical;
}

QStringList alertGroupLabels()
{
    return {QStringLiteral("scope"), QStringLiteral("subtree"), QStringLiteral("role"), QStringLiteral("cause")};
}

namespace {
// The "grouping" object, strictly: what is wrong with it (empty: read into `rules`).
QString readGrouping(AlertRules &rules, const Json &value)
{
    if (!value.is_object())
        return QStringLiteral("\"grouping\" must be an object (groupBy, groupWaitS, groupIntervalS, minAlerts)");
    for (auto it = value.begin(); it != value.end(); ++it) {
        const Json &v = it.value();
        if (it.key() == "groupBy") {
            if (!v.is_array())
                return QStringLiteral("\"grouping.groupBy\" must be a list of labels (%1)").arg(alertGroupLabels().join(QStringLiteral(", ")));
            QStringList labels;
            for (const Json &label : v) {
                const QString name = label.is_string() ? QString::fromStdString(label.get<std::string>()) : QString();
                if (!alertGroupLabels().contains(name))
                    return QStringLiteral("\"grouping.groupBy\" names an unknown label %1 (known: %2)")
                        .arg(label.is_string() ? QStringLiteral("\"%1\"").arg(name) : QString::fromStdString(label.dump()),
                             alertGroupLabels().join(QStringLiteral(", ")));
                if (labels.contains(name))
                    return QStringLiteral("\"grouping.groupBy\" names \"%1\" twice").arg(name);
                labels << name;
            }
            rules.groupBy = labels;
        } else if (it.key() == "groupWaitS" || it.key() == "groupIntervalS") {
            const bool wait = it.key() == "groupWaitS";
            const double low = wait ? 0 : 1;
            if (!v.is_number() || !std::isfinite(v.get<double>()) || v.get<double>() < low || v.get<double>() > 86400)
                return QStringLiteral("\"grouping.%1\" must be a number of seconds from %2 to 86400")
                    .arg(QString::fromStdString(it.key()))
                    .arg(low);
            (wait ? rules.groupWaitMs : rules.groupIntervalMs) = qint64(std::llround(v.get<double>() * 1000.0));
        } else if (it.key() == "minAlerts") {
            if (!v.is_number_integer() || v.get<qint64>() < 2 || v.get<qint64>() > 1000000)
                return QStringLiteral("\"grouping.minAlerts\" must be a whole number from 2 to 1000000");
            rules.groupMinAlerts = int(v.get<qint64>());
        } else {
            return QStringLiteral("unknown key \"grouping.%1\" (known: groupBy, groupWaitS, groupIntervalS, minAlerts)")
                .arg(QString::fromStdString(it.key()));
        }
    }
    return QString();
}
} // namespace

QStringList alertRuleKeys(AlertKind kind)
{
    QStringList keys;
    for (const Field &field : fieldsOf(kind))
        keys << QString::fromLatin1(field.key);
    return keys;
}

Json alertRulesToJson(const AlertRules &rules)
{
    Json out = {{"version", 1}, {"heartbeatIntervalS", double(rules.heartbeatIntervalMs) / 1000.0}};
    Json all = Json::object();
    for (int i = 0; i < kAlertKindCount; ++i) {
        const AlertKind kind = AlertKind(i);
        Json rule = {{"enabled", rules.rule(kind).enabled}, {"severity", alertSeverityName(rules.rule(kind).severity).toStdString()}};
        for (const Field &field : fieldsOf(kind))
            rule[field.key] = field.write(rules);
        all[kKindNames[i]] = rule;
    }
    out["rules"] = all;
    Json groupBy = Json::array();
    for (const QString &label : rules.groupBy)
        groupBy.push_back(label.toStdString());
    out["grouping"] = {{"groupBy", groupBy},
                       {"groupWaitS", double(rules.groupWaitMs) / 1000.0},
                       {"groupIntervalS", double(rules.groupIntervalMs) / 1000.0},
                       {"minAlerts", rules.groupMinAlerts}};
    return out;
}

ErrorOr<AlertRules> alertRulesFromJson(const Json &document)
{
    AlertRules rules;
    if (!document.is_object())
        return Failure{QStringLiteral("the rules must be a JSON object")};
    for (auto it = document.begin(); it != document.end(); ++it) {
        const std::string &key = it.key();
        const Json &value = it.value();
        if (key == "version") {
            if (value != Json(1))
                return Failure{QStringLiteral("\"version\" must be 1")};
        } else if (key == "heartbeatIntervalS") {
            if (!value.is_number() || !std::isfinite(value.get<double>()) || value.get<double>() < 0.1 || value.get<double>() > 86400)
                return Failure{QStringLiteral("\"heartbeatIntervalS\" must be a number of seconds from 0.1 to 86400")};
            rules.heartbeatIntervalMs = qint64(std::llround(value.get<double>() * 1000.0));
        } else if (key == "rules") {
            if (!value.is_object())
                return Failure{QStringLiteral("\"rules\" must be an object of rule names")};
            for (auto r = value.begin(); r != value.end(); ++r) {
                const QString ruleName = QString::fromStdString(r.key());
                const std::optional<AlertKind> kind = alertKindFromName(ruleName);
                if (!kind)
                    return Failure{QStringLiteral("unknown rule \"%1\" (known: %2)")
                                       .arg(ruleName, QStringList{QLatin1String(kKindNames[0]), QLatin1String(kKindNames[1]),
                                                                  QLatin1String(kKindNames[2]), QLatin1String(kKindNames[3]),
                                                                  QLatin1String(kKindNames[4]), QLatin1String(kKindNames[5]),
                                                                  QLatin1String(kKindNames[6]), QLatin1String(kKindNames[7])}
                                                          .join(QStringLiteral(", ")))};
                if (!r.value().is_object())
                    return Failure{QStringLiteral("rule \"%1\" must be an object").arg(ruleName)};
                for (auto f = r.value().begin(); f != r.value().end(); ++f) {
                    const QString where = QStringLiteral("rules.%1.%2").arg(ruleName, QString::fromStdString(f.key()));
                    if (f.key() == "enabled") {
                        if (!f.value().is_boolean())
                            return Failure{QStringLiteral("\"%1\" must be true or false").arg(where)};
                        rules.rule(*kind).enabled = f.value().get<bool>();
                        continue;
                    }
                    if (f.key() == "severity") {
                        const std::optional<AlertSeverity> severity = f.value().is_string()
                            ? alertSeverityFromName(QString::fromStdString(f.value().get<std::string>()))
                            : std::nullopt;
                        if (!severity)
                            return Failure{QStringLiteral("\"%1\" must be \"info\", \"warning\" or \"critical\"").arg(where)};
                        rules.rule(*kind).severity = *severity;
                        continue;
                    }
                    const std::vector<Field> &fields = fieldsOf(*kind);
                    auto field = std::find_if(fields.begin(), fields.end(), [&](const Field &x) { return f.key() == x.key; });
                    if (field == fields.end())
                        return Failure{QStringLiteral("unknown key \"%1\"").arg(where)};
                    const QString wrong = field->read(rules, f.value());
                    if (!wrong.isEmpty())
                        return Failure{QStringLiteral("\"%1\" must be %2").arg(where, wrong)};
                }
            }
        } else if (key == "grouping") {
            if (const QString wrong = readGrouping(rules, value); !wrong.isEmpty())
                return Failure{wrong};
        } else {
            return Failure{QStringLiteral("unknown key \"%1\" (known: version, heartbeatIntervalS, rules, grouping)").arg(QString::fromStdString(key))};
        }
    }
    return rules;
}

ErrorOr<AlertRules> readAlertRulesFile(const QString &path)
{
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        return Failure{QStringLiteral("cannot read %1: %2").arg(path, file.errorString())};
    constexpr qint64 kMaxRulesBytes = 1 << 20; // a rules file is a few hundred bytes
    if (file.size() > kMaxRulesBytes)
        return Failure{QStringLiteral("%1 is larger than 1 MiB: not a rules file").arg(path)};
    const QByteArray text = file.readAll();
    constexpr int kMaxRulesDepth = 8; // the format nests four levels
    if (FrameCodec::nestingDepth(text, kMaxRulesDepth) > kMaxRulesDepth)
        return Failure{QStringLiteral("%1 nests deeper than a rules file does").arg(path)};
    const Json document = Json::parse(text.constBegin(), text.constEnd(), nullptr, false);
    if (document.is_discarded())
        return Failure{QStringLiteral("%1 is not valid JSON").arg(path)};
    ErrorOr<AlertRules> rules = alertRulesFromJson(document);
    if (!rules)
        return Failure{QStringLiteral("%1: %2").arg(path, rules.error())};
    return rules;
}

} // namespace mapi
