// What leaves map-inspector-cli live, against the official MAP server (the demo system) and real
// receivers: OTLP/HTTP JSON received by an HTTP receiver and read through the OTLP protobuf
// definitions (tools/otel-check), and /metrics read by Prometheus's own text parser
// (tools/metrics-check). Every agent, message, task and alert of the CLI's model arrives as
// spans, through a receiver that refuses the first requests (503) and then recovers; the figures
// equal the model and the server's own view; a receiver that stays down costs drops, counted.
#include "DemoSystem.h"

#include "map/AgentStates.h"

#include <QElapsedTimer>
#include <QJsonDocument>
#include <QJsonObject>
#include <QNetworkAccessManager>
#include <QNetworkReply>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QtTest>

#include <map>
#include <set>

using namespace mapi;
using namespace mapi::test;

namespace {

const QString kOtelCheck = QStringLiteral(MAPI_SOURCE_DIR "/tools/otel-check/otel-check.mjs");
const QString kParseMetrics = QStringLiteral(MAPI_SOURCE_DIR "/tools/metrics-check/parse_metrics.py");
const QByteArray kHeaderSecret = "otlp-key-7f3a9c1e-not-for-logs";

// tools/otel-check's receiver, run for one test.
class Receiver
{
public:
    ~Receiver()
    {
        m_process.terminate();
        if (!m_process.waitForFinished(3000))
            m_process.kill();
        m_process.waitForFinished(3000);
    }
    bool start(const QString &out, const QStringList &args)
    {
        m_process.start(QStringLiteral(MAPI_NODE), QStringList{kOtelCheck, QStringLiteral("receive"), out} + args);
        if (!m_process.waitForStarted(10000))
            return false;
        QElapsedTimer clock;
        clock.start();
        while (clock.elapsed() < 15000 && !m_process.canReadLine())
            m_process.waitForReadyRead(100);
        const QJsonObject first = QJsonDocument::fromJson(m_process.readLine()).object();
        m_port = first.value(QStringLiteral("port")).toInt();
        return first.value(QStringLiteral("ready")).toBool() && m_port > 0;
    }
    QString endpoint() const { return QStringLiteral("http://127.0.0.1:%1").arg(m_port); }
    // The requests told so far: {"request", "status", "spans", "header"}.
    QList<QJsonObject> requests()
    {
        m_process.waitForReadyRead(10);
        while (m_process.canReadLine())
            m_requests << QJsonDocument::fromJson(m_process.readLine()).object();
        return m_requests;
    }

private:
    QProcess m_process;
    int m_port = 0;
    QList<QJsonObject> m_requests;
};

QByteArray httpGet(const QString &url, int *status)
{
    QNetworkAccessManager network;
    QNetworkReply *reply = network.get(QNetworkRequest(QUrl(url)));
    QEventLoop loop;
    QObject::connect(reply, &QNetworkReply::finished, &loop, &QEventLoop::quit);
    QTimer::singleShot(10000, &loop, &QEventLoop::quit);
    loop.exec();
    *status = reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
    const QByteArray body = reply->readAll();
    reply->deleteLater();
    return body;
}

// A /metrics text as Prometheus's parser reads it: sample name → [labels, value].
struct Scrape
{
    QString error;
    std::map<QString, QString> types; // family → type
    std::multimap<QString, std::pair<Json, double>> samples;
    double value(const QString &name, const QString &label = {}, const QString &labelValue = {}) const
    {
        const auto [from, to] = samples.equal_range(name);
        for (auto it = from; it != to; ++it)
            if (label.isEmpty() || it->second.first.value(label.toStdString(), std::string()) == labelValue.toStdString())
                return it->second.second;
        return -1;
    }
    double sum(const QString &name) const
    {
        double total = 0;
        const auto [from, to] = samples.equal_range(name);
        for (auto it = from; it != to; ++it)
            total += it->second.second;
        return total;
    }
};

Scrape parseWithPrometheus(const QByteArray &text, const QString &dir)
{
    Scrape scrape;
    QFile file(dir + QStringLiteral("/metrics.txt"));
    if (!file.open(QIODevice::WriteOnly)) {
        scrape.error = QStringLiteral("cannot write the scrape");
        return scrape;
    }
    file.write(text);
    file.close();
    QProcess python;
    // Debian's python3: its prometheus_client is the one scripts/install-deps.sh installs.
    python.start(QStringLiteral("/usr/bin/python3"), {kParseMetrics, file.fileName()});
    python.waitForFinished(30000);
    const QByteArray out = python.readAllStandardOutput();
    const Json j = Json::parse(out.constBegin(), out.constEnd(), nullptr, false);
    if (python.exitCode() != 0 || !j.is_object() || j.contains("error")) {
        scrape.error = QString::fromUtf8(out + python.readAllStandardError());
        return scrape;
    }
    for (const auto &[name, type] : j["families"].items())
        scrape.types[QString::fromStdString(name)] = QString::fromStdString(type.get<std::string>());
    for (const Json &s : j["samples"])
        scrape.samples.emplace(QString::fromStdString(s[0].get<std::string>()), std::make_pair(s[1], s[2].get<double>()));
    return scrape;
}

// What arrived at the receiver, span by span.
struct Received
{
    int lines = 0;
    std::set<QString> agentIds;      // gen_ai.agent.id of any span
    std::set<QString> messageIds;    // map.message.id of map.message events
    qint64 messageEvents = 0;
    qint64 messagePayloads = 0;      // map.message events with a map.message.payload
    std::set<QString> taskIds;       // map.task.id of task spans
    qint64 taskSpans = 0;
    // "kind|agent|raised" for map.alert events, agent from the span's gen_ai.agent.id
    std::multiset<QString> alerts;
};

QString attr(const Json &attributes, const char *key)
{
    for (const Json &a : attributes)
        if (a.value("key", std::string()) == key) {
            const Json &v = a["value"];
            if (v.contains("stringValue"))
                return QString::fromStdString(v["stringValue"].get<std::string>());
            if (v.contains("intValue"))
                return QString::fromStdString(v["intValue"].get<std::string>());
            if (v.contains("boolValue"))
                return v["boolValue"].get<bool>() ? QStringLiteral("true") : QStringLiteral("false");
        }
    return {};
}

Received readReceived(const QString &path)
{
    Received r;
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        return r;
    while (!file.atEnd()) {
        const QByteArray line = file.readLine();
        if (line.trimmed().isEmpty())
            continue;
        ++r.lines;
        const Json body = Json::parse(line.constBegin(), line.constEnd(), nullptr, false);
        for (const Json &rs : body.value("resourceSpans", Json::array()))
            for (const Json &ss : rs.value("scopeSpans", Json::array()))
                for (const Json &span : ss.value("spans", Json::array())) {
                    const Json attributes = span.value("attributes", Json::array());
                    const QString agent = attr(attributes, "gen_ai.agent.id");
                    if (!agent.isEmpty())
                        r.agentIds.insert(agent);
                    if (QString::fromStdString(span.value("name", std::string())).startsWith(QLatin1String("task "))) {
                        ++r.taskSpans;
                        r.taskIds.insert(attr(attributes, "map.task.id"));
                    }
                    for (const Json &event : span.value("events", Json::array())) {
                        const std::string name = event.value("name", std::string());
                        const Json ea = event.value("attributes", Json::array());
                        if (name == "map.message") {
                            ++r.messageEvents;
                            r.messageIds.insert(attr(ea, "map.message.id"));
                            r.messagePayloads += attr(ea, "map.message.payload").isEmpty() ? 0 : 1;
                        } else if (name == "map.alert") {
                            r.alerts.insert(attr(ea, "map.alert.kind") + u'|' + agent + u'|' + attr(ea, "map.alert.state"));
                        }
                    }
                }
    }
    return r;
}

QString str(const Json &j, const char *key)
{
    const auto it = j.find(key);
    return it != j.end() && it->is_string() ? QString::fromStdString(it->get<std::string>()) : QString();
}

// The CLI's stderr line "metrics on http://HOST:PORT/metrics", waited for while it runs.
QString waitForMetricsUrl(QProcess &cli, QByteArray &err, int ms)
{
    static const QRegularExpression re(QStringLiteral("metrics on (http://[0-9.]+:[0-9]+)/metrics"));
    QElapsedTimer clock;
    clock.start();
    while (clock.elapsed() < ms) {
        cli.waitForReadyRead(100);
        err += cli.readAllStandardError();
        const QRegularExpressionMatch m = re.match(QString::fromUtf8(err));
        if (m.hasMatch())
            return m.captured(1);
        if (cli.state() == QProcess::NotRunning)
            break;
    }
    return {};
}

} // namespace

