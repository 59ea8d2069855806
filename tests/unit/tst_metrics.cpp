// Prometheus metrics (core/telemetry/PrometheusMetrics): the exposition text of a store read back
// by a small parser of the text format 0.0.4 (families, HELP/TYPE once and before their samples,
// samples of a family together, no repeated label set, escaping), the per-agent cardinality bound,
// the rates between two samples. The HTTP side is tst_metrics_server.
#include "telemetry/PrometheusMetrics.h"

#include "TestSupport.h"

#include <QSet>

#include <algorithm>
#include <cmath>

using namespace mapi;
using mapi_test::Wire;

namespace {

struct Sample
{
    QString name;
    QMap<QString, QString> labels; // unescaped
    double value = 0;
};

// The text read back; `error` names the first line that breaks the format or our conventions.
struct Exposition
{
    std::vector<Sample> samples;
    QString error;

    std::vector<Sample> family(const QString &name) const
    {
        std::vector<Sample> out;
        for (const Sample &s : samples)
            if (s.name == name)
                out.push_back(s);
        return out;
    }
    // The value of the one sample of `name` whose labels include `match`; NaN if not exactly one.
    double value(const QString &name, const QMap<QString, QString> &match = {}) const
    {
        double found = std::nan("");
        int count = 0;
        for (const Sample &s : samples) {
            if (s.name != name)
                continue;
            bool all = true;
            for (auto it = match.begin(); it != match.end(); ++it)
                all = all && s.labels.value(it.key()) == it.value();
            if (all) {
                found = s.value;
                ++count;
            }
        }
        return count == 1 ? found : std::nan("");
    }
    double sum(const QString &name) const
    {
        double total = 0;
        for (const Sample &s : samples)
            if (s.name == name)
                total += s.value;
        return total;
    }
};

bool isName(const QString &name)
{
    static const QRegularExpression re(QStringLiteral("^[a-zA-Z_:][a-zA-Z0-9_:]*$"));
    return re.match(name).hasMatch();
}

// Reads `name="value",…}` from `line` at `pos` (just after '{'); false if malformed.
bool parseLabels(const QString &line, qsizetype &pos, QMap<QString, QString> &labels)
{
    while (pos < line.size() && line.at(pos) != QLatin1Char('}')) {
        const qsizetype eq = line.indexOf(QLatin1Char('='), pos);
        if (eq < 0 || eq + 1 >= line.size() || line.at(eq + 1) != QLatin1Char('"'))
            return false;
        const QString name = line.mid(pos, eq - pos);
        if (!isName(name) || labels.contains(name))
            return false;
        QString value;
        qsizetype i = eq + 2;
        for (; i < line.size() && line.at(i) != QLatin1Char('"'); ++i) {
            if (line.at(i) != QLatin1Char('\\')) {
                value += line.at(i);
                continue;
            }
            if (++i >= line.size())
                return false;
            const QChar e = line.at(i);
            if (e == QLatin1Char('n'))
                value += QLatin1Char('\n');
            else if (e == QLatin1Char('\\') || e == QLatin1Char('"'))
                value += e;
            else
                return false; // no other escape exists
        }
        if (i >= line.size())
            return false;
        labels.insert(name, value);
        pos = i + 1;
        if (pos < line.size() && line.at(pos) == QLatin1Char(','))
            ++pos;
    }
    if (pos >= line.size())
        return false;
    ++pos; // the '}'
    return true;
}

Exposition parse(const QByteArray &text)
{
    Exposition out;
    if (!text.endsWith('\n'))
        out.error = QStringLiteral("does not end with a newline");
    QHash<QString, int> help;
    QHash<QString, QString> type;
    QSet<QString> finished; // families whose samples are over
    QString current;
    QSet<QString> labelSets;
    const QStringList lines = QString::fromUtf8(text).split(QLatin1Char('\n'));
    for (qsizetype n = 0; n + 1 < lines.size() && out.error.isEmpty(); ++n) {
        const QString &line = lines[n];
        const auto fail = [&](const QString &why) { out.error = QStringLiteral("line %1 (%2): %3").arg(n + 1).arg(line, why); };
        if (line.startsWith(QLatin1Char('#'))) {
            const QStringList parts = line.split(QLatin1Char(' '));
            if (parts.size() < 4 || (parts[1] != QLatin1String("HELP") && parts[1] != QLatin1String("TYPE")) || !isName(parts[2])) {
                fail(QStringLiteral("a comment that is not HELP or TYPE"));
                continue;
            }
            const QString &name = parts[2];
            if (finished.contains(name) || name == current) {
                fail(QStringLiteral("HELP/TYPE after the family's samples"));
                continue;
            }
            if (!current.isEmpty()) { // another family's header: the current one's samples are over
                finished.insert(current);
                current.clear();
            }
            if (parts[1] == QLatin1String("HELP") && ++help[name] > 1) {
                fail(QStringLiteral("HELP twice"));
                continue;
            }
            if (parts[1] == QLatin1String("TYPE")) {
                if (type.contains(name) || parts.size() != 4) {
                    fail(QStringLiteral("TYPE twice or malformed"));
                    continue;
                }
                if (parts[3] != QLatin1String("gauge") && parts[3] != QLatin1String("counter")) {
                    fail(QStringLiteral("unexpected type"));
                    continue;
                }
                if ((parts[3] == QLatin1String("counter")) != name.endsWith(QLatin1String("_total"))) {
                    fail(QStringLiteral("a counter ends in _total, nothing else does"));
                    continue;
                }
                type.insert(name, parts[3]);
            }
            continue;
        }
        Sample s;
        qsizetype pos = 0;
        while (pos < line.size() && line.at(pos) != QLatin1Char('{') && line.at(pos) != QLatin1Char(' '))
            ++pos;
        s.name = line.left(pos);
        if (!isName(s.name) || !s.name.startsWith(QLatin1String("mapi_"))) {
            fail(QStringLiteral("bad metric name"));
            continue;
        }
        if (pos < line.size() && line.at(pos) == QLatin1Char('{')) {
            ++pos;
            if (!parseLabels(line, pos, s.labels)) {
                fail(QStringLiteral("bad labels"));
                continue;
            }
        }
        if (pos >= line.size() || line.at(pos) != QLatin1Char(' ')) {
            fail(QStringLiteral("no value"));
            continue;
        }
        bool ok = false;
        s.value = line.mid(pos + 1).toDouble(&ok);
        if (!ok) {
            fail(QStringLiteral("value is not a number"));
            continue;
        }
        if (help.value(s.name) != 1 || !type.contains(s.name)) {
            fail(QStringLiteral("sample before its HELP and TYPE"));
            continue;
        }
        if (s.name != current) {
            if (finished.contains(s.name)) {
                fail(QStringLiteral("the family's samples are not together"));
                continue;
            }
            if (!current.isEmpty())
                finished.insert(current);
            current = s.name;
        }
        QString key = s.name;
        for (auto it = s.labels.begin(); it != s.labels.end(); ++it)
            key += QLatin1Char('\x1f') + it.key() + QLatin1Char('=') + it.value();
        if (labelSets.contains(key)) {
            fail(QStringLiteral("a label set repeats"));
            continue;
        }
        labelSets.insert(key);
        out.samples.push_back(s);
    }
    return out;
}

QMap<QString, QString> sys(const QString &system)
{
    return {{QStringLiteral("system"), system}};
}

} // namespace

