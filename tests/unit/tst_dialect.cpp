// MAP dialect normalisation ([M] official MAPServer, [T] SDK TestServer, [S] schema) on real
// recorded frames, and whole-capture replays compared with the server's own snapshot answers.
#include "TestSupport.h"
#include "StateSpellings.h"
#include "TraceReplayer.h"

#include "pipeline/ProtocolPipeline.h"
#include "map/AgentStates.h"
#include "map/Dialect.h"
#include "model/SystemStore.h"
#include "protocol/SimdJsonParser.h"
#include "trace/Trace.h"

#include <QJsonArray>
#include <QTemporaryDir>

#include <algorithm>

using namespace mapi;
using mapi_test::Answer;
using mapi_test::CaptureRecord;
using mapi_test::answers;
using mapi_test::jsonObject;
using mapi_test::dump;
using mapi_test::q;
using mapi_test::s;

Q_DECLARE_METATYPE(mapi::ErrorClass)

namespace {

// Walks nested objects: dig(o, {"params", "event", "data"}).
QJsonObject dig(QJsonObject o, std::initializer_list<const char *> keys)
{
    for (const char *k : keys)
        o = o.value(QLatin1String(k)).toObject();
    return o;
}

Json parsed(const QByteArray &frame)
{
    return Json::parse(frame.toStdString());
}

// The first received map/event frame of `file` whose inner event satisfies `pred`.
QByteArray findEventFrame(const QString &file, const std::function<bool(const QJsonObject &event)> &pred)
{
    for (const CaptureRecord &r : mapi_test::readCapture(mapi_test::dataPath(file))) {
        if (r.dir != QLatin1String("recv"))
            continue;
        const QJsonObject o = jsonObject(r.raw);
        if (o.value(QStringLiteral("method")).toString() != QLatin1String("map/event"))
            continue;
        if (pred(o.value(QStringLiteral("params")).toObject().value(QStringLiteral("event")).toObject()))
            return r.raw;
    }
    return {};
}

} // namespace

class TestDialect : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase() { mapi_test::installWarningGuard(); }
    void init() { mapi_test::armWarningGuard(); }
    void cleanup() { MAPI_NO_WARNINGS(); }
    void cleanupTestCase() { MAPI_NO_WARNINGS(); }

    void canonicalEventType_data();
    void canonicalEventType();
    void officialSpawnedAgentRegistration();
    void officialStateChangeAndMessage();
    void testServerStateChangeShape();
    void testServerRegistrationAndConnect();
    void eventWithoutSource();
    void notificationWithoutEventIsRejected();
    void scopeParentIdAndParent();
    void agentParentAndMetadataParentId();
    void agentListResults();
    void scopeListResults();
    void membersResults_data();
    void membersResults();
    void replayResults();
    void unknownEventTypesAreKept();
    void customStatesAreKeptVerbatim();
    void everyStateSpellingHasOneClass();
    void storeHealthFollowsTheStateClass();
    void classifyError_data();
    void classifyError();
};

void TestDialect::canonicalEventType_data()
{
    QTest::addColumn<QString>("raw");
    QTest::addColumn<QString>("canonical");
    QTest::addColumn<bool>("known");

    QTest::newRow("[T] underscores") << "agent_state_changed" << "agent.state.changed" << true;
    QTest::newRow("[T] member alias") << "scope_member_joined" << "scope.agent.joined" << true;
    QTest::newRow("[T] member left alias") << "scope_member_left" << "scope.agent.left" << true;
    QTest::newRow("[T] participant alias") << "participant_connected" << "session.connected" << true;
    QTest::newRow("[T] participant disconnected") << "participant_disconnected" << "session.disconnected" << true;
    QTest::newRow("upper case") << "AGENT.REGISTERED" << "agent.registered" << true;
    QTest::newRow("upper case underscores") << "AGENT_UNREGISTERED" << "agent.unregistered" << true;
    QTest::newRow("[M] dotted is unchanged") << "scope.agent.joined" << "scope.agent.joined" << true;
    QTest::newRow("README alias") << "session.started" << "session.connected" << true;
    QTest::newRow("doc 03 alias") << "agent.state" << "agent.state.changed" << true;
    QTest::newRow("surrounding blanks") << "  message_sent " << "message.sent" << true;
    QTest::newRow("unknown stays readable") << "Trajectory_Content_Available" << "trajectory.content.available" << false;
}

void TestDialect::canonicalEventType()
{
    QFETCH(QString, raw);
    QFETCH(QString, canonical);
    QFETCH(bool, known);
    QCOMPARE(mapi::canonicalEventType(raw), canonical);
    QCOMPARE(eventKindFor(canonical) != EventKind::Other, known);
}

