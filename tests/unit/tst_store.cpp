// SystemStore: idempotence, placeholders for dangling references, departures, snapshots,
// sender resolution, the task lifecycle from payload conventions, coalesced change signals and
// operator actions. Most inputs are real-shaped [M] frames pushed through ProtocolPipeline
// (mapi_test::Wire), the same path live traffic takes.
#include "TestSupport.h"
#include "common/VectorState.h"

#include <cmath>
#include "model/ItemJson.h"

#include "model/StateJson.h"
#include "model/SystemStore.h"
#include "model/CompactStorage.h"
#include "model/RowLogs.h"
#include "pipeline/ProtocolPipeline.h"
#include "protocol/SimdJsonParser.h"

#include <QDateTime>
#include <QSignalSpy>

using namespace mapi;
using mapi_test::s;
using mapi_test::Wire;

namespace {

// Seed 000 envelope, as agents put it into map/send payloads.
Json envelope(const char *type, const QString &from, const QString &to, const Json &payload)
{
    return {{"message_id", "m-" + s(from) + "-" + type}, {"type", type}, {"from", s(from)}, {"to", s(to)},
            {"priority", 5}, {"payload", payload}};
}

ActionUpdate actionStep(ActionUpdate::Step step, const QString &id, qint64 t, ActionKind kind = ActionKind::Stop,
                        const QString &agentId = {})
{
    ActionUpdate u;
    u.step = step;
    u.timeMs = t;
    u.action.id = id;
    u.action.kind = kind;
    u.action.agentId = agentId;
    return u;
}

QStringList taskStatuses(const SystemStore &store, const Task &task)
{
    QStringList out;
    for (const TaskTransition &t : store.taskHistory(task))
        out << t.status;
    if (out.size() != task.historySize)
        out << QStringLiteral("<historySize %1>").arg(task.historySize);
    return out;
}

ChangeSet changeSetAt(const QSignalSpy &spy, int index)
{
    return qvariant_cast<ChangeSet>(spy.at(index).at(0));
}

} // namespace

class TestStore : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void sequenceNumbersNearTheLimitKeepGapDetection();
    void deliveryOfAMessageNeverSeenSentKeepsItsAddress();
    void initTestCase() { mapi_test::installWarningGuard(); }
    void init() { mapi_test::armWarningGuard(); }

    // VZEROUPPER between computations leaves every value the compiler keeps in the vector
    // registers as it was (it clears only the upper halves, which this code never uses).
    void clearingTheVectorStateKeepsValues()
    {
        std::vector<double> values(4096);
        double running = 0, expected = 0;
        for (size_t i = 0; i < values.size(); ++i) {
            values[i] = std::log(1.0 + double(i)) * 0.5;
            expected += values[i] / (1.0 + double(i % 7));
        }
        for (size_t i = 0; i < values.size(); ++i) {
            const double term = values[i] / (1.0 + double(i % 7));
            mapi::clearUpperVectorState();
            running += term;
        }
        QCOMPARE(running, expected);
    }
    void cleanup() { MAPI_NO_WARNINGS(); }
    void cleanupTestCase() { MAPI_NO_WARNINGS(); }

    void sameEventTwiceIsAppliedOnce();
    void textArenaKeepsAnyText();
    void idIndexTellsCollidingIdsApart();
    void messageLogKeepsEveryField();
    void recipientListsKeepIdOrderAndFreeOnTrim();
    void nonAsciiEventIdsAreDeduplicated();
    void ulidEventIdsAreDeduplicatedInAnyOrder();
    void ulidMessageIdsAreFoundInAnyOrder();
    void ascendingEventIdsAreFoundWithoutTheIndex();
    void manyEventIdsStayDistinct();
    void eventsRecordAnnouncedStates();
    void eventRowsShareTheirFields();
    void eventFrameFallsBackToTheFrameSource();
    void replayOverlappingLiveIsDeduplicated();
    void messageToUnknownAgentMakesPlaceholder();
    void unknownParentBecomesPlaceholder();
    void registrationWithUnknownParentKeepsItsOwnFields();
    void scopeMemberNotYetRegistered();
    void unregisteredAgentKeepsRowAndMemberships();
    void scopeDeletedWithDescendants();
    void completeSnapshotRetiresMissingAgents();
    void partialSnapshotsRetireNobody();
    void scopesSnapshotDeletesMissingScopes();
    void membersSnapshotReplacesMembership();
    void senderSessionResolvesToAgent();
    void envelopeSenderWinsOverSession();
    void messageStatusFollowsEvents();
    void taskLifecycleFromMessages();
    void taskFailedSetsAgentError();
    void heartbeatFieldsLandOnSender();
    void changesAreCoalesced();
    void changesAreFlushedByTimer();
    void activityAloneIsReportedApart();
    void stopConfirmedByStateEvent();
    void stopConfirmedByEventBeforeAnswer();
    void actionTimesOutWithoutConfirmation();
    void unsupportedFailedAndFallbackSteps();
    void sendConfirmedWhenAnswerNamesSeenMessage();
    void resetEmptiesTheModel();
    void taskEventsOfEveryShape();
    void idIndexErasesTrimmedRows();
    void textArenaReleasesTrimmedOwners();
    void historyBudgetTrimsOldestAndKeepsStateExact();
    void trimHistoryBeforeATime();
    void problemsKeepTheNewestWithinBounds(); // and gaps
    void itemJsonDescribesEachItemInFull();
    void messageToManyAgentsNamesABoundedSortedSet();
    void largeScopeJoinedInAnyOrderStaysSortedAndExact();
    void agentsPastTheLimitAreCountedNotModelled();
    void historyBoundHoldsWhenTimeRunsBackwards();
    void textsPastTheArenaLimitAreCounted();
};

void TestStore::sameEventTwiceIsAppliedOnce()
{
    SystemStore store;
    Wire wire(store);
    const QString id = wire.registerAgent(QStringLiteral("a1"), QStringLiteral("alpha"));
    // The very same frame again (e.g. two subscriptions on one connection).
    wire.event(QStringLiteral("agent.registered"), {{"agent", mapi_test::regAgent(QStringLiteral("a1"), QStringLiteral("renamed"))}},
               Json(), id);
    QCOMPARE(store.counters().eventsApplied, qint64(1));
    QCOMPARE(store.counters().duplicateEvents, qint64(1));
    QCOMPARE(int(store.events().size()), 1);
    QCOMPARE(store.agent(QStringLiteral("a1"))->name, QStringLiteral("alpha")); // the duplicate changed nothing
    QCOMPARE(int(store.agents().size()), 1);

    // Events without an id cannot be deduplicated: both are applied.
    QString error;
    const auto noId = eventFromNotification(Json{{"event", {{"type", "x.custom"}, {"data", Json::object()}}}}, error);
    QVERIFY(noId);
    store.apply(ModelInput(EventInput{*noId, 5}));
    store.apply(ModelInput(EventInput{*noId, 6}));
    QCOMPARE(store.counters().eventsApplied, qint64(3));
    QCOMPARE(store.counters().duplicateEvents, qint64(1));
}

void TestStore::manyEventIdsStayDistinct()
{
    // The id index grows (from 1,024 slots) and probes past occupied slots: 50,000 distinct ids
    // all apply, each again is a duplicate, and a reset forgets them.
    SystemStore store;
    QString error;
    const auto make = [&](int i) {
        auto e = eventFromNotification(Json{{"eventId", "ev-" + std::to_string(i)},
                                            {"event", {{"type", "x.custom"}, {"data", Json::object()}}}},
                                       error);
        return ModelInput(EventInput{*e, i});
    };
    for (int i = 0; i < 50000; ++i)
        store.apply(make(i));
    QCOMPARE(store.counters().eventsApplied, qint64(50000));
    for (int i = 0; i < 50000; i += 7)
        store.apply(make(i));
    QCOMPARE(store.counters().eventsApplied, qint64(50000));
    QCOMPARE(store.counters().duplicateEvents, qint64((50000 + 6) / 7));
    QCOMPARE(store.events().eventId(12345), QStringLiteral("ev-12345"));
    store.reset();
    store.apply(make(3));
    QCOMPARE(store.counters().eventsApplied, qint64(1));
    QCOMPARE(store.counters().duplicateEvents, qint64(0));
}

void TestStore::ulidEventIdsAreDeduplicatedInAnyOrder()
{
    // A ULID above every one applied is new without a look into the index (EventLog::find), and
    // the index places its rows in groups (IdIndex::insert): ids in order, again (the newest
    // still waiting to be placed), new ones below the largest, and after a reset, all must be
    // told apart exactly.
    SystemStore store;
    QString error;
    const auto ulid = [](int i) {
        static const char digits[] = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";
        QString text(26, QLatin1Char('0'));
        for (int at = 25; i > 0; --at, i /= 32)
            text[at] = QLatin1Char(digits[i % 32]);
        text[1] = QLatin1Char('1'); // a time in this century, as servers write
        return text;
    };
    const auto make = [&](const QString &id, int at) {
        auto e = eventFromNotification(Json{{"eventId", id.toStdString()}, {"event", {{"type", "x.custom"}, {"data", Json::object()}}}},
                                       error);
        return ModelInput(EventInput{*e, at});
    };
    for (int i = 1000; i < 6000; i += 2)
        store.apply(make(ulid(i), i));
    QCOMPARE(store.counters().eventsApplied, qint64(2500));
    store.apply(make(ulid(5998), 1)); // the newest again: its row is not placed in the table yet
    store.apply(make(ulid(5996), 1));
    for (int i = 1000; i < 6000; i += 14)
        store.apply(make(ulid(i), 1));
    QCOMPARE(store.counters().eventsApplied, qint64(2500));
    QCOMPARE(store.counters().duplicateEvents, qint64(2 + (5000 + 13) / 14));
    // New ids below the largest (another source, a clock behind): applied, then known.
    for (int i = 5999; i > 0; i -= 4)
        store.apply(make(ulid(i), i));
    QCOMPARE(store.counters().eventsApplied, qint64(2500 + 1500));
    store.apply(make(ulid(3), 1));
    store.apply(make(ulid(5999), 1));
    store.apply(make(ulid(5999).toLower(), 1)); // no ULID as servers write them: a text id, new
    store.apply(make(ulid(5999).toLower(), 1));
    QCOMPARE(store.counters().eventsApplied, qint64(4001));
    QCOMPARE(store.counters().duplicateEvents, qint64(2 + (5000 + 13) / 14 + 3));
    QCOMPARE(store.events().eventId(2500), ulid(5999));
    // A reset forgets the largest: a smaller id applies, and again is a duplicate.
    store.reset();
    store.apply(make(ulid(7), 1));
    store.apply(make(ulid(7), 1));
    QCOMPARE(store.counters().eventsApplied, qint64(1));
    QCOMPARE(store.counters().duplicateEvents, qint64(1));
}

void TestStore::ascendingEventIdsAreFoundWithoutTheIndex()
{
    // Rows whose ULID is above every id before them are found by binary search over runs of
    // such rows (EventLog::findAscending), not through the id index; every other row (a text id,
    // a ULID below the largest) is indexed and ends a run. Every kept row must be found, no
    // absent id must be, and trimming mid-run must forget exactly the trimmed rows.
    const auto ulid = [](int i) {
        static const char digits[] = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";
        QString text(26, QLatin1Char('0'));
        for (int at = 25; i > 0; --at, i /= 32)
            text[at] = QLatin1Char(digits[i % 32]);
        text[1] = QLatin1Char('1');
        return text;
    };
    EventLog log;
    QStringList ids; // by row
    const auto append = [&](const QString &id) {
        EventEntry entry;
        entry.timestampMs = 1000 + ids.size();
        log.append(entry, EventLog::idKey(id), QStringLiteral("x.custom"), EventKind::Other, QString(), entry.timestampMs, {});
        ids.append(id);
    };
    int indexed = 0;
    for (int i = 10; i < 4000; i += 3) {
        append(ulid(i)); // ascending
        if (i % 7 == 1) { // a run ends: a text id, then a ULID below the largest
            append(QStringLiteral("text-%1").arg(i));
            append(ulid(i - 2));
            indexed += 2;
        }
        if (i % 11 == 4) { // two in a row
            append(ulid(i - 1));
            append(QStringLiteral("more-%1").arg(i));
            indexed += 2;
        }
    }
    QVERIFY(indexed > 40);
    QCOMPARE(int(log.indexedIdCount()), indexed);
    const auto everyRowIsFound = [&] {
        for (int row = int(log.firstRow()); row < int(log.size()); ++row)
            if (log.find(EventLog::idKey(ids[row])) != row)
                return row;
        return -1;
    };
    QCOMPARE(everyRowIsFound(), -1);
    // Absent: below every id, in the gaps between ascending ids, in a run's gaps, a text.
    QCOMPARE(log.find(EventLog::idKey(ulid(1))), -1);
    for (int i = 11; i < 4000; i += 3)
        if (!ids.contains(ulid(i)))
            QCOMPARE(log.find(EventLog::idKey(ulid(i))), -1);
    QCOMPARE(log.find(EventLog::idKey(ulid(4100))), -1);
    QCOMPARE(log.find(EventLog::idKey(QStringLiteral("text-0"))), -1);

    // Trimmed in the middle of a run: its kept part is still found, its trimmed part no more.
    const int cut = int(ids.indexOf(ulid(2005)));
    QVERIFY(cut > 0);
    log.trimBefore(size_t(cut));
    QCOMPARE(everyRowIsFound(), -1);
    for (int row = 0; row < cut; ++row)
        QCOMPARE(log.find(EventLog::idKey(ids[row])), -1);
    QVERIFY(int(log.indexedIdCount()) < indexed);
    // Ascending ids go on after the trim; one below the largest (a trimmed one again) is new.
    append(ulid(5000));
    append(ulid(13));
    QCOMPARE(log.find(EventLog::idKey(ulid(5000))), int(ids.size()) - 2);
    QCOMPARE(log.find(EventLog::idKey(ulid(13))), int(ids.size()) - 1);
    QCOMPARE(everyRowIsFound(), -1);
    log.clear();
    QCOMPARE(log.find(EventLog::idKey(ulid(5000))), -1);
    QCOMPARE(int(log.indexedIdCount()), 0);
}

void TestStore::ulidMessageIdsAreFoundInAnyOrder()
{
    // The message log answers ids above its largest ULID without its index (MessageLog::find):
    // deliveries of messages sent before, and messages sent with an id below the largest, must
    // still be found.
    SystemStore store;
    Wire wire(store);
    wire.registerAgent(QStringLiteral("a"), QStringLiteral("a"), QStringLiteral("sess-a"));
    const QString id10 = QStringLiteral("01ARZ3NDEKTSV4RRFFQ69G5F10");
    const QString id15 = QStringLiteral("01ARZ3NDEKTSV4RRFFQ69G5F15");
    const QString id20 = QStringLiteral("01ARZ3NDEKTSV4RRFFQ69G5F20");
    const QString id30 = QStringLiteral("01ARZ3NDEKTSV4RRFFQ69G5F30");
    const QString id40 = QStringLiteral("01ARZ3NDEKTSV4RRFFQ69G5F40");
    for (const QString &id : {id10, id20, id30})
        wire.message(id, QStringLiteral("sess-a"), "b", Json{{"x", 1}});
    QCOMPARE(store.messages().find(id40), -1);
    QCOMPARE(store.messages().find(id20), 1);
    wire.event(QStringLiteral("message.delivered"), {{"messageId", id20.toStdString()}, {"agentId", "b"}});
    QCOMPARE(store.messages()[1].status, QStringLiteral("delivered"));
    wire.message(id15, QStringLiteral("sess-a"), "b", Json{{"x", 2}}); // below the largest, new
    QCOMPARE(store.counters().messages, qint64(4));
    QCOMPARE(store.messages().find(id15), 3);
    wire.event(QStringLiteral("message.queued"), {{"messageId", id15.toStdString()}, {"agentId", "b"}});
    QCOMPARE(store.messages()[3].status, QStringLiteral("queued"));
    wire.event(QStringLiteral("message.queued"), {{"messageId", id40.toStdString()}, {"agentId", "b"}}); // never sent
    QCOMPARE(store.counters().messages, qint64(4));
    QCOMPARE(store.messages()[0].status, QStringLiteral("sent"));
    QCOMPARE(store.messages()[2].status, QStringLiteral("sent"));
}