class TestTelemetryLive : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    // watch with a live OTLP export and metrics over the incidents scenario: the receiver refuses
    // the first two requests (503, Retry-After 1) and loses nothing; every agent, message, task
    // and alert of the CLI's model arrives; the scrape equals the model and the server's view.
    void everyAgentMessageTaskAndAlertArrives()
    {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        DemoProcess demo;
        QVERIFY2(demo.start(QStringLiteral("extended"), 0,
                            {QStringLiteral("--agents"), QStringLiteral("20"), QStringLiteral("--scenario"), QStringLiteral("incidents")}),
                 qPrintable(demo.error()));
        Receiver receiver;
        const QString received = dir.filePath(QStringLiteral("received.jsonl"));
        QVERIFY(receiver.start(received, {QStringLiteral("--unavailable"), QStringLiteral("2")}));

        RunningCli cli;
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert(QStringLiteral("MAPI_TEST_OTLP_KEY"), QString::fromLatin1(kHeaderSecret));
        cli.process.setProcessEnvironment(env);
        cli.start({QStringLiteral("watch"), QStringLiteral("--url"), demo.url(), QStringLiteral("--duration"), QStringLiteral("28"),
                   QStringLiteral("--heartbeat-interval"), QStringLiteral("5"), QStringLiteral("--otlp-endpoint"), receiver.endpoint(),
                   QStringLiteral("--otlp-interval"), QStringLiteral("1"), QStringLiteral("--otlp-header-env"),
                   QStringLiteral("x-mapi-test=MAPI_TEST_OTLP_KEY"), QStringLiteral("--metrics"), QStringLiteral("127.0.0.1:0")});
        QByteArray err;
        const QString metricsUrl = waitForMetricsUrl(cli.process, err, 20000);
        QVERIFY2(!metricsUrl.isEmpty(), err.constData());

        // The incidents play for a while, then the demo is quiesced: the model must settle on
        // what the server holds, and nothing new happens until the run ends.
        QTest::qWait(16000);
        QString why;
        QVERIFY2(!demoHttp(demo.url(), QStringLiteral("/control/quiesce"), true, &why).is_null(), qPrintable(why));
        int status = 0;
        const QByteArray health = httpGet(metricsUrl + QStringLiteral("/healthz"), &status);
        QCOMPARE(status, 200);
        QCOMPARE(health, QByteArray("ok\n"));
        // Settled: two scrapes a second apart with the same counts (a loaded machine may still
        // be applying what the demo sent before it went quiet).
        QByteArray text;
        Scrape scrape;
        for (int i = 0; i < 8; ++i) { // within the run's 28 s
            QTest::qWait(1000);
            const QByteArray next = httpGet(metricsUrl + QStringLiteral("/metrics"), &status);
            QCOMPARE(status, 200);
            const Scrape parsed = parseWithPrometheus(next, dir.path());
            QVERIFY2(parsed.error.isEmpty(), qPrintable(parsed.error + QString::fromUtf8(next.left(2000))));
            const bool settled = !text.isEmpty() && parsed.value(QStringLiteral("mapi_messages_total")) == scrape.value(QStringLiteral("mapi_messages_total"))
                && parsed.value(QStringLiteral("mapi_tasks_total")) == scrape.value(QStringLiteral("mapi_tasks_total"))
                && parsed.value(QStringLiteral("mapi_events_applied_total")) == scrape.value(QStringLiteral("mapi_events_applied_total"));
            text = next;
            scrape = parsed;
            if (settled)
                break;
        }
        const Json view = demoHttp(demo.url(), QStringLiteral("/view"));
        QVERIFY(view.contains("agents"));

        const CliResult r = cli.finish(60000);
        err += r.err;
        QVERIFY2(r.exitCode == 0 || r.exitCode == 8, qPrintable(QStringLiteral("exit %1: %2").arg(r.exitCode).arg(QString::fromUtf8(err))));

        // The figures, read by Prometheus's parser, against the model and the server's view.
        QCOMPARE(scrape.types.count(QStringLiteral("mapi_events_applied")), size_t(1));
        QCOMPARE(scrape.types.at(QStringLiteral("mapi_events_applied")), QStringLiteral("counter"));
        QCOMPARE(scrape.types.count(QStringLiteral("mapi_agents")), size_t(1));
        QCOMPARE(scrape.types.at(QStringLiteral("mapi_agents")), QStringLiteral("gauge"));
        std::map<QString, double> byClass;
        for (const Json &a : view["agents"])
            byClass[stateClassName(classifyState(QString::fromStdString(a.value("state", std::string()))))] += 1;
        QCOMPARE(scrape.sum(QStringLiteral("mapi_agents")), double(view["agents"].size()));
        for (const auto &[cls, count] : byClass)
            QVERIFY2(scrape.value(QStringLiteral("mapi_agents"), QStringLiteral("state"), cls) == count,
                     qPrintable(QStringLiteral("%1: %2 in the scrape, %3 on the server").arg(cls).arg(
                         scrape.value(QStringLiteral("mapi_agents"), QStringLiteral("state"), cls)).arg(count)));
        QCOMPARE(scrape.value(QStringLiteral("mapi_client_state"), QStringLiteral("state"), QStringLiteral("live")), 1.0);
        QVERIFY(scrape.value(QStringLiteral("mapi_events_applied_total")) > 100);
        QVERIFY(scrape.sum(QStringLiteral("mapi_alerts_open")) >= 1); // the incidents keep some open

        // The spans: every request valid for the OTLP definitions, the secret header on each, the
        // first two refused and sent again.
        QProcess validate;
        validate.start(QStringLiteral(MAPI_NODE), {kOtelCheck, QStringLiteral("validate"), received});
        QVERIFY(validate.waitForFinished(60000));
        QVERIFY2(validate.exitCode() == 0, validate.readAllStandardOutput().left(3000).constData());
        const QList<QJsonObject> requests = receiver.requests();
        QVERIFY(requests.size() >= 4);
        QCOMPARE(requests[0].value(QStringLiteral("status")).toInt(), 503);
        QCOMPARE(requests[1].value(QStringLiteral("status")).toInt(), 503);
        for (const QJsonObject &q : requests)
            QCOMPARE(q.value(QStringLiteral("header")).toString().toLatin1(), kHeaderSecret);
        QVERIFY2(!err.contains(kHeaderSecret) && !r.out.contains(kHeaderSecret), "the header's value reached the CLI's output");
        QVERIFY2(err.contains(" 0 dropped"), err.constData());

        const Received got = readReceived(received);
        for (const Json &a : view["agents"])
            QVERIFY2(got.agentIds.count(QString::fromStdString(a["id"].get<std::string>())),
                     qPrintable(QStringLiteral("no span for agent %1").arg(QString::fromStdString(a["id"].get<std::string>()))));
        // Nothing happened after the scrape (quiesced): the model's counts are the final ones.
        QVERIFY(got.messageEvents > 50);
        QCOMPARE(double(got.messageEvents), scrape.value(QStringLiteral("mapi_messages_total")));
        QCOMPARE(qint64(got.messageIds.size()), got.messageEvents);
        // Each with its payload (every message of the demo has one), though the CLI keeps no
        // journal to read payloads back from.
        QCOMPARE(got.messagePayloads, got.messageEvents);
        QCOMPARE(double(got.taskSpans), scrape.value(QStringLiteral("mapi_tasks_total")));
        QCOMPARE(qint64(got.taskIds.size()), got.taskSpans);

        // Every alert line watch printed arrived as a map.alert event on its agent's span.
        int alertLines = 0;
        for (const QByteArray &line : r.out.split('\n')) {
            const Json j = Json::parse(line.constBegin(), line.constEnd(), nullptr, false);
            if (!j.is_object() || !j.contains("alert") || str(j, "agentId").isEmpty())
                continue;
            ++alertLines;
            const QString key = str(j, "alert") + u'|' + str(j, "agentId") + u'|' + str(j, "state");
            QVERIFY2(got.alerts.count(key), qPrintable(QStringLiteral("not received: %1").arg(key)));
        }
        QVERIFY(alertLines >= 3);
        qInfo("received %d requests (%d bodies): %zu agents, %lld messages, %lld tasks, %zu alert events; %d alert lines",
              int(requests.size()), got.lines, got.agentIds.size(), static_cast<long long>(got.messageEvents),
              static_cast<long long>(got.taskSpans), got.alerts.size(), alertLines);
    }

    // A receiver that never recovers: the run ends normally, and what could not go is dropped
    // and counted (after the last batch's drain), nothing blocks.
    void receiverThatStaysDownDropsAndCounts()
    {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        DemoProcess demo;
        QVERIFY2(demo.start(QStringLiteral("extended"), 0, {QStringLiteral("--agents"), QStringLiteral("10")}), qPrintable(demo.error()));
        Receiver receiver;
        QVERIFY(receiver.start(dir.filePath(QStringLiteral("received.jsonl")), {QStringLiteral("--down")}));
        QElapsedTimer clock;
        clock.start();
        const CliResult r = runCli({QStringLiteral("record"), QStringLiteral("--url"), demo.url(), QStringLiteral("--duration"),
                                    QStringLiteral("5"), QStringLiteral("--out"), dir.filePath(QStringLiteral("run.jsonl")),
                                    QStringLiteral("--otlp-endpoint"), receiver.endpoint(), QStringLiteral("--otlp-interval"),
                                    QStringLiteral("0.5")},
                                   60000);
        QVERIFY2(r.exitCode == 0, qPrintable(QStringLiteral("exit %1: %2").arg(r.exitCode).arg(QString::fromUtf8(r.err))));
        QVERIFY2(clock.elapsed() < 20000, "the drain held the run past its bound");
        static const QRegularExpression counts(QStringLiteral("OpenTelemetry: (\\d+) spans sent, (\\d+) dropped"));
        const QRegularExpressionMatch m = counts.match(QString::fromUtf8(r.err));
        QVERIFY2(m.hasMatch(), r.err.constData());
        QCOMPARE(m.captured(1).toLongLong(), 0);
        QVERIFY(m.captured(2).toLongLong() > 10);
        const QList<QJsonObject> requests = receiver.requests();
        QVERIFY(requests.size() >= 3); // retried, not given up at once
        for (const QJsonObject &q : requests)
            QCOMPARE(q.value(QStringLiteral("status")).toInt(), 503);
    }

    // Wrong telemetry options are usage errors before anything connects.
    void wrongOptionsAreUsageErrors()
    {
        qputenv("MAPI_TEST_OTLP_KEY", "x");
        const QStringList base{QStringLiteral("record"), QStringLiteral("--url"), QStringLiteral("ws://127.0.0.1:1"),
                               QStringLiteral("--duration"), QStringLiteral("1"), QStringLiteral("--out"), QStringLiteral("/dev/null")};
        const struct
        {
            QStringList args;
            const char *says;
        } cases[] = {
            {{QStringLiteral("--otlp-endpoint"), QStringLiteral("http://127.0.0.1:4318"), QStringLiteral("--otlp-protocol"),
              QStringLiteral("http/protobuf")},
             "not built"},
            {{QStringLiteral("--otlp-endpoint"), QStringLiteral("http://collector.example:4318"), QStringLiteral("--otlp-header-env"),
              QStringLiteral("x-api-key=MAPI_TEST_OTLP_KEY")},
             "http"},
            {{QStringLiteral("--otlp-endpoint"), QStringLiteral("http://127.0.0.1:4318"), QStringLiteral("--otlp-header-env"),
              QStringLiteral("x-api-key=MAPI_TEST_UNSET_VARIABLE")},
             "not set"},
            {{QStringLiteral("--otlp-header-env"), QStringLiteral("x-api-key=MAPI_TEST_OTLP_KEY")}, "go with --otlp-endpoint"},
            {{QStringLiteral("--metrics"), QStringLiteral("somehost:9464")}, "--metrics"},
            {{QStringLiteral("--metrics"), QStringLiteral("127.0.0.1")}, "--metrics"},
        };
        for (const auto &c : cases) {
            const CliResult r = runCli(base + c.args, 20000);
            QVERIFY2(r.exitCode == 1 && r.err.contains(c.says),
                     qPrintable(QStringLiteral("%1 → exit %2: %3").arg(c.args.join(u' ')).arg(r.exitCode).arg(QString::fromUtf8(r.err))));
        }
    }
};

QTEST_GUILESS_MAIN(TestTelemetryLive)
#include "tst_telemetry_live.moc"