void TestDialect::officialSpawnedAgentRegistration()
{
    const QByteArray frame = findEventFrame(QStringLiteral("scenario-basic.ndjson"), [](const QJsonObject &e) {
        return e.value(QStringLiteral("type")).toString() == QLatin1String("agent.registered")
            && e.value(QStringLiteral("data")).toObject().value(QStringLiteral("agent")).toObject()
                   .value(QStringLiteral("metadata")).toObject().contains(QStringLiteral("parentId"));
    });
    QVERIFY2(!frame.isEmpty(), "scenario-basic has a spawned agent");
    const QJsonObject params = jsonObject(frame).value(QStringLiteral("params")).toObject();
    const QJsonObject agent = params.value(QStringLiteral("event")).toObject().value(QStringLiteral("data")).toObject()
                                  .value(QStringLiteral("agent")).toObject();

    QString error;
    const auto e = eventFromNotification(parsed(frame).at("params"), error);
    QVERIFY2(e, qPrintable(error));
    QCOMPARE(e->kind, EventKind::AgentRegistered);
    QCOMPARE(e->type, QStringLiteral("agent.registered"));
    QCOMPARE(e->eventId, params.value(QStringLiteral("eventId")).toString());
    QCOMPARE(e->subscriptionId, params.value(QStringLiteral("subscriptionId")).toString());
    QCOMPARE(e->sequenceNumber, params.value(QStringLiteral("sequenceNumber")).toInteger());
    QCOMPARE(e->timestampMs, params.value(QStringLiteral("timestamp")).toInteger());
    QCOMPARE(e->agentId, agent.value(QStringLiteral("id")).toString());
    QVERIFY(e->agent);
    QCOMPARE(e->agent->id, e->agentId);
    QCOMPARE(e->agent->name.value_or(QString()), agent.value(QStringLiteral("name")).toString());
    QCOMPARE(e->agent->role.value_or(QString()), QStringLiteral("subagent"));
    QCOMPARE(e->agent->state.value_or(QString()), agent.value(QStringLiteral("state")).toString());
    QCOMPARE(e->agent->sessionId.value_or(QString()), agent.value(QStringLiteral("sessionId")).toString());
    QCOMPARE(e->agent->parentId.value_or(QString()),
             agent.value(QStringLiteral("metadata")).toObject().value(QStringLiteral("parentId")).toString());
    QCOMPARE(e->agent->registeredAtMs, agent.value(QStringLiteral("registeredAt")).toInteger());
    QVERIFY(!e->agent->parentId->isEmpty());
    // [M] source is an object {agentId, sessionId}
    QCOMPARE(e->sourceAgentId, e->agentId);
    QCOMPARE(e->sourceSessionId, agent.value(QStringLiteral("sessionId")).toString());
}

void TestDialect::officialStateChangeAndMessage()
{
    const QByteArray failed = findEventFrame(QStringLiteral("scenario-basic.ndjson"), [](const QJsonObject &e) {
        return e.value(QStringLiteral("type")).toString() == QLatin1String("agent.state.changed")
            && e.value(QStringLiteral("data")).toObject().value(QStringLiteral("agent")).toObject()
                   .value(QStringLiteral("state")).toString() == QLatin1String("custom:failed");
    });
    QVERIFY(!failed.isEmpty());
    QString error;
    auto e = eventFromNotification(parsed(failed).at("params"), error);
    QVERIFY2(e, qPrintable(error));
    QCOMPARE(e->kind, EventKind::AgentStateChanged);
    QCOMPARE(e->agent->state.value_or(QString()), QStringLiteral("custom:failed"));
    const QJsonObject data = dig(jsonObject(failed), {"params", "event", "data"});
    QCOMPARE(e->previousState, data.value(QStringLiteral("previousState")).toString());
    QVERIFY(!e->previousState.isEmpty());

    const QByteArray sent = findEventFrame(QStringLiteral("scenario-basic.ndjson"), [](const QJsonObject &e) {
        return e.value(QStringLiteral("type")).toString() == QLatin1String("message.sent");
    });
    QVERIFY(!sent.isEmpty());
    e = eventFromNotification(parsed(sent).at("params"), error);
    QVERIFY2(e, qPrintable(error));
    QCOMPARE(e->kind, EventKind::MessageSent);
    const QJsonObject message = dig(jsonObject(sent), {"params", "event", "data", "message"});
    QVERIFY(e->message);
    QCOMPARE(e->message->id, message.value(QStringLiteral("id")).toString());
    QCOMPARE(e->messageId, e->message->id);
    QCOMPARE(e->message->from, message.value(QStringLiteral("from")).toString()); // [M]: a session id, kept as sent
    QCOMPARE(e->message->timestampMs, message.value(QStringLiteral("timestamp")).toInteger());
    const QJsonObject payload = message.value(QStringLiteral("payload")).toObject();
    QVERIFY(!payload.isEmpty());
    QCOMPARE(Json::parse(e->message->payloadText.toStdString()), Json::parse(QJsonDocument(payload).toJson().toStdString()));
    QCOMPARE(e->message->payloadType, payload.value(QStringLiteral("type")).toString());
    QVERIFY(e->message->convention); // a sent message's payload is read while decoding
}

