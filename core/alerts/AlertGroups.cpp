#include "alerts/AlertGroups.h"

#include "model/AgentGroupLabels.h"
#include "model/SystemStore.h"

#include <QLocale>
#include <QRegularExpression>
#include <QSet>

#include <algorithm>
#include <utility>

namespace mapi {

QString AlertGroup::title() const
{
    return QStringLiteral("%1 — %2 %3%4")
        .arg(alertKindName(kind), QLocale(QLocale::English).toString(agentCount),
             agentCount == 1 ? QStringLiteral("agent") : QStringLiteral("agents"), where.isEmpty() ? QString() : QLatin1Char(' ') + where);
}

void AlertGroups::setRules(const AlertRules &rules)
{
    m_rules = rules;
    clear(); // the labels change: the owner tells the open alerts again (AlertMonitor resets on new rules)
}

void AlertGroups::clear()
{
    m_groups.clear();
    m_groupOfAlert.clear();
    m_agentsOfAlert.clear();
    m_startOfAlert.clear();
    m_resolved.clear();
    m_lastTouched.clear();
    m_lastReformed.clear();
}

bool AlertGroups::isGrouped(const QString &alertKey) const
{
    const AlertGroup *g = group(groupOf(alertKey));
    return g && g->grownAtMs >= 0;
}

const AlertGroup *AlertGroups::group(const QString &groupKey) const
{
    const auto it = m_groups.find(groupKey);
    return it == m_groups.end() ? nullptr : &it->second;
}

QString AlertGroups::groupKeyFor(const Alert &alert, const SystemStore &store, QString *where, const QSet<QString> *scopeParents) const
{
    if (m_rules.groupBy.isEmpty())
        return QString();
    const Agent *agent = alert.agents.isEmpty() ? nullptr : store.agent(alert.agents.front());
    QString key = alertKindName(alert.kind);
    QStringList shown;
    for (const QString &label : m_rules.groupBy) {
        QString value, text;
        if (label == QLatin1String("scope") && agent) {
            const QSet<QString> ownParents = scopeParents ? QSet<QString>() : parentScopeIds(store);
            if (const Scope *best = mostSpecificScope(*agent, store, scopeParents ? *scopeParents : ownParents)) {
                value = best->id;
                text = QStringLiteral("in %1").arg(best->name.isEmpty() ? best->id : best->name);
            }
        } else if (label == QLatin1String("subtree") && agent) {
            const Agent &top = topBelowRoot(*agent, store);
            value = top.id;
            text = QStringLiteral("under %1").arg(top.name.isEmpty() ? top.id : top.name);
        } else if (label == QLatin1String("role") && agent) {
            value = agent->role;
            text = QStringLiteral("role %1").arg(agent->role.isEmpty() ? QStringLiteral("(none)") : agent->role);
        } else if (label == QLatin1String("cause")) {
            static const QRegularExpression numbers(QStringLiteral("\\d+(\\.\\d+)?"));
            value = QString(alert.reason).replace(numbers, QStringLiteral("#"));
            text = QStringLiteral("“%1”").arg(value);
        }
        key += QLatin1Char('|') + label + QLatin1Char(':') + value;
        if (!text.isEmpty())
            shown << text;
    }
    if (where)
        *where = shown.join(QStringLiteral(", "));
    return key;
}

void AlertGroups::apply(const std::vector<AlertChange> &changes, const SystemStore &store, qint64 nowMs)
{
    m_lastTouched.clear();
    m_lastReformed.clear();
    QSet<QString> emptied; // groups that emptied in this apply
    if (m_rules.groupBy.isEmpty())
        return;
    const auto big = [this](const AlertGroup &g) { return int(g.alerts.size()) >= m_rules.groupMinAlerts; };
    const QSet<QString> scopeParents = parentScopeIds(store); // looked up once for the whole part
    for (const AlertChange &change : changes) {
        const QString alertKey = change.alert.cachedKey.isEmpty() ? change.alert.key() : change.alert.cachedKey;
        if (change.raised) {
            if (m_groupOfAlert.contains(alertKey))
                continue; // told twice (a reconnect's raise of what is shown): counted once
            QString where;
            const QString key = groupKeyFor(change.alert, store, &where, &scopeParents);
            AlertGroup &g = m_groups[key];
            m_lastTouched.insert(key);
            if (g.key.isEmpty()) {
                if (emptied.contains(key))
                    m_lastReformed.insert(key);
                g.key = key;
                g.kind = change.alert.kind;
                g.where = where;
                g.sinceMs = change.alert.sinceMs;
            }
            g.alerts.insert(alertKey);
            g.severity = std::max(g.severity, change.alert.severity);
            g.starts.insert(change.alert.sinceMs);
            g.sinceMs = *g.starts.begin();
            m_startOfAlert.insert(alertKey, change.alert.sinceMs);
            const int agents = std::max(1, int(change.alert.agents.size()));
            g.agentCount += agents;
            ++g.addedSinceNotice;
            if (g.grownAtMs < 0 && big(g))
                g.grownAtMs = nowMs;
            m_groupOfAlert.insert(alertKey, key);
            m_agentsOfAlert.insert(alertKey, agents);
        } else {
            const QString key = m_groupOfAlert.take(alertKey);
            const auto it = m_groups.find(key);
            if (it == m_groups.end())
                continue;
            AlertGroup &g = it->second;
            m_lastTouched.insert(key);
            g.alerts.erase(alertKey);
            g.agentCount -= m_agentsOfAlert.take(alertKey);
            if (const auto start = g.starts.find(m_startOfAlert.take(alertKey)); start != g.starts.end())
                g.starts.erase(start);
            if (!g.starts.empty())
                g.sinceMs = *g.starts.begin();
            ++g.clearedSinceNotice;
            if (g.alerts.empty()) {
                // A group told before is told resolved; one that emptied within its wait is
                // told nothing (nothing of it was told: its storm came and went unannounced).
                if (g.notifiedAtMs >= 0)
                    m_resolved.push_back({key, QStringLiteral("%1 %2 — all cleared").arg(alertKindName(g.kind), g.where).simplified(),
                                          g.kind, g.severity, 0, 0, g.clearedSinceNotice, false, true, g.where});
                m_groups.erase(it);
                emptied.insert(key);
            }
        }
    }
}

Json AlertGroups::noticeToJson(const Notice &notice, qint64 atMs, const QString &system)
{
    Json line{{"group", notice.groupKey.toStdString()},
              {"title", notice.title.toStdString()},
              {"state", notice.resolved ? "resolved" : notice.first ? "new" : "grown"},
              {"severity", alertSeverityName(notice.severity).toStdString()},
              {"open", notice.open},
              {"added", notice.added},
              {"cleared", notice.cleared},
              {"at", atMs}};
    if (!system.isEmpty())
        line["system"] = system.toStdString();
    return line;
}

std::vector<AlertGroups::Notice> AlertGroups::due(qint64 nowMs)
{
    return noticesAt(nowMs, false);
}

std::vector<AlertGroups::Notice> AlertGroups::noticesAt(qint64 nowMs, bool everything)
{
    std::vector<Notice> out = std::exchange(m_resolved, {});
    for (auto &[key, g] : m_groups) {
        if (g.grownAtMs < 0)
            continue; // never reached the size of a group: its alerts are told singly
        const bool first = g.notifiedAtMs < 0;
        const bool dueNow = first ? everything || nowMs - g.grownAtMs >= m_rules.groupWaitMs
                                  : g.addedSinceNotice > 0 && (everything || nowMs - g.notifiedAtMs >= m_rules.groupIntervalMs);
        if (!dueNow)
            continue;
        out.push_back({key, g.title(), g.kind, g.severity, int(g.alerts.size()), first ? int(g.alerts.size()) : g.addedSinceNotice,
                       g.clearedSinceNotice, first, false, g.where});
        g.notifiedAtMs = nowMs;
        g.addedSinceNotice = 0;
        g.clearedSinceNotice = 0;
    }
    // The worst first, then the largest: what a notification's headline should be.
    std::stable_sort(out.begin(), out.end(), [](const Notice &a, const Notice &b) {
        return a.severity != b.severity ? a.severity > b.severity : a.open > b.open;
    });
    return out;
}

} // namespace mapi