class TestMetrics : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase() { mapi_test::installWarningGuard(); }
    void init() { mapi_test::armWarningGuard(); }
    void cleanup() { MAPI_NO_WARNINGS(); }
    void cleanupTestCase() { MAPI_NO_WARNINGS(); }

    // A store with agents in several states and healths, read back from the text.
    void expositionOfAStore()
    {
        SystemStore store;
        HealthPolicy policy;
        policy.intervalMs = 1000;
        store.setHealthPolicy(policy);
        Wire wire(store);
        const QString oddName = QStringLiteral("a\"b\\c\nd");
        wire.registerAgent(QStringLiteral("idle-1"), QStringLiteral("idle one"));
        wire.registerAgent(QStringLiteral("busy-1"), QStringLiteral("busy one"), {}, Json::object(), QStringLiteral("busy"));
        wire.registerAgent(QStringLiteral("susp-1"), QStringLiteral("paused"), {}, Json::object(), QStringLiteral("suspended"));
        wire.registerAgent(QStringLiteral("fail-1"), oddName, {}, Json::object(), QStringLiteral("failed"));
        wire.registerAgent(QStringLiteral("gone-1"), QStringLiteral("gone"));
        wire.event(QStringLiteral("agent.unregistered"),
                   {{"agentId", "gone-1"}, {"agent", mapi_test::regAgent(QStringLiteral("gone-1"), QStringLiteral("gone"), QStringLiteral("stopped"))}},
                   {{"agentId", "gone-1"}});
        QVERIFY(store.agent(QStringLiteral("gone-1"))->unregistered);
        const qint64 later = wire.now() + 5000; // five heartbeat intervals of silence for busy-1
        wire.message(QStringLiteral("m-1"), QStringLiteral("idle-1"), "susp-1", Json{{"text", "still here"}}, later - 100);
        store.advanceTime(later);
        QCOMPARE(healthName(store.agent(QStringLiteral("fail-1"))->health), QStringLiteral("failed"));

        std::map<QString, Alert> open;
        const auto addAlert = [&open](AlertKind kind, AlertSeverity severity, const QString &agent) {
            Alert a;
            a.kind = kind;
            a.severity = severity;
            a.agents = {agent};
            open[a.key()] = a;
        };
        addAlert(AlertKind::Failed, AlertSeverity::Critical, QStringLiteral("fail-1"));
        addAlert(AlertKind::Failed, AlertSeverity::Critical, QStringLiteral("x-2"));
        addAlert(AlertKind::Loop, AlertSeverity::Warning, QStringLiteral("busy-1"));

        MetricsSystem system;
        system.store = &store; // no label: the store's URL, "ws://test"
        system.openAlerts = &open;
        system.connectionDrops = 3;
        system.recordedBytes = 12345;
        PrometheusMetrics metrics;
        const QByteArray text = metrics.text({system}, later);
        const Exposition e = parse(text);
        QVERIFY2(e.error.isEmpty(), qPrintable(e.error + QStringLiteral("\n") + QString::fromUtf8(text)));
        const QString url = QStringLiteral("ws://test");

        QCOMPARE(e.family(QStringLiteral("mapi_build_info")).size(), size_t(1));
        QCOMPARE(e.value(QStringLiteral("mapi_build_info")), 1.0);
        // Every client state listed, one of them 1: the pipeline's "open" is connecting.
        QCOMPARE(e.family(QStringLiteral("mapi_client_state")).size(), size_t(PrometheusMetrics::clientStates().size()));
        QCOMPARE(e.sum(QStringLiteral("mapi_client_state")), 1.0);
        QCOMPARE(e.value(QStringLiteral("mapi_client_state"), {{QStringLiteral("state"), QStringLiteral("connecting")}}), 1.0);

        const double agents = double(store.agents().size());
        QCOMPARE(e.family(QStringLiteral("mapi_agents")).size(), size_t(7));
        QCOMPARE(e.sum(QStringLiteral("mapi_agents")), agents);
        QCOMPARE(e.family(QStringLiteral("mapi_agents_health")).size(), size_t(8));
        QCOMPARE(e.sum(QStringLiteral("mapi_agents_health")), agents);
        QCOMPARE(e.value(QStringLiteral("mapi_agents"), {{QStringLiteral("state"), QStringLiteral("failed")}}), 1.0);
        QCOMPARE(e.value(QStringLiteral("mapi_agents"), {{QStringLiteral("state"), QStringLiteral("busy")}}), 1.0);
        QCOMPARE(e.value(QStringLiteral("mapi_agents"), {{QStringLiteral("state"), QStringLiteral("stopped")}}), 1.0); // gone-1
        QCOMPARE(e.value(QStringLiteral("mapi_agents_health"), {{QStringLiteral("health"), QStringLiteral("failed")}}), 1.0);

        const StoreCounters &c = store.counters();
        const std::pair<const char *, qint64> counters[] = {
            {"mapi_events_applied_total", c.eventsApplied}, {"mapi_messages_total", c.messages},
            {"mapi_tasks_total", c.tasks},                  {"mapi_gaps_total", c.gaps},
            {"mapi_sequence_gaps_total", c.sequenceGaps},   {"mapi_problems_total", c.problems},
            {"mapi_duplicate_events_total", c.duplicateEvents}, {"mapi_history_not_kept_total", c.historyNotKept},
            {"mapi_agents_not_kept_total", c.agentsNotKept}, {"mapi_connection_drops_total", 3},
        };
        for (const auto &[name, expected] : counters)
            QVERIFY2(e.value(QString::fromLatin1(name), sys(url)) == double(expected), name);
        QVERIFY(c.eventsApplied >= 7);
        QCOMPARE(e.value(QStringLiteral("mapi_recorded_bytes"), sys(url)), 12345.0);
        QVERIFY(e.family(QStringLiteral("mapi_otlp_spans_sent_total")).empty()); // the exporter is off
        QVERIFY(!text.contains("mapi_otlp_queue_bytes"));

        QCOMPARE(e.family(QStringLiteral("mapi_alerts_open")).size(), size_t(2));
        QCOMPARE(e.value(QStringLiteral("mapi_alerts_open"), {{QStringLiteral("kind"), QStringLiteral("failed")}, {QStringLiteral("severity"), QStringLiteral("critical")}}), 2.0);
        QCOMPARE(e.value(QStringLiteral("mapi_alerts_open"), {{QStringLiteral("kind"), QStringLiteral("loop")}, {QStringLiteral("severity"), QStringLiteral("warning")}}), 1.0);

        // The unhealthy agents: worst first, as the store's own health says; the departed one,
        // the suspended one and the one that spoke lately are not among them.
        std::vector<const Agent *> expected;
        for (const Agent &a : store.agents())
            if (!a.unregistered && PrometheusMetrics::isUnhealthy(a.health))
                expected.push_back(&a);
        std::sort(expected.begin(), expected.end(), [](const Agent *a, const Agent *b) {
            const auto rank = [](Health h) { return h == Health::Failed ? 0 : h == Health::Unresponsive ? 1 : h == Health::Disconnected ? 2 : 3; };
            return rank(a->health) != rank(b->health) ? rank(a->health) < rank(b->health) : a->id < b->id;
        });
        const std::vector<Sample> unhealthy = e.family(QStringLiteral("mapi_agent_unhealthy"));
        QCOMPARE(unhealthy.size(), expected.size());
        for (size_t i = 0; i < unhealthy.size(); ++i) {
            QCOMPARE(unhealthy[i].labels.value(QStringLiteral("agent_id")), expected[i]->id);
            QCOMPARE(unhealthy[i].labels.value(QStringLiteral("health")), healthName(expected[i]->health));
            QCOMPARE(unhealthy[i].value, 1.0);
        }
        QVERIFY(!unhealthy.empty());
        QCOMPARE(unhealthy.front().labels.value(QStringLiteral("agent_id")), QStringLiteral("fail-1"));
        QCOMPARE(unhealthy.front().labels.value(QStringLiteral("agent_name")), oddName); // escaped, read back whole
        QVERIFY(text.contains("agent_name=\"a\\\"b\\\\c\\nd\"")); // agent_name="a\"b\\c\nd" as written
        QCOMPARE(e.value(QStringLiteral("mapi_agent_unhealthy"), {{QStringLiteral("agent_id"), QStringLiteral("busy-1")}}), 1.0);
        for (const char *notThere : {"gone-1", "susp-1", "idle-1"})
            QVERIFY2(std::isnan(e.value(QStringLiteral("mapi_agent_unhealthy"), {{QStringLiteral("agent_id"), QString::fromLatin1(notThere)}})), notThere);
        QCOMPARE(e.value(QStringLiteral("mapi_agent_series_omitted"), sys(url)), 0.0);
    }

    // Two systems written alike still make distinct label sets.
    void systemsWithOneUrlStayDistinct()
    {
        SystemStore a;
        SystemStore b;
        Wire wa(a);
        Wire wb(b);
        MetricsSystem one;
        one.store = &a;
        MetricsSystem two;
        two.store = &b;
        const Exposition e = parse(PrometheusMetrics().text({one, two}, 0));
        QVERIFY2(e.error.isEmpty(), qPrintable(e.error));
        QCOMPARE(e.family(QStringLiteral("mapi_events_applied_total")).size(), size_t(2));
        QVERIFY(!std::isnan(e.value(QStringLiteral("mapi_events_applied_total"), sys(QStringLiteral("ws://test (2)")))));
    }

    // 1,000 failed agents: the bound's worth of series, the lowest ids, the rest counted.
    void perAgentSeriesAreBounded()
    {
        SystemStore store;
        Wire wire(store);
        for (int i = 0; i < 1000; ++i)
            wire.registerAgent(QStringLiteral("agent-%1").arg(i, 4, 10, QLatin1Char('0')), QStringLiteral("n"), {}, Json::object(),
                               QStringLiteral("failed"));
        store.advanceTime(wire.now());
        MetricsSystem system;
        system.store = &store;
        const Exposition e = parse(PrometheusMetrics().text({system}, 0));
        QVERIFY2(e.error.isEmpty(), qPrintable(e.error));
        const std::vector<Sample> unhealthy = e.family(QStringLiteral("mapi_agent_unhealthy"));
        QCOMPARE(int(unhealthy.size()), PrometheusMetrics::kMaxAgentSeries);
        QCOMPARE(e.value(QStringLiteral("mapi_agent_series_omitted")), 750.0);
        for (int i = 0; i < int(unhealthy.size()); ++i) // ties by id: the same agents every scrape
            QCOMPARE(unhealthy[size_t(i)].labels.value(QStringLiteral("agent_id")), QStringLiteral("agent-%1").arg(i, 4, 10, QLatin1Char('0')));
    }

    void ratesBetweenTwoSamples()
    {
        SystemStore store;
        Wire wire(store);
        wire.registerAgent(QStringLiteral("w1"), QStringLiteral("one"));
        wire.registerAgent(QStringLiteral("w2"), QStringLiteral("two"));
        MetricsSystem system;
        system.store = &store;
        const std::vector<MetricsSystem> systems{system};
        PrometheusMetrics metrics;
        const qint64 t0 = 5'000'000;
        metrics.sample(systems, t0);
        QCOMPARE(parse(metrics.text(systems, t0)).value(QStringLiteral("mapi_events_per_second")), 0.0); // one sample: no rate yet

        const StoreCounters before = store.counters();
        for (int i = 0; i < 500; ++i)
            wire.message(QStringLiteral("m-%1").arg(i), QStringLiteral("w1"), "w2", Json{{"n", i}});
        QCOMPARE(store.counters().eventsApplied - before.eventsApplied, qint64(500));
        metrics.sample(systems, t0 + 1000);
        const Exposition e = parse(metrics.text(systems, t0 + 1000));
        QVERIFY2(e.error.isEmpty(), qPrintable(e.error));
        QCOMPARE(e.value(QStringLiteral("mapi_events_per_second")), 500.0);
        QCOMPARE(e.value(QStringLiteral("mapi_messages_per_second")), double(store.counters().messages - before.messages));
        // A sampler that stopped long ago measures nothing now.
        QCOMPARE(parse(metrics.text(systems, t0 + 1000 + PrometheusMetrics::kStaleSampleMs + 1)).value(QStringLiteral("mapi_events_per_second")), 0.0);
    }
};

QTEST_GUILESS_MAIN(TestMetrics)
#include "tst_metrics.moc"