void TestDialect::testServerStateChangeShape()
{
    const QByteArray frame = findEventFrame(QStringLiteral("scenario-testserver.ndjson"), [](const QJsonObject &e) {
        return e.value(QStringLiteral("type")).toString() == QLatin1String("agent_state_changed");
    });
    QVERIFY2(!frame.isEmpty(), "scenario-testserver has agent_state_changed");
    const QJsonObject params = jsonObject(frame).value(QStringLiteral("params")).toObject();
    const QJsonObject event = params.value(QStringLiteral("event")).toObject();
    const QJsonObject data = event.value(QStringLiteral("data")).toObject();
    QVERIFY(params.value(QStringLiteral("eventId")).toString() != event.value(QStringLiteral("id")).toString());
    QVERIFY(event.value(QStringLiteral("source")).isString());

    QString error;
    const auto e = eventFromNotification(parsed(frame).at("params"), error);
    QVERIFY2(e, qPrintable(error));
    QCOMPARE(e->rawType, QStringLiteral("agent_state_changed"));
    QCOMPARE(e->type, QStringLiteral("agent.state.changed"));
    QCOMPARE(e->kind, EventKind::AgentStateChanged);
    QCOMPARE(e->eventId, params.value(QStringLiteral("eventId")).toString()); // the dedupe key: params.eventId
    QCOMPARE(e->sourceAgentId, event.value(QStringLiteral("source")).toString());
    QVERIFY(e->sourceSessionId.isEmpty());
    QCOMPARE(e->agentId, data.value(QStringLiteral("agentId")).toString());
    QVERIFY(e->agent);
    QCOMPARE(e->agent->state.value_or(QString()), data.value(QStringLiteral("newState")).toString());
    QCOMPARE(e->previousState, data.value(QStringLiteral("previousState")).toString());

    // Without params.eventId the inner event.id is the key.
    Json p = parsed(frame).at("params");
    p.erase("eventId");
    const auto fallback = eventFromNotification(p, error);
    QVERIFY(fallback);
    QCOMPARE(fallback->eventId, event.value(QStringLiteral("id")).toString());
}

void TestDialect::testServerRegistrationAndConnect()
{
    const QByteArray reg = findEventFrame(QStringLiteral("scenario-testserver.ndjson"), [](const QJsonObject &e) {
        return e.value(QStringLiteral("type")).toString() == QLatin1String("agent_registered");
    });
    QVERIFY(!reg.isEmpty());
    const QJsonObject data = dig(jsonObject(reg), {"params", "event", "data"});
    QString error;
    auto e = eventFromNotification(parsed(reg).at("params"), error);
    QVERIFY2(e, qPrintable(error));
    QCOMPARE(e->kind, EventKind::AgentRegistered);
    QCOMPARE(e->agentId, data.value(QStringLiteral("agentId")).toString());
    QCOMPARE(e->agent->name.value_or(QString()), data.value(QStringLiteral("name")).toString());
    QCOMPARE(e->agent->sessionId.value_or(QString()), data.value(QStringLiteral("ownerId")).toString()); // [T] ownerId

    const QByteArray connected = findEventFrame(QStringLiteral("scenario-testserver.ndjson"), [](const QJsonObject &e) {
        return e.value(QStringLiteral("type")).toString() == QLatin1String("participant_connected");
    });
    QVERIFY(!connected.isEmpty());
    const QJsonObject cdata = dig(jsonObject(connected), {"params", "event", "data"});
    e = eventFromNotification(parsed(connected).at("params"), error);
    QVERIFY(e);
    QCOMPARE(e->kind, EventKind::SessionConnected);
    QCOMPARE(e->sessionId, cdata.value(QStringLiteral("participantId")).toString());
    QCOMPARE(e->sessionRole, cdata.value(QStringLiteral("participantType")).toString());

    // [T] puts causedBy at params level.
    const Json caused = {{"subscriptionId", "sub-1"},
                         {"eventId", "01ULID"},
                         {"causedBy", {"01CAUSE"}},
                         {"event", {{"id", "evt-1"}, {"type", "agent_unregistered"}, {"source", "agent-9"},
                                    {"data", {{"agentId", "agent-9"}, {"reason", "owner_disconnected"}}}}}};
    e = eventFromNotification(caused, error);
    QVERIFY(e);
    QCOMPARE(e->kind, EventKind::AgentUnregistered);
    QCOMPARE(e->causedBy, QStringList{QStringLiteral("01CAUSE")});
    QCOMPARE(e->reason, QStringLiteral("owner_disconnected"));
    QCOMPARE(e->agentId, QStringLiteral("agent-9"));
}

