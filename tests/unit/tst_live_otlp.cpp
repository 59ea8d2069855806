// The live OTLP export's batches (telemetry/LiveOtlpBatcher.h): a store fed through the real
// pipeline, its changes noted as SystemStore::changed delivers them, the bodies read back with an
// independent reader (QJsonDocument) and compared with the file export (trace/Otlp.h) of the same
// store: roots with the file export's ids, window parts under them, messages, tasks and alerts as
// events or spans, parts capped, bodies bounded, secrets redacted, roots never sent twice in a
// trace, a new trace each period with the roots it needs.
#include "TestSupport.h"

#include "alerts/AlertEngine.h"
#include "pipeline/ProtocolPipeline.h"
#include "telemetry/LiveOtlpBatcher.h"
#include "trace/Otlp.h"

#include <QBuffer>
#include <QCryptographicHash>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

#include <algorithm>

using namespace mapi;
using mapi_test::eventFrame;
using mapi_test::innerEvent;

namespace {

constexpr qint64 kStart = 1764000000000;

// A run fed as the live client would receive it, with a batcher noting every change.
class Run
{
public:
    Run() : m_batcher(m_store, OtlpOptions{QStringLiteral("MAP system (ws://test)")})
    {
        QObject::connect(&m_store, &SystemStore::changed, [this](const ChangeSet &c) { m_batcher.noteChanges(c); });
    }