void TestStore::eventsRecordAnnouncedStates()
{
    SystemStore store;
    Wire wire(store);
    wire.registerAgent(QStringLiteral("a1"), QStringLiteral("alpha"));
    wire.event(QStringLiteral("agent.state.changed"),
               {{"agent", mapi_test::regAgent(QStringLiteral("a1"), QStringLiteral("alpha"), QStringLiteral("busy"))},
                {"previousState", "idle"}});
    wire.event(QStringLiteral("message.sent"), {{"message", {{"id", "m1"}, {"from", "a1"}, {"to", "a1"}, {"payload", 1}}}});
    QCOMPARE(int(store.events().size()), 3);
    const EventEntry &registered = store.events()[0];
    const EventEntry &changed = store.events()[1];
    QCOMPARE(store.stateName(registered.stateRow()), QStringLiteral("idle"));
    QCOMPARE(registered.previousStateRow(), -1);
    QCOMPARE(store.stateName(changed.stateRow()), QStringLiteral("busy"));
    QCOMPARE(store.stateName(changed.previousStateRow()), QStringLiteral("idle"));
    QCOMPARE(changed.previousStateRow(), registered.stateRow()); // one row per distinct name
    QCOMPARE(store.events()[2].stateRow(), -1);
    QCOMPARE(int(store.stateNames().size()), 2);
    store.reset();
    QVERIFY(store.stateNames().empty());
}

// An event row keeps its message or its two states in one field, and its type and agent as one
// row of the log's pairs: each comes back as it went in, whatever the order of the pairs.
void TestStore::eventRowsShareTheirFields()
{
    EventEntry none;
    QCOMPARE(none.messageIndex(), -1);
    QCOMPARE(none.stateRow(), -1);
    QCOMPARE(none.previousStateRow(), -1);
    const int states[] = {-1, 0, 1, 2, 255, 16384, 32765, 32766};
    for (const int state : states)
        for (const int previous : states) {
            EventEntry e;
            e.setStates(state, previous);
            QCOMPARE(e.stateRow(), state);
            QCOMPARE(e.previousStateRow(), previous);
            QCOMPARE(e.messageIndex(), -1);
        }
    for (const int message : {0, 1, 65536, std::numeric_limits<int>::max()}) {
        EventEntry e;
        e.setStates(7, 3);
        e.setMessageIndex(message);
        QCOMPARE(e.messageIndex(), message);
        QCOMPARE(e.stateRow(), -1);
        QCOMPARE(e.previousStateRow(), -1);
    }

    // 3 types (one name read as two kinds) x 3,001 agents (the empty one too), in two orders.
    EventLog log;
    const std::pair<QString, EventKind> types[] = {{QStringLiteral("agent.registered"), EventKind::AgentRegistered},
                                                   {QStringLiteral("x.custom"), EventKind::Other},
                                                   {QStringLiteral("agent.registered"), EventKind::Other}};
    const auto agentOf = [](int a) { return a == 3000 ? QString() : QStringLiteral("agent-%1").arg(a); };
    std::vector<std::pair<int, int>> expected; // (type, agent) per row
    for (int round = 0; round < 2; ++round)
        for (int i = 0; i < 3 * 3001; ++i) {
            const int type = round == 0 ? i % 3 : i / 3001;
            const int agent = round == 0 ? i / 3 : i % 3001;
            EventEntry e;
            e.timestampMs = 1000 + i;
            log.append(e, EventLog::idKey(QStringLiteral("e%1-%2").arg(round).arg(i)), types[type].first,
                       types[type].second, agentOf(agent), 1000 + i, {});
            expected.emplace_back(type, agent);
        }
    QCOMPARE(log.subjectCount(), 3 * 3001); // each pair once
    QCOMPARE(log.typeCount(), 3);
    for (size_t row = 0; row < expected.size(); ++row) {
        const EventEntry &e = log[row];
        QCOMPARE(log.type(e), types[expected[row].first].first);
        QCOMPARE(log.kind(e), types[expected[row].first].second);
        QCOMPARE(log.agentId(e), agentOf(expected[row].second));
    }
    log.trimBefore(5);
    QCOMPARE(log.typeRow(log[2]), -1); // trimmed: no type, no agent
    QCOMPARE(log.kind(log[2]), EventKind::Other);
    QVERIFY(log.agentId(log[2]).isEmpty());
    QCOMPARE(log.agentId(log[5]), agentOf(expected[5].second));
}

void TestStore::eventFrameFallsBackToTheFrameSource()
{
    SystemStore store;
    Wire wire(store);
    wire.registerAgent(QStringLiteral("a1"), QStringLiteral("alpha"));
    const QByteArray kept = store.events().keptFrame(0);
    QVERIFY(!kept.isEmpty());
    QCOMPARE(store.eventFrame(0), kept);
    QVERIFY(store.eventFrame(1).isEmpty());
    QVERIFY(store.eventFrame(-1).isEmpty());

    // An event without a kept frame: the source answers, by row.
    QString error;
    auto bare = eventFromNotification(Json{{"eventId", "e2"}, {"event", {{"type", "x.custom"}, {"data", Json::object()}}}}, error);
    store.apply(ModelInput(EventInput{*bare, 9}));
    QVERIFY(store.eventFrame(1).isEmpty());
    store.setFrameSource([](int row) -> QByteArray { return QByteArray("frame of row ") + QByteArray::number(row); });
    QCOMPARE(store.eventFrame(1), QByteArray("frame of row 1"));
    QCOMPARE(store.eventFrame(0), kept); // a kept frame wins
    store.setFrameSource({});
    QVERIFY(store.eventFrame(1).isEmpty());
}

void TestStore::replayOverlappingLiveIsDeduplicated()
{
    SystemStore store;
    Wire wire(store);
    const QString e1 = wire.registerAgent(QStringLiteral("a1"), QStringLiteral("alpha"));
    const QString e2 = wire.setState(QStringLiteral("a1"), QStringLiteral("alpha"), QStringLiteral("busy"), QStringLiteral("idle"));
    // map/replay ([M] bare array) returns both again, plus one we missed.
    const Json missed = mapi_test::innerEvent(QStringLiteral("evt-missed"), QStringLiteral("agent.state.changed"), wire.now() + 5,
                                              {{"agent", mapi_test::regAgent(QStringLiteral("a1"), QStringLiteral("alpha"), QStringLiteral("idle"))},
                                               {"previousState", "busy"}});
    const Json replayed = Json::array({mapi_test::innerEvent(e1, QStringLiteral("agent.registered"), 1, {{"agent", mapi_test::regAgent(QStringLiteral("a1"), QStringLiteral("alpha"))}}),
                                       mapi_test::innerEvent(e2, QStringLiteral("agent.state.changed"), 2, {{"agent", mapi_test::regAgent(QStringLiteral("a1"), QStringLiteral("alpha"), QStringLiteral("busy"))}}),
                                       missed});
    wire.call(QStringLiteral("map/replay"), {{"subscriptionId", "sub-1"}, {"since", s(e2)}}, replayed);
    QCOMPARE(store.counters().duplicateEvents, qint64(2));
    QCOMPARE(store.counters().eventsApplied, qint64(3));
    QCOMPARE(store.agent(QStringLiteral("a1"))->state, QStringLiteral("idle"));
}

void TestStore::messageToUnknownAgentMakesPlaceholder()
{
    SystemStore store;
    Wire wire(store);
    wire.registerAgent(QStringLiteral("a1"), QStringLiteral("alpha"));
    wire.message(QStringLiteral("msg-1"), QStringLiteral("a1"), Json{{"agent", "ghost"}}, Json{{"hi", 1}});
    const Agent *ghost = store.agent(QStringLiteral("ghost"));
    QVERIFY(ghost);
    QVERIFY(ghost->placeholder);
    QCOMPARE(ghost->messagesReceived, 1);
    const int row = store.agentRow(QStringLiteral("ghost"));
    QVERIFY(stateToJson(store).at("placeholders").size() == 1);

    wire.registerAgent(QStringLiteral("ghost"), QStringLiteral("late-comer"), QStringLiteral("sess-g"));
    QCOMPARE(store.agentRow(QStringLiteral("ghost")), row); // filled in place
    ghost = store.agent(QStringLiteral("ghost"));
    QVERIFY(!ghost->placeholder);
    QCOMPARE(ghost->name, QStringLiteral("late-comer"));
    QCOMPARE(ghost->messagesReceived, 1); // history kept
    QCOMPARE(store.messages().front().toAgentIds, QStringList{QStringLiteral("ghost")});
    QVERIFY(stateToJson(store).at("placeholders").empty());
}

void TestStore::unknownParentBecomesPlaceholder()
{
    SystemStore store;
    Wire wire(store);
    // Two agents first, so that adding the parent placeholder below does not reallocate the agent
    // table (that case is the known bug of registrationWithUnknownParentKeepsItsOwnFields).
    wire.registerAgent(QStringLiteral("boss"), QStringLiteral("boss"));
    wire.registerAgent(QStringLiteral("peer"), QStringLiteral("peer"));
    wire.registerAgent(QStringLiteral("child"), QStringLiteral("child"), QStringLiteral("sess-1"),
                       {{"parentId", "parent-x"}});
    const Agent *parent = store.agent(QStringLiteral("parent-x"));
    QVERIFY(parent);
    QVERIFY(parent->placeholder);
    QCOMPARE(store.agent(QStringLiteral("child"))->parentId, QStringLiteral("parent-x"));
    QCOMPARE(store.subtree(QStringLiteral("parent-x")), (QStringList{QStringLiteral("parent-x"), QStringLiteral("child")}));

    wire.registerAgent(QStringLiteral("parent-x"), QStringLiteral("coordinator"));
    parent = store.agent(QStringLiteral("parent-x"));
    QVERIFY(!parent->placeholder);
    QCOMPARE(parent->name, QStringLiteral("coordinator"));
    QCOMPARE(store.subtree(QStringLiteral("parent-x")), (QStringList{QStringLiteral("parent-x"), QStringLiteral("child")}));

    // A self-parent is ignored rather than looping.
    wire.registerAgent(QStringLiteral("loop"), QStringLiteral("loop"), {}, {{"parentId", "loop"}});
    QVERIFY(store.agent(QStringLiteral("loop"))->parentId.isEmpty());
}

void TestStore::registrationWithUnknownParentKeepsItsOwnFields()
{
    // The registering agent's row must get its registration time and lose "unregistered" even
    // when creating the parent placeholder grows the agent table. Run in a child process: the
    // defect writes through a dangling reference.
    const int fresh = mapi_test::runIsolated([] {
        SystemStore store;
        Wire wire(store);
        // [S]/[T]-like agent without registeredAt, first in the table (capacity 1).
        wire.event(QStringLiteral("agent.registered"),
                   {{"agent", {{"id", "child"}, {"name", "c"}, {"state", "idle"}, {"parent", "p0"}}}}, Json(), {}, 5000);
        return store.agent(QStringLiteral("child"))->registeredAtMs == 5000 ? 0 : 1;
    });
    const int again = mapi_test::runIsolated([] {
        SystemStore store;
        Wire wire(store);
        wire.registerAgent(QStringLiteral("a"), QStringLiteral("a"));
        wire.event(QStringLiteral("agent.unregistered"), {{"agentId", "a"}});
        // Registers again, now spawned under an agent we never heard of.
        wire.registerAgent(QStringLiteral("a"), QStringLiteral("a"), {}, {{"parentId", "new-parent"}});
        return store.agent(QStringLiteral("a"))->unregistered ? 1 : 0;
    });
    // SystemStore::applyEvent once kept `Agent &a` across mergeAgent(), whose placeholder parent
    // may reallocate the agents: the registration's own fields then went to freed memory.
    QCOMPARE(fresh, 0);
    QCOMPARE(again, 0);
}

void TestStore::scopeMemberNotYetRegistered()
{
    SystemStore store;
    Wire wire(store);
    wire.event(QStringLiteral("scope.agent.joined"), {{"scopeId", "squad"}, {"agentId", "w9"}},
               {{"scopeId", "squad"}, {"agentId", "w9"}});
    const Scope *squad = store.scope(QStringLiteral("squad"));
    QVERIFY(squad);
    QVERIFY(squad->placeholder);
    QCOMPARE(toStringList(squad->members), QStringList{QStringLiteral("w9")});
    QVERIFY(store.agent(QStringLiteral("w9"))->placeholder);
    QCOMPARE(toStringList(store.agent(QStringLiteral("w9"))->scopes), QStringList{QStringLiteral("squad")});

    wire.registerAgent(QStringLiteral("w9"), QStringLiteral("worker-9"));
    wire.event(QStringLiteral("scope.created"), {{"scope", {{"id", "squad"}, {"name", "squad-a"}, {"parentId", "proj"}}}});
    squad = store.scope(QStringLiteral("squad"));
    QVERIFY(!squad->placeholder);
    QCOMPARE(squad->name, QStringLiteral("squad-a"));
    QCOMPARE(squad->parentId, QStringLiteral("proj"));
    QCOMPARE(toStringList(squad->members), QStringList{QStringLiteral("w9")});
    QVERIFY(!store.agent(QStringLiteral("w9"))->placeholder);
    QCOMPARE(toStringList(store.agent(QStringLiteral("w9"))->scopes), QStringList{QStringLiteral("squad")});
}

void TestStore::unregisteredAgentKeepsRowAndMemberships()
{
    // Since b120ae7 memberships stay on agent.unregistered: the official server keeps an
    // unregistered agent in its scopes and emits no scope.agent.left (SystemStore.cpp comment).
    SystemStore store;
    Wire wire(store);
    wire.registerAgent(QStringLiteral("a1"), QStringLiteral("alpha"));
    wire.registerAgent(QStringLiteral("a2"), QStringLiteral("beta"));
    for (const char *scope : {"s1", "s2"}) {
        wire.event(QStringLiteral("scope.created"), {{"scope", {{"id", scope}, {"name", scope}}}});
        wire.event(QStringLiteral("scope.agent.joined"), {{"scopeId", scope}, {"agentId", "a1"}});
        wire.event(QStringLiteral("scope.agent.joined"), {{"scopeId", scope}, {"agentId", "a2"}});
    }
    const int row = store.agentRow(QStringLiteral("a1"));
    QCOMPARE(toStringList(store.agent(QStringLiteral("a1"))->scopes), (QStringList{QStringLiteral("s1"), QStringLiteral("s2")}));

    wire.event(QStringLiteral("agent.unregistered"),
               {{"agentId", "a1"}, {"agent", mapi_test::regAgent(QStringLiteral("a1"), QStringLiteral("alpha"), QStringLiteral("stopped"))}},
               {{"agentId", "a1"}});
    const Agent *a1 = store.agent(QStringLiteral("a1"));
    QCOMPARE(store.agentRow(QStringLiteral("a1")), row); // the row is kept
    QCOMPARE(int(store.agents().size()), 2);
    QVERIFY(a1->unregistered);
    QVERIFY(!a1->placeholder);
    QCOMPARE(a1->state, QStringLiteral("stopped"));
    QCOMPARE(a1->unregisteredAtMs, wire.now());
    QCOMPARE(toStringList(a1->scopes), (QStringList{QStringLiteral("s1"), QStringLiteral("s2")}));
    QCOMPARE(toStringList(store.scope(QStringLiteral("s1"))->members), (QStringList{QStringLiteral("a1"), QStringLiteral("a2")}));

    // A server that does remove it says so with scope.agent.left.
    wire.event(QStringLiteral("scope.agent.left"), {{"scopeId", "s1"}, {"agentId", "a1"}});
    QCOMPARE(toStringList(store.agent(QStringLiteral("a1"))->scopes), QStringList{QStringLiteral("s2")});
    QCOMPARE(toStringList(store.scope(QStringLiteral("s1"))->members), QStringList{QStringLiteral("a2")});

    const Json state = stateToJson(store);
    QCOMPARE(state.at("agents").size(), size_t(1));
    QCOMPARE(state.at("agents")[0].at("id"), Json("a2"));
    QCOMPARE(state.at("departedAgents").size(), size_t(1));
    QCOMPARE(state.at("departedAgents")[0].at("id"), Json("a1"));

    // Registered again: no longer departed, same row.
    wire.registerAgent(QStringLiteral("a1"), QStringLiteral("alpha"));
    QVERIFY(!store.agent(QStringLiteral("a1"))->unregistered);
    QCOMPARE(store.agentRow(QStringLiteral("a1")), row);
}