void TestDialect::eventWithoutSource()
{
    const QByteArray queued = findEventFrame(QStringLiteral("scenario-basic.ndjson"), [](const QJsonObject &e) {
        return e.value(QStringLiteral("type")).toString() == QLatin1String("message.queued");
    });
    QVERIFY(!queued.isEmpty());
    QVERIFY(!dig(jsonObject(queued), {"params", "event"}).contains(QStringLiteral("source")));
    const QJsonObject data = dig(jsonObject(queued), {"params", "event", "data"});
    QString error;
    const auto e = eventFromNotification(parsed(queued).at("params"), error);
    QVERIFY2(e, qPrintable(error));
    QCOMPARE(e->kind, EventKind::MessageQueued);
    QVERIFY(e->sourceAgentId.isEmpty());
    QVERIFY(e->sourceSessionId.isEmpty());
    QCOMPARE(e->messageId, data.value(QStringLiteral("messageId")).toString());
    QCOMPARE(e->agentId, data.value(QStringLiteral("agentId")).toString());

    // Subject from data when source is absent (scope membership).
    const Json params = {{"event", {{"id", "e1"}, {"type", "scope.agent.joined"}, {"data", {{"scopeId", "s1"}, {"agentId", "a1"}}}}}};
    const auto joined = eventFromNotification(params, error);
    QVERIFY(joined);
    QCOMPARE(joined->scopeId, QStringLiteral("s1"));
    QCOMPARE(joined->agentId, QStringLiteral("a1"));
    QCOMPARE(joined->sequenceNumber, qint64(-1));
}

void TestDialect::notificationWithoutEventIsRejected()
{
    QString error;
    QVERIFY(!eventFromNotification(Json{{"subscriptionId", "s"}}, error));
    QVERIFY(!error.isEmpty());
    error.clear();
    QVERIFY(!eventFromNotification(Json{{"event", "agent.registered"}}, error));
    QVERIFY(!error.isEmpty());
    error.clear();
    QVERIFY(!eventFromNotification(Json{{"event", {{"id", "x"}, {"data", Json::object()}}}}, error)); // no type
    QVERIFY(!error.isEmpty());
}

void TestDialect::scopeParentIdAndParent()
{
    // [M] scope.created with parentId, from a real frame.
    const QByteArray frame = findEventFrame(QStringLiteral("scenario-basic.ndjson"), [](const QJsonObject &e) {
        return e.value(QStringLiteral("type")).toString() == QLatin1String("scope.created")
            && e.value(QStringLiteral("data")).toObject().value(QStringLiteral("scope")).toObject().contains(QStringLiteral("parentId"));
    });
    QVERIFY(!frame.isEmpty());
    const QJsonObject scope = dig(jsonObject(frame), {"params", "event", "data", "scope"});
    QString error;
    const auto e = eventFromNotification(parsed(frame).at("params"), error);
    QVERIFY2(e, qPrintable(error));
    QCOMPARE(e->kind, EventKind::ScopeCreated);
    QCOMPARE(e->scopeId, scope.value(QStringLiteral("id")).toString());
    QCOMPARE(e->scope->name.value_or(QString()), scope.value(QStringLiteral("name")).toString());
    QCOMPARE(e->scope->parentId.value_or(QString()), scope.value(QStringLiteral("parentId")).toString());

    // [S] parent, as a string and as a reference object; [M] parentId wins when both are present.
    QCOMPARE(scopeFromJson(Json{{"id", "s2"}, {"parent", "s1"}}).parentId.value_or(QString()), QStringLiteral("s1"));
    QCOMPARE(scopeFromJson(Json{{"id", "s2"}, {"parent", {{"id", "s1"}}}}).parentId.value_or(QString()), QStringLiteral("s1"));
    QCOMPARE(scopeFromJson(Json{{"id", "s2"}, {"parentId", "pm"}, {"parent", "ps"}}).parentId.value_or(QString()),
             QStringLiteral("pm"));
    QVERIFY(!scopeFromJson(Json{{"id", "root"}}).parentId);
    QVERIFY(!scopeFromJson(Json{{"id", "root"}, {"parentId", nullptr}}).parentId);
    QCOMPARE(scopeFromJson(Json{{"scopeId", "t1"}, {"name", "project"}}).id, QStringLiteral("t1")); // [T]
}