    void agent(const QString &id, const QString &name, const QString &parent, qint64 atMs)
    {
        Json a = {{"id", mapi_test::s(id)}, {"name", mapi_test::s(name)}, {"role", "worker"}, {"state", "active"}};
        if (!parent.isEmpty())
            a["parent"] = mapi_test::s(parent);
        event(QStringLiteral("agent.registered"), atMs, {{"agent", a}});
    }
    // Returns the message's id.
    QString message(const QString &from, const QString &to, qint64 atMs, const Json &payload = {{"type", "chat"}}, QString id = {})
    {
        ++m_messages;
        if (id.isEmpty())
            id = QStringLiteral("m-%1").arg(m_messages);
        event(QStringLiteral("message.sent"), atMs,
              {{"message", {{"id", mapi_test::s(id)}, {"from", mapi_test::s(from)}, {"to", mapi_test::s(to)}, {"payload", payload}}}},
              {{"agentId", mapi_test::s(from)}});
        return id;
    }
    void flush() { m_store.flushChanges(); }
    std::vector<OtlpBody> take(qint64 atMs, bool final = false)
    {
        flush();
        return m_batcher.take(kStart + atMs, final);
    }
    SystemStore &store() { return m_store; }
    LiveOtlpBatcher &batcher() { return m_batcher; }

private:
    void event(const QString &type, qint64 atMs, const Json &data, const Json &source = Json())
    {
        const qint64 t = kStart + atMs;
        const QString id = QStringLiteral("e-%1").arg(++m_events);
        m_store.apply(m_pipeline.frameReceived(eventFrame(QStringLiteral("s1"), m_events, innerEvent(id, type, t, data, source)), t).inputs);
    }
    int m_events = 0;
    int m_messages = 0;
    ProtocolPipeline m_pipeline;
    SystemStore m_store;
    LiveOtlpBatcher m_batcher;
};

QList<QJsonObject> spansOf(const QByteArray &request)
{
    QList<QJsonObject> spans;
    QJsonParseError error{};
    const QJsonDocument doc = QJsonDocument::fromJson(request, &error);
    if (error.error != QJsonParseError::NoError || !doc.isObject()) {
        qWarning("not a JSON object: %s", qPrintable(error.errorString()));
        return {};
    }
    const QJsonArray resourceSpans = doc.object().value(QStringLiteral("resourceSpans")).toArray();
    if (resourceSpans.isEmpty())
        qWarning("no resourceSpans");
    for (const QJsonValue rs : resourceSpans) {
        const QJsonArray scopeSpans = rs.toObject().value(QStringLiteral("scopeSpans")).toArray();
        if (scopeSpans.isEmpty())
            qWarning("no scopeSpans");
        for (const QJsonValue ss : scopeSpans)
            for (const QJsonValue span : ss.toObject().value(QStringLiteral("spans")).toArray())
                spans << span.toObject();
    }
    return spans;
}

QList<QJsonObject> spansOf(const std::vector<OtlpBody> &bodies)
{
    QList<QJsonObject> spans;
    for (const OtlpBody &body : bodies)
        spans << spansOf(body.json);
    return spans;
}

QJsonValue attribute(const QJsonObject &owner, const QString &key)
{
    for (const QJsonValue kv : owner.value(QStringLiteral("attributes")).toArray())
        if (kv.toObject().value(QStringLiteral("key")).toString() == key)
            return kv.toObject().value(QStringLiteral("value"));
    return QJsonValue(QJsonValue::Undefined);
}

QString text(const QJsonObject &owner, const QString &key)
{
    return attribute(owner, key).toObject().value(QStringLiteral("stringValue")).toString();
}

qint64 integer(const QJsonObject &owner, const QString &key)
{
    return attribute(owner, key).toObject().value(QStringLiteral("intValue")).toString().toLongLong();
}

QString str(const QJsonObject &o, const char *key)
{
    return o.value(QLatin1String(key)).toString();
}

QJsonArray events(const QJsonObject &span)
{
    return span.value(QStringLiteral("events")).toArray();
}

bool isPart(const QJsonObject &span)
{
    return !attribute(span, QStringLiteral("map.span.part")).isUndefined();
}

// The agent's root (its span without map.span.part) among `spans`.
QJsonObject rootOf(const QList<QJsonObject> &spans, const QString &agentId)
{
    for (const QJsonObject &s : spans)
        if (text(s, QStringLiteral("gen_ai.agent.id")) == agentId && !isPart(s))
            return s;
    return {};
}

QList<QJsonObject> partsOf(const QList<QJsonObject> &spans, const QString &agentId)
{
    QList<QJsonObject> parts;
    for (const QJsonObject &s : spans)
        if (text(s, QStringLiteral("gen_ai.agent.id")) == agentId && isPart(s))
            parts << s;
    return parts;
}

QList<QJsonObject> named(const QList<QJsonObject> &spans, const QString &prefix)
{
    QList<QJsonObject> out;
    for (const QJsonObject &s : spans)
        if (str(s, "name").startsWith(prefix))
            out << s;
    return out;
}

QList<QJsonObject> fileExportSpans(const SystemStore &store)
{
    QByteArray bytes;
    QBuffer buffer(&bytes);
    buffer.open(QIODevice::WriteOnly);
    const auto writer = makeOtlpWriter(store, buffer);
    while (writer->writeSome(1000)) {
    }
    QList<QJsonObject> spans;
    for (const QByteArray &line : bytes.split('\n'))
        if (!line.isEmpty())
            spans << spansOf(line);
    return spans;
}

// A coordinator and its worker; five messages between them (three from c, two from w).
void twoAgentsTalk(Run &run, QStringList *ids = nullptr)
{
    run.agent(QStringLiteral("c"), QStringLiteral("coordinator"), {}, 0);
    run.agent(QStringLiteral("w"), QStringLiteral("worker"), QStringLiteral("c"), 100);
    QStringList sent;
    for (int i = 0; i < 5; ++i)
        sent << run.message(i % 2 ? QStringLiteral("w") : QStringLiteral("c"), i % 2 ? QStringLiteral("c") : QStringLiteral("w"), 1000 + i * 100);
    if (ids)
        *ids = sent;
}

} // namespace