void TestStore::scopeDeletedWithDescendants()
{
    SystemStore store;
    Wire wire(store);
    wire.registerAgent(QStringLiteral("a1"), QStringLiteral("alpha"));
    wire.event(QStringLiteral("scope.created"), {{"scope", {{"id", "root"}, {"name", "root"}}}});
    wire.event(QStringLiteral("scope.created"), {{"scope", {{"id", "child"}, {"name", "child"}, {"parentId", "root"}}}});
    wire.event(QStringLiteral("scope.created"), {{"scope", {{"id", "grand"}, {"name", "grand"}, {"parentId", "child"}}}});
    wire.event(QStringLiteral("scope.created"), {{"scope", {{"id", "other"}, {"name", "other"}}}});
    for (const char *scope : {"root", "grand", "other"})
        wire.event(QStringLiteral("scope.agent.joined"), {{"scopeId", scope}, {"agentId", "a1"}});

    wire.event(QStringLiteral("scope.deleted"), {{"scopeId", "root"}, {"deletedDescendants", {"child", "grand"}}},
               {{"scopeId", "root"}});
    for (const char *gone : {"root", "child", "grand"}) {
        QVERIFY2(store.scope(QString::fromUtf8(gone))->deleted, gone);
        QVERIFY(store.scope(QString::fromUtf8(gone))->members.empty());
    }
    QVERIFY(!store.scope(QStringLiteral("other"))->deleted);
    QCOMPARE(toStringList(store.agent(QStringLiteral("a1"))->scopes), QStringList{QStringLiteral("other")});
    QCOMPARE(int(store.scopes().size()), 4); // rows kept
    const Json state = stateToJson(store);
    QCOMPARE(state.at("scopes").size(), size_t(1));
    QCOMPARE(state.at("deletedScopes"), Json({"child", "grand", "root"}));
}

void TestStore::completeSnapshotRetiresMissingAgents()
{
    SystemStore store;
    Wire wire(store);
    for (const char *id : {"a", "b", "c"})
        wire.registerAgent(QString::fromUtf8(id), QString::fromUtf8(id));
    wire.event(QStringLiteral("scope.created"), {{"scope", {{"id", "s"}, {"name", "s"}}}});
    wire.event(QStringLiteral("scope.agent.joined"), {{"scopeId", "s"}, {"agentId", "c"}});
    wire.message(QStringLiteral("m1"), QStringLiteral("a"), "ghost", Json::object()); // a placeholder

    wire.call(QStringLiteral("map/agents/list"), Json::object(),
              {{"agents", {{{"id", "a"}, {"name", "a"}, {"state", "busy"}}, {{"id", "b"}, {"name", "b2"}, {"state", "idle"}}}}});
    QVERIFY(!store.agent(QStringLiteral("a"))->unregistered);
    QCOMPARE(store.agent(QStringLiteral("a"))->state, QStringLiteral("busy"));
    QCOMPARE(store.agent(QStringLiteral("b"))->name, QStringLiteral("b2"));
    QVERIFY(store.agent(QStringLiteral("c"))->unregistered);
    QVERIFY(!store.agent(QStringLiteral("ghost"))->unregistered); // placeholders are not "known"
    QVERIFY(store.agent(QStringLiteral("ghost"))->placeholder);
    // Memberships follow map/scopes/members, as on the server.
    QCOMPARE(toStringList(store.scope(QStringLiteral("s"))->members), QStringList{QStringLiteral("c")});
    wire.call(QStringLiteral("map/scopes/members"), {{"scopeId", "s"}}, {{"members", Json::array()}});
    QVERIFY(store.scope(QStringLiteral("s"))->members.empty());
    QVERIFY(store.agent(QStringLiteral("c"))->scopes.empty());

    // c comes back in a later complete list: registered again.
    wire.call(QStringLiteral("map/agents/list"), Json::object(),
              {{"agents", {{{"id", "a"}}, {{"id", "b"}}, {{"id", "c"}, {"name", "c"}, {"state", "idle"}}}}});
    QVERIFY(!store.agent(QStringLiteral("c"))->unregistered);
}

void TestStore::partialSnapshotsRetireNobody()
{
    SystemStore store;
    Wire wire(store);
    for (const char *id : {"a", "b"})
        wire.registerAgent(QString::fromUtf8(id), QString::fromUtf8(id));
    const Json onlyA = {{"agents", {{{"id", "a"}, {"role", "worker"}}}}};

    wire.call(QStringLiteral("map/agents/list"), {{"role", "worker"}, {"filter", {{"roles", {"worker"}}}}}, onlyA);
    QVERIFY(!store.agent(QStringLiteral("b"))->unregistered);
    wire.call(QStringLiteral("map/agents/list"), {{"state", "busy"}}, onlyA);
    QVERIFY(!store.agent(QStringLiteral("b"))->unregistered);
    wire.call(QStringLiteral("map/agents/list"), Json::object(),
              {{"agents", {{{"id", "a"}}}}, {"nextCursor", "page-2"}}); // paged
    QVERIFY(!store.agent(QStringLiteral("b"))->unregistered);
    wire.call(QStringLiteral("map/agents/get"), {{"agentId", "a"}}, {{"agent", {{"id", "a"}, {"name", "renamed"}}}});
    QVERIFY(!store.agent(QStringLiteral("b"))->unregistered);
    QCOMPARE(store.agent(QStringLiteral("a"))->name, QStringLiteral("renamed"));

    // Direct input with complete = false behaves the same.
    AgentsSnapshot partial;
    partial.data = agentsFromListResult(onlyA);
    partial.complete = false;
    partial.timeMs = wire.now();
    store.apply(ModelInput(partial));
    QVERIFY(!store.agent(QStringLiteral("b"))->unregistered);

    // ...and the control: the same list, unfiltered, retires b.
    wire.call(QStringLiteral("map/agents/list"), Json::object(), onlyA);
    QVERIFY(store.agent(QStringLiteral("b"))->unregistered);
}

void TestStore::scopesSnapshotDeletesMissingScopes()
{
    SystemStore store;
    Wire wire(store);
    wire.event(QStringLiteral("scope.created"), {{"scope", {{"id", "old"}, {"name", "old"}}}});
    wire.event(QStringLiteral("scope.agent.joined"), {{"scopeId", "old"}, {"agentId", "m"}});
    wire.event(QStringLiteral("scope.agent.joined"), {{"scopeId", "unseen"}, {"agentId", "x"}}); // placeholder scope
    // A partial list (children of a parent) deletes nothing.
    wire.call(QStringLiteral("map/scopes/list"), {{"parentId", "p"}}, {{"scopes", Json::array()}});
    QVERIFY(!store.scope(QStringLiteral("old"))->deleted);

    wire.call(QStringLiteral("map/scopes/list"), Json::object(),
              {{"scopes", {{{"id", "new"}, {"name", "fresh"}, {"parentId", "p"}}, {{"id", "p"}, {"name", "parent"}}}}});
    QVERIFY(store.scope(QStringLiteral("old"))->deleted);
    QVERIFY(store.scope(QStringLiteral("old"))->members.empty()); // a deleted scope has no members
    QVERIFY(store.agent(QStringLiteral("m"))->scopes.empty());
    QVERIFY(!store.scope(QStringLiteral("unseen"))->deleted);
    QCOMPARE(store.scope(QStringLiteral("new"))->name, QStringLiteral("fresh"));
    QCOMPARE(store.scope(QStringLiteral("new"))->parentId, QStringLiteral("p"));
    QVERIFY(!store.scope(QStringLiteral("new"))->placeholder);

    // The parent link follows the server: gone from the next list means no parent.
    wire.call(QStringLiteral("map/scopes/list"), Json::object(), {{"scopes", {{{"id", "new"}, {"name", "fresh"}}, {{"id", "p"}}}}});
    QVERIFY(store.scope(QStringLiteral("new"))->parentId.isEmpty());
}

void TestStore::membersSnapshotReplacesMembership()
{
    SystemStore store;
    Wire wire(store);
    wire.event(QStringLiteral("scope.agent.joined"), {{"scopeId", "s"}, {"agentId", "a"}});
    wire.event(QStringLiteral("scope.agent.joined"), {{"scopeId", "s"}, {"agentId", "b"}});
    wire.call(QStringLiteral("map/scopes/members"), {{"scopeId", "s"}}, {{"members", {"b", "c"}}});
    QCOMPARE(toStringList(store.scope(QStringLiteral("s"))->members), (QStringList{QStringLiteral("b"), QStringLiteral("c")}));
    QVERIFY(store.agent(QStringLiteral("a"))->scopes.empty());
    QCOMPARE(toStringList(store.agent(QStringLiteral("c"))->scopes), QStringList{QStringLiteral("s")});
}

void TestStore::senderSessionResolvesToAgent()
{
    SystemStore store;
    Wire wire(store);
    wire.registerAgent(QStringLiteral("coord"), QStringLiteral("coordinator"), QStringLiteral("sess-c"));
    wire.registerAgent(QStringLiteral("w1"), QStringLiteral("worker-1"), QStringLiteral("sess-w"));
    // [M]: message.from is the sender's session id.
    wire.message(QStringLiteral("m1"), QStringLiteral("sess-c"), "w1", Json{{"type", "assign"}});
    const Message &m = store.messages().back();
    QCOMPARE(m.fromRaw, QStringLiteral("sess-c"));
    QCOMPARE(m.fromAgentId, QStringLiteral("coord"));
    QCOMPARE(m.toAgentIds, QStringList{QStringLiteral("w1")});
    QCOMPARE(store.agent(QStringLiteral("coord"))->messagesSent, 1);
    QCOMPARE(store.agent(QStringLiteral("w1"))->messagesReceived, 1);

    // An unknown session resolves to nobody (shown as "session X"), and creates no agent.
    wire.message(QStringLiteral("m2"), QStringLiteral("sess-unknown"), "w1", Json{{"type", "assign"}});
    QVERIFY(store.messages().back().fromAgentId.isEmpty());
    QVERIFY(!store.agent(QStringLiteral("sess-unknown")));
}

void TestStore::envelopeSenderWinsOverSession()
{
    SystemStore store;
    Wire wire(store);
    wire.registerAgent(QStringLiteral("coord"), QStringLiteral("coordinator"), QStringLiteral("sess-1"));
    wire.registerAgent(QStringLiteral("w2"), QStringLiteral("worker-2"), QStringLiteral("sess-1")); // same session
    // w2 sends over the shared session; the 000 envelope names it.
    wire.message(QStringLiteral("m1"), QStringLiteral("sess-1"), "coord",
                 envelope("HEARTBEAT", QStringLiteral("w2"), QStringLiteral("coord"), {{"status", "IDLE"}}));
    QCOMPARE(store.messages().back().fromAgentId, QStringLiteral("w2"));
    QCOMPARE(store.agent(QStringLiteral("w2"))->messagesSent, 1);
    QCOMPARE(store.agent(QStringLiteral("coord"))->messagesSent, 0);

    // An envelope naming an agent we do not know does not beat a resolvable session.
    wire.message(QStringLiteral("m2"), QStringLiteral("sess-1"), "w2",
                 envelope("HEARTBEAT", QStringLiteral("stranger"), QStringLiteral("w2"), {{"status", "IDLE"}}));
    QCOMPARE(store.messages().back().fromAgentId, QStringLiteral("coord"));
}

void TestStore::messageStatusFollowsEvents()
{
    SystemStore store;
    Wire wire(store);
    wire.registerAgent(QStringLiteral("a"), QStringLiteral("a"), QStringLiteral("sess-a"));
    wire.message(QStringLiteral("m1"), QStringLiteral("sess-a"), "b", Json{{"x", 1}});
    QCOMPARE(store.messages().back().status, QStringLiteral("sent"));
    wire.event(QStringLiteral("message.queued"), {{"messageId", "m1"}, {"agentId", "b"}, {"expiresAt", 1}});
    QCOMPARE(store.messages().back().status, QStringLiteral("queued"));
    wire.event(QStringLiteral("message.expired"), {{"messageId", "m1"}, {"agentId", "b"}});
    QCOMPARE(store.messages().back().status, QStringLiteral("expired"));
    QCOMPARE(store.events().back().messageIndex(), 0);
    QCOMPARE(store.counters().messages, qint64(1));
}

void TestStore::taskLifecycleFromMessages()
{
    SystemStore store;
    Wire wire(store);
    const QString coord = QStringLiteral("coord"), w1 = QStringLiteral("w1"), w2 = QStringLiteral("w2");
    wire.registerAgent(coord, QStringLiteral("coordinator"), QStringLiteral("sess-c"));
    wire.registerAgent(w1, QStringLiteral("worker-1"), QStringLiteral("sess-1"));
    wire.registerAgent(w2, QStringLiteral("worker-2"), QStringLiteral("sess-2"));

    wire.message(QStringLiteral("m1"), QStringLiteral("sess-c"), s(w1),
                 envelope("TASK_REQUEST", coord, w1, {{"task_id", "task-001"}, {"task_type", "code_review"}}));
    const Task *task = store.task(QStringLiteral("task-001"));
    QVERIFY(task);
    QCOMPARE(task->status, QStringLiteral("requested"));
    QCOMPARE(task->requesterId, coord);
    QCOMPARE(task->assigneeId, w1);
    QCOMPARE(task->type, QStringLiteral("code_review"));

    wire.message(QStringLiteral("m2"), QStringLiteral("sess-1"), s(coord), envelope("TASK_ACCEPT", w1, coord, {{"task_id", "task-001"}}));
    QCOMPARE(store.task(QStringLiteral("task-001"))->status, QStringLiteral("accepted"));
    QCOMPARE(store.agent(w1)->currentTaskId, QStringLiteral("task-001"));

    wire.message(QStringLiteral("m3"), QStringLiteral("sess-1"), s(coord),
                 envelope("STATUS_UPDATE", w1, coord, {{"task_id", "task-001"}, {"progress", 40}}));
    task = store.task(QStringLiteral("task-001"));
    QCOMPARE(task->status, QStringLiteral("in-progress"));
    QCOMPARE(task->progress.value_or(-1), 40.0);
    QCOMPARE(store.agent(w1)->progress.value_or(-1), 40.0);

    wire.message(QStringLiteral("m4"), QStringLiteral("sess-1"), s(w2),
                 envelope("TASK_HANDOFF", w1, w2, {{"task_id", "task-001"}, {"to_agent", s(w2)}, {"reason", "CAPABILITY_LIMIT"}}));
    task = store.task(QStringLiteral("task-001"));
    QCOMPARE(task->status, QStringLiteral("handed-off"));
    QCOMPARE(task->assigneeId, w2);
    QVERIFY(store.agent(w1)->currentTaskId.isEmpty());

    wire.message(QStringLiteral("m5"), QStringLiteral("sess-2"), s(coord),
                 envelope("TASK_COMPLETE", w2, coord, {{"task_id", "task-001"}, {"status", "SUCCESS"}}));
    task = store.task(QStringLiteral("task-001"));
    QCOMPARE(task->status, QStringLiteral("completed"));
    QCOMPARE(task->assigneeId, w2);
    QCOMPARE(taskStatuses(store, *task), (QStringList{QStringLiteral("requested"), QStringLiteral("accepted"), QStringLiteral("in-progress"),
                                               QStringLiteral("handed-off"), QStringLiteral("completed")}));
    QCOMPARE(store.taskHistory(*task).back().agentId, w2);
    QCOMPARE(store.messages().id(size_t(store.taskHistory(*task).back().messageRow)), QStringLiteral("m5"));
    QCOMPARE(store.messages()[size_t(store.taskHistory(*task).front().messageRow)].taskId, QStringLiteral("task-001"));
    QCOMPARE(store.taskHistory(*task).at(3).agentId, w1);
    QCOMPARE(store.counters().tasks, qint64(1));
    for (const Message &m : store.messages())
        QCOMPARE(m.taskId, QStringLiteral("task-001"));

    // TASK_COMPLETE with status FAILED is a failure.
    wire.message(QStringLiteral("m6"), QStringLiteral("sess-c"), s(w1),
                 envelope("TASK_REQUEST", coord, w1, {{"task_id", "task-002"}}));
    wire.message(QStringLiteral("m7"), QStringLiteral("sess-1"), s(coord),
                 envelope("TASK_COMPLETE", w1, coord, {{"task_id", "task-002"}, {"status", "FAILED"}}));
    QCOMPARE(store.task(QStringLiteral("task-002"))->status, QStringLiteral("failed"));
}