void TestDialect::agentParentAndMetadataParentId()
{
    QCOMPARE(agentFromJson(Json{{"id", "a"}, {"parent", "p1"}, {"metadata", {{"parentId", "p2"}}}}).parentId.value_or(QString()),
             QStringLiteral("p1"));
    QCOMPARE(agentFromJson(Json{{"id", "a"}, {"metadata", {{"parentId", "p2"}}}}).parentId.value_or(QString()),
             QStringLiteral("p2"));
    QCOMPARE(agentFromJson(Json{{"id", "a"}, {"parentId", "p3"}}).parentId.value_or(QString()), QStringLiteral("p3"));
    QCOMPARE(agentFromJson(Json{{"id", "a"}, {"parent", {{"agentId", "p4"}}}}).parentId.value_or(QString()),
             QStringLiteral("p4"));
    QVERIFY(!agentFromJson(Json{{"id", "a"}, {"metadata", Json::object()}}).parentId);

    const AgentRecord t = agentFromJson(Json{{"agentId", "agent-3"}, {"ownerId", "participant-4"},
                                             {"scopes", {"scope-1", {{"id", "scope-2"}}}},
                                             {"lifecycle", {{"createdAt", 1234}}}});
    QCOMPARE(t.id, QStringLiteral("agent-3"));
    QCOMPARE(t.sessionId.value_or(QString()), QStringLiteral("participant-4"));
    QCOMPARE(t.scopes.value_or(QStringList()), (QStringList{QStringLiteral("scope-1"), QStringLiteral("scope-2")}));
    QCOMPARE(t.registeredAtMs, qint64(1234));
    QVERIFY(!t.name);  // not said: stays unset, so it cannot overwrite what we know
    QVERIFY(!t.state);
}

void TestDialect::agentListResults()
{
    for (const QString &file : {QStringLiteral("scenario-basic.ndjson"), QStringLiteral("scenario-testserver.ndjson")}) {
        const auto all = answers(mapi_test::readCapture(mapi_test::dataPath(file)));
        const auto it = std::find_if(all.cbegin(), all.cend(), [](const Answer &a) {
            return a.method == QLatin1String("map/agents/list")
                && !a.result.toObject().value(QStringLiteral("agents")).toArray().isEmpty();
        });
        QVERIFY2(it != all.cend(), qPrintable(file));
        const QJsonArray expected = it->result.toObject().value(QStringLiteral("agents")).toArray();
        const SnapshotAgents got =
            agentsFromListResult(Json::parse(QJsonDocument(it->result.toObject()).toJson().toStdString()));
        QCOMPARE(int(got.agents.size()), int(expected.size()));
        for (int i = 0; i < expected.size(); ++i) {
            const QJsonObject a = expected.at(i).toObject();
            const AgentRecord &r = got.agents[size_t(i)];
            QCOMPARE(r.id, a.value(QStringLiteral("id")).toString());
            QCOMPARE(r.name.value_or(QString()), a.value(QStringLiteral("name")).toString());
            QCOMPARE(r.state.value_or(QString()), a.value(QStringLiteral("state")).toString());
            QCOMPARE(r.role.value_or(QString()), a.value(QStringLiteral("role")).toString());
            const QString parent = a.contains(QStringLiteral("parent"))
                ? a.value(QStringLiteral("parent")).toString()
                : a.value(QStringLiteral("metadata")).toObject().value(QStringLiteral("parentId")).toString();
            QCOMPARE(r.parentId.value_or(QString()), parent);
            if (a.contains(QStringLiteral("scopes"))) { // [T] lists scopes; [M] does not
                QStringList scopes;
                for (const QJsonValue &v : a.value(QStringLiteral("scopes")).toArray())
                    scopes << v.toString();
                QCOMPARE(r.scopes.value_or(QStringList()), scopes);
            } else {
                QVERIFY(!r.scopes);
            }
        }
    }
    // A bare array, and entries without an id are skipped.
    const SnapshotAgents bare = agentsFromListResult(Json::parse(R"([{"id":"a"},{"name":"no id"},{"agentId":"b"}])"));
    QCOMPARE(int(bare.agents.size()), 2);
    QCOMPARE(bare.agents[1].id, QStringLiteral("b"));
    QVERIFY(agentsFromListResult(Json::parse(R"({"success":true})")).agents.empty());
}

