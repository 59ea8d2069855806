// Every event data shape of the official SDK (@multi-agent-protocol/sdk, pinned in
// tools/demo-system/package-lock.json): the test reads the SDK's own .d.ts, lists every
// `*EventData` type in it, and fails on one that tests/data/sdk-event-data.json does not cover.
// Each entry there is a real wire event of that type (checked against the SDK's types with tsc
// when it was written) and what a correct model must make of it: the event's kind and subject,
// the message it carries (sender, address, payload, scope), the task (title, true status). Each
// goes through the real pipeline, with both JSON parsers, in both name spellings (the SDK's
// snake_case and the dotted one), into a store.
#include "TestSupport.h"

#include "map/MethodTable.h"
#include "protocol/SimdJsonParser.h"

#include <QDir>
#include <QRegularExpression>

using namespace mapi;
using mapi_test::q;
using mapi_test::s;

namespace {

const QString kSdkDist = QStringLiteral(MAPI_SOURCE_DIR "/tools/demo-system/node_modules/@multi-agent-protocol/sdk/dist");

// The `*EventData` interfaces and type aliases the SDK declares.
QStringList sdkEventDataTypes(QString *error)
{
    QStringList names;
    const QStringList files = QDir(kSdkDist).entryList({QStringLiteral("*.d.ts")}, QDir::Files);
    if (files.isEmpty()) {
        *error = QStringLiteral("no .d.ts in %1: run scripts/install-deps.sh (it installs the pinned SDK)").arg(kSdkDist);
        return names;
    }
    static const QRegularExpression declared(QStringLiteral(R"((?:interface|type)\s+(\w+EventData)\b)"));
    for (const QString &file : files) {
        QFile f(kSdkDist + u'/' + file);
        if (!f.open(QIODevice::ReadOnly))
            continue;
        const QString text = QString::fromUtf8(f.readAll());
        for (auto it = declared.globalMatch(text); it.hasNext();) {
            const QString name = it.next().captured(1);
            if (!names.contains(name))
                names << name;
        }
    }
    return names;
}

// The SDK's method registry, walked in its built files: every MAP method name they spell (the
// values of METHOD_REGISTRY and of the *_METHODS constants, the keys of MAPServer's and
// TestServer's handler tables, router mapping, validation schemas, the permission rules). A name
// is a quoted string under map/, mail/, trajectory/, workspace/ or cred/; wildcards of the
// permission rules ("map/scopes/*") are not names. ACP_METHODS (session/new, fs/read_text_file...)
// are ACP's own methods, carried inside map/send payloads: never MAP methods on the wire.
// `registry`: METHOD_REGISTRY's and the *_METHODS constants' values alone, to check that the
// namespaces above hold every one of them.
QStringList sdkMethodNames(QStringList *registry, QString *error)
{
    static const QString namespaces = QStringLiteral("(?:map|mail|trajectory|workspace|cred)/");
    static const QRegularExpression name(QStringLiteral("\"(%1[A-Za-z0-9_./-]+)\"").arg(namespaces));
    // `var NAME = { ... \n};`, and in it `method: "…"` (the registry) or `KEY: "…"` (a constant).
    static const QRegularExpression constant(QStringLiteral("\\bvar (METHOD_REGISTRY|\\w+_METHODS) = \\{(.*?)\\r?\\n\\};"),
                                             QRegularExpression::DotMatchesEverythingOption);
    static const QRegularExpression value(QStringLiteral("(?:\\bmethod|\\b[A-Z][A-Z0-9_]*):\\s*\"([^\"]+)\""));
    QStringList names;
    for (const char *file : {"index.js", "server.js", "testing.js"}) {
        QFile f(kSdkDist + u'/' + QLatin1String(file));
        if (!f.open(QIODevice::ReadOnly)) {
            *error = QStringLiteral("cannot read %1/%2: run scripts/install-deps.sh (it installs the pinned SDK)")
                         .arg(kSdkDist, QLatin1String(file));
            return {};
        }
        const QString text = QString::fromUtf8(f.readAll());
        for (auto it = name.globalMatch(text); it.hasNext();) {
            const QString n = it.next().captured(1);
            if (!names.contains(n))
                names << n;
        }
        for (auto it = constant.globalMatch(text); it.hasNext();) {
            const QRegularExpressionMatch block = it.next();
            if (block.captured(1) == QLatin1String("ACP_METHODS"))
                continue;
            for (auto v = value.globalMatch(block.captured(2)); v.hasNext();) {
                const QString n = v.next().captured(1);
                if (!registry->contains(n))
                    *registry << n;
            }
        }
    }
    return names;
}

// In file order (the task vectors build on each other): an ordered_json.
nlohmann::ordered_json loadVectors()
{
    QFile f(QStringLiteral(MAPI_TEST_DATA "/sdk-event-data.json"));
    if (!f.open(QIODevice::ReadOnly))
        return nullptr;
    const QByteArray text = f.readAll();
    return nlohmann::ordered_json::parse(text.constData(), text.constData() + text.size(), nullptr, false);
}

const char *kindName(EventKind kind)
{
    switch (kind) {
    case EventKind::AgentRegistered: return "AgentRegistered";
    case EventKind::AgentUnregistered: return "AgentUnregistered";
    case EventKind::AgentStateChanged: return "AgentStateChanged";
    case EventKind::AgentMetadataChanged: return "AgentMetadataChanged";
    case EventKind::AgentResumed: return "AgentResumed";
    case EventKind::AgentOrphaned: return "AgentOrphaned";
    case EventKind::ScopeCreated: return "ScopeCreated";
    case EventKind::ScopeDeleted: return "ScopeDeleted";
    case EventKind::ScopeMemberJoined: return "ScopeMemberJoined";
    case EventKind::ScopeMemberLeft: return "ScopeMemberLeft";
    case EventKind::MessageSent: return "MessageSent";
    case EventKind::MessageQueued: return "MessageQueued";
    case EventKind::MessageDelivered: return "MessageDelivered";
    case EventKind::MessageDropped: return "MessageDropped";
    case EventKind::MessageExpired: return "MessageExpired";
    case EventKind::MessageFailed: return "MessageFailed";
    case EventKind::SessionConnected: return "SessionConnected";
    case EventKind::SessionDisconnected: return "SessionDisconnected";
    case EventKind::SessionResumed: return "SessionResumed";
    case EventKind::SessionExpired: return "SessionExpired";
    case EventKind::TaskCreated: return "TaskCreated";
    case EventKind::TaskAssigned: return "TaskAssigned";
    case EventKind::TaskStatus: return "TaskStatus";
    case EventKind::TaskCompleted: return "TaskCompleted";
    case EventKind::ConversationCreated: return "ConversationCreated";
    case EventKind::ConversationClosed: return "ConversationClosed";
    case EventKind::ParticipantJoined: return "ParticipantJoined";
    case EventKind::ParticipantLeft: return "ParticipantLeft";
    case EventKind::TurnAdded: return "TurnAdded";
    case EventKind::TurnUpdated: return "TurnUpdated";
    case EventKind::ThreadCreated: return "ThreadCreated";
    case EventKind::TrajectoryCheckpoint: return "TrajectoryCheckpoint";
    case EventKind::Other: return "Other";
    }
    return "?";
}

// "message_sent" <-> "message.sent": the other spelling of a type (dotted types get underscores).
QString otherSpelling(const QString &type)
{
    QString other = type;
    if (type.contains(u'_'))
        other.replace(u'_', u'.');
    else
        other.replace(u'.', u'_');
    return other;
}

} // namespace