void TestStore::taskFailedSetsAgentError()
{
    SystemStore store;
    Wire wire(store);
    wire.registerAgent(QStringLiteral("coord"), QStringLiteral("coordinator"), QStringLiteral("sess-c"));
    wire.registerAgent(QStringLiteral("w1"), QStringLiteral("worker-1"), QStringLiteral("sess-1"));
    wire.message(QStringLiteral("m1"), QStringLiteral("sess-c"), "w1",
                 envelope("TASK_REQUEST", QStringLiteral("coord"), QStringLiteral("w1"), {{"task_id", "t"}}));
    wire.message(QStringLiteral("m2"), QStringLiteral("sess-1"), "coord",
                 envelope("TASK_ACCEPT", QStringLiteral("w1"), QStringLiteral("coord"), {{"task_id", "t"}}));
    wire.message(QStringLiteral("m3"), QStringLiteral("sess-1"), "coord",
                 envelope("TASK_FAILED", QStringLiteral("w1"), QStringLiteral("coord"),
                          {{"task_id", "t"}, {"error_code", "EXECUTION_ERROR"}, {"error_message", "Failed to parse input code"}}));
    const Task *task = store.task(QStringLiteral("t"));
    QCOMPARE(task->status, QStringLiteral("failed"));
    QCOMPARE(store.taskHistory(*task).back().detail, QStringLiteral("Failed to parse input code"));
    const Agent *w1 = store.agent(QStringLiteral("w1"));
    QCOMPARE(w1->lastErrorMessage, QStringLiteral("Failed to parse input code"));
    QCOMPARE(w1->lastErrorSeverity, QStringLiteral("ERROR"));
    QCOMPARE(w1->lastErrorMs, wire.now());
    QVERIFY(w1->currentTaskId.isEmpty());
    QVERIFY(store.agent(QStringLiteral("coord"))->lastErrorMessage.isEmpty());
}

void TestStore::heartbeatFieldsLandOnSender()
{
    SystemStore store;
    Wire wire(store);
    wire.registerAgent(QStringLiteral("coord"), QStringLiteral("coordinator"), QStringLiteral("sess-c"));
    wire.registerAgent(QStringLiteral("w1"), QStringLiteral("worker-1"), QStringLiteral("sess-1"));
    wire.message(QStringLiteral("hb1"), QStringLiteral("sess-1"), "coord",
                 envelope("HEARTBEAT", QStringLiteral("w1"), QStringLiteral("coord"),
                          {{"status", "BUSY"}, {"load", 0.45}, {"tasks_running", 3}, {"tasks_queued", 5}}));
    const Agent *w1 = store.agent(QStringLiteral("w1"));
    QCOMPARE(w1->heartbeatStatus, QStringLiteral("BUSY"));
    QCOMPARE(w1->load.value_or(-1), 0.45);
    QCOMPARE(w1->tasksRunning.value_or(-1), 3);
    QCOMPARE(w1->tasksQueued.value_or(-1), 5);
    QCOMPARE(w1->lastHeartbeatMs, wire.now());
    const Agent *coord = store.agent(QStringLiteral("coord"));
    QVERIFY(!coord->load);
    QCOMPARE(coord->lastHeartbeatMs, qint64(0));

    // A thinner heartbeat updates what it says and keeps the rest.
    wire.message(QStringLiteral("hb2"), QStringLiteral("sess-1"), "coord",
                 envelope("HEARTBEAT", QStringLiteral("w1"), QStringLiteral("coord"), {{"status", "IDLE"}, {"load", 0.1}}));
    w1 = store.agent(QStringLiteral("w1"));
    QCOMPARE(w1->heartbeatStatus, QStringLiteral("IDLE"));
    QCOMPARE(w1->load.value_or(-1), 0.1);
    QCOMPARE(w1->tasksRunning.value_or(-1), 3);

    // 003 STATUS_UPDATE with usage.
    wire.message(QStringLiteral("su"), QStringLiteral("sess-1"), "coord",
                 Json{{"id", "su-1"}, {"from", "w1"}, {"to", "coord"}, {"type", "STATUS_UPDATE"},
                      {"payload", {{"resource_usage", {{"tokens_used", 1200}, {"cost_usd", 0.5}}}}}});
    QCOMPARE(store.agent(QStringLiteral("w1"))->tokensUsed.value_or(-1), qint64(1200));
    QCOMPARE(store.agent(QStringLiteral("w1"))->costUsd.value_or(-1), 0.5);
    QCOMPARE(stateToJson(store).at("agents")[1].at("tokensUsed"), Json(1200));
}

void TestStore::changesAreCoalesced()
{
    SystemStore store;
    QSignalSpy spy(&store, &SystemStore::changed);
    {
        Wire wire(store);
        for (int i = 0; i < 50; ++i)
            wire.registerAgent(QStringLiteral("agent-%1").arg(i), QStringLiteral("n%1").arg(i));
        wire.event(QStringLiteral("scope.created"), {{"scope", {{"id", "s"}, {"name", "s"}}}});
        wire.message(QStringLiteral("m"), QStringLiteral("agent-0"), "agent-1", Json{{"x", 1}});
    }
    QCOMPARE(spy.count(), 0); // nothing is emitted synchronously per input
    store.flushChanges();
    QCOMPARE(spy.count(), 1);
    ChangeSet c = changeSetAt(spy, 0);
    QCOMPARE(c.firstNewAgentRow, 0);
    QCOMPARE(c.agentRows.size(), 50);
    for (int row = 0; row < 50; ++row)
        QVERIFY(c.agentRows.contains(row));
    QCOMPARE(c.firstNewScopeRow, 0);
    QCOMPARE(c.firstNewMessage, 0);
    QCOMPARE(c.firstNewEvent, 0);
    QVERIFY(c.countersChanged);
    QVERIFY(c.connectionChanged);

    store.flushChanges(); // nothing pending: no signal
    QCOMPARE(spy.count(), 1);

    // A second batch reports only what is new since the first flush.
    Wire more(store, QStringLiteral("sub-2"));
    more.registerAgent(QStringLiteral("late"), QStringLiteral("late"));
    more.setState(QStringLiteral("agent-3"), QStringLiteral("n3"), QStringLiteral("busy"), QStringLiteral("idle"));
    store.flushChanges();
    QCOMPARE(spy.count(), 2);
    c = changeSetAt(spy, 1);
    QCOMPARE(c.firstNewAgentRow, 50);
    QCOMPARE(c.agentRows, (QSet<int>{3, 50}));
    QCOMPARE(c.firstNewEvent, 52);
    QCOMPARE(c.firstNewMessage, -1);
    QCOMPARE(c.firstNewScopeRow, -1);
}

// A message only moves its sender's last activity: reported in activeAgentRows (which views that
// do not show it skip), and in agentRows instead as soon as anything else of the agent changed.
void TestStore::activityAloneIsReportedApart()
{
    SystemStore store;
    QSignalSpy spy(&store, &SystemStore::changed);
    Wire wire(store);
    for (int i = 0; i < 3; ++i)
        wire.registerAgent(QStringLiteral("agent-%1").arg(i), QStringLiteral("n%1").arg(i));
    store.flushChanges();
    spy.clear();
    const int sender = store.agentRow(QStringLiteral("agent-0"));
    const qint64 before = store.agents()[size_t(sender)].lastActivityMs;
    wire.message(QStringLiteral("m1"), QStringLiteral("agent-0"), "agent-1", Json{{"x", 1}});
    store.flushChanges();
    QCOMPARE(spy.count(), 1);
    ChangeSet c = changeSetAt(spy, 0);
    QVERIFY(store.agents()[size_t(sender)].lastActivityMs > before);
    QVERIFY(c.activeAgentRows.contains(sender));
    QVERIFY(c.agentRows.isEmpty());
    QVERIFY(!c.isEmpty());

    // Active, then changed in the same batch (and the other way round): in agentRows only.
    wire.message(QStringLiteral("m2"), QStringLiteral("agent-0"), "agent-1", Json{{"x", 2}});
    wire.setState(QStringLiteral("agent-0"), QStringLiteral("n0"), QStringLiteral("busy"), QStringLiteral("idle"));
    wire.setState(QStringLiteral("agent-2"), QStringLiteral("n2"), QStringLiteral("busy"), QStringLiteral("idle"));
    wire.message(QStringLiteral("m3"), QStringLiteral("agent-2"), "agent-1", Json{{"x", 3}});
    store.flushChanges();
    QCOMPARE(spy.count(), 2);
    c = changeSetAt(spy, 1);
    QVERIFY(c.agentRows.contains(sender));
    QVERIFY(c.agentRows.contains(store.agentRow(QStringLiteral("agent-2"))));
    for (int row : std::as_const(c.activeAgentRows))
        QVERIFY2(!c.agentRows.contains(row), qPrintable(QString::number(row)));
}

void TestStore::changesAreFlushedByTimer()
{
    SystemStore store;
    QSignalSpy spy(&store, &SystemStore::changed);
    Wire wire(store);
    for (int i = 0; i < 20; ++i)
        wire.registerAgent(QStringLiteral("a%1").arg(i), QStringLiteral("n"));
    QTRY_COMPARE_WITH_TIMEOUT(spy.count(), 1, 2000);
    QCOMPARE(changeSetAt(spy, 0).agentRows.size(), 20);
    QTest::qWait(3 * SystemStore::kFlushIntervalMs);
    QCOMPARE(spy.count(), 1); // one coalesced signal, not one per input
}

void TestStore::stopConfirmedByStateEvent()
{
    SystemStore store;
    Wire wire(store);
    wire.registerAgent(QStringLiteral("w5"), QStringLiteral("worker-5"));
    wire.registerAgent(QStringLiteral("w6"), QStringLiteral("worker-6"));
    const qint64 t0 = wire.now() + 1;
    ActionUpdate created = actionStep(ActionUpdate::Step::Created, QStringLiteral("act-1"), t0, ActionKind::Stop, QStringLiteral("w5"));
    created.action.method = QStringLiteral("map/agents/stop");
    store.apply(ModelInput(created));
    QCOMPARE(store.action(QStringLiteral("act-1"))->status, ActionStatus::Sent);
    QCOMPARE(store.action(QStringLiteral("act-1"))->sentAtMs, t0);
    QCOMPARE(store.agent(QStringLiteral("w5"))->lastActionId, QStringLiteral("act-1"));

    store.apply(ModelInput(actionStep(ActionUpdate::Step::Answered, QStringLiteral("act-1"), t0 + 5)));
    QCOMPARE(store.action(QStringLiteral("act-1"))->status, ActionStatus::Accepted);
    QCOMPARE(store.action(QStringLiteral("act-1"))->answeredAtMs, t0 + 5);

    // Another agent stopping does not confirm; a non-terminal state does not either.
    wire.setState(QStringLiteral("w6"), QStringLiteral("worker-6"), QStringLiteral("stopped"), QStringLiteral("idle"));
    wire.setState(QStringLiteral("w5"), QStringLiteral("worker-5"), QStringLiteral("busy"), QStringLiteral("idle"));
    QCOMPARE(store.action(QStringLiteral("act-1"))->status, ActionStatus::Accepted);

    const QString eventId = wire.setState(QStringLiteral("w5"), QStringLiteral("worker-5"), QStringLiteral("stopped"), QStringLiteral("busy"));
    const OperatorAction *a = store.action(QStringLiteral("act-1"));
    QCOMPARE(actionStatusName(a->status), actionStatusName(ActionStatus::Confirmed));
    QCOMPARE(a->confirmingEventId, eventId);
    QCOMPARE(a->settledAtMs, wire.now());

    // Settled actions do not time out later.
    store.advanceTime(wire.now() + store.healthPolicy().actionConfirmTimeoutMs * 10);
    QCOMPARE(store.action(QStringLiteral("act-1"))->status, ActionStatus::Confirmed);
}

void TestStore::stopConfirmedByEventBeforeAnswer()
{
    // [M] emits agent.state.changed before it answers the map/agents/update that caused it.
    SystemStore store;
    Wire wire(store);
    wire.registerAgent(QStringLiteral("w5"), QStringLiteral("worker-5"));
    store.apply(ModelInput(actionStep(ActionUpdate::Step::Created, QStringLiteral("act-2"), wire.now() + 1, ActionKind::Stop,
                                      QStringLiteral("w5"))));
    const QString eventId = wire.setState(QStringLiteral("w5"), QStringLiteral("worker-5"), QStringLiteral("stopped"), QStringLiteral("idle"));
    store.apply(ModelInput(actionStep(ActionUpdate::Step::Answered, QStringLiteral("act-2"), wire.now() + 2)));
    const OperatorAction *a = store.action(QStringLiteral("act-2"));
    QCOMPARE(actionStatusName(a->status), actionStatusName(ActionStatus::Confirmed));
    QCOMPARE(a->confirmingEventId, eventId);
    QCOMPARE(a->answeredAtMs, wire.now() + 2);

    // Suspend asked for an agent that is already suspended: the answer confirms (no event comes).
    wire.setState(QStringLiteral("w5"), QStringLiteral("worker-5"), QStringLiteral("suspended"), QStringLiteral("stopped"));
    store.apply(ModelInput(actionStep(ActionUpdate::Step::Created, QStringLiteral("act-3"), wire.now() + 3, ActionKind::Suspend,
                                      QStringLiteral("w5"))));
    store.apply(ModelInput(actionStep(ActionUpdate::Step::Answered, QStringLiteral("act-3"), wire.now() + 4)));
    QCOMPARE(actionStatusName(store.action(QStringLiteral("act-3"))->status), actionStatusName(ActionStatus::Confirmed));
}