void TestDialect::scopeListResults()
{
    for (const QString &file : {QStringLiteral("scenario-basic.ndjson"), QStringLiteral("scenario-testserver.ndjson")}) {
        const auto all = answers(mapi_test::readCapture(mapi_test::dataPath(file)));
        const auto it = std::find_if(all.cbegin(), all.cend(), [](const Answer &a) {
            return a.method == QLatin1String("map/scopes/list")
                && !a.result.toObject().value(QStringLiteral("scopes")).toArray().isEmpty();
        });
        QVERIFY2(it != all.cend(), qPrintable(file));
        const QJsonArray expected = it->result.toObject().value(QStringLiteral("scopes")).toArray();
        const SnapshotScopes got =
            scopesFromListResult(Json::parse(QJsonDocument(it->result.toObject()).toJson().toStdString()));
        QCOMPARE(int(got.scopes.size()), int(expected.size()));
        for (int i = 0; i < expected.size(); ++i) {
            const QJsonObject sc = expected.at(i).toObject();
            QCOMPARE(got.scopes[size_t(i)].id, sc.value(QStringLiteral("id")).toString());
            QCOMPARE(got.scopes[size_t(i)].name.value_or(QString()), sc.value(QStringLiteral("name")).toString());
            QCOMPARE(got.scopes[size_t(i)].parentId.value_or(QString()), sc.value(QStringLiteral("parentId")).toString());
        }
    }
}

void TestDialect::membersResults_data()
{
    QTest::addColumn<QByteArray>("result");
    QTest::addColumn<QStringList>("members");
    const QStringList ab{QStringLiteral("a"), QStringLiteral("b")};
    QTest::newRow("[M] strings") << QByteArray(R"({"members":["a","b"]})") << ab;
    QTest::newRow("objects with agentId") << QByteArray(R"({"members":[{"agentId":"a"},{"agentId":"b","role":"x"}]})") << ab;
    QTest::newRow("objects with id") << QByteArray(R"({"members":[{"id":"a"},{"id":"b"}]})") << ab;
    QTest::newRow("mixed, junk skipped") << QByteArray(R"({"members":["a",42,{"name":"x"},{"id":"b"}]})") << ab;
    QTest::newRow("bare array") << QByteArray(R"(["a","b"])") << ab;
    QTest::newRow("agents key") << QByteArray(R"({"agents":[{"id":"a"},{"id":"b"}]})") << ab;
    QTest::newRow("empty") << QByteArray(R"({"members":[]})") << QStringList();
    QTest::newRow("nothing usable") << QByteArray(R"({"success":true})") << QStringList();
}

void TestDialect::membersResults()
{
    QFETCH(QByteArray, result);
    QFETCH(QStringList, members);
    QCOMPARE(membersFromResult(parsed(result)), members);
}

