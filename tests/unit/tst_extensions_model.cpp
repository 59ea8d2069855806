// What the model keeps of a server's extensions (issue 40): conversations from mail history
// pages and mail.* events as one (a turn seen in both is one turn), participants by agent (a
// session-id participant is its session's agent, one row per agent), the bounds of the
// conversation and checkpoint ledgers, checkpoints from lists and events, ACP frames in messages
// grouped by stream with requests paired to responses, and what map/connect advertised.
// Everything goes through the real pipeline (TestSupport's Wire), as live frames and trace replay do.
#include "TestSupport.h"

#include "session/ContentStreams.h"

#include <QCryptographicHash>

using namespace mapi;
using mapi_test::s;
using mapi_test::Wire;

namespace {

Json turnJson(const QString &id, const QString &conversation, const QString &participant, qint64 t, const QString &text,
              const Json &extra = Json::object())
{
    Json turn = {{"id", s(id)},
                 {"conversationId", s(conversation)},
                 {"participant", s(participant)},
                 {"timestamp", t},
                 {"contentType", "text"},
                 {"content", {{"text", s(text)}}},
                 {"source", {{"type", "explicit"}, {"method", "mail/turn"}}},
                 {"status", "complete"}};
    turn.update(extra);
    return turn;
}

Json acpPayload(const QString &streamId, const QString &direction, const Json &acp)
{
    return {{"acp", acp}, {"acpContext", {{"streamId", s(streamId)}, {"sessionId", nullptr}, {"direction", s(direction)}}}};
}

} // namespace