void TestStore::actionTimesOutWithoutConfirmation()
{
    SystemStore store;
    HealthPolicy policy;
    policy.actionConfirmTimeoutMs = 2000;
    store.setHealthPolicy(policy);
    Wire wire(store);
    wire.registerAgent(QStringLiteral("w5"), QStringLiteral("worker-5"));
    const qint64 t0 = wire.now() + 1;
    store.apply(ModelInput(actionStep(ActionUpdate::Step::Created, QStringLiteral("act"), t0, ActionKind::Stop, QStringLiteral("w5"))));
    store.apply(ModelInput(actionStep(ActionUpdate::Step::Answered, QStringLiteral("act"), t0 + 10)));
    // Never answered at all: also times out.
    store.apply(ModelInput(actionStep(ActionUpdate::Step::Created, QStringLiteral("silent"), t0, ActionKind::Suspend, QStringLiteral("w5"))));

    store.advanceTime(t0 + 2000);
    QCOMPARE(store.action(QStringLiteral("act"))->status, ActionStatus::Accepted);
    QCOMPARE(store.action(QStringLiteral("silent"))->status, ActionStatus::Sent);

    QSignalSpy spy(&store, &SystemStore::changed);
    store.flushChanges();
    spy.clear();
    store.advanceTime(t0 + 2001);
    QCOMPARE(actionStatusName(store.action(QStringLiteral("act"))->status), actionStatusName(ActionStatus::TimedOut));
    QCOMPARE(actionStatusName(store.action(QStringLiteral("silent"))->status), actionStatusName(ActionStatus::TimedOut));
    QCOMPARE(store.action(QStringLiteral("act"))->settledAtMs, t0 + 2001);
    QVERIFY(store.action(QStringLiteral("act"))->detail != store.action(QStringLiteral("silent"))->detail);
    store.flushChanges();
    QCOMPARE(spy.count(), 1);
    QCOMPARE(changeSetAt(spy, 0).actionRows, (QSet<int>{0, 1}));

    // A confirming event after the timeout does not resurrect it.
    wire.setState(QStringLiteral("w5"), QStringLiteral("worker-5"), QStringLiteral("stopped"), QStringLiteral("idle"), t0 + 3000);
    QCOMPARE(store.action(QStringLiteral("act"))->status, ActionStatus::TimedOut);
}

void TestStore::unsupportedFailedAndFallbackSteps()
{
    SystemStore store;
    store.apply(ModelInput(actionStep(ActionUpdate::Step::Created, QStringLiteral("a1"), 100, ActionKind::Inject, QStringLiteral("w"))));
    ActionUpdate fallback = actionStep(ActionUpdate::Step::Fallback, QStringLiteral("a1"), 110);
    fallback.action.method = QStringLiteral("map/send");
    fallback.action.note = QStringLiteral("map/inject is not supported by this server");
    store.apply(ModelInput(fallback));
    const OperatorAction *a = store.action(QStringLiteral("a1"));
    QVERIFY(a->fallback);
    QCOMPARE(a->method, QStringLiteral("map/send"));
    QCOMPARE(a->note, fallback.action.note);
    QCOMPARE(a->status, ActionStatus::Sent);

    store.apply(ModelInput(actionStep(ActionUpdate::Step::Created, QStringLiteral("a2"), 100, ActionKind::Suspend, QStringLiteral("w"))));
    ActionUpdate unsupported = actionStep(ActionUpdate::Step::Unsupported, QStringLiteral("a2"), 120);
    unsupported.action.detail = QStringLiteral("map/agents/suspend is not supported by this server");
    store.apply(ModelInput(unsupported));
    QCOMPARE(actionStatusName(store.action(QStringLiteral("a2"))->status), actionStatusName(ActionStatus::Unsupported));
    QCOMPARE(store.action(QStringLiteral("a2"))->detail, unsupported.action.detail);
    QCOMPARE(store.action(QStringLiteral("a2"))->answeredAtMs, qint64(120));

    store.apply(ModelInput(actionStep(ActionUpdate::Step::Created, QStringLiteral("a3"), 100, ActionKind::Stop, QStringLiteral("w"))));
    ActionUpdate failed = actionStep(ActionUpdate::Step::Failed, QStringLiteral("a3"), 130);
    failed.action.detail = QStringLiteral("Agent not found: w (code -32603)");
    store.apply(ModelInput(failed));
    QCOMPARE(actionStatusName(store.action(QStringLiteral("a3"))->status), actionStatusName(ActionStatus::Failed));
    QCOMPARE(store.action(QStringLiteral("a3"))->detail, failed.action.detail);

    // Failed/unsupported actions never time out, and unknown ids are ignored.
    store.advanceTime(1000000);
    QCOMPARE(store.action(QStringLiteral("a2"))->status, ActionStatus::Unsupported);
    QCOMPARE(store.action(QStringLiteral("a3"))->status, ActionStatus::Failed);
    store.apply(ModelInput(actionStep(ActionUpdate::Step::Answered, QStringLiteral("nope"), 200)));
    QCOMPARE(int(store.actions().size()), 3);
    // A second Created for the same id does not duplicate the row.
    store.apply(ModelInput(actionStep(ActionUpdate::Step::Created, QStringLiteral("a1"), 300)));
    QCOMPARE(int(store.actions().size()), 3);
}

void TestStore::sendConfirmedWhenAnswerNamesSeenMessage()
{
    SystemStore store;
    Wire wire(store);
    wire.registerAgent(QStringLiteral("w1"), QStringLiteral("worker-1"));
    ActionUpdate created = actionStep(ActionUpdate::Step::Created, QStringLiteral("send-1"), wire.now() + 1, ActionKind::Send,
                                      QStringLiteral("w1"));
    store.apply(ModelInput(created));
    // [M]: message.sent (from = our session) arrives before the answer that names it.
    wire.message(QStringLiteral("msg-77"), QStringLiteral("sess-gui"), Json{{"agent", "w1"}}, Json{{"hello", true}});
    QCOMPARE(store.action(QStringLiteral("send-1"))->status, ActionStatus::Sent);
    ActionUpdate answered = actionStep(ActionUpdate::Step::Answered, QStringLiteral("send-1"), wire.now() + 1);
    answered.action.messageId = QStringLiteral("msg-77");
    store.apply(ModelInput(answered));
    QCOMPARE(actionStatusName(store.action(QStringLiteral("send-1"))->status), actionStatusName(ActionStatus::Confirmed));
    QCOMPARE(store.action(QStringLiteral("send-1"))->messageId, QStringLiteral("msg-77"));
}

void TestStore::resetEmptiesTheModel()
{
    SystemStore store;
    QStringList order;
    connect(&store, &SystemStore::changed, this, [&] { order << QStringLiteral("changed"); });
    connect(&store, &SystemStore::aboutToReset, this, [&] {
        order << QStringLiteral("aboutToReset");
        QVERIFY(!store.agents().empty()); // views still see the old rows here
    });
    connect(&store, &SystemStore::wasReset, this, [&] { order << QStringLiteral("wasReset"); });
    Wire wire(store);
    const QString id = wire.registerAgent(QStringLiteral("a1"), QStringLiteral("alpha"));
    wire.message(QStringLiteral("m1"), QStringLiteral("a1"), "a2", Json{{"type", "HEARTBEAT"}});
    store.apply(ModelInput(actionStep(ActionUpdate::Step::Created, QStringLiteral("act"), wire.now(), ActionKind::Stop,
                                      QStringLiteral("a1"))));

    store.reset();
    // Pending changes are delivered before the reset, so no view applies them to empty tables.
    QCOMPARE(order, (QStringList{QStringLiteral("changed"), QStringLiteral("aboutToReset"), QStringLiteral("wasReset")}));
    QVERIFY(store.agents().empty());
    QVERIFY(store.messages().empty());
    QVERIFY(store.actions().empty());
    QVERIFY(store.events().empty());
    QVERIFY(store.sessions().isEmpty());
    QCOMPARE(store.counters().eventsApplied, qint64(0));
    QCOMPARE(store.agentRow(QStringLiteral("a1")), -1);
    QCOMPARE(store.now(), qint64(0));

    // Event ids seen before the reset are forgotten: a replayed trace applies them again.
    wire.event(QStringLiteral("agent.registered"), {{"agent", mapi_test::regAgent(QStringLiteral("a1"), QStringLiteral("again"))}},
               Json(), id);
    QCOMPARE(store.counters().duplicateEvents, qint64(0));
    QCOMPARE(store.agent(QStringLiteral("a1"))->name, QStringLiteral("again"));
    QCOMPARE(store.agentRow(QStringLiteral("a1")), 0);
}

// Ids and payloads live as UTF-8 in an arena: every text must come back as written, whatever its
// characters and size, across blocks, and compare equal only to itself.
void TestStore::textArenaKeepsAnyText()
{
    TextArena arena;
    QStringList texts{QStringLiteral("01M7YNTXJZEW856Q7TY381DWDF"), QString(), QStringLiteral("évènement-1"),
                      QStringLiteral("agent \U0001F916 ✓"), QString(300, QLatin1Char('x')), QStringLiteral("a")};
    texts << QString(2 * 1024 * 1024, QLatin1Char('y')); // bigger than a block
    for (int i = 0; i < 60000; ++i) // spans many 1 MiB blocks
        texts << QStringLiteral("id-%1-%2").arg(i).arg(QString(i % 40, QLatin1Char('z')));
    texts << QStringLiteral("after the big ones");
    std::vector<TextArena::Ref> refs;
    for (const QString &text : std::as_const(texts))
        refs.push_back(arena.append(text));
    QCOMPARE(refs[1], TextArena::Ref(0)); // the empty text takes no room
    for (qsizetype i = 0; i < texts.size(); ++i) {
        QCOMPARE(arena.text(refs[size_t(i)]), texts[i]);
        QVERIFY(arena.equals(refs[size_t(i)], texts[i]));
    }
    QVERIFY(!arena.equals(refs[0], QStringLiteral("01M7YNTXJZEW856Q7TY381DWDG"))); // same length, last char differs
    QVERIFY(!arena.equals(refs[2], QStringLiteral("evenement-1")));
    QVERIFY(!arena.equals(refs[2], QStringLiteral("évènement-2")));
    QVERIFY(!arena.equals(refs[5], QString()));
    QCOMPARE(arena.utf8(refs[2]), QByteArrayView(QStringLiteral("évènement-1").toUtf8()));
    QVERIFY(arena.memoryBytes() >= size_t(2 * 1024 * 1024));

    // ULIDs are kept packed (16 bytes) and read back the same; anything that only looks like
    // one is kept as text, and a packed ULID equals no other text.
    TextArena ids;
    const QStringList ulids{QStringLiteral("01M8343ZPVEF2ZXXNV867JXBKD"), QStringLiteral("00000000000000000000000000"),
                            QStringLiteral("7ZZZZZZZZZZZZZZZZZZZZZZZZZ"), QStringLiteral("00000000C9JGMZ1E2KXH6XXXKZ")};
    const QStringList lookAlikes{QStringLiteral("81M8343ZPVEF2ZXXNV867JXBKD"),   // 131 bits
                                 QStringLiteral("01m8343zpvef2zxxnv867jxbkd"),   // lower case
                                 QStringLiteral("01M8343ZPVEF2ZXXNV867JXBKI"),   // not in the alphabet
                                 QStringLiteral("01M8343ZPVEF2ZXXNV867JXBK"),    // 25 characters
                                 QStringLiteral("01M8343ZPVEF2ZXXNV867JXBKDD"),  // 27
                                 QStringLiteral("01M8343ZPVEF2ZXXNV867JXBK\u00c9"),
                                 QStringLiteral("01M8343ZPV\u00c9F2ZXXNV867JXBKD"), // in each part of the value
                                 QStringLiteral("0@M8343ZPVEF2ZXXNV867JXBKD"),
                                 QStringLiteral("01M8343ZPVEF2ZXXNVU67JXBKD")};
    std::vector<TextArena::Ref> packed;
    for (const QString &id : ulids)
        packed.push_back(ids.append(id));
    for (const QString &id : lookAlikes)
        packed.push_back(ids.append(id));
    const QStringList all = ulids + lookAlikes;
    for (qsizetype i = 0; i < all.size(); ++i) {
        QCOMPARE(ids.text(packed[size_t(i)]), all[i]);
        for (qsizetype j = 0; j < all.size(); ++j)
            QCOMPARE(ids.equals(packed[size_t(i)], all[j]), i == j);
        QCOMPARE(ids.utf8(packed[size_t(i)]).isEmpty(), i < ulids.size()); // packed: no UTF-8 to view
        quint64 high = 0, low = 0, keptHigh = 0, keptLow = 0;
        QCOMPARE(ulidValue(all[i], high, low), i < ulids.size());
        QCOMPARE(ids.ulidAt(packed[size_t(i)], keptHigh, keptLow), i < ulids.size());
        if (i < ulids.size()) {
            QCOMPARE(keptHigh, high);
            QCOMPARE(keptLow, low);
        }
    }
    // UUIDs in their usual form (agents' envelope ids) are kept in 18 bytes and read back the
    // same; upper case and near misses are kept as text; none equals another.
    TextArena envelopes;
    const QStringList uuids{QStringLiteral("00000000-9cd3-4878-8477-20201ef0267b"), QStringLiteral("ffffffff-ffff-ffff-ffff-ffffffffffff"),
                            QStringLiteral("00000000-0000-0000-0000-000000000000"), QStringLiteral("0a1b2c3d-4e5f-6789-abcd-ef0123456789"),
                            QStringLiteral("00000000-9cd3-4878-8477-20201ef0267c"),  // the first's last bits differ
                            QStringLiteral("00000000-9cd3-4878-8477-20201ef02670")}; // a look-alike below ends in U+0130
    const QStringList uuidLookAlikes{QStringLiteral("00000000-9CD3-4878-8477-20201EF0267B"),  // upper case
                                     QStringLiteral("00000000-9cd3-4878-8477-20201ef0267g"),  // not hex
                                     QStringLiteral("00000000-9cd3-4878-8477_20201ef0267b"),  // no dash
                                     QStringLiteral("000000009-cd3-4878-8477-20201ef0267b"),  // dash moved
                                     QStringLiteral("00000000-9cd3-4878-8477-20201ef0267"),   // 35 characters
                                     QStringLiteral("00000000-9cd3-4878-8477-20201ef0267bb"), // 37
                                     QStringLiteral("00000000-9cd3-4878-8477-20201ef0267é"),
                                     QStringLiteral("00000000-9cd3-4878-8477-20201ef0267\u0130"), // low 7 bits: '0'
                                     QStringLiteral("g0000000-9cd3-4878-8477-20201ef0267b")};
    const QStringList allUuids = uuids + uuidLookAlikes;
    std::vector<TextArena::Ref> uuidRefs;
    for (const QString &id : allUuids)
        uuidRefs.push_back(envelopes.append(id));
    for (qsizetype i = 0; i + 1 < uuids.size(); ++i) // one after the other in the arena's first block
        QCOMPARE(uuidRefs[size_t(i) + 1] - uuidRefs[size_t(i)], TextArena::Ref(18));
    for (qsizetype i = 0; i < allUuids.size(); ++i) {
        QCOMPARE(envelopes.text(uuidRefs[size_t(i)]), allUuids[i]);
        for (qsizetype j = 0; j < allUuids.size(); ++j)
            QCOMPARE(envelopes.equals(uuidRefs[size_t(i)], allUuids[j]), i == j);
        QVERIFY2(envelopes.utf8(uuidRefs[size_t(i)]).isEmpty() == (i < uuids.size()), qPrintable(QString::number(i))); // packed: no UTF-8 to view
        quint64 high = 0, low = 0;
        QVERIFY(!envelopes.ulidAt(uuidRefs[size_t(i)], high, low));
    }
    // A text of 128 characters begins with the bytes 0x80 0x01 (its length): not a UUID.
    const QString long128(128, QLatin1Char('u'));
    const TextArena::Ref longRef = envelopes.append(long128);
    QCOMPARE(envelopes.text(longRef), long128);
    QVERIFY(!envelopes.equals(longRef, uuids[0]));

    // The value is the number the text writes: ids sort as their values do.
    quint64 high = 0, low = 0;
    QVERIFY(ulidValue(QStringLiteral("7ZZZZZZZZZZZZZZZZZZZZZZZZZ"), high, low));
    QCOMPARE(high, ~quint64(0));
    QCOMPARE(low, ~quint64(0));
    QVERIFY(ulidValue(QStringLiteral("0000000000000000000000000Z"), high, low));
    QCOMPARE(high, quint64(0));
    QCOMPARE(low, quint64(31));
    QVERIFY(ulidValue(QStringLiteral("0000000000000100000000000Z"), high, low)); // bit 60: across the parts
    QCOMPARE(high, quint64(0));
    QCOMPARE(low, (quint64(1) << 60) | 31);
    QVERIFY(ulidValue(QStringLiteral("01000000000000000000000000"), high, low));
    QCOMPARE(high, quint64(1) << 56);
    QCOMPARE(low, quint64(0));
    QVERIFY(!ids.equals(packed[0], QString()));
    // 17 bytes each for the ULIDs: the next text starts 17 bytes after one.
    QCOMPARE(packed[1] - packed[0], TextArena::Ref(17));
}