class TestLiveOtlp : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase() { mapi_test::installWarningGuard(); }
    void init() { mapi_test::armWarningGuard(); }
    void cleanup() { MAPI_NO_WARNINGS(); }
    void cleanupTestCase() { MAPI_NO_WARNINGS(); }

    // The names' literals: each what Attributes::text writes (redacted, escaped), the same text
    // found again by its data, another text never given an earlier one's literal, and correct
    // past the bound (the cache starts again).
    void textLiteralsAreTheTextsOwn()
    {
        otlp::TextLiterals literals;
        const auto viaText = [](const QString &value) {
            otlp::Attributes a;
            a.text("k", value);
            otlp::JsonText out;
            a.appendTo(out);
            return out;
        };
        const auto viaLiterals = [&](const QString &value) {
            otlp::Attributes a;
            a.text("k", value, literals);
            otlp::JsonText out;
            a.appendTo(out);
            return out;
        };
        const QString plain = QStringLiteral("agent-7");
        const QString quoted = QStringLiteral("say \"hi\"\n\u00e9t\u00e9");
        const QString secret = QStringLiteral("Bearer sk-abcdefghijklmnopqrstuvwxyz012345");
        for (const QString &value : {plain, quoted, secret}) {
            QCOMPARE(viaLiterals(value), viaText(value));
            QCOMPARE(viaLiterals(value), viaText(value)); // found again
        }
        QVERIFY(viaLiterals(secret).find("sk-abcdef") == std::string::npos);
        QCOMPARE(viaLiterals(QString()), std::string()); // empty: nothing, as text() writes
        // Texts made one after another (a freed one's memory may come back for the next): each
        // gets its own literal, also past kMaxEntries.
        for (int i = 0; i < otlp::TextLiterals::kMaxEntries + 100; ++i) {
            const QString value = QStringLiteral("name-%1").arg(i);
            QCOMPARE(literals.of(value), "\"" + value.toStdString() + "\"");
        }
        QCOMPARE(literals.of(plain), std::string("\"agent-7\""));
    }

    void rootsAndPartsWithTheFileExportsIds()
    {
        Run run;
        QStringList sent;
        twoAgentsTalk(run, &sent);
        const std::vector<OtlpBody> bodies = run.take(2000);
        QCOMPARE(bodies.size(), size_t(1));
        const QList<QJsonObject> spans = spansOf(bodies);
        QCOMPARE(qint64(spans.size()), bodies[0].spans);
        QCOMPARE(spans.size(), 4); // two roots, a part each

        // The roots carry the file export's ids (same trace, same agent spans) and its tree.
        const QList<QJsonObject> file = fileExportSpans(run.store());
        for (const QString &id : {QStringLiteral("c"), QStringLiteral("w")}) {
            const QJsonObject live = rootOf(spans, id);
            const QJsonObject exported = rootOf(file, id);
            QVERIFY2(!live.isEmpty() && !exported.isEmpty(), qPrintable(id));
            QCOMPARE(str(live, "spanId"), str(exported, "spanId"));
            QCOMPARE(str(live, "traceId"), str(exported, "traceId"));
            QCOMPARE(str(live, "name"), str(exported, "name"));
            QCOMPARE(str(live, "name"), id == QLatin1String("c") ? QStringLiteral("invoke_agent coordinator") : QStringLiteral("invoke_agent worker"));
            QCOMPARE(text(live, QStringLiteral("gen_ai.operation.name")), QStringLiteral("invoke_agent"));
            QCOMPARE(live.value(QStringLiteral("events")).toArray().size(), 0); // its registration only
            QCOMPARE(str(live, "startTimeUnixNano"), QString::number((kStart + (id == QLatin1String("c") ? 0 : 100)) * 1000000));
            // Each part hangs under its agent's root.
            const QList<QJsonObject> parts = partsOf(spans, id);
            QCOMPARE(parts.size(), 1);
            QCOMPARE(str(parts[0], "parentSpanId"), str(live, "spanId"));
            QCOMPARE(str(parts[0], "name"), str(live, "name"));
            QCOMPARE(integer(parts[0], QStringLiteral("map.span.part")), qint64(1));
            QCOMPARE(text(parts[0], QStringLiteral("map.agent.state")), QStringLiteral("active"));
            QCOMPARE(str(parts[0], "endTimeUnixNano"), QString::number((kStart + 2000) * 1000000));
        }
        QCOMPARE(str(rootOf(spans, QStringLiteral("w")), "parentSpanId"), str(rootOf(spans, QStringLiteral("c")), "spanId"));
        // Roots first: a receiver has the parents before the parts.
        QVERIFY(!isPart(spans[0]) && !isPart(spans[1]));

        // The five messages, each once, with the file export's event attributes.
        QStringList seen;
        for (const QJsonObject &s : spans)
            for (const QJsonValue e : events(s)) {
                QCOMPARE(str(e.toObject(), "name"), QStringLiteral("map.message"));
                seen << text(e.toObject(), QStringLiteral("map.message.id"));
            }
        std::sort(seen.begin(), seen.end());
        QCOMPARE(seen, sent);
        QCOMPARE(bodies[0].events, qint64(5));
        QCOMPARE(events(partsOf(spans, QStringLiteral("c"))[0]).size(), 3);
        QJsonObject fileEvent;
        for (const QJsonObject &s : file)
            for (const QJsonValue e : events(s))
                if (text(e.toObject(), QStringLiteral("map.message.id")) == sent[0])
                    fileEvent = e.toObject();
        QJsonObject liveEvent;
        for (const QJsonValue e : events(partsOf(spans, QStringLiteral("c"))[0]))
            if (text(e.toObject(), QStringLiteral("map.message.id")) == sent[0])
                liveEvent = e.toObject();
        QVERIFY(!fileEvent.isEmpty());
        QCOMPARE(liveEvent, fileEvent);
    }

    // A parent the store knows only by name (a placeholder: it never registered, never sent
    // anything) has no span: its child's root names no parent, and no span points at one that
    // was never sent.
    void everyParentSpanIsSent()
    {
        Run run;
        run.agent(QStringLiteral("w"), QStringLiteral("worker"), QStringLiteral("ghost"), 100);
        run.agent(QStringLiteral("v"), QStringLiteral("verifier"), QStringLiteral("w"), 150);
        run.message(QStringLiteral("w"), QStringLiteral("v"), 200);
        run.message(QStringLiteral("v"), QStringLiteral("w"), 300);
        QVERIFY(run.store().agentRow(QStringLiteral("ghost")) >= 0); // the store keeps a placeholder
        const QList<QJsonObject> spans = spansOf(run.take(1000, true));
        QSet<QString> sent;
        for (const QJsonObject &s : spans)
            sent.insert(str(s, "spanId"));
        for (const QJsonObject &s : spans) {
            const QString parent = str(s, "parentSpanId");
            QVERIFY2(parent.isEmpty() || sent.contains(parent), qPrintable(str(s, "name") + QStringLiteral(": parent not sent")));
        }
        QVERIFY(str(rootOf(spans, QStringLiteral("w")), "parentSpanId").isEmpty());
        QCOMPARE(str(rootOf(spans, QStringLiteral("v")), "parentSpanId"), str(rootOf(spans, QStringLiteral("w")), "spanId"));
    }

    void laterWindowsAddPartsOnlyForActivity()
    {
        Run run;
        twoAgentsTalk(run);
        const QList<QJsonObject> first = spansOf(run.take(2000));
        QVERIFY(run.batcher().pendingBytes() == 0);
        QVERIFY(run.take(3000).empty()); // nothing happened: nothing sent

        const QString a = run.message(QStringLiteral("c"), QStringLiteral("w"), 3100);
        const QString b = run.message(QStringLiteral("c"), QStringLiteral("w"), 3200);
        const QString c = run.message(QStringLiteral("c"), QStringLiteral("w"), 3300);
        QCOMPARE(run.batcher().pendingBytes(), 0); // noted from the store's change signal, not before
        run.flush();
        QVERIFY(run.batcher().pendingBytes() > 0);
        const std::vector<OtlpBody> bodies = run.take(4000);
        const QList<QJsonObject> spans = spansOf(bodies);
        QCOMPARE(spans.size(), 1); // no root again, no part for the silent worker
        const QJsonObject part = spans[0];
        QCOMPARE(text(part, QStringLiteral("gen_ai.agent.id")), QStringLiteral("c"));
        QCOMPARE(integer(part, QStringLiteral("map.span.part")), qint64(2));
        QCOMPARE(str(part, "parentSpanId"), str(rootOf(first, QStringLiteral("c")), "spanId"));
        QVERIFY(str(part, "spanId") != str(partsOf(first, QStringLiteral("c"))[0], "spanId"));
        QCOMPARE(str(part, "startTimeUnixNano"), QString::number((kStart + 3100) * 1000000));
        QStringList ids;
        for (const QJsonValue e : events(part))
            ids << text(e.toObject(), QStringLiteral("map.message.id"));
        QCOMPARE(ids, (QStringList{a, b, c}));
    }

    void tasksGoWhenTheyEndAndOpenOnesAtTheEnd()
    {
        Run run;
        run.agent(QStringLiteral("c"), QStringLiteral("coordinator"), {}, 0);
        run.agent(QStringLiteral("w"), QStringLiteral("worker"), QStringLiteral("c"), 100);
        run.message(QStringLiteral("c"), QStringLiteral("w"), 1000, {{"type", "TASK_ASSIGNMENT"}, {"task_id", "t1"}, {"task_type", "review"}});
        run.message(QStringLiteral("c"), QStringLiteral("w"), 1100, {{"type", "TASK_ASSIGNMENT"}, {"task_id", "t2"}, {"task_type", "plan"}});
        const QList<QJsonObject> first = spansOf(run.take(1500));
        QVERIFY(named(first, QStringLiteral("task ")).isEmpty()); // both open
        run.message(QStringLiteral("w"), QStringLiteral("c"), 2000, {{"type", "TASK_COMPLETE"}, {"task_id", "t1"}, {"status", "SUCCESS"}});
        QCOMPARE(run.store().task(QStringLiteral("t1"))->status, QStringLiteral("completed"));
        const QList<QJsonObject> spans = spansOf(run.take(2500));
        const QList<QJsonObject> tasks = named(spans, QStringLiteral("task "));
        QCOMPARE(tasks.size(), 1);
        const QJsonObject t1 = tasks[0];
        QCOMPARE(text(t1, QStringLiteral("map.task.id")), QStringLiteral("t1"));
        QCOMPARE(text(t1, QStringLiteral("map.task.status")), QStringLiteral("completed"));
        const std::vector<TaskTransition> history = run.store().taskHistory(*run.store().task(QStringLiteral("t1")));
        QVERIFY(history.size() >= 2);
        QCOMPARE(size_t(events(t1).size()), history.size());
        QCOMPARE(text(events(t1).first().toObject(), QStringLiteral("map.task.status")), QStringLiteral("requested"));
        QCOMPARE(text(events(t1).last().toObject(), QStringLiteral("map.task.status")), QStringLiteral("completed"));
        // Under its assignee's root (sent in the first take), named and written as the file export
        // writes it (its ids differ: the file export's trace id counts the events since).
        QCOMPARE(str(t1, "parentSpanId"), str(rootOf(first, QStringLiteral("w")), "spanId"));
        const QList<QJsonObject> fileTasks = named(fileExportSpans(run.store()), QStringLiteral("task review"));
        QCOMPARE(fileTasks.size(), 1);
        QCOMPARE(str(t1, "name"), str(fileTasks[0], "name"));
        QCOMPARE(events(t1), events(fileTasks[0]));
        QCOMPARE(t1.value(QStringLiteral("attributes")), fileTasks[0].value(QStringLiteral("attributes")));
        QVERIFY(run.take(2600).empty()); // sent once

        // The run ends: the open task goes with its status, ending then.
        const std::vector<OtlpBody> last = run.take(9000, true);
        const QList<QJsonObject> open = named(spansOf(last), QStringLiteral("task "));
        QCOMPARE(open.size(), 1);
        QCOMPARE(text(open[0], QStringLiteral("map.task.id")), QStringLiteral("t2"));
        QCOMPARE(text(open[0], QStringLiteral("map.task.status")), QStringLiteral("requested"));
        QCOMPARE(str(open[0], "endTimeUnixNano"), QString::number((kStart + 9000) * 1000000));
    }

    void alertsAreEventsOfTheirAgentsOrOfTheSystem()
    {
        Run run;
        twoAgentsTalk(run);
        run.take(2000);
        AlertChange raised;
        raised.alert.kind = AlertKind::Loop;
        raised.alert.severity = AlertSeverity::Critical;
        raised.alert.agents = {QStringLiteral("w")};
        raised.alert.reason = QStringLiteral("w repeats itself; password: hunter2-secret ") + QString(3000, QLatin1Char('x'));
        raised.atMs = kStart + 2500;
        AlertChange cleared = raised;
        cleared.raised = false;
        cleared.alert.agents = {QStringLiteral("nobody-known")};
        cleared.atMs = kStart + 2600;
        run.batcher().noteAlerts({raised, cleared});
        const std::vector<OtlpBody> bodies = run.take(3000);
        const QList<QJsonObject> spans = spansOf(bodies);
        const QList<QJsonObject> parts = partsOf(spans, QStringLiteral("w"));
        QCOMPARE(parts.size(), 1);
        QCOMPARE(events(parts[0]).size(), 1);
        const QJsonObject alert = events(parts[0]).first().toObject();
        QCOMPARE(str(alert, "name"), QStringLiteral("map.alert"));
        QCOMPARE(text(alert, QStringLiteral("map.alert.kind")), QStringLiteral("loop"));
        QCOMPARE(text(alert, QStringLiteral("map.alert.severity")), QStringLiteral("critical"));
        QCOMPARE(text(alert, QStringLiteral("map.alert.state")), QStringLiteral("raised"));
        QCOMPARE(str(alert, "timeUnixNano"), QString::number((kStart + 2500) * 1000000));
        const QString reason = text(alert, QStringLiteral("map.alert.reason"));
        QVERIFY(reason.startsWith(QStringLiteral("w repeats itself")));
        QVERIFY(reason.toUtf8().size() <= LiveOtlpBatcher::kMaxAlertReasonBytes);
        QVERIFY(!bodies[0].json.contains("hunter2-secret"));
        // No agent the store knows: on the system's span (its root, then its part).
        const QList<QJsonObject> system = named(spans, QStringLiteral("map.system"));
        QCOMPARE(system.size(), 2);
        QVERIFY(!isPart(system[0]) && isPart(system[1]));
        QCOMPARE(str(system[1], "parentSpanId"), str(system[0], "spanId"));
        QCOMPARE(text(events(system[1]).first().toObject(), QStringLiteral("map.alert.state")), QStringLiteral("cleared"));
    }

    void aFloodGoesInCappedPartsAndBoundedBodies()
    {
        Run run;
        run.agent(QStringLiteral("c"), QStringLiteral("coordinator"), {}, 0);
        run.agent(QStringLiteral("w"), QStringLiteral("worker"), QStringLiteral("c"), 100);
        run.take(500);
        const Json payload = {{"type", "chat"}, {"text", std::string(1500, 'p')}};
        QSet<QString> sent;
        for (int i = 0; i < 3000; ++i)
            sent.insert(run.message(QStringLiteral("c"), QStringLiteral("w"), 1000 + i, payload));
        run.flush();
        QVERIFY(run.batcher().pendingBytes() > 3000 * 1500);
        const std::vector<OtlpBody> bodies = run.take(10000);
        QVERIFY2(bodies.size() >= 2, "more than a body holds");
        QSet<QString> seen;
        QList<qint64> partNumbers;
        qint64 eventsCounted = 0;
        for (const OtlpBody &body : bodies) {
            QVERIFY(body.json.size() <= LiveOtlpBatcher::kMaxBodyBytes);
            eventsCounted += body.events;
            for (const QJsonObject &part : spansOf(body.json)) {
                QCOMPARE(text(part, QStringLiteral("gen_ai.agent.id")), QStringLiteral("c"));
                QVERIFY(events(part).size() <= kOtlpMessagesPerSpan);
                partNumbers << integer(part, QStringLiteral("map.span.part"));
                for (const QJsonValue e : events(part))
                    seen.insert(text(e.toObject(), QStringLiteral("map.message.id")));
            }
        }
        QCOMPARE(eventsCounted, qint64(3000));
        QCOMPARE(seen, sent);
        QCOMPARE(partNumbers, (QList<qint64>{1, 2, 3})); // 1,000 each (under 2 MiB): three parts of one take
        QCOMPARE(run.batcher().pendingBytes(), qsizetype(0));
    }

    void secretsDoNotLeave()
    {
        Run run;
        run.agent(QStringLiteral("c"), QStringLiteral("coordinator"), {}, 0);
        run.message(QStringLiteral("c"), QStringLiteral("someone-unknown"), 1000,
                    {{"type", "chat"}, {"token", "sk-proj-Abc123Def456Ghi789Jkl"}, {"note", "see OPENAI_API_KEY=abc-def-123"}});
        QVERIFY(run.store().messagePayload(0).contains("sk-proj-Abc123Def456Ghi789Jkl")); // the store keeps it
        const std::vector<OtlpBody> bodies = run.take(2000);
        QCOMPARE(bodies.size(), size_t(1));
        QVERIFY(!bodies[0].json.contains("Abc123Def456Ghi789Jkl"));
        QVERIFY(!bodies[0].json.contains("abc-def-123"));
        QVERIFY(bodies[0].json.contains("REDACTED"));
        QCOMPARE(spansOf(bodies).size(), 2);
    }

    void aResetKeepsTheRootsSent()
    {
        Run run;
        twoAgentsTalk(run);
        const QList<QJsonObject> first = spansOf(run.take(2000));
        const QString rootC = str(rootOf(first, QStringLiteral("c")), "spanId");
        const QString rootW = str(rootOf(first, QStringLiteral("w")), "spanId");
        QVERIFY(!rootC.isEmpty() && !rootW.isEmpty());

        run.store().reset(); // a reconnect: a fresh model
        run.batcher().reset();
        twoAgentsTalk(run);  // the same agents again, and five more messages
        const QList<QJsonObject> again = spansOf(run.take(5000));
        QVERIFY(!again.isEmpty());
        for (const QJsonObject &s : again) {
            QVERIFY2(isPart(s), qPrintable(str(s, "name"))); // no root twice
            QVERIFY(str(s, "spanId") != rootC && str(s, "spanId") != rootW);
        }
        const QList<QJsonObject> partsC = partsOf(again, QStringLiteral("c"));
        QCOMPARE(partsC.size(), 1);
        QCOMPARE(integer(partsC[0], QStringLiteral("map.span.part")), qint64(2)); // the counter goes on
        QCOMPARE(str(partsC[0], "parentSpanId"), rootC);
        QCOMPARE(str(partsC[0], "traceId"), str(first[0], "traceId"));
        QCOMPARE(events(partsC[0]).size(), 3);
    }

    // The log keeps ULIDs and lower-case UUIDs packed; the export writes them back as their text
    // without a QString (TextArena::utf8 with a scratch), and any other id as it is kept.
    void packedIdsGoOutAsTheirText()
    {
        Run run;
        run.agent(QStringLiteral("c"), QStringLiteral("coordinator"), {}, 0);
        const QString ulid = QStringLiteral("01J9ZQ3M4X5Y6Z7A8B9C0D1E2F");
        const QString uuid = QStringLiteral("3f2504e0-4f89-41d3-9a0c-0305e82c3301");
        const QString upperUuid = QStringLiteral("3F2504E0-4F89-41D3-9A0C-0305E82C3302"); // kept as text
        const auto chat = [](const QString &correlationId) {
            return Json{{"type", "chat"}, {"correlationId", mapi_test::s(correlationId)}};
        };
        run.message(QStringLiteral("c"), QStringLiteral("x"), 1000, chat(uuid), ulid);
        run.message(QStringLiteral("c"), QStringLiteral("x"), 1100, chat(ulid), uuid);
        run.message(QStringLiteral("c"), QStringLiteral("x"), 1200, chat(QStringLiteral("corr-1")), upperUuid);
        QStringList ids;
        QStringList correlations;
        for (const QJsonObject &part : partsOf(spansOf(run.take(2000)), QStringLiteral("c")))
            for (const QJsonValue &e : events(part)) {
                ids << text(e.toObject(), QStringLiteral("map.message.id"));
                correlations << text(e.toObject(), QStringLiteral("map.message.correlation_id"));
            }
        QCOMPARE(ids, (QStringList{ulid, uuid, upperUuid}));
        QCOMPARE(correlations, (QStringList{uuid, ulid, QStringLiteral("corr-1")}));
    }

    // The batcher finds a sender's part by the message log's name row; a reset numbers the
    // names anew (here the two senders swap rows), also between two takes.
    void aResetBetweenTakesKeepsEachMessageWithItsSender()
    {
        Run run;
        run.agent(QStringLiteral("c"), QStringLiteral("coordinator"), {}, 0);
        run.agent(QStringLiteral("w"), QStringLiteral("worker"), QStringLiteral("c"), 100);
        const QString fromC = run.message(QStringLiteral("c"), QStringLiteral("w"), 1000);
        run.store().reset();
        run.batcher().reset();
        run.agent(QStringLiteral("c"), QStringLiteral("coordinator"), {}, 0);
        run.agent(QStringLiteral("w"), QStringLiteral("worker"), QStringLiteral("c"), 100);
        const QString fromW = run.message(QStringLiteral("w"), QStringLiteral("c"), 1100);
        const QList<QJsonObject> spans = spansOf(run.take(2000));
        const auto idsOnPartsOf = [&](const QString &agentId) {
            QStringList ids;
            for (const QJsonObject &part : partsOf(spans, agentId))
                for (const QJsonValue &e : events(part))
                    ids << text(e.toObject(), QStringLiteral("map.message.id"));
            return ids;
        };
        QCOMPARE(idsOnPartsOf(QStringLiteral("c")), QStringList{fromC});
        QCOMPARE(idsOnPartsOf(QStringLiteral("w")), QStringList{fromW});
    }

    void aNewPeriodStartsANewTraceWithTheRootsItNeeds()
    {
        Run run;
        run.batcher().setTracePeriodMs(1000); // kStart is a multiple: periods begin at kStart + k * 1000
        run.agent(QStringLiteral("a"), QStringLiteral("alpha"), {}, 0);
        run.agent(QStringLiteral("b"), QStringLiteral("beta"), QStringLiteral("a"), 100);
        run.agent(QStringLiteral("q"), QStringLiteral("quiet"), QStringLiteral("a"), 200);
        run.message(QStringLiteral("a"), QStringLiteral("b"), 300);
        run.message(QStringLiteral("b"), QStringLiteral("a"), 400);
        const QList<QJsonObject> first = spansOf(run.take(600));
        QCOMPARE(first.size(), 5); // three roots, two parts
        const QString firstTrace = str(first[0], "traceId");
        const QJsonObject rootA1 = rootOf(first, QStringLiteral("a"));
        const QJsonObject rootB1 = rootOf(first, QStringLiteral("b"));
        QVERIFY(!rootA1.isEmpty() && !rootB1.isEmpty() && !rootOf(first, QStringLiteral("q")).isEmpty());
        for (const QJsonObject &s : first)
            QCOMPARE(str(s, "traceId"), firstTrace);

        // Two periods later: a new trace for everything the take sends.
        run.message(QStringLiteral("a"), QStringLiteral("b"), 2100);
        run.message(QStringLiteral("b"), QStringLiteral("a"), 2100);
        const QList<QJsonObject> second = spansOf(run.take(2100));
        QCOMPARE(second.size(), 4); // two roots again, a part each; nothing of the quiet agent
        const QString secondTrace = str(second[0], "traceId");
        QVERIFY(secondTrace != firstTrace);
        for (const QJsonObject &s : second)
            QCOMPARE(str(s, "traceId"), secondTrace);
        // Derived from the first trace id and the period's index (documented).
        const QByteArray seed = firstTrace.toLatin1() + ":period:" + QByteArray::number((kStart + 2100) / 1000);
        QCOMPARE(secondTrace, QString::fromLatin1(QCryptographicHash::hash(seed, QCryptographicHash::Sha1).left(16).toHex()));

        // The roots again, with new ids, the tree rebuilt in the new trace, before the parts.
        QVERIFY(!isPart(second[0]) && !isPart(second[1]));
        const QJsonObject rootA2 = rootOf(second, QStringLiteral("a"));
        const QJsonObject rootB2 = rootOf(second, QStringLiteral("b"));
        QVERIFY(!rootA2.isEmpty() && !rootB2.isEmpty());
        QVERIFY(str(rootA2, "spanId") != str(rootA1, "spanId"));
        QVERIFY(str(rootB2, "spanId") != str(rootB1, "spanId"));
        QVERIFY(str(rootA2, "parentSpanId").isEmpty());
        QCOMPARE(str(rootB2, "parentSpanId"), str(rootA2, "spanId"));
        QCOMPARE(str(rootA2, "name"), str(rootA1, "name"));
        QCOMPARE(text(rootB2, QStringLiteral("map.agent.parent_id")), QStringLiteral("a"));
        // From the period's start to the first activity in it.
        QCOMPARE(str(rootA2, "startTimeUnixNano"), QString::number((kStart + 2000) * 1000000));
        QCOMPARE(str(rootA2, "endTimeUnixNano"), QString::number((kStart + 2100) * 1000000));
        for (const QString &id : {QStringLiteral("a"), QStringLiteral("b")}) {
            const QJsonObject root = rootOf(second, id);
            const QList<QJsonObject> parts = partsOf(second, id);
            QCOMPARE(parts.size(), 1);
            QCOMPARE(str(parts[0], "parentSpanId"), str(root, "spanId"));
            QCOMPARE(integer(parts[0], QStringLiteral("map.span.part")), qint64(2)); // the counter goes on
            QCOMPARE(events(parts[0]).size(), 1);
        }
        QVERIFY(rootOf(second, QStringLiteral("q")).isEmpty()); // no activity in the period: no root there
        QVERIFY(partsOf(second, QStringLiteral("q")).isEmpty());

        // Later in the same period: the same trace, no root again.
        run.message(QStringLiteral("a"), QStringLiteral("b"), 2500);
        const QList<QJsonObject> third = spansOf(run.take(2600));
        QCOMPARE(third.size(), 1);
        QCOMPARE(str(third[0], "traceId"), secondTrace);
        QCOMPARE(str(third[0], "parentSpanId"), str(rootA2, "spanId"));
        QCOMPARE(integer(third[0], QStringLiteral("map.span.part")), qint64(3));
    }
};

QTEST_GUILESS_MAIN(TestLiveOtlp)
#include "tst_live_otlp.moc"