void TestDialect::replayResults()
{
    // [M]: a bare array of inner events (scenario-basic request 7).
    const auto basic = answers(mapi_test::readCapture(mapi_test::dataPath(QStringLiteral("scenario-basic.ndjson"))));
    const auto m = std::find_if(basic.cbegin(), basic.cend(), [](const Answer &a) { return a.method == QLatin1String("map/replay"); });
    QVERIFY(m != basic.cend());
    QVERIFY(m->result.isArray());
    const QJsonArray mEvents = m->result.toArray();
    QVERIFY(!mEvents.isEmpty());
    bool hasMore = true;
    auto events = eventsFromReplayResult(Json::parse(QJsonDocument(mEvents).toJson().toStdString()), hasMore);
    QVERIFY(!hasMore);
    QCOMPARE(int(events.size()), int(mEvents.size()));
    for (int i = 0; i < mEvents.size(); ++i) {
        const QJsonObject inner = mEvents.at(i).toObject();
        QCOMPARE(events[size_t(i)].eventId, inner.value(QStringLiteral("id")).toString());
        QCOMPARE(events[size_t(i)].type, mapi::canonicalEventType(inner.value(QStringLiteral("type")).toString()));
        QCOMPARE(events[size_t(i)].sequenceNumber, qint64(-1)); // replayed events carry none
    }

    // [T]: {events:[{eventId,timestamp,event}],hasMore} (scenario-testserver request 7).
    const auto ts = answers(mapi_test::readCapture(mapi_test::dataPath(QStringLiteral("scenario-testserver.ndjson"))));
    const auto t = std::find_if(ts.cbegin(), ts.cend(), [](const Answer &a) { return a.method == QLatin1String("map/replay"); });
    QVERIFY(t != ts.cend());
    const QJsonObject tResult = t->result.toObject();
    const QJsonArray tEvents = tResult.value(QStringLiteral("events")).toArray();
    QVERIFY(!tEvents.isEmpty());
    events = eventsFromReplayResult(Json::parse(QJsonDocument(tResult).toJson().toStdString()), hasMore);
    QCOMPARE(hasMore, tResult.value(QStringLiteral("hasMore")).toBool());
    QCOMPARE(int(events.size()), int(tEvents.size()));
    for (int i = 0; i < tEvents.size(); ++i) {
        const QJsonObject item = tEvents.at(i).toObject();
        QCOMPARE(events[size_t(i)].eventId, item.value(QStringLiteral("eventId")).toString()); // outer ULID
        QVERIFY(events[size_t(i)].eventId != item.value(QStringLiteral("event")).toObject().value(QStringLiteral("id")).toString());
    }

    // hasMore:true is reported; items that are not events are skipped.
    const Json paged = {{"events",
                         {{{"eventId", "E1"}, {"timestamp", 5}, {"event", {{"id", "x1"}, {"type", "agent_registered"}, {"data", {{"agentId", "a"}}}}}},
                          {{"eventId", "E2"}, {"event", "not an object"}},
                          {{"eventId", "E3"}, {"timestamp", 6}, {"event", {{"id", "x3"}, {"type", "scope_created"}, {"data", {{"scopeId", "s"}}}}}}}},
                        {"hasMore", true}};
    events = eventsFromReplayResult(paged, hasMore);
    QVERIFY(hasMore);
    QCOMPARE(int(events.size()), 2);
    QCOMPARE(events[0].eventId, QStringLiteral("E1"));
    QCOMPARE(events[0].timestampMs, qint64(5));
    QCOMPARE(events[1].kind, EventKind::ScopeCreated);
    QCOMPARE(events[1].scopeId, QStringLiteral("s"));
}

void TestDialect::unknownEventTypesAreKept()
{
    const Json data = {{"checkpointId", "cp-1"}, {"nested", {{"k", {1, 2, 3}}}}, {"agentId", "a7"}};
    const Json params = {{"eventId", "u1"}, {"event", {{"id", "u1"}, {"type", "trajectory.content.available"}, {"data", data}}}};
    QString error;
    const auto e = eventFromNotification(params, error);
    QVERIFY2(e, qPrintable(error));
    QCOMPARE(e->kind, EventKind::Other);
    QCOMPARE(e->rawType, QStringLiteral("trajectory.content.available"));
    QCOMPARE(e->data, data);
    QCOMPARE(e->agentId, QStringLiteral("a7"));

    // And the store counts and keeps it instead of dropping it.
    SystemStore store;
    mapi_test::Wire wire(store);
    wire.event(QStringLiteral("system_error"), {{"message", "disk full"}});
    QCOMPARE(store.counters().unknownEvents, qint64(1));
    QCOMPARE(int(store.events().size()), 1);
    QCOMPARE(store.events().type(store.events().front()), QStringLiteral("system.error"));
    QVERIFY(store.events().keptFrame(0).contains("disk full"));
}

void TestDialect::customStatesAreKeptVerbatim()
{
    QString error;
    const Json mParams = {{"event", {{"id", "e1"}, {"type", "agent.state.changed"},
                                     {"data", {{"agent", {{"id", "a1"}, {"state", "custom:failed"}}}, {"previousState", "busy"}}}}}};
    const auto m = eventFromNotification(mParams, error);
    QVERIFY(m);
    QCOMPARE(m->agent->state.value_or(QString()), QStringLiteral("custom:failed"));
    const Json tParams = {{"event", {{"id", "e2"}, {"type", "agent_state_changed"},
                                     {"data", {{"agentId", "a2"}, {"previousState", "busy"}, {"newState", "x-broken"}}}}}};
    const auto t = eventFromNotification(tParams, error);
    QVERIFY(t);
    QCOMPARE(t->agent->state.value_or(QString()), QStringLiteral("x-broken"));

    SystemStore store;
    mapi_test::Wire wire(store);
    wire.registerAgent(QStringLiteral("a1"), QStringLiteral("one"));
    wire.registerAgent(QStringLiteral("a2"), QStringLiteral("two"));
    store.apply(ModelInput(EventInput{*m, wire.now()}));
    store.apply(ModelInput(EventInput{*t, wire.now()}));
    QCOMPARE(store.agent(QStringLiteral("a1"))->state, QStringLiteral("custom:failed"));
    QCOMPARE(store.agent(QStringLiteral("a2"))->state, QStringLiteral("x-broken"));
    QCOMPARE(classifyState(store.agent(QStringLiteral("a1"))->state), StateClass::Failed);
    QCOMPARE(classifyState(store.agent(QStringLiteral("a2"))->state), StateClass::Other); // x-broken: no rule knows it
    store.advanceTime(wire.now());
    QCOMPARE(store.agent(QStringLiteral("a1"))->health, Health::Failed);
}