class SdkEventsTest : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase() { mapi_test::installWarningGuard(); }
    void init() { mapi_test::armWarningGuard(); }
    void cleanup() { MAPI_NO_WARNINGS(); }

    // The SDK's list against ours: a type the SDK adds (a new pinned version) fails here until
    // it has its vector and the model reads it.
    void everySdkEventDataTypeIsCovered()
    {
        QString error;
        const QStringList types = sdkEventDataTypes(&error);
        QVERIFY2(error.isEmpty(), qPrintable(error));
        QVERIFY2(types.size() >= 19, qPrintable(types.join(u',')));
        const nlohmann::ordered_json vectors = loadVectors();
        QVERIFY(vectors.is_object() && vectors.contains("types"));
        for (const QString &type : types)
            QVERIFY2(vectors["types"].contains(s(type)), qPrintable(QStringLiteral("%1 has no vector in sdk-event-data.json").arg(type)));
    }

    void everyShapeIsRead_data()
    {
        QTest::addColumn<bool>("simdjson");
        QTest::addColumn<bool>("otherSpelling");
        QTest::newRow("nlohmann, as the SDK spells it") << false << false;
        QTest::newRow("simdjson, as the SDK spells it") << true << false;
        QTest::newRow("nlohmann, other spelling") << false << true;
        QTest::newRow("simdjson, other spelling") << true << true;
    }

    // Each vector in file order through one pipeline into one store (the task vectors build on
    // each other: created, assigned, blocked, failed, completed).
    void everyShapeIsRead()
    {
        QFETCH(bool, simdjson);
        QFETCH(bool, otherSpelling);
        const nlohmann::ordered_json vectors = loadVectors();
        QVERIFY(vectors.is_object());
        ProtocolPipeline pipeline(CodecLimits{}, simdjson ? SimdJsonParser::instance() : std::shared_ptr<const JsonParser>());
        SystemStore store;
        qint64 now = 1795251215000;
        store.apply(pipeline.connectionOpened(QStringLiteral("ws://test"), now));
        qint64 sequence = 0;
        for (auto it = vectors["types"].begin(); it != vectors["types"].end(); ++it) {
            const QString name = QString::fromStdString(it.key());
            Json event = Json::parse((*it)["event"].dump());
            if (otherSpelling)
                event["type"] = s(::otherSpelling(q(event["type"].get<std::string>().c_str())));
            const Json expect = Json::parse((*it)["expect"].dump());
            const QByteArray frame = mapi_test::eventFrame(QStringLiteral("sub-1"), ++sequence, event);
            now += 10;
            const InterpretedFrame f = pipeline.frameReceived(frame, now);
            const MapEvent *e = nullptr;
            for (const ModelInput &in : f.inputs)
                if (const auto *ev = std::get_if<EventInput>(&in))
                    e = &ev->event;
            QVERIFY2(e, qPrintable(name));
            const auto check = [&](const char *key, const QString &actual) {
                if (!expect.contains(key))
                    return true;
                const QString want = expect[key].is_null() ? QString() : q(expect[key].get<std::string>().c_str());
                if (actual == want)
                    return true;
                qWarning("%s: %s is \"%s\", expected \"%s\"", qPrintable(name), key, qPrintable(actual), qPrintable(want));
                return false;
            };
            QVERIFY(check("kind", QString::fromLatin1(kindName(e->kind))));
            QVERIFY(check("agentId", e->agentId));
            QVERIFY(check("messageId", e->messageId.isEmpty() && e->message ? e->message->id : e->messageId));
            QVERIFY(check("scopeId", e->scopeId));
            if (e->kind == EventKind::MessageSent || e->kind == EventKind::MessageDelivered) {
                QVERIFY2(e->message, qPrintable(name + u": no message read"));
                QVERIFY(check("from", e->message->from));
            }
            QString statusBefore;
            if (expect.contains("taskId"))
                if (const Task *before = store.task(q(expect["taskId"].get<std::string>().c_str())))
                    statusBefore = before->status;
            store.apply(f.inputs);
            store.flushChanges();
            // What the store made of it.
            if (expect.contains("messageId") && (e->kind == EventKind::MessageSent || e->kind == EventKind::MessageDelivered)) {
                const QString id = q(expect["messageId"].get<std::string>().c_str());
                const int row = store.messages().find(id);
                QVERIFY2(row >= 0, qPrintable(name + u": the store has no message " + id));
                const Message m = store.messages()[size_t(row)];
                if (expect.contains("from"))
                    QCOMPARE(m.fromRaw, q(expect["from"].get<std::string>().c_str()));
                if (expect.contains("scopeId")) {
                    QCOMPARE(m.scopeId, q(expect["scopeId"].get<std::string>().c_str()));
                    QVERIFY2(!store.agent(m.scopeId), "a scope address made an agent");
                }
                if (expect.contains("payloadText") && !expect["payloadText"].is_null())
                    QCOMPARE(Json::parse(store.messagePayload(row).toStdString()),
                             Json::parse(expect["payloadText"].get<std::string>()));
                if (expect.contains("to") && expect["to"].is_array())
                    for (const Json &agent : expect["to"])
                        QVERIFY2(m.toAgentIds.contains(q(agent.get<std::string>().c_str())), qPrintable(name));
            }
            if (expect.contains("taskId")) {
                const Task *task = store.task(q(expect["taskId"].get<std::string>().c_str()));
                QVERIFY2(task, qPrintable(name + u": no task"));
                if (expect.contains("taskTitle"))
                    QCOMPARE(task->type, q(expect["taskTitle"].get<std::string>().c_str()));
                if (expect.contains("taskStatus") && !expect["taskStatus"].is_null())
                    QCOMPARE(task->status, canonicalTaskStatus(q(expect["taskStatus"].get<std::string>().c_str())));
                else if (expect.contains("taskStatus")) // null: the event must not change it
                    QCOMPARE(task->status, statusBefore);
                if (expect.contains("previousState"))
                    QCOMPARE(e->task.previous, canonicalTaskStatus(q(expect["previousState"].get<std::string>().c_str())));
            }
        }
        // The task vectors' end state: task-7 failed (not in progress), task-8 completed once.
        QCOMPARE(store.task(QStringLiteral("task-7"))->status, QStringLiteral("failed"));
        QCOMPARE(store.task(QStringLiteral("task-7"))->assigneeId, QStringLiteral("worker-3"));
        QCOMPARE(store.task(QStringLiteral("task-8"))->status, QStringLiteral("completed"));
        // The mail vectors make one conversation: its subject, its close, the participant who
        // joined and left, both turns in time order (the intercepted one linked to its message),
        // the thread, and the turn's later status.
        const Conversation *c = store.conversations().find(QStringLiteral("conv-01JDX8Q2M3K4N5P6R7S8T9V0W1"));
        QVERIFY(c);
        QCOMPARE(store.conversations().conversations().size(), size_t(1));
        QCOMPARE(c->subject, QStringLiteral("Q3 incident review"));
        QCOMPARE(c->type, QStringLiteral("multi-agent"));
        QCOMPARE(c->status, QStringLiteral("completed"));
        QCOMPARE(c->closeReason, QStringLiteral("Review finished"));
        QCOMPARE(c->participants.size(), size_t(1));
        QCOMPARE(c->participants[0].id, QStringLiteral("worker-2"));
        QVERIFY(c->participants[0].leftMs > 0);
        QCOMPARE(c->turns.size(), size_t(2));
        QCOMPARE(c->turns[0].text, QStringLiteral("Three incidents in Q3; INC-2291 is still open."));
        QCOMPARE(c->turns[0].status, QStringLiteral("failed"));
        QCOMPARE(c->turns[0].inReplyTo, QStringLiteral("turn-01JDX8Q4A1B2C3D4E5F6G7H8J9"));
        QCOMPARE(c->turns[1].interceptedMessageId, QStringLiteral("msg-42"));
        QVERIFY(c->turns[0].eventRow >= 0 && c->turns[1].eventRow > c->turns[0].eventRow);
        QCOMPARE(c->threads.size(), size_t(1));
        QCOMPARE(c->threads[0].subject, QStringLiteral("INC-2291 follow-up"));
        // Both checkpoints, on worker-2's work (not the reporter's).
        QCOMPARE(store.checkpoints().of(QStringLiteral("worker-2")).size(), size_t(2));
        QCOMPARE(store.checkpoints().checkpoints().front().label, QStringLiteral("Parsed the Q3 incident log"));
        // Every event the model does not understand is counted by type with a sample: the
        // permission updates and the two types no SDK server emits.
        const ObservationNotes &notes = store.observation();
        QCOMPARE(notes.unknownTypes().size(), size_t(4));
        for (const UnknownEventType &u : notes.unknownTypes()) {
            QVERIFY(u.count >= 1);
            QVERIFY2(u.sample.contains("\"data\""), u.sample.constData());
        }
        qint64 unknownRows = 0;
        for (const ProtocolProblem &p : store.problems())
            unknownRows += p.kind == ProblemKind::UnknownEvent;
        QCOMPARE(unknownRows, qint64(notes.unknownTypes().size()));
    }

    // Task statuses as servers spell them, kept true: never read as another.
    void taskStatusesStayTrue()
    {
        QCOMPARE(canonicalTaskStatus(QStringLiteral("in_progress")), QStringLiteral("in-progress"));
        QCOMPARE(canonicalTaskStatus(QStringLiteral("IN PROGRESS")), QStringLiteral("in-progress"));
        QCOMPARE(canonicalTaskStatus(QStringLiteral("blocked")), QStringLiteral("blocked"));
        QCOMPARE(canonicalTaskStatus(QStringLiteral("failed")), QStringLiteral("failed"));
        QCOMPARE(canonicalTaskStatus(QStringLiteral("canceled")), QStringLiteral("canceled"));
        QCOMPARE(canonicalTaskStatus(QStringLiteral("Done")), QStringLiteral("done"));
        QCOMPARE(canonicalTaskStatus(QStringLiteral("x-waiting-for-review")), QStringLiteral("x-waiting-for-review"));
    }

    // A reconciliation list that differs from the model is drift, said with the agents named
    // (the first five, then "…"); a list equal to the model is not. (The fuzzer found the
    // sentence built from freed text once: this keeps it covered.)
    void driftIsSaidWithItsAgents()
    {
        SystemStore store;
        AgentsSnapshot first;
        for (int i = 1; i <= 7; ++i) {
            AgentRecord r;
            r.id = QStringLiteral("agent-%1").arg(i);
            r.name = QStringLiteral("worker %1").arg(i);
            first.data.agents.push_back(r);
        }
        first.timeMs = 1000;
        store.apply(ModelInput(first));
        AgentsSnapshot same = first;
        same.reconcile = true;
        same.timeMs = 100000;
        store.apply(ModelInput(same));
        QCOMPARE(store.observation().driftCount(), qint64(0));
        AgentsSnapshot later;
        later.data.agents.push_back(first.data.agents.front());
        later.reconcile = true;
        later.timeMs = 200000;
        store.apply(ModelInput(later));
        QCOMPARE(store.observation().driftCount(), qint64(1));
        const QString detail = store.observation().lastDrift().detail;
        QVERIFY2(detail.contains(QLatin1String("no longer lists 6 agent(s) the model showed as present (worker 2, worker 3, "
                                               "worker 4, worker 5, worker 6, ")),
                 qPrintable(detail));
        QVERIFY(detail.contains(QChar(0x2026)));
        QVERIFY(!store.observation().complete());
        QVERIFY(store.agent(QStringLiteral("agent-7"))->unregistered); // and the model follows the server
    }

    // Observer mode's table (map/MethodTable.h): reads and the caller's own connection pass;
    // every method that changes the system, and every unknown one, does not.
    void methodEffects()
    {
        for (const char *m : {"map/agents/list", "map/scopes/members", "map/replay", "mail/list", "mail/turns/list",
                              "trajectory/content", "workspace/read", "map/agents.list"})
            QCOMPARE(int(methodEffect(q(m))), int(MethodEffect::Reads));
        for (const char *m : {"map/connect", "map/subscribe", "map/unsubscribe", "map/resume", "map/subscribe.ack"})
            QCOMPARE(int(methodEffect(q(m))), int(MethodEffect::OwnConnection));
        for (const char *m : {"map/send", "map/inject", "map/agents/stop", "map/agents/resume", "map/agents/update",
                              "map/scopes/create", "mail/turn", "mail/join", "trajectory/checkpoint", "cred/get",
                              "map/session/close", "map/federation/route", "x-vendor/anything", ""})
            QCOMPARE(int(methodEffect(q(m))), int(MethodEffect::Changes));
        QCOMPARE(int(methodEffect(QStringLiteral("mail/summary"))), int(MethodEffect::Reads));
        QCOMPARE(int(methodEffect(QStringLiteral("mail/summary"), Json{{"regenerate", true}})), int(MethodEffect::Changes));
    }

    // Every method the SDK knows is decided in map/MethodTable.cpp: read, own connection, or on
    // the deny-list. A method a new SDK adds fails here until it is placed (observer mode would
    // refuse it meanwhile: unknown counts as a change). Remove a method from the table and
    // this fails too.
    void everySdkMethodIsClassified()
    {
        QStringList registry;
        QString error;
        const QStringList names = sdkMethodNames(&registry, &error);
        QVERIFY2(error.isEmpty(), qPrintable(error));
        // 0.1.15: 81 names in all, 63 in the registry and constants; fewer means the walk broke.
        QVERIFY2(names.size() >= 75, qPrintable(names.join(u',')));
        QVERIFY2(registry.size() >= 55, qPrintable(registry.join(u',')));
        for (const QString &m : registry) // the namespaces cover the registry
            QVERIFY2(names.contains(m), qPrintable(QStringLiteral("%1: a method outside the namespaces walked").arg(m)));
        for (const char *m : {"map/federation/list", "map/federation/buffer/stats", "map/federation/buffer/flush",
                              "map/agents/update/metadata", "map/send/scope", "mail/turn", "cred/get"})
            QVERIFY2(names.contains(q(m)), m); // MAPServer's handlers, not only the registry
        QStringList unclassified;
        for (const QString &m : names)
            if (!methodIsClassified(m))
                unclassified << m;
        QVERIFY2(unclassified.isEmpty(), qPrintable(QStringLiteral("not in map/MethodTable.cpp: ") + unclassified.join(u',')));
        QVERIFY(!methodIsClassified(QStringLiteral("x-vendor/anything")));
        QCOMPARE(int(methodEffect(QStringLiteral("x-vendor/anything"))), int(MethodEffect::Changes));
        // Spot checks of the decisions.
        QCOMPARE(int(methodEffect(QStringLiteral("map/send"))), int(MethodEffect::Changes));
        QCOMPARE(int(methodEffect(QStringLiteral("map/agents/list"))), int(MethodEffect::Reads));
        QCOMPARE(int(methodEffect(QStringLiteral("map/federation/list"))), int(MethodEffect::Reads));
        QCOMPARE(int(methodEffect(QStringLiteral("map/federation/buffer/stats"))), int(MethodEffect::Reads));
        QCOMPARE(int(methodEffect(QStringLiteral("map/federation/route"))), int(MethodEffect::Changes));
        QCOMPARE(int(methodEffect(QStringLiteral("mail/turn"))), int(MethodEffect::Changes));
        QCOMPARE(int(methodEffect(QStringLiteral("map/auth/refresh"))), int(MethodEffect::OwnConnection));
        QCOMPARE(int(methodEffect(QStringLiteral("map/subscriptions/pause"))), int(MethodEffect::OwnConnection));
    }

    // Method names: the canonical and the dotted spelling read as one; map/subscribe.ack is its own.
    void methodSpellings()
    {
        QCOMPARE(canonicalMethodName(QStringLiteral("map/agents.list")), QStringLiteral("map/agents/list"));
        QCOMPARE(canonicalMethodName(QStringLiteral("map/agents/list")), QStringLiteral("map/agents/list"));
        QCOMPARE(canonicalMethodName(QStringLiteral("map/subscribe.ack")), QStringLiteral("map/subscribe.ack"));
        QCOMPARE(alternativeMethodName(QStringLiteral("map/agents/list")), QStringLiteral("map/agents.list"));
        QCOMPARE(alternativeMethodName(QStringLiteral("map/scopes/members")), QStringLiteral("map/scopes.members"));
        QVERIFY(alternativeMethodName(QStringLiteral("map/connect")).isEmpty());
    }
};

QTEST_GUILESS_MAIN(SdkEventsTest)
#include "tst_sdk_events.moc"