class ExtensionsModelTest : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase() { mapi_test::installWarningGuard(); }
    void init() { mapi_test::armWarningGuard(); }
    void cleanup() { MAPI_NO_WARNINGS(); }

    // What map/connect advertised stays through the state changes that follow; a handshake
    // without it turns it off.
    void capabilitiesAreKept()
    {
        SystemStore store;
        Wire wire(store);
        wire.call(QStringLiteral("map/connect"), Json::object(),
                  {{"sessionId", "s-obs"},
                   {"capabilities", {{"mail", {{"enabled", true}}}, {"workspace", {{"enabled", true}, {"canRead", true}}}}}});
        QVERIFY(store.connection().mail);
        QVERIFY(store.connection().workspace);
        ConnectionInfo state; // the client's state changes name its session too
        state.state = QStringLiteral("backoff");
        state.sessionId = QStringLiteral("s-obs");
        store.apply(state);
        QVERIFY(store.connection().mail);
        QVERIFY(store.connection().handshakeMs > 0);
        wire.call(QStringLiteral("map/connect"), Json::object(), {{"sessionId", "s-obs-2"}, {"capabilities", Json::object()}});
        QVERIFY(!store.connection().mail);
        QVERIFY(!store.connection().workspace);
    }

    // History (mail/list, mail/get, mail/thread/list, mail/turns/list) and the live events make
    // one conversation; a turn in both is one turn, linked to its event; turns stay in time order.
    void historyAndEventsAreOneConversation()
    {
        SystemStore store;
        Wire wire(store);
        const QString conv = QStringLiteral("conv-1");
        wire.call(QStringLiteral("mail/list"), {{"limit", 50}},
                  {{"conversations", {{{"id", "conv-1"}, {"type", "task"}, {"status", "active"}, {"subject", "Fix login bug"},
                                       {"createdAt", 1000}, {"createdBy", "s-alice"}}}},
                   {"hasMore", false}});
        wire.call(QStringLiteral("mail/get"), {{"conversationId", "conv-1"}},
                  {{"conversation", {{"id", "conv-1"}, {"subject", "Fix login bug"}}},
                   {"participants", {{{"id", "s-alice"}, {"type", "user"}, {"role", "initiator"}, {"joinedAt", 1000}}}},
                   {"threads", Json::array()},
                   {"stats", {{"totalTurns", 2}}}});
        wire.call(QStringLiteral("mail/turns/list"), {{"conversationId", "conv-1"}, {"limit", 500}},
                  {{"turns", {turnJson(QStringLiteral("turn-2"), conv, QStringLiteral("s-alice"), 2000, QStringLiteral("second")),
                              turnJson(QStringLiteral("turn-1"), conv, QStringLiteral("s-alice"), 1000, QStringLiteral("first"))}},
                   {"hasMore", false}});
        // mail/join's answer: the conversation, the one who joined, and the history it caught up on.
        wire.call(QStringLiteral("mail/join"), {{"conversationId", "conv-1"}},
                  {{"conversation", {{"id", "conv-1"}}},
                   {"participant", {{"id", "s-bob"}, {"type", "user"}, {"role", "assistant"}, {"joinedAt", 1500}}},
                   {"history", {turnJson(QStringLiteral("turn-1"), conv, QStringLiteral("s-alice"), 1000, QStringLiteral("first"))}}});
        QCOMPARE(store.conversations().find(conv)->participants.size(), size_t(2));
        // Not a page: a created conversation's answer teaches nothing the events do not.
        wire.call(QStringLiteral("mail/create"), {{"subject", "x"}}, {{"conversation", {{"id", "conv-x"}}}});
        QCOMPARE(store.conversations().conversations().size(), size_t(1));
        const Conversation *c = store.conversations().find(conv);
        QVERIFY(c);
        QCOMPARE(c->serverTurnCount, qint64(2));
        QCOMPARE(c->turns.size(), size_t(2));
        QCOMPARE(c->turns[0].id, QStringLiteral("turn-1")); // by time, not by arrival
        QCOMPARE(c->turns[1].eventRow, -1);
        // Live: turn-2 again (its event), then a reply in a thread, then the close.
        wire.event(QStringLiteral("mail.turn.added"), {{"conversationId", "conv-1"},
                                                       {"turn", turnJson(QStringLiteral("turn-2"), conv, QStringLiteral("s-alice"), 2000,
                                                                         QStringLiteral("second"))}});
        wire.event(QStringLiteral("mail.thread.created"),
                   {{"conversationId", "conv-1"},
                    {"thread", {{"id", "thread-1"}, {"subject", "repro"}, {"rootTurnId", "turn-2"}, {"createdAt", 2500}}}});
        wire.event(QStringLiteral("mail.turn.added"),
                   {{"conversationId", "conv-1"},
                    {"turn", turnJson(QStringLiteral("turn-3"), conv, QStringLiteral("agent-bob"), 3000, QStringLiteral("reply"),
                                      {{"inReplyTo", "turn-2"}, {"threadId", "thread-1"}})}});
        wire.event(QStringLiteral("mail.closed"), {{"conversationId", "conv-1"}, {"closedBy", "s-alice"}, {"reason", "fixed"}});
        store.flushChanges();
        c = store.conversations().find(conv);
        QCOMPARE(c->turns.size(), size_t(3));
        QVERIFY(c->turns[1].eventRow >= 0); // the history turn now points at its event
        QCOMPARE(c->turns[2].inReplyTo, QStringLiteral("turn-2"));
        QCOMPARE(c->turns[2].threadId, QStringLiteral("thread-1"));
        QCOMPARE(c->threads.size(), size_t(1));
        QCOMPARE(c->status, QStringLiteral("completed"));
        QCOMPARE(c->closeReason, QStringLiteral("fixed"));
        QCOMPARE(store.counters().unknownEvents, qint64(0));
    }

    // MAPServer names creators and joiners by session id and invitees by agent id: one row per
    // agent, by name; a session the console never saw an agent for stays as it is.
    void participantsAreAgents()
    {
        SystemStore store;
        Wire wire(store);
        wire.registerAgent(QStringLiteral("agent-carol"), QStringLiteral("carol"), QStringLiteral("s-carol"));
        const auto joined = [&](const QString &id, const char *type, qint64 at) {
            wire.event(QStringLiteral("mail.participant.joined"),
                       {{"conversationId", "conv-1"},
                        {"participant", {{"id", s(id)}, {"type", type}, {"role", "reviewer"}, {"joinedAt", at}}}});
        };
        joined(QStringLiteral("s-carol"), "user", 100);      // carol from her session
        joined(QStringLiteral("agent-carol"), "agent", 200); // carol invited by agent id
        joined(QStringLiteral("s-unknown"), "user", 300);    // a session the console knows nothing of
        wire.event(QStringLiteral("session.connected"), {{"session", {{"id", "s-ide-0123456789"}, {"role", "client"}}}});
        joined(QStringLiteral("s-ide-0123456789"), "user", 400); // a client's session: no agent behind it
        const Conversation *c = store.conversations().find(QStringLiteral("conv-1"));
        QVERIFY(c);
        QCOMPARE(c->participants.size(), size_t(4));
        const auto rows = store.conversationParticipants(*c);
        QCOMPARE(rows.size(), size_t(3));
        QCOMPARE(rows[2].name, QStringLiteral("client session s-ide-0123…"));
        QCOMPARE(rows[0].name, QStringLiteral("carol"));
        QCOMPARE(rows[0].type, QStringLiteral("agent"));
        QCOMPARE(rows[0].joinedMs, qint64(100));
        QCOMPARE(rows[1].name, QStringLiteral("s-unknown"));
        QCOMPARE(store.participantName(QStringLiteral("s-carol")), QStringLiteral("carol"));
        // Leaving from one session of two: still in.
        wire.event(QStringLiteral("mail.participant.left"), {{"conversationId", "conv-1"}, {"participantId", "s-carol"}});
        QCOMPARE(store.conversationParticipants(*store.conversations().find(QStringLiteral("conv-1")))[0].leftMs, qint64(0));
    }

    // The bounds: past kMaxTurns the oldest turn goes (counted on its conversation); past
    // kMaxConversations a new conversation is counted, not kept.
    void ledgersAreBounded()
    {
        ConversationLedger ledger;
        Json turns = Json::array();
        for (int i = 0; i <= ConversationLedger::kMaxTurns; ++i)
            turns.push_back(turnJson(QStringLiteral("t-%1").arg(i), QStringLiteral("c"), QStringLiteral("p"), 1000 + i, QStringLiteral("x")));
        ledger.applyPage(QStringLiteral("mail/turns/list"), {{"conversationId", "c"}}, {{"turns", turns}});
        QCOMPARE(ledger.turnCount(), qint64(ConversationLedger::kMaxTurns));
        QCOMPARE(ledger.find(QStringLiteral("c"))->turnsNotKept, qint64(1));
        QCOMPARE(ledger.find(QStringLiteral("c"))->turns.front().id, QStringLiteral("t-1"));
        // A long text is cut, and says so.
        ledger.applyPage(QStringLiteral("mail/turns/list"), {{"conversationId", "long"}},
                         {{"turns", {turnJson(QStringLiteral("t-long"), QStringLiteral("long"), QStringLiteral("p"), 1,
                                              QString(ConversationLedger::kMaxTurnTextChars + 10, QLatin1Char('a')))}}});
        QVERIFY(ledger.find(QStringLiteral("long"))->turns.front().textCut);
        QCOMPARE(ledger.find(QStringLiteral("long"))->turns.front().text.size(), qsizetype(ConversationLedger::kMaxTurnTextChars));

        Json list = Json::array();
        for (int i = 0; i < ConversationLedger::kMaxConversations; ++i)
            list.push_back({{"id", s(QStringLiteral("conv-%1").arg(i))}});
        ConversationLedger many;
        many.applyPage(QStringLiteral("mail/list"), Json::object(), {{"conversations", list}});
        many.applyPage(QStringLiteral("mail/list"), Json::object(), {{"conversations", {{{"id", "one-too-many"}}}}});
        QCOMPARE(many.conversations().size(), size_t(ConversationLedger::kMaxConversations));
        QCOMPARE(many.conversationsNotKept(), qint64(1));
        QVERIFY(!many.find(QStringLiteral("one-too-many")));

        TrajectoryLedger checkpoints;
        Json page = Json::array();
        for (int i = 0; i <= TrajectoryLedger::kMaxCheckpoints; ++i)
            page.push_back({{"id", s(QStringLiteral("cp-%1").arg(i))}, {"agentId", "a"}, {"timestamp", 1000 + i}});
        checkpoints.applyPage(QStringLiteral("trajectory/list"), {{"checkpoints", page}});
        QCOMPARE(checkpoints.checkpoints().size(), size_t(TrajectoryLedger::kMaxCheckpoints));
        QCOMPARE(checkpoints.notKept(), qint64(1));
        QVERIFY(!checkpoints.find(QStringLiteral("cp-0")));
    }

    // Checkpoints from trajectory/list and from events are one set, on the agent they record
    // (not the reporter), with their labels.
    void checkpointsFromListsAndEvents()
    {
        SystemStore store;
        Wire wire(store);
        wire.registerAgent(QStringLiteral("agent-bob"), QStringLiteral("bob"), QStringLiteral("s-bob"));
        wire.call(QStringLiteral("trajectory/list"), {{"limit", 200}},
                  {{"checkpoints", {{{"id", "cp-1"}, {"agentId", "agent-bob"}, {"label", "reproduced"}, {"timestamp", 500}}}},
                   {"hasMore", false}});
        wire.event(QStringLiteral("trajectory.checkpoint"),
                   {{"checkpoint", {{"id", "cp-1"}, {"agentId", "agent-bob"}, {"label", "reproduced"}, {"timestamp", 500}}}},
                   {{"agentId", "s-bob"}});
        wire.event(QStringLiteral("trajectory.checkpoint"),
                   {{"checkpoint", {{"id", "cp-2"}, {"agentId", "agent-bob"}, {"label", "fixed"}, {"timestamp", 900},
                                    {"sessionId", "work-42"}, {"metadata", {{"commit", "abc"}}}}}},
                   {{"agentId", "s-bob"}});
        store.flushChanges();
        const auto bobs = store.checkpoints().of(QStringLiteral("agent-bob"));
        QCOMPARE(bobs.size(), size_t(2));
        QCOMPARE(bobs[0]->label, QStringLiteral("reproduced"));
        QVERIFY(bobs[0]->eventRow >= 0);
        QCOMPARE(bobs[1]->workSessionId, QStringLiteral("work-42"));
        QCOMPARE(bobs[1]->metadata, QStringLiteral("{\"commit\":\"abc\"}"));
        QCOMPARE(store.counters().unknownEvents, qint64(0));
    }

    // Streamed checkpoint content: chunks in any order, before or after the wait, put together
    // and checked against the final chunk's SHA-256; a wrong checksum, a bad chunk, too many
    // bytes or a stall each fail the stream with why.
    void contentStreamsAreReassembledAndChecked()
    {
        const QByteArray content = QByteArray("transcript: ").repeated(3000);
        const QList<QByteArray> parts = {content.left(10000), content.mid(10000, 10000), content.mid(20000)};
        const QString sha = QString::fromLatin1(QCryptographicHash::hash(content, QCryptographicHash::Sha256).toHex());
        const auto chunk = [&](const char *stream, int index, bool final, const QString &checksum = {}) {
            Json c = {{"streamId", stream}, {"index", index}, {"data", parts[index].toBase64().toStdString()}};
            if (final) {
                c["final"] = true;
                c["checksum"] = s(checksum);
            }
            return c;
        };
        struct Outcome { int calls = 0; bool ok = false; QByteArray content; QString error; };
        const auto waiter = [](Outcome &o) {
            return [&o](bool ok, const QByteArray &bytes, const QString &error) {
                ++o.calls;
                o.ok = ok;
                o.content = bytes;
                o.error = error;
            };
        };
        ContentStreams streams;
        Outcome good;
        streams.addChunk(chunk("s1", 1, false), 1000);  // out of order, before anybody waits
        streams.await(QStringLiteral("s1"), waiter(good));
        streams.addChunk(chunk("s1", 2, true, sha), 1010);
        QCOMPARE(good.calls, 0);                          // chunk 0 is still missing
        streams.addChunk(chunk("s1", 0, false), 1020);
        QCOMPARE(good.calls, 1);
        QVERIFY2(good.ok, qPrintable(good.error));
        QCOMPARE(good.content, content);
        QCOMPARE(streams.streamCount(), 0);

        Outcome tampered;
        streams.addChunk(chunk("s2", 0, false), 2000);
        streams.addChunk(chunk("s2", 1, false), 2000);
        streams.addChunk(chunk("s2", 2, true, QString(64, QLatin1Char('0'))), 2000);
        streams.await(QStringLiteral("s2"), waiter(tampered)); // complete already: answered at once
        QCOMPARE(tampered.calls, 1);
        QVERIFY(!tampered.ok);
        QVERIFY(tampered.error.contains(QStringLiteral("checksum")));

        Outcome broken;
        streams.await(QStringLiteral("s3"), waiter(broken));
        streams.addChunk({{"streamId", "s3"}, {"index", 0}, {"data", "not base64 !!"}}, 3000);
        QCOMPARE(broken.calls, 1);
        QVERIFY(broken.error.contains(QStringLiteral("not readable")));

        Outcome stalled;
        streams.await(QStringLiteral("s4"), waiter(stalled));
        streams.expire(4000);                             // the wait starts
        streams.addChunk(chunk("s4", 0, false), 5000);
        streams.expire(5000 + ContentStreams::kStallMs - 1);
        QCOMPARE(stalled.calls, 0);
        streams.expire(5000 + ContentStreams::kStallMs);
        QCOMPARE(stalled.calls, 1);
        QVERIFY(stalled.error.contains(QStringLiteral("stopped")));

        Outcome huge;
        streams.await(QStringLiteral("s5"), waiter(huge));
        const QByteArray big(int(ContentStreams::kMaxBytes / 4) + 1, 'x');
        for (int i = 0; i < 4 && huge.calls == 0; ++i)
            streams.addChunk({{"streamId", "s5"}, {"index", i}, {"data", big.toBase64().toStdString()}}, 6000);
        QCOMPARE(huge.calls, 1);
        QVERIFY(huge.error.contains(QStringLiteral("MiB")));

        Outcome cancelled;
        streams.await(QStringLiteral("s6"), waiter(cancelled));
        streams.cancel(QStringLiteral("s6"));
        streams.addChunk(chunk("s6", 0, true, QString()), 7000);
        QCOMPARE(cancelled.calls, 0);
    }

    // ACP frames in map/send payloads: one stream, each request paired with its response by id,
    // the updates in order (message chunks make the transcript, the tool call listed), a
    // response to nothing seen kept on its own.
    void acpFramesAreGroupedByStream()
    {
        SystemStore store;
        Wire wire(store);
        wire.registerAgent(QStringLiteral("agent-bob"), QStringLiteral("bob"), QStringLiteral("s-bob"));
        const QString stream = QStringLiteral("acp-1");
        const Json toBob = {{"agent", "agent-bob"}};
        const QString c2a = QStringLiteral("client-to-agent");
        const QString a2c = QStringLiteral("agent-to-client");
        wire.message(QStringLiteral("m1"), QStringLiteral("s-ide"), toBob,
                     acpPayload(stream, c2a, {{"jsonrpc", "2.0"}, {"id", "r1"}, {"method", "initialize"}, {"params", Json::object()}}));
        wire.message(QStringLiteral("m2"), QStringLiteral("s-bob"), Json("s-ide"),
                     acpPayload(stream, a2c, {{"jsonrpc", "2.0"}, {"id", "r1"}, {"result", {{"protocolVersion", 1}}}}));
        wire.message(QStringLiteral("m3"), QStringLiteral("s-ide"), toBob,
                     acpPayload(stream, c2a,
                                {{"jsonrpc", "2.0"}, {"id", 7}, {"method", "session/prompt"},
                                 {"params", {{"sessionId", "sess-1"}, {"prompt", {{{"type", "text"}, {"text", "Fix the bug"}}}}}}}));
        wire.message(QStringLiteral("m4"), QStringLiteral("s-bob"), Json("s-ide"),
                     acpPayload(stream, a2c,
                                {{"jsonrpc", "2.0"}, {"method", "session/update"},
                                 {"params", {{"sessionId", "sess-1"},
                                             {"update", {{"sessionUpdate", "agent_message_chunk"}, {"content", {{"type", "text"}, {"text", "Looking. "}}}}}}}}));
        wire.message(QStringLiteral("m5"), QStringLiteral("s-bob"), Json("s-ide"),
                     acpPayload(stream, a2c,
                                {{"jsonrpc", "2.0"}, {"method", "session/update"},
                                 {"params", {{"update", {{"sessionUpdate", "tool_call"}, {"toolCallId", "call-1"}, {"title", "Read login.ts"},
                                                         {"status", "pending"}}}}}}));
        wire.message(QStringLiteral("m6"), QStringLiteral("s-bob"), Json("s-ide"),
                     acpPayload(stream, a2c,
                                {{"jsonrpc", "2.0"}, {"method", "session/update"},
                                 {"params", {{"update", {{"sessionUpdate", "agent_message_chunk"}, {"content", {{"type", "text"}, {"text", "Fixed."}}}}}}}}));
        wire.message(QStringLiteral("m7"), QStringLiteral("s-bob"), Json("s-ide"),
                     acpPayload(stream, a2c, {{"jsonrpc", "2.0"}, {"id", 7}, {"result", {{"stopReason", "end_turn"}}}}));
        wire.message(QStringLiteral("m8"), QStringLiteral("s-bob"), Json("s-ide"),
                     acpPayload(stream, a2c, {{"jsonrpc", "2.0"}, {"id", "r9"}, {"error", {{"code", -1}, {"message", "lost"}}}}));
        store.flushChanges();
        QCOMPARE(store.acpStreams().streams().size(), size_t(1));
        const AcpStream *s = store.acpStreams().find(stream);
        QVERIFY(s);
        QCOMPARE(s->agentId, QStringLiteral("agent-bob"));
        QCOMPARE(s->clientRef, QStringLiteral("s-ide"));
        QCOMPARE(s->exchanges.size(), size_t(3));
        QCOMPARE(s->exchanges[0].method, QStringLiteral("initialize"));
        QVERIFY(s->exchanges[0].responseRow > s->exchanges[0].requestRow);
        QCOMPARE(s->exchanges[1].id, QStringLiteral("7"));
        QCOMPARE(s->exchanges[1].text, QStringLiteral("Fix the bug"));
        QCOMPARE(s->exchanges[1].answer, QStringLiteral("stop: end_turn"));
        QVERIFY(s->exchanges[2].error);
        QCOMPARE(s->exchanges[2].requestRow, -1);
        QCOMPARE(s->pending(), 0);
        QCOMPARE(s->notices.size(), size_t(3));
        QCOMPARE(s->notices[1].toolCallId, QStringLiteral("call-1"));
        QCOMPARE(s->notices[1].text, QStringLiteral("Read login.ts"));
        QCOMPARE(s->transcript(), QStringLiteral("Looking. Fixed."));
        QCOMPARE(s->sessionId, QString()); // every frame's acpContext.sessionId is null here
        // The frames stay messages too.
        QCOMPARE(store.counters().messages, qint64(8));
    }
};

QTEST_GUILESS_MAIN(ExtensionsModelTest)
#include "tst_extensions_model.moc"