// A hash collision never merges two ids: the row's own id decides.
void TestStore::idIndexTellsCollidingIdsApart()
{
    IdIndex index;
    QStringList ids;
    for (int i = 0; i < 5000; ++i)
        ids << QStringLiteral("same-hash-%1").arg(i);
    const quint32 hash = 42; // every id collides
    for (int row = 0; row < ids.size(); ++row) {
        QCOMPARE(index.find(hash, [&](int r) { return ids[r] == ids[row]; }), -1);
        index.insert(hash, row);
    }
    for (int row = 0; row < ids.size(); row += 97)
        QCOMPARE(index.find(hash, [&](int r) { return ids[r] == ids[row]; }), row);
    QCOMPARE(index.find(hash, [&](int r) { return ids[r] == QLatin1String("absent"); }), -1);
    QCOMPARE(index.find(7, [&](int) { return true; }), -1); // another hash: no row
}

// A message goes into the compact log and comes back whole, also after later events changed
// its status and added recipients.
// Recipients are kept as name rows in the order of their ids, however they arrive; each agent
// once; a trimmed message's list is freed (its slot used again), so memory follows the rows kept.
void TestStore::recipientListsKeepIdOrderAndFreeOnTrim()
{
    MessageLog log;
    auto message = [](int n) {
        Message m;
        m.id = QStringLiteral("m-%1").arg(n);
        m.fromAgentId = QStringLiteral("sender");
        return m;
    };
    const QStringList arrival = {QStringLiteral("b"), QStringLiteral("d"), QStringLiteral("a"), QStringLiteral("c"),
                                 QStringLiteral("a")};
    for (int n = 0; n < 50; ++n) {
        const int row = log.append(message(n));
        for (const QString &agent : arrival)
            QVERIFY(log.addRecipient(size_t(row), agent));
    }
    const size_t withLists = log.memoryBytes();
    for (int n = 0; n < 50; ++n) {
        QCOMPARE(log.recipientCount(size_t(n)), 4);
        QCOMPARE(log[size_t(n)].toAgentIds,
                 QStringList({QStringLiteral("a"), QStringLiteral("b"), QStringLiteral("c"), QStringLiteral("d")}));
        QCOMPARE(log.recipient(size_t(n), 3), QStringLiteral("d"));
        QVERIFY(log.hasRecipient(size_t(n), QStringLiteral("c")));
        QVERIFY(!log.hasRecipient(size_t(n), QStringLiteral("sender")));
        QVERIFY(!log.hasRecipient(size_t(n), QStringLiteral("e")));
    }
    log.trimBefore(50);
    QVERIFY(log.memoryBytes() < withLists);
    // New lists take the freed slots: the table of lists does not grow.
    const size_t trimmed = log.memoryBytes();
    for (int n = 50; n < 100; ++n) {
        const int row = log.append(message(n));
        QVERIFY(log.addRecipient(size_t(row), QStringLiteral("z")));
        QVERIFY(log.addRecipient(size_t(row), QStringLiteral("y")));
    }
    QCOMPARE(log.recipient(99, 0), QStringLiteral("y"));
    QVERIFY(log.memoryBytes() <= withLists);
    QVERIFY(log.memoryBytes() > trimmed);
}

void TestStore::messageLogKeepsEveryField()
{
    EventLog events;
    EventEntry entry;
    entry.timestampMs = 5;
    events.append(entry, EventLog::idKey(QStringLiteral("ev-1")), QStringLiteral("message.sent"),
                  EventKind::MessageSent, QStringLiteral("agent-1"), 7, QByteArray("{\"frame\":1}"));
    QCOMPARE(events.eventId(0), QStringLiteral("ev-1"));
    QCOMPARE(events.type(events[0]), QStringLiteral("message.sent"));
    QCOMPARE(events.kind(events[0]), EventKind::MessageSent);
    QCOMPARE(events.receivedMs(0), qint64(7));
    static_assert(sizeof(EventEntry) == 24);
    {
        // Receipt times far from the event's own time (a clock off by years, a time in seconds)
        // and the same type name read as another kind come back exactly.
        EventLog more;
        EventEntry seconds;
        seconds.timestampMs = 1795401363; // seconds, not ms
        more.append(seconds, EventLog::idKey(QStringLiteral("a")), QStringLiteral("x.y"),
                    EventKind::Other, QString(), 1795401363849, {});
        EventEntry near;
        near.timestampMs = 1795401363849;
        more.append(near, EventLog::idKey(QStringLiteral("b")), QStringLiteral("x.y"),
                    EventKind::AgentRegistered, QString(), 1795401363849 - 5, {});
        EventEntry late;
        late.timestampMs = 0;
        more.append(late, EventLog::idKey(QStringLiteral("c")), QStringLiteral("x.y"),
                    EventKind::Other, QString(), std::numeric_limits<qint64>::max() / 2, {});
        QCOMPARE(more.receivedMs(0), qint64(1795401363849));
        QCOMPARE(more.receivedMs(1), qint64(1795401363849 - 5));
        QCOMPARE(more.receivedMs(2), std::numeric_limits<qint64>::max() / 2);
        QCOMPARE(more.kind(more[0]), EventKind::Other);
        QCOMPARE(more.kind(more[1]), EventKind::AgentRegistered);
        QCOMPARE(more.kind(more[2]), EventKind::Other);
        QCOMPARE(more.typeRow(more[0]), more.typeRow(more[2]));
        QCOMPARE(more.type(more[1]), QStringLiteral("x.y"));
        QCOMPARE(more.find(QStringLiteral("c"), IdIndex::hashOf(QStringLiteral("c"))), 2);
    }
    QCOMPARE(events.agentId(events[0]), QStringLiteral("agent-1"));
    QCOMPARE(events.keptFrame(0), QByteArray("{\"frame\":1}"));
    QCOMPARE(events.find(QStringLiteral("ev-1"), IdIndex::hashOf(QStringLiteral("ev-1"))), 0);

    MessageLog log(&events);
    Message m;
    m.id = QStringLiteral("msg-ü-1");
    m.eventRow = 0;
    m.fromAgentId = QStringLiteral("agent-1");
    m.fromRaw = QStringLiteral("session-1");
    m.toDisplay = QStringLiteral("agent-2, agent-3");
    m.toAgentIds = QStringList{QStringLiteral("agent-2"), QStringLiteral("agent-3")};
    m.scopeId = QStringLiteral("scope-1");
    m.payloadText = QByteArrayLiteral("{\"type\":\"TASK_REQUEST\",\"text\":\"h\xc3\xa9llo\",\"n\":1.5}");
    m.payloadType = QStringLiteral("TASK_REQUEST");
    m.tokensUsed = 1200;
    m.priority = 0;
    m.correlationId = QStringLiteral("corr-1");
    m.convention = ConventionKind::TaskRequest;
    m.taskId = QStringLiteral("task-1");
    m.status = QStringLiteral("sent");
    m.timestampMs = 1234;
    QCOMPARE(log.append(m), 0);
    Message bare;
    bare.id = QStringLiteral("msg-2");
    bare.payloadInFrame = true;
    bare.costUsd = 0.25;
    QCOMPARE(log.append(bare), 1);

    const Message back = log[0];
    QCOMPARE(back.id, m.id);
    QCOMPARE(back.eventId, QStringLiteral("ev-1"));
    QCOMPARE(back.eventRow, 0);
    QCOMPARE(back.fromAgentId, m.fromAgentId);
    QCOMPARE(back.fromRaw, m.fromRaw);
    QCOMPARE(back.toDisplay, m.toDisplay);
    QCOMPARE(back.toAgentIds, m.toAgentIds);
    QCOMPARE(back.scopeId, m.scopeId);
    QCOMPARE(Json::parse(back.payloadText.toStdString()), (Json{{"type", "TASK_REQUEST"}, {"text", "héllo"}, {"n", 1.5}}));
    QCOMPARE(back.payloadText, m.payloadText);
    QVERIFY(!back.payloadInFrame);
    QCOMPARE(back.payloadType, QStringLiteral("TASK_REQUEST"));
    QCOMPARE(back.tokensUsed, std::optional<qint64>(1200));
    QVERIFY(!back.costUsd);
    QCOMPARE(log.tokensUsed(0), std::optional<qint64>(1200));
    QCOMPARE(back.priority, std::optional<int>(0));
    QCOMPARE(back.correlationId, m.correlationId);
    QCOMPARE(back.convention, m.convention);
    QCOMPARE(back.taskId, m.taskId);
    QCOMPARE(back.status, m.status);
    QCOMPARE(back.timestampMs, m.timestampMs);
    QCOMPARE(log.recipientCount(0), 2);
    QCOMPARE(log.recipient(0, 1), QStringLiteral("agent-3"));
    QVERIFY(log.hasRecipient(0, QStringLiteral("agent-2")));
    QVERIFY(!log.hasRecipient(0, QStringLiteral("agent-1")));

    const Message empty = log[1];
    QVERIFY(!empty.priority);
    QVERIFY(empty.toAgentIds.isEmpty());
    QVERIFY(empty.payloadText.isEmpty());
    QVERIFY(empty.payloadInFrame);
    QVERIFY(log.payloadInFrame(1));
    QVERIFY(!empty.tokensUsed);
    QCOMPARE(empty.costUsd, std::optional<double>(0.25));
    QCOMPARE(log.costUsd(1), std::optional<double>(0.25));
    QVERIFY(!log.costUsd(0));
    QCOMPARE(empty.eventRow, -1);
    QVERIFY(empty.eventId.isEmpty());

    log.setStatus(1, QStringLiteral("delivered"));
    log.addRecipient(1, QStringLiteral("agent-9"));  // none -> one
    QCOMPARE(log[1].toAgentIds, QStringList{QStringLiteral("agent-9")});
    QVERIFY(log.hasRecipient(1, QStringLiteral("agent-9")));
    QVERIFY(!log.hasRecipient(1, QStringLiteral("agent-8")));
    log.addRecipient(1, QStringLiteral("agent-8"));  // one -> a list
    log.addRecipient(0, QStringLiteral("agent-4"));  // a list grows
    QCOMPARE(log[1].toAgentIds, (QStringList{QStringLiteral("agent-8"), QStringLiteral("agent-9")})); // kept sorted
    QCOMPARE(log[1].status, QStringLiteral("delivered"));
    QCOMPARE(log[0].toAgentIds.size(), 3);
    QCOMPARE(log.find(QStringLiteral("msg-ü-1")), 0);
    QCOMPARE(log.find(QStringLiteral("msg-2")), 1);
    QCOMPARE(log.find(QStringLiteral("msg-3")), -1);
    int count = 0;
    for (const Message &each : log)
        count += each.id.isEmpty() ? 0 : 1;
    QCOMPARE(count, 2);
}

void TestStore::nonAsciiEventIdsAreDeduplicated()
{
    SystemStore store;
    auto event = [](const std::string &id) {
        QString error;
        auto e = eventFromNotification(Json{{"eventId", id}, {"timestamp", 1000},
                                            {"event", {{"type", "agent_registered"},
                                                       {"data", {{"agent", {{"id", "ä1"}, {"name", "α"}}}}}}}},
                                       error);
        return ModelInput(EventInput{*e, 1000});
    };
    store.apply(event("évt-1"));
    store.apply(event("évt-2"));
    store.apply(event("évt-1"));
    store.apply(event("evt-1")); // differs only by the accent: another event
    QCOMPARE(store.counters().eventsApplied, qint64(3));
    QCOMPARE(store.counters().duplicateEvents, qint64(1));
    QCOMPARE(store.events().eventId(0), QStringLiteral("évt-1"));
    QCOMPARE(store.events().eventId(2), QStringLiteral("evt-1"));
}

void TestStore::taskEventsOfEveryShape()
{
    // MAP task.* events (the task object, or flat fields in data), through both decoders: the
    // task's id, title, assignee and its history of statuses.
    for (const bool fast : {false, true}) {
        SystemStore store;
        ProtocolPipeline pipeline({}, fast ? SimdJsonParser::instance() : nullptr);
        qint64 t = 1000;
        auto event = [&](const char *type, const char *data) {
            const QByteArray frame = QByteArray(R"({"jsonrpc":"2.0","method":"map/event","params":{"event":{"type":")")
                + type + R"(","data":)" + data + "}}}";
            store.apply(pipeline.frameReceived(frame, t += 10).inputs);
        };
        event("task.created", R"({"task":{"id":"t1","title":"summarise","status":"pending","assignee":"w1"},"agentId":"c"})");
        event("task.created", R"({"task":{"taskId":"t2"}})");             // the id under taskId, no status: open
        event("task.created", R"({"taskId":"t3","title":"flat"})");        // no task object: data's fields
        event("task.created", R"({"task":{"id":7,"title":["no"]}})");      // a number as id; an array is no title
        event("task.assigned", R"({"task":{"id":"t2"},"agentId":"w2"})");  // the assignee from agentId
        event("task.status", R"({"taskId":"t1","current":"working"})");
        event("task.status", R"({"task":{"taskId":"t2"},"taskId":"ignored","current":"blocked"})");
        event("task.completed", R"({"task":{"title":"late title"},"taskId":"t3"})"); // id from data
        event("task.completed", R"({"task":{"id":null}})");               // no id: ignored
        event("task.status", R"("not an object")");

        QCOMPARE(int(store.tasks().size()), 4);
        const Task *t1 = store.task(QStringLiteral("t1"));
        QVERIFY(t1);
        QCOMPARE(t1->type, QStringLiteral("summarise"));
        QCOMPARE(t1->assigneeId, QStringLiteral("w1"));
        QCOMPARE(taskStatuses(store, *t1), QStringList({QStringLiteral("pending"), QStringLiteral("working")}));
        const Task *t2 = store.task(QStringLiteral("t2"));
        QVERIFY(t2);
        QCOMPARE(t2->assigneeId, QStringLiteral("w2"));
        // An assignment changes who holds the task, not its status (the SDK has no "assigned").
        QCOMPARE(taskStatuses(store, *t2),
                 QStringList({QStringLiteral("open"), QStringLiteral("open"), QStringLiteral("blocked")}));
        const Task *t3 = store.task(QStringLiteral("t3"));
        QVERIFY(t3);
        QCOMPARE(t3->type, QStringLiteral("late title"));
        QCOMPARE(taskStatuses(store, *t3), QStringList({QStringLiteral("open"), QStringLiteral("completed")}));
        const Task *t7 = store.task(QStringLiteral("7"));
        QVERIFY(t7);
        QCOMPARE(t7->type, QString());
        QVERIFY(!store.task(QStringLiteral("ignored")));
    }
}