// One classifier for every spelling of a state (tests/support/StateSpellings.h).
void TestDialect::everyStateSpellingHasOneClass()
{
    for (const auto &spelling : mapi::test::stateSpellings())
        QVERIFY2(classifyState(QString::fromUtf8(spelling.state)) == spelling.expected,
                 qPrintable(QStringLiteral("\"%1\" reads as %2, expected %3")
                                .arg(QString::fromUtf8(spelling.state), stateClassName(classifyState(QString::fromUtf8(spelling.state))),
                                     stateClassName(spelling.expected))));
}

// The store's health rules read states through it.
void TestDialect::storeHealthFollowsTheStateClass()
{
    for (const auto &spelling : mapi::test::stateSpellings()) {
        SystemStore store;
        mapi_test::Wire wire(store);
        wire.registerAgent(QStringLiteral("a1"), QStringLiteral("one"), {}, Json::object(), QString::fromUtf8(spelling.state));
        store.advanceTime(wire.now());
        const Health health = store.agent(QStringLiteral("a1"))->health;
        const Health expected = spelling.expected == StateClass::Stopped     ? Health::Stopped
                                : spelling.expected == StateClass::Failed    ? Health::Failed
                                : spelling.expected == StateClass::Suspended ? Health::Suspended
                                                                             : Health::Healthy;
        QVERIFY2(health == expected, qPrintable(QStringLiteral("\"%1\": %2, expected %3")
                                                     .arg(QString::fromUtf8(spelling.state), healthName(health), healthName(expected))));
    }
}

void TestDialect::classifyError_data()
{
    QTest::addColumn<int>("code");
    QTest::addColumn<QString>("message");
    QTest::addColumn<ErrorClass>("expected");

    QTest::newRow("-32601") << -32601 << "Method not found: map/inject" << ErrorClass::MethodNotFound;
    QTest::newRow("-32602") << -32602 << "Invalid params" << ErrorClass::InvalidParams;
    QTest::newRow("-32603 agent not found") << -32603 << "Agent not found: x" << ErrorClass::AgentNotFound;
    QTest::newRow("-32603 scope not found") << -32603 << "Scope not found: no-such-scope" << ErrorClass::ScopeNotFound;
    QTest::newRow("-32603 subscription") << -32603 << "Subscription not found: undefined" << ErrorClass::SubscriptionNotFound;
    QTest::newRow("-32603 auth") << -32603 << "Authentication required" << ErrorClass::AuthRequired;
    QTest::newRow("-32603 transition") << -32603 << "Invalid state transition: stopped -> idle"
                                       << ErrorClass::InvalidStateTransition;
    QTest::newRow("-32603 invalid state") << -32603 << R"(Invalid agent state "bogus": must be a standard state)"
                                          << ErrorClass::InvalidStateTransition;
    QTest::newRow("-32603 rate") << -32603 << "Rate limit exceeded" << ErrorClass::RateLimited;
    QTest::newRow("-32603 other text") << -32603 << "Cannot destructure property 'agentId'" << ErrorClass::Other;
    QTest::newRow("-32603 prefix only at the start") << -32603 << "Error: Agent not found: x" << ErrorClass::Other;
    QTest::newRow("2001") << 2001 << "whatever" << ErrorClass::AgentNotFound;
    QTest::newRow("2002") << 2002 << "" << ErrorClass::ScopeNotFound;
    QTest::newRow("1000") << 1000 << "AUTH_REQUIRED" << ErrorClass::AuthRequired;
    QTest::newRow("-32001") << -32001 << "unauthorized" << ErrorClass::AuthRequired;
    QTest::newRow("3001") << 3001 << "" << ErrorClass::InvalidStateTransition;
    QTest::newRow("4001") << 4001 << "" << ErrorClass::RateLimited;
    QTest::newRow("text ignored for other codes") << 5000 << "Agent not found: x" << ErrorClass::Other;
}

void TestDialect::classifyError()
{
    QFETCH(int, code);
    QFETCH(QString, message);
    QFETCH(ErrorClass, expected);
    QCOMPARE(int(mapi::classifyError(code, message)), int(expected));
}

QTEST_GUILESS_MAIN(TestDialect)
#include "tst_dialect.moc"