void TestStore::idIndexErasesTrimmedRows()
{
    // Hashes chosen to collide (long probe chains that wrap around the table's end): erasing
    // the older half must leave every newer row findable, and the older ones gone, within a
    // generation and across generations.
    IdIndex index;
    constexpr int kRows = 60000;
    const auto hashOf = [](int row) { return quint32(row % 3001) * 2654435761u; };
    for (int row = 0; row < kRows; ++row)
        index.insert(hashOf(row), row);
    index.eraseRowsBefore(kRows / 2);
    QCOMPARE(index.size(), size_t(kRows / 2));
    for (int row = 0; row < kRows; ++row) {
        const int found = index.find(hashOf(row), [&](int candidate) { return candidate == row; });
        QCOMPARE(found, row < kRows / 2 ? -1 : row);
    }
    // The table still takes new rows and finds them, the newest before they are placed too.
    for (int row = kRows; row < kRows + 1000; ++row) {
        index.insert(hashOf(row), row);
        QCOMPARE(index.find(hashOf(row), [&](int c) { return c == row; }), row);
    }
    QCOMPARE(index.size(), size_t(kRows / 2 + 1000));
    QCOMPARE(index.find(hashOf(kRows + 999), [&](int c) { return c == kRows + 999; }), kRows + 999);
    index.eraseRowsBefore(kRows + 1000);
    QCOMPARE(index.size(), size_t(0));

    IdIndex large;
    const int rows = int(IdIndex::kGenerationRows * 5 / 2);
    for (int row = 0; row < rows; ++row)
        large.insert(quint32(row) * 2654435761u, row);
    const size_t before = large.memoryBytes();
    const int cut = int(IdIndex::kGenerationRows * 3 / 2);
    large.eraseRowsBefore(cut);
    QVERIFY(large.memoryBytes() < before * 3 / 4); // the first generation went whole
    QCOMPARE(large.size(), size_t(rows - cut));
    for (const int row : {0, cut - 1, cut, cut + 1, rows - 1})
        QCOMPARE(large.find(quint32(row) * 2654435761u, [&](int c) { return c == row; }), row < cut ? -1 : row);
}

void TestStore::textArenaReleasesTrimmedOwners()
{
    TextArena arena;
    std::vector<TextArena::Ref> refs;
    const QString large(300 * 1024, QLatin1Char('x')); // a block of its own
    // 1,000,000 texts of about 12 bytes fill a dozen 1 MiB blocks; blocks are freed whole.
    constexpr int kOwners = 1000000;
    const auto textOf = [&](int owner) { return owner % 250000 == 7 ? large : QStringLiteral("text-%1").arg(owner); };
    for (int owner = 0; owner < kOwners; ++owner) {
        arena.setOwner(owner);
        refs.push_back(arena.append(textOf(owner)));
    }
    const size_t full = arena.memoryBytes();
    arena.releaseOwnersBefore(800000);
    const size_t trimmed = arena.memoryBytes();
    QVERIFY2(trimmed < full / 3, qPrintable(QStringLiteral("%1 of %2 bytes kept").arg(trimmed).arg(full)));
    for (int owner = 800000; owner < kOwners; ++owner)
        QCOMPARE(arena.text(refs[size_t(owner)]), textOf(owner));
    // Freed slots are used again: as much text again takes no more than the full arena did.
    for (int owner = kOwners; owner < 2 * kOwners; ++owner) {
        arena.setOwner(owner);
        refs.push_back(arena.append(QStringLiteral("text-%1").arg(owner)));
    }
    arena.releaseOwnersBefore(2 * kOwners - 200000);
    QVERIFY(arena.memoryBytes() <= full);
    QCOMPARE(arena.text(refs[2 * kOwners - 1]), QStringLiteral("text-%1").arg(2 * kOwners - 1));
}

void TestStore::historyBudgetTrimsOldestAndKeepsStateExact()
{
    // Two stores fed the same frames: one unbounded, one with a small history budget. The
    // bounded one trims its oldest events and messages, and its current state, counters and
    // tasks equal the unbounded one's.
    SystemStore full;
    SystemStore bounded;
    // Texts live in 1 MiB blocks (one open block per log): a budget of a few of them.
    constexpr size_t kBudget = 6 << 20;
    bounded.setHistoryBudget(kBudget);
    QSignalSpy changes(&bounded, &SystemStore::changed);
    Wire fullWire(full);
    Wire boundedWire(bounded);
    const auto both = [&](auto &&feed) {
        feed(fullWire);
        feed(boundedWire);
    };
    const QStringList states{QStringLiteral("idle"), QStringLiteral("busy"), QStringLiteral("waiting")};
    for (int a = 0; a < 20; ++a)
        both([&](Wire &w) { w.registerAgent(QStringLiteral("a%1").arg(a), QStringLiteral("agent %1").arg(a)); });
    size_t maxHistory = 0;
    for (int i = 0; i < 80000; ++i) {
        const QString agent = QStringLiteral("a%1").arg(i % 20);
        if (i % 3 == 0) {
            const QString taskId = QStringLiteral("t%1").arg(i / 3);
            both([&](Wire &w) {
                w.message(QStringLiteral("msg-%1").arg(i), agent, s(QStringLiteral("a%1").arg((i + 1) % 20)),
                          envelope("task.request", agent, QStringLiteral("a%1").arg((i + 1) % 20),
                                   {{"task_id", s(taskId)}, {"description", "work"}}));
            });
        } else {
            both([&](Wire &w) { w.setState(agent, QStringLiteral("agent"), states[i % 3], states[(i + 2) % 3]); });
        }
        if (i % 1000 == 999) {
            bounded.flushChanges();
            maxHistory = std::max(maxHistory, bounded.historyBytes());
        }
    }
    full.flushChanges();
    bounded.flushChanges();

    // The bound held, and history went.
    QVERIFY2(maxHistory <= kBudget, qPrintable(QStringLiteral("%1 bytes: events %2, messages %3")
                                                   .arg(maxHistory).arg(bounded.events().memoryBytes())
                                                   .arg(bounded.messages().memoryBytes())));
    QVERIFY(bounded.events().firstRow() > 0);
    QVERIFY(bounded.messages().firstRow() > 0);
    QCOMPARE(bounded.events().size(), full.events().size()); // row numbers stay
    QCOMPARE(qint64(bounded.events().firstRow()), bounded.historyTrim().events);
    QCOMPARE(qint64(bounded.messages().firstRow()), bounded.historyTrim().messages);
    QCOMPARE(bounded.historyTrim().beforeMs, bounded.events()[bounded.events().firstRow()].timestampMs);
    bool reported = false;
    for (int i = 0; i < changes.size(); ++i)
        reported = reported || changeSetAt(changes, i).historyTrimmed;
    QVERIFY(reported);

    // Trimmed rows read as empty ones; kept rows read as in the unbounded store.
    const size_t gone = bounded.events().firstRow() - 1;
    QVERIFY(bounded.events().eventId(gone).isEmpty());
    QCOMPARE(bounded.events().typeRow(bounded.events()[gone]), -1);
    QVERIFY(bounded.eventFrame(int(gone)).isEmpty());
    QVERIFY(bounded.messages().id(bounded.messages().firstRow() - 1).isEmpty());
    QCOMPARE(bounded.messages().find(full.messages().id(0)), -1);
    for (size_t row = bounded.events().firstRow(); row < bounded.events().size(); row += 97) {
        QCOMPARE(bounded.events().eventId(row), full.events().eventId(row));
        QCOMPARE(bounded.events().type(bounded.events()[row]), full.events().type(full.events()[row]));
        QCOMPARE(bounded.eventFrame(int(row)), full.eventFrame(int(row)));
    }
    const size_t lastMessage = bounded.messages().size() - 1;
    QCOMPARE(bounded.messages().find(full.messages().id(lastMessage)), int(lastMessage));
    QCOMPARE(bounded.messages()[lastMessage].eventId, full.messages()[lastMessage].eventId);

    // The current state and every count are exact.
    QCOMPARE(bounded.counters().eventsApplied, full.counters().eventsApplied);
    QCOMPARE(bounded.counters().messages, full.counters().messages);
    QCOMPARE(bounded.counters().tasks, full.counters().tasks);
    QCOMPARE(bounded.agents().size(), full.agents().size());
    for (size_t a = 0; a < full.agents().size(); ++a) {
        QCOMPARE(bounded.agents()[a].state, full.agents()[a].state);
        QCOMPARE(bounded.agents()[a].messagesSent, full.agents()[a].messagesSent);
        QCOMPARE(bounded.agents()[a].messagesReceived, full.agents()[a].messagesReceived);
    }
    QCOMPARE(bounded.tasks().size(), full.tasks().size());
    for (size_t t = 0; t < full.tasks().size(); ++t)
        QCOMPARE(bounded.tasks()[t].status, full.tasks()[t].status);
    for (int type = 0; type < full.events().typeCount(); ++type)
        QCOMPARE(bounded.events().appendedOfType(type), full.events().appendedOfType(type));

    // A recent event again is still a duplicate.
    const size_t last = bounded.events().size() - 1;
    const QByteArray lastFrame = bounded.eventFrame(int(last));
    QVERIFY(!lastFrame.isEmpty());
    boundedWire.receive(lastFrame);
    QCOMPARE(bounded.counters().duplicateEvents, qint64(1));
    QCOMPARE(bounded.events().size(), last + 1);
}

void TestStore::trimHistoryBeforeATime()
{
    SystemStore store;
    Wire wire(store);
    wire.registerAgent(QStringLiteral("a1"), QStringLiteral("alpha"));
    for (int i = 0; i < 100; ++i)
        wire.message(QStringLiteral("m%1").arg(i), QStringLiteral("a1"), "a1", i);
    // Each frame arrives 10 ms after the previous (Wire): received times are 1,000,010 + 10 * row.
    const qint64 cut = store.events().receivedMs(40);
    store.trimHistoryBefore(cut);
    QCOMPARE(store.events().firstRow(), size_t(40));
    QVERIFY(store.events().receivedMs(40) >= cut);
    QCOMPARE(store.messages().firstRow(), size_t(39)); // the registration carried none
    QCOMPARE(store.messages().id(39), QStringLiteral("m39"));
    QCOMPARE(store.historyTrim().events, qint64(40));
    QCOMPARE(store.historyTrim().messages, qint64(39));
    QCOMPARE(store.agent(QStringLiteral("a1"))->messagesSent, 100); // counts stay
    store.reset();
    QVERIFY(!store.historyTrim().any());
    QCOMPARE(store.events().firstRow(), size_t(0));
}

void TestStore::problemsKeepTheNewestWithinBounds()
{
    SystemStore store;
    const auto problem = [](int i, qsizetype bytes) {
        ProtocolProblem p;
        p.detail = QStringLiteral("problem %1").arg(i);
        p.frame = QByteArray(bytes, 'x');
        p.timeMs = i;
        return ModelInput(ProblemInput{p});
    };
    for (int i = 0; i < int(SystemStore::kMaxProblems) + 500; ++i)
        store.apply(problem(i, 10));
    QVERIFY(store.problems().size() <= SystemStore::kMaxProblems);
    QCOMPARE(store.counters().problems, qint64(SystemStore::kMaxProblems) + 500);
    QCOMPARE(qint64(store.problems().size()) + store.problemsDropped(), store.counters().problems);
    QCOMPARE(store.problems().back().detail, QStringLiteral("problem %1").arg(SystemStore::kMaxProblems + 499));
    QCOMPARE(store.problems().front().detail, QStringLiteral("problem %1").arg(store.problemsDropped()));
    // Large frames: bounded by bytes too.
    for (int i = 0; i < 2000; ++i)
        store.apply(problem(i, ProtocolProblem::kMaxKeptProblemBytes));
    qint64 bytes = 0;
    for (const ProtocolProblem &p : store.problems())
        bytes += p.frame.size();
    QVERIFY(bytes <= SystemStore::kMaxProblemBytes);
    QVERIFY(store.problems().size() > 100);
    store.reset();
    QCOMPARE(store.problemsDropped(), qint64(0));

    // Gaps: the first kMaxGaps are kept (rows never move), every one is counted.
    for (int i = 0; i < int(SystemStore::kMaxGaps) + 300; ++i) {
        Gap gap;
        gap.fromSequence = 2 * i;
        gap.toSequence = 2 * i;
        gap.timeMs = i;
        store.apply(GapInput{gap});
    }
    QCOMPARE(store.gaps().size(), SystemStore::kMaxGaps);
    QCOMPARE(store.counters().gaps, qint64(SystemStore::kMaxGaps) + 300);
    QCOMPARE(store.counters().sequenceGaps, qint64(SystemStore::kMaxGaps) + 300);
    QCOMPARE(store.gaps().back().fromSequence, qint64(2 * (SystemStore::kMaxGaps - 1)));
}

void TestStore::itemJsonDescribesEachItemInFull()
{
    SystemStore store;
    Wire wire(store);
    wire.setNow(1700000000123);
    wire.registerAgent(QStringLiteral("a1"), QStringLiteral("alpha"));
    wire.registerAgent(QStringLiteral("b2"), QStringLiteral("beta"));
    wire.message(QStringLiteral("msg-1"), QStringLiteral("a1"), Json{{"agent", "b2"}}, Json{{"hi", 1}});

    const OrderedJson agent = agentJson(store, *store.agent(QStringLiteral("a1")));
    QCOMPARE(QString::fromStdString(agent.begin().key()), QStringLiteral("id")); // a fixed key order, id first
    QCOMPARE(QString::fromStdString(agent.at("name").get<std::string>()), QStringLiteral("alpha"));
    const qint64 registeredAt = store.agent(QStringLiteral("a1"))->registeredAtMs;
    QVERIFY(registeredAt >= 1700000000123);
    QCOMPARE(QString::fromStdString(agent.at("registeredAt").get<std::string>()), // ISO 8601, UTC, milliseconds
             QDateTime::fromMSecsSinceEpoch(registeredAt).toUTC().toString(Qt::ISODateWithMs));
    QVERIFY(agent.at("registeredAt").get<std::string>().back() == 'Z');
    QVERIFY(agent.at("unregisteredAt").is_null()); // never: null, not 1970
    QVERIFY(agent.at("parentId").is_null());       // absent: null
    QCOMPARE(agent.at("messagesSent").get<int>(), 1);

    int origin = -2;
    const OrderedJson message = messageJson(store, 0, &origin);
    QVERIFY(origin >= 0); // the event that carried it is in the model, with its frame
    QCOMPARE(message.at("payload"), OrderedJson::parse(R"({"hi":1})"));
    QCOMPARE(message.at("frame").at("method").get<std::string>(), std::string("map/event"));
    QCOMPARE(message.at("events").size(), size_t(1));

    const OrderedJson event = eventJson(store, origin, store.eventFrame(origin));
    QCOMPARE(event.at("frameBytes").get<qsizetype>(), store.eventFrame(origin).size());

    // A frame that is not JSON is shown as text, its control bytes escaped.
    bool escaped = false;
    QCOMPARE(frameText(QByteArray("ok\x01", 3), &escaped), QStringLiteral("ok\\x01"));
    QVERIFY(escaped);
    QCOMPARE(frameJson(QByteArray("not json")), OrderedJson("not json"));
    QVERIFY(frameJson(QByteArray(kMaxParsedFrameBytes + 1, ' ')).is_null());
}

// A hostile or broken server's sequence numbers: one absurdly large, then the integer limit, then
// a restart from 1. Gap detection follows the new numbering instead of switching off for good.
void TestStore::sequenceNumbersNearTheLimitKeepGapDetection()
{
    SystemStore store;
    Wire wire(store);
    wire.registerAgent(QStringLiteral("a"), QStringLiteral("a"));        // sequence 1
    wire.setSequence(qint64(1) << 62);
    wire.event(QStringLiteral("agent.heartbeat"), Json::object(), {{"agentId", "a"}}); // a jump: one gap
    QCOMPARE(store.counters().sequenceGaps, 1);
    wire.setSequence(std::numeric_limits<qint64>::max() - 2);
    wire.event(QStringLiteral("agent.heartbeat"), Json::object(), {{"agentId", "a"}}); // max - 1: a gap
    wire.event(QStringLiteral("agent.heartbeat"), Json::object(), {{"agentId", "a"}}); // max: no overflow
    QCOMPARE(store.counters().sequenceGaps, 2);
    wire.setSequence(0);
    wire.event(QStringLiteral("agent.heartbeat"), Json::object(), {{"agentId", "a"}}); // 1: numbering restarted
    wire.event(QStringLiteral("agent.heartbeat"), Json::object(), {{"agentId", "a"}}); // 2
    QCOMPARE(store.counters().sequenceGaps, 2);
    wire.setSequence(3);
    wire.event(QStringLiteral("agent.heartbeat"), Json::object(), {{"agentId", "a"}}); // 4: 3 never came
    QCOMPARE(store.counters().sequenceGaps, 3);
    QCOMPARE(store.gaps().back().fromSequence, 3);
    QCOMPARE(store.gaps().back().toSequence, 3);
}

// A message addressed to 30,000 agents, each named twice, in reverse order (issue 16): the model
// names the first MessageLog::kMaxRecipients distinct ones (kept sorted), counts the rest, shows a
// short address, and a delivery to an agent past the bound is counted, not named.
void TestStore::messageToManyAgentsNamesABoundedSortedSet()
{
    SystemStore store;
    Wire wire(store);
    wire.registerAgent(QStringLiteral("sender"), QStringLiteral("sender"));
    constexpr int kAgents = 30000;
    Json to = Json::array();
    for (int i = kAgents - 1; i >= 0; --i) {
        const std::string id = QStringLiteral("r%1").arg(i, 5, 10, QLatin1Char('0')).toStdString();
        to.push_back(id);
        to.push_back(id);
    }
    wire.message(QStringLiteral("m-many"), QStringLiteral("sender"), to, Json{{"text", "to everyone"}});

    QCOMPARE(int(store.messages().size()), 1);
    const Message m = store.messages()[0];
    QCOMPARE(int(m.toAgentIds.size()), MessageLog::kMaxRecipients);
    QCOMPARE(m.recipientsNotKept, qint64(kAgents - MessageLog::kMaxRecipients));
    QCOMPARE(store.counters().recipientsNotKept, qint64(kAgents - MessageLog::kMaxRecipients));
    // The first 10,000 distinct ids to arrive (r29999 down to r20000), in id order.
    QCOMPARE(m.toAgentIds.front(), QStringLiteral("r20000"));
    QCOMPARE(m.toAgentIds.back(), QStringLiteral("r29999"));
    QVERIFY(std::is_sorted(m.toAgentIds.cbegin(), m.toAgentIds.cend()));
    QVERIFY(store.messages().hasRecipient(0, QStringLiteral("r25000")));
    QVERIFY(!store.messages().hasRecipient(0, QStringLiteral("r00001")));
    QVERIFY2(m.toDisplay.startsWith(QStringLiteral("r29999, r29999, r29998")), qPrintable(m.toDisplay.left(80)));
    QVERIFY2(m.toDisplay.endsWith(QStringLiteral(" … %1 more").arg(2 * kAgents - 16)), qPrintable(m.toDisplay.right(80)));
    QVERIFY(m.toDisplay.size() < 600);
    // Placeholders for the named recipients only; each counts the message once.
    QVERIFY(store.agent(QStringLiteral("r25000")));
    QCOMPARE(store.agent(QStringLiteral("r25000"))->messagesReceived, 1);
    QVERIFY(!store.agent(QStringLiteral("r00001")));

    wire.event(QStringLiteral("message.delivered"), {{"messageId", "m-many"}, {"agentId", "r25000"}});
    QCOMPARE(store.counters().recipientsNotKept, qint64(kAgents - MessageLog::kMaxRecipients));
    QCOMPARE(store.agent(QStringLiteral("r25000"))->messagesReceived, 1);
    wire.event(QStringLiteral("message.delivered"), {{"messageId", "m-many"}, {"agentId", "r00001"}});
    QCOMPARE(store.counters().recipientsNotKept, qint64(kAgents - MessageLog::kMaxRecipients + 1));
    QCOMPARE(int(store.messages()[0].toAgentIds.size()), MessageLog::kMaxRecipients);
    QCOMPARE(store.messages()[0].recipientsNotKept, qint64(kAgents - MessageLog::kMaxRecipients + 1));
    QCOMPARE(store.messages()[0].status, QStringLiteral("delivered"));
    QCOMPARE(stateToJson(store).at("counts").at("recipientsNotKept").get<qint64>(),
             qint64(kAgents - MessageLog::kMaxRecipients + 1));
    // The named ids count in the history's size, which the retention bound reads.
    QVERIFY(store.historyBytes() > size_t(MessageLog::kMaxRecipients) * 24);
}

// 100,000 agents join one scope in a scrambled order, then a members snapshot keeps every
// other one (issue 16: membership was a sorted list, each join in the middle moving the tail).
void TestStore::largeScopeJoinedInAnyOrderStaysSortedAndExact()
{
    SystemStore store;
    Wire wire(store);
    constexpr int kMembers = 100000;
    auto idOf = [](int i) { return QStringLiteral("a%1").arg(i, 6, 10, QLatin1Char('0')); };
    for (int i = 0; i < kMembers; ++i)
        wire.event(QStringLiteral("scope.agent.joined"),
                   {{"scopeId", "big"}, {"agentId", idOf(int((qint64(i) * 7919) % kMembers)).toStdString()}});
    const Scope *big = store.scope(QStringLiteral("big"));
    QVERIFY(big);
    QCOMPARE(int(big->members.size()), kMembers);
    const QStringList members = toStringList(big->members);
    QCOMPARE(members.front(), idOf(0));
    QCOMPARE(members.back(), idOf(kMembers - 1));
    QVERIFY(std::is_sorted(members.cbegin(), members.cend()));
    QCOMPARE(toStringList(store.agent(idOf(4242))->scopes), QStringList{QStringLiteral("big")});

    // The server's list says: the even ones.
    QStringList even;
    for (int i = 0; i < kMembers; i += 2)
        even << idOf(i);
    wire.call(QStringLiteral("map/scopes/members"), {{"scopeId", "big"}},
              {{"members", Json(std::vector<std::string>())}}); // an empty answer first: all leave
    QVERIFY(store.scope(QStringLiteral("big"))->members.empty());
    QVERIFY(store.agent(idOf(4242))->scopes.empty());
    std::vector<std::string> evenIds;
    for (const QString &id : std::as_const(even))
        evenIds.push_back(id.toStdString());
    wire.call(QStringLiteral("map/scopes/members"), {{"scopeId", "big"}}, {{"members", evenIds}});
    QCOMPARE(toStringList(store.scope(QStringLiteral("big"))->members), even);
    QCOMPARE(toStringList(store.agent(idOf(4242))->scopes), QStringList{QStringLiteral("big")});
    QVERIFY(store.agent(idOf(4243))->scopes.empty());

    wire.event(QStringLiteral("scope.deleted"), {{"scopeId", "big"}});
    QVERIFY(store.scope(QStringLiteral("big"))->members.empty());
    QVERIFY(store.agent(idOf(4242))->scopes.empty());
}

// Ten million distinct agent ids took 11 GB (issue 16): the model keeps at most maxAgents()
// agents; events naming others are kept and counted, and one problem says why.
void TestStore::agentsPastTheLimitAreCountedNotModelled()
{
    SystemStore store;
    store.setMaxAgents(100);
    Wire wire(store);
    auto idOf = [](int i) { return QStringLiteral("a%1").arg(i, 3, 10, QLatin1Char('0')); };
    for (int i = 0; i < 150; ++i)
        wire.registerAgent(idOf(i), idOf(i), QStringLiteral("sess-1"));
    QCOMPARE(int(store.agents().size()), 100);
    QVERIFY(store.agent(idOf(99)));
    QVERIFY(!store.agent(idOf(100)));
    QCOMPARE(store.counters().agentsNotKept, qint64(50));
    QCOMPARE(store.counters().eventsApplied, qint64(150)); // every event is kept
    QCOMPARE(int(store.problems().size()), 1);             // said once
    QCOMPARE(store.problems().front().kind, ProblemKind::LimitReached);
    QVERIFY2(store.problems().front().detail.contains(QLatin1String("More than 100 agents")),
             qPrintable(store.problems().front().detail));

    // A known agent still changes; an unknown one joins nothing and receives nothing.
    wire.event(QStringLiteral("agent.state.changed"),
               {{"agent", mapi_test::regAgent(idOf(7), idOf(7), QStringLiteral("busy"))}});
    QCOMPARE(store.agent(idOf(7))->state, QStringLiteral("busy"));
    wire.event(QStringLiteral("scope.agent.joined"), {{"scopeId", "s"}, {"agentId", idOf(120).toStdString()}});
    wire.event(QStringLiteral("scope.agent.joined"), {{"scopeId", "s"}, {"agentId", idOf(3).toStdString()}});
    QCOMPARE(toStringList(store.scope(QStringLiteral("s"))->members), QStringList{idOf(3)});
    wire.message(QStringLiteral("m1"), idOf(3), idOf(121).toStdString(), Json{{"x", 1}});
    QCOMPARE(int(store.messages().size()), 1);
    QCOMPARE(store.messages()[0].toAgentIds, QStringList{idOf(121)}); // the message names it
    QCOMPARE(store.agent(idOf(3))->messagesSent, 1);
    QCOMPARE(int(store.agents().size()), 100);
    QCOMPARE(store.counters().agentsNotKept, qint64(52));
    QCOMPARE(stateToJson(store).at("counts").at("agentsNotKept").get<qint64>(), qint64(52));
    QCOMPARE(int(store.problems().size()), 1);
}

// Events stamped further back each time (issue 16): task history was trimmed by time, behind the
// oldest event kept — with time running backwards nothing went, and the bound then took all the
// events instead. It is trimmed by arrival now.
void TestStore::historyBoundHoldsWhenTimeRunsBackwards()
{
    // The same stream twice, time running forwards and backwards: the bound holds both ways and
    // keeps about as much history.
    const qint64 start = QDateTime::currentMSecsSinceEpoch();
    constexpr int kEvents = 120000;
    constexpr size_t kBudget = 4 << 20;
    auto run = [&](int direction, size_t *maxHistory) {
        auto store = std::make_unique<SystemStore>();
        store->setHistoryBudget(kBudget);
        Wire wire(*store);
        for (int i = 0; i < kEvents; ++i) {
            wire.eventStampedAt(QStringLiteral("task.created"),
                                {{"task", {{"id", QStringLiteral("t%1").arg(i).toStdString()}, {"status", "pending"}}}},
                                Json(), start - kEvents + direction * i);
            if (i % 1000 == 999) {
                store->flushChanges();
                *maxHistory = std::max(*maxHistory, store->historyBytes());
            }
        }
        store->flushChanges();
        return store;
    };
    size_t forwardMax = 0;
    size_t backwardMax = 0;
    const auto forward = run(1, &forwardMax);
    const auto backward = run(-1, &backwardMax);
    QVERIFY2(backwardMax <= kBudget, qPrintable(QString::number(backwardMax)));
    QVERIFY(backward->events().firstRow() > 0); // history went...
    // ...the oldest of it, as much as with time running forwards (it was all of it).
    QVERIFY2(backward->events().keptCount() * 10 >= forward->events().keptCount() * 9,
             qPrintable(QStringLiteral("%1 kept, %2 forwards").arg(backward->events().keptCount())
                            .arg(forward->events().keptCount())));
    QCOMPARE(backward->counters().tasks, qint64(kEvents)); // and every task is still known
}

// Rows keep 32 bits of a text's reference: 4095 blocks held at once (4 GiB of 1 MiB blocks, or
// fewer large texts, which get a block each). Past that a text was dropped without a word; it is
// counted now (issue 16). Blocks of 1 KiB here, so that 4095 of them are small.
void TestStore::textsPastTheArenaLimitAreCounted()
{
    MessageLog log(nullptr, 1024);
    const QByteArray large(300, 'p'); // past a quarter of a block: a block of its own
    for (int i = 0; i < 4100; ++i) {
        Message m;
        m.id = QStringLiteral("m%1").arg(i);
        m.payloadText = large;
        log.append(m);
    }
    // Each payload takes a block, the ids share theirs: past 4095 blocks, texts go.
    QCOMPARE(log[0].payloadText, large);
    QVERIFY(log.textsNotKept() > 0);
    qint64 empty = 0;
    qint64 idsLost = 0;
    for (size_t row = 0; row < log.size(); ++row) {
        empty += log[row].payloadText.isEmpty() ? 1 : 0;
        idsLost += log[row].id.isEmpty() ? 1 : 0;
    }
    QCOMPARE(empty + idsLost, log.textsNotKept()); // every text lost is counted, none silently
    QCOMPARE(log.find(QStringLiteral("m10")), 10);  // the early ones stay findable
}

QTEST_GUILESS_MAIN(TestStore)
// The simdjson path leaves a delivery's address and payload in the frame (MessageRecord::
// toInFrame, payloadInFrame); a message first seen delivered still gets both, whether the event
// keeps its frame (live, not journaled) or gives it up (a trace load, a journaled session).
void TestStore::deliveryOfAMessageNeverSeenSentKeepsItsAddress()
{
    for (const bool dropFrames : {false, true}) {
        for (const Json &to : {Json("b"), Json::array({"b", "c"}), Json{{"agents", Json::array({"b", "c"})}}}) {
            ProtocolPipeline pipeline({}, SimdJsonParser::instance());
            pipeline.setKeepPayloadText(!dropFrames);
            SystemStore store;
            const Json message = {{"id", "m-1"}, {"from", "a"}, {"to", to}, {"payload", {{"type", "hello"}, {"n", 1}}}};
            const Json frame = {{"jsonrpc", "2.0"},
                                {"method", "map/event"},
                                {"params",
                                 {{"subscriptionId", "s"},
                                  {"sequenceNumber", 1},
                                  {"eventId", "e-1"},
                                  {"event",
                                   {{"type", "message.delivered"},
                                    {"id", "e-1"},
                                    {"timestamp", 1000},
                                    {"data", {{"message", message}, {"agentId", "b"}}}}}}}};
            ModelInputs inputs = pipeline.frameReceived(QByteArray::fromStdString(frame.dump()), 1000).inputs;
            const auto *event = std::get_if<EventInput>(&inputs.back());
            QVERIFY(event && event->event.message);
            QVERIFY(event->event.message->toInFrame); // left in the frame, not converted
            if (dropFrames)
                dropRawFrames(inputs);
            store.apply(inputs);
            QCOMPARE(store.messages().size(), size_t(1));
            const Message &m = store.messages().front();
            const QStringList expected = to.is_string() ? QStringList{QStringLiteral("b")}
                                                        : QStringList{QStringLiteral("b"), QStringLiteral("c")};
            QCOMPARE(m.toAgentIds, expected);
            QCOMPARE(m.fromRaw, QStringLiteral("a"));
            if (!dropFrames) // the dropped frame is read back from the trace or journal: not here
                QCOMPARE(Json::parse(store.messagePayload(0).toStdString()), message.at("payload"));
        }
    }
}

#include "tst_store.moc"
