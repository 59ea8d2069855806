// Conversations (MAP mail) and an agent's work (trajectory checkpoints, workspace files), over
// frames that went through the live pipeline (or a trace written from them): the conversation
// list and turn models (order, participants by agent name, reply links, threads, incremental
// updates), the Conversations panel (the selected conversation, going to the answered turn,
// opening a turn's event in the inspector, the filter, the empty states and availability), the
// Agent work panel (the selected agent's checkpoints; fetching refused without a live server,
// also in a loaded trace, with the reason shown), the readable text of content artifacts and
// workspace listings.
// Screenshots (light theme): conversations-light.png and checkpoints-light.png, saved in the
// build folder as the other GUI tests do, or in $MAPI_SCREENSHOTS_DIR when it is set
// (docs/screenshots to refresh the documentation's pictures).
#include "GuiTestSupport.h"
#include "PictureProbe.h"

#include "models/AgentWorkModels.h"
#include "models/ConversationModels.h"
#include "panels/AgentWorkPanel.h"
#include "panels/ConversationsPanel.h"
#include "pipeline/ProtocolPipeline.h"
#include "session/InspectorSession.h"
#include "session/SelectionHub.h"
#include "style/Theme.h"

#include <QAbstractItemModelTester>
#include <QFile>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSignalSpy>
#include <QTabWidget>
#include <QTableView>
#include <QTemporaryDir>
#include <QTreeWidget>

#include <string>
#include <vector>

using namespace mapi;
using namespace mapi::ui;

namespace {

constexpr auto kFatal = QAbstractItemModelTester::FailureReportingMode::Fatal;
constexpr qint64 kStart = 1795846992000;

// Frames of a MAP system through one ProtocolPipeline into a store, as the live client feeds
// them; every frame is also kept, to be written as a trace. Without a store: the frames only.
class MailFeed
{
public:
    explicit MailFeed(SystemStore *store)
        : m_store(store)
    {
        if (m_store)
            m_store->apply(m_pipeline.connectionOpened(QStringLiteral("ws://test"), m_t));
    }

    // map/connect and its answer, advertising mail and the workspace as MAPServer does.
    void connect(bool mail, bool workspace)
    {
        sent(Json{{"jsonrpc", "2.0"}, {"id", 1}, {"method", "map/connect"},
                  {"params", {{"protocolVersion", 1}, {"participantType", "client"}, {"name", "inspector"}}}});
        Json capabilities{{"roles", Json::array({"client"})}, {"features", Json::array()}};
        if (mail)
            capabilities["mail"] = Json{{"enabled", true}, {"canCreate", true}, {"canJoin", true}, {"canViewHistory", true}};
        if (workspace)
            capabilities["workspace"] = Json{{"enabled", true}, {"canSearch", true}, {"canList", true}, {"canRead", true}};
        received(Json{{"jsonrpc", "2.0"},
                      {"id", 1},
                      {"result",
                       {{"protocolVersion", "2024-12"}, {"sessionId", "sess-observer"}, {"capabilities", capabilities},
                        {"systemInfo", {{"name", "mail-system"}, {"version", "0.1.15"}}}}}});
    }
    // A map/event of `type` with `data`, 10 ms after the previous frame.
    void event(const char *type, const Json &data)
    {
        m_t += 10;
        ++m_sequence;
        const std::string id = "ev-" + std::to_string(m_sequence);
        const Json inner{{"id", id}, {"type", type}, {"timestamp", m_t}, {"data", data}};
        received(Json{{"jsonrpc", "2.0"},
                      {"method", "map/event"},
                      {"params", {{"subscriptionId", "sub-1"}, {"sequenceNumber", m_sequence}, {"eventId", id}, {"timestamp", m_t},
                                  {"event", inner}}}});
    }
    void agent(const char *id, const char *name, const char *sessionId)
    {
        event("agent.registered",
              Json{{"agent", {{"id", id}, {"name", name}, {"role", "worker"}, {"state", "idle"}, {"sessionId", sessionId}}}});
    }
    // A mail.turn.added whose turn is stamped with the event's time; `extra` adds or replaces fields.
    void turn(const char *conversation, const char *id, const char *participant, const Json &content, const Json &extra)
    {
        Json body{{"id", id}, {"conversationId", conversation}, {"participant", participant}, {"timestamp", m_t + 10},
                  {"contentType", "text"}, {"content", content}, {"source", {{"type", "explicit"}, {"method", "mail/turn"}}},
                  {"status", "complete"}};
        body.update(extra);
        event("mail.turn.added", Json{{"conversationId", conversation}, {"turn", body}});
    }
    void participant(const char *conversation, const char *id, const char *type, const char *role)
    {
        event("mail.participant.joined",
              Json{{"conversationId", conversation},
                   {"participant", {{"id", id}, {"conversationId", conversation}, {"type", type}, {"role", role}, {"joinedAt", m_t + 10}}}});
    }
    void checkpoint(const char *id, const char *agentId, const char *label, const char *workSession, const Json &metadata)
    {
        event("trajectory.checkpoint", Json{{"checkpoint", {{"id", id}, {"agentId", agentId}, {"label", label}, {"sessionId", workSession},
                                                            {"metadata", metadata}, {"timestamp", m_t + 10}}}});
    }
    void flush()
    {
        if (m_store)
            m_store->flushChanges();
    }

    // The frames as a trace (docs/trace-format.md, version 2: `frame` written last).
    bool writeTrace(const QString &path) const
    {
        QFile file(path);
        if (!file.open(QIODevice::WriteOnly))
            return false;
        QByteArray text("{\"format\":\"map-inspector-trace\",\"version\":2,\"app\":\"test\",\"startedAt\":");
        text.append(QByteArray::number(kStart)).append(",\"url\":\"ws://test\"}\n");
        text.append("{\"t\":").append(QByteArray::number(kStart)).append(",\"dir\":\"open\",\"conn\":1,\"raw\":\"ws://test\"}\n");
        for (const Record &record : m_records) {
            text.append("{\"t\":").append(QByteArray::number(record.timeMs));
            text.append(record.sent ? ",\"dir\":\"send\"" : ",\"dir\":\"recv\"");
            text.append(",\"conn\":1,\"frame\":").append(QByteArray::fromStdString(record.frame.dump())).append("}\n");
        }
        return file.write(text) == text.size() && file.flush();
    }

private:
    struct Record
    {
        qint64 timeMs;
        bool sent;
        Json frame;
    };
    void sent(const Json &frame)
    {
        m_records.push_back({m_t, true, frame});
        if (m_store)
            m_pipeline.frameSent(QByteArray::fromStdString(frame.dump()), m_t);
    }
    void received(const Json &frame)
    {
        m_records.push_back({m_t, false, frame});
        if (m_store)
            m_store->apply(m_pipeline.frameReceived(QByteArray::fromStdString(frame.dump()), m_t).inputs);
    }

    SystemStore *m_store;
    ProtocolPipeline m_pipeline;
    std::vector<Record> m_records;
    qint64 m_t = kStart;
    qint64 m_sequence = 0;
};

// Three agents. "Fix login bug": started by alice's session; bob invited by his agent id and
// joining again from his session (MAPServer's participants: one agent, two entries); a reply, a
// thread with a turn in it, an intercepted map/send answering a turn not kept, then closed.
// "Weekly sync": bob's, carol joins and leaves. Checkpoints of bob (two) and alice (one).
void playScenario(MailFeed &feed, bool mail = true, bool workspace = true)
{
    feed.connect(mail, workspace);
    feed.agent("agent-alice", "alice", "sess-alice");
    feed.agent("agent-bob", "bob", "sess-bob");
    feed.agent("agent-carol", "carol", "sess-carol");

    feed.participant("conv-1", "sess-alice", "user", "initiator");
    feed.participant("conv-1", "agent-bob", "agent", "assistant");
    feed.event("mail.created", {{"conversationId", "conv-1"}, {"type", "task"}, {"subject", "Fix login bug"}, {"createdBy", "sess-alice"}});
    feed.turn("conv-1", "turn-1", "sess-alice", {{"text", "Can you look at the login bug?\nIt fails since Monday."}}, Json::object());
    feed.participant("conv-1", "sess-bob", "user", "assistant");
    feed.turn("conv-1", "turn-2", "sess-bob", {{"text", "On it."}}, {{"inReplyTo", "turn-1"}});
    feed.event("mail.thread.created",
               {{"conversationId", "conv-1"},
                {"thread", {{"id", "thread-1"}, {"conversationId", "conv-1"}, {"subject", "repro steps"}, {"rootTurnId", "turn-2"},
                            {"createdBy", "sess-alice"}}}});
    feed.turn("conv-1", "turn-3", "agent-bob", {{"text", "Open /login, submit twice."}}, {{"threadId", "thread-1"}});
    feed.turn("conv-1", "turn-4", "sess-alice", {{"text", "please hurry"}, {"type", "chat"}},
              {{"contentType", "data"}, {"inReplyTo", "turn-0"}, {"source", {{"type", "intercepted"}, {"messageId", "msg-42"}}}});
    feed.event("mail.closed", {{"conversationId", "conv-1"}, {"closedBy", "sess-alice"}, {"reason", "fixed"}});

    feed.event("mail.created", {{"conversationId", "conv-2"}, {"type", "multi-agent"}, {"subject", "Weekly sync"}, {"createdBy", "agent-bob"}});
    feed.participant("conv-2", "agent-bob", "agent", "host");
    feed.participant("conv-2", "sess-carol", "user", "guest");
    feed.turn("conv-2", "turn-5", "agent-bob", {{"text", "Agenda: releases."}}, Json::object());
    feed.event("mail.participant.left", {{"conversationId", "conv-2"}, {"participantId", "sess-carol"}, {"reason", "done"}});

    feed.checkpoint("cp-1", "agent-bob", "reproduced bug", "work-42", {{"tokens", 1200}, {"files", Json::array({"src/login.ts"})}});
    feed.checkpoint("cp-2", "agent-bob", "fix committed", "work-42", {{"commit", "abc123"}});
    feed.checkpoint("cp-3", "agent-alice", "asked for a fix", "work-7", {{"tokens", 80}});
    feed.flush();
}

QString cell(const QAbstractItemModel &model, int row, int column, int role = Qt::DisplayRole)
{
    return model.index(row, column).data(role).toString();
}

int proxyRowOf(const QAbstractItemModel &proxy, const QString &conversationId)
{
    for (int row = 0; row < proxy.rowCount(); ++row)
        if (cell(proxy, row, 0, ConversationListModel::ConversationIdRole) == conversationId)
            return row;
    return -1;
}

// The build folder (the other GUI tests' convention), or $MAPI_SCREENSHOTS_DIR.
QString screenshotPath(const char *name)
{
    const QString dir = qEnvironmentVariable("MAPI_SCREENSHOTS_DIR");
    if (dir.isEmpty())
        return QLatin1String(name);
    return dir + QLatin1Char('/') + QLatin1String(name);
}

// A double-click as a person makes it: a click, then the double-click (item views take a
// double-click only on the item the press before it was on).
void doubleClickAt(QAbstractItemView *view, const QRect &itemRect)
{
    QVERIFY(view->viewport()->rect().contains(itemRect.center()));
    QTest::mouseClick(view->viewport(), Qt::LeftButton, {}, itemRect.center());
    QTest::mouseDClick(view->viewport(), Qt::LeftButton, {}, itemRect.center());
}

void makeCurrent(QTableView *table, int row)
{
    table->selectionModel()->setCurrentIndex(table->model()->index(row, 0),
                                             QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
}

} // namespace

class TestConversations : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase()
    {
        mapi::test::failOnQtWarnings();
        applyTheme(Theme::Light);
    }

    void conversationListFollowsTheStore()
    {
        SystemStore store;
        ConversationListModel model(&store);
        QAbstractItemModelTester tester(&model, kFatal);
        const QStringList titles{QStringLiteral("Subject"), QStringLiteral("Type"), QStringLiteral("Status"),
                                 QStringLiteral("Participants"), QStringLiteral("Turns"), QStringLiteral("Last activity")};
        QCOMPARE(titles.size(), int(ConversationListModel::ColumnCount));
        for (int column = 0; column < ConversationListModel::ColumnCount; ++column)
            QCOMPARE(model.headerData(column, Qt::Horizontal).toString(), titles[column]);

        MailFeed feed(&store);
        playScenario(feed);
        QCOMPARE(model.rowCount(), 2);
        QCOMPARE(model.rowOfConversation(QStringLiteral("conv-1")), 0);
        QCOMPARE(cell(model, 0, ConversationListModel::SubjectColumn), QStringLiteral("Fix login bug"));
        QCOMPARE(cell(model, 0, ConversationListModel::TypeColumn), QStringLiteral("task"));
        QCOMPARE(cell(model, 0, ConversationListModel::StatusColumn), QStringLiteral("completed · fixed"));
        // alice (by her session) and bob (by his agent id and by his session): two agents.
        QCOMPARE(model.index(0, ConversationListModel::ParticipantsColumn).data().toInt(), 2);
        QCOMPARE(cell(model, 0, ConversationListModel::TurnsColumn), QStringLiteral("4"));
        QVERIFY(!cell(model, 0, ConversationListModel::LastActivityColumn).isEmpty());
        const QString filterText = cell(model, 0, ConversationListModel::SubjectColumn, ConversationListModel::FilterTextRole);
        QVERIFY2(filterText.contains(QLatin1String("alice")) && filterText.contains(QLatin1String("bob")), qPrintable(filterText));
        QVERIFY(!filterText.contains(QLatin1String("sess-")));

        QCOMPARE(cell(model, 1, ConversationListModel::SubjectColumn), QStringLiteral("Weekly sync"));
        QCOMPARE(cell(model, 1, ConversationListModel::TypeColumn), QStringLiteral("multi-agent"));
        QCOMPARE(cell(model, 1, ConversationListModel::StatusColumn), QStringLiteral("active"));
        QCOMPARE(model.index(1, ConversationListModel::ParticipantsColumn).data().toInt(), 2);
        QCOMPARE(cell(model, 1, ConversationListModel::TurnsColumn), QStringLiteral("1"));
        QVERIFY(model.index(1, ConversationListModel::LastActivityColumn).data(ConversationListModel::SortRole).toLongLong()
                > model.index(0, ConversationListModel::LastActivityColumn).data(ConversationListModel::SortRole).toLongLong());

        // A new turn changes its conversation's row; a new conversation is appended.
        QSignalSpy inserted(&model, &QAbstractItemModel::rowsInserted);
        QSignalSpy changed(&model, &QAbstractItemModel::dataChanged);
        QSignalSpy reset(&model, &QAbstractItemModel::modelReset);
        feed.turn("conv-1", "turn-9", "sess-bob", {{"text", "done"}}, Json::object());
        feed.event("mail.created", {{"conversationId", "conv-3"}, {"type", "agent-task"}, {"subject", "Deploy"}, {"createdBy", "agent-alice"}});
        feed.flush();
        QCOMPARE(inserted.count(), 1);
        QCOMPARE(reset.count(), 0);
        QCOMPARE(model.rowCount(), 3);
        QCOMPARE(cell(model, 0, ConversationListModel::TurnsColumn), QStringLiteral("5"));
        QCOMPARE(cell(model, 2, ConversationListModel::SubjectColumn), QStringLiteral("Deploy"));
        bool firstRowAnnounced = false;
        for (const QList<QVariant> &args : std::as_const(changed))
            firstRowAnnounced = firstRowAnnounced || args.at(0).toModelIndex().row() == 0;
        QVERIFY(firstRowAnnounced);
    }

    void turnsInOrderWithNamesRepliesAndThreads()
    {
        SystemStore store;
        TurnListModel turns(&store);
        QAbstractItemModelTester tester(&turns, kFatal);
        turns.setConversationId(QStringLiteral("conv-1")); // not there yet: shown once it comes
        QCOMPARE(turns.rowCount(), 0);

        MailFeed feed(&store);
        playScenario(feed);
        QCOMPARE(turns.rowCount(), 4);
        const QStringList ids{QStringLiteral("turn-1"), QStringLiteral("turn-2"), QStringLiteral("turn-3"), QStringLiteral("turn-4")};
        const QStringList names{QStringLiteral("alice"), QStringLiteral("bob"), QStringLiteral("bob"), QStringLiteral("alice")};
        int previousEvent = -1;
        for (int row = 0; row < 4; ++row) {
            QCOMPARE(cell(turns, row, 0, TurnListModel::TurnIdRole), ids[row]);
            QCOMPARE(turns.rowOfTurn(ids[row]), row);
            QCOMPARE(cell(turns, row, TurnListModel::NumberColumn), QString::number(row + 1));
            QCOMPARE(cell(turns, row, TurnListModel::ParticipantColumn), names[row]); // names, not session ids
            const int eventRow = turns.index(row, 0).data(TurnListModel::EventRowRole).toInt();
            QVERIFY(eventRow > previousEvent);
            previousEvent = eventRow;
        }
        // Replies: to a kept turn by its row number (the role gives the row), else by its id.
        QCOMPARE(cell(turns, 0, TurnListModel::ReplyToColumn), QString());
        QCOMPARE(turns.index(0, 0).data(TurnListModel::ReplyToRowRole).toInt(), -1);
        QCOMPARE(cell(turns, 1, TurnListModel::ReplyToColumn), QStringLiteral("↩ #1"));
        QCOMPARE(turns.index(1, 0).data(TurnListModel::ReplyToRowRole).toInt(), 0);
        QCOMPARE(cell(turns, 3, TurnListModel::ReplyToColumn), QStringLiteral("↩ turn-0"));
        QCOMPARE(turns.index(3, 0).data(TurnListModel::ReplyToRowRole).toInt(), -1);
        // Threads by subject; the intercepted turn names its message.
        QCOMPARE(cell(turns, 0, TurnListModel::ThreadColumn), QString());
        QCOMPARE(cell(turns, 2, TurnListModel::ThreadColumn), QStringLiteral("repro steps"));
        QCOMPARE(cell(turns, 0, TurnListModel::ContentTypeColumn), QStringLiteral("text"));
        QCOMPARE(cell(turns, 3, TurnListModel::ContentTypeColumn), QStringLiteral("data · intercepted (msg-42)"));
        // One line in the cell, the whole text in its tooltip and FullTextRole.
        QCOMPARE(cell(turns, 0, TurnListModel::TextColumn), QStringLiteral("Can you look at the login bug?…"));
        QCOMPARE(cell(turns, 0, 0, TurnListModel::FullTextRole), QStringLiteral("Can you look at the login bug?\nIt fails since Monday."));
        QCOMPARE(cell(turns, 0, TurnListModel::TextColumn, Qt::ToolTipRole), QStringLiteral("Can you look at the login bug?\nIt fails since Monday."));

        // A new turn is one row insert; a turn of another conversation changes nothing here.
        QSignalSpy inserted(&turns, &QAbstractItemModel::rowsInserted);
        QSignalSpy reset(&turns, &QAbstractItemModel::modelReset);
        QSignalSpy changed(&turns, &QAbstractItemModel::dataChanged);
        feed.turn("conv-2", "turn-6", "agent-bob", {{"text", "elsewhere"}}, Json::object());
        feed.flush();
        QCOMPARE(changed.count(), 0);
        feed.turn("conv-1", "turn-9", "sess-alice", {{"text", "thanks"}}, {{"inReplyTo", "turn-3"}});
        feed.flush();
        QCOMPARE(inserted.count(), 1);
        QCOMPARE(reset.count(), 0);
        QCOMPARE(turns.rowCount(), 5);
        QCOMPARE(turns.index(4, 0).data(TurnListModel::ReplyToRowRole).toInt(), 2);
    }

    void conversationsPanelShowsTheSelectedConversation()
    {
        InspectorSession session;
        SelectionHub hub;
        ConversationsPanel panel(&session, &hub);
        QSignalSpy available(&panel, &ConversationsPanel::availabilityChanged);
        QVERIFY(!panel.hasContent());
        MailFeed feed(session.store());
        playScenario(feed);
        QVERIFY(panel.hasContent());
        QCOMPARE(available.count(), 1);
        QCOMPARE(available.at(0).at(0).toBool(), true);

        panel.resize(1200, 900);
        panel.show();
        QVERIFY(QTest::qWaitForWindowExposed(&panel));
        auto *table = panel.findChild<QTableView *>(QStringLiteral("conversationsTable"));
        auto *turnTable = panel.findChild<QTableView *>(QStringLiteral("turnsTable"));
        auto *header = panel.findChild<QLabel *>(QStringLiteral("conversationHeader"));
        auto *participants = panel.findChild<QLabel *>(QStringLiteral("conversationParticipants"));
        auto *threads = panel.findChild<QTreeWidget *>(QStringLiteral("conversationThreads"));
        auto *goToAnswered = panel.findChild<QPushButton *>(QStringLiteral("goToAnsweredTurn"));
        auto *turnText = panel.findChild<QPlainTextEdit *>(QStringLiteral("turnText"));
        QVERIFY(table && turnTable && header && participants && threads && goToAnswered && turnText);
        QCOMPARE(table->model()->rowCount(), 2);
        // The most recently active first: the weekly sync's events came last.
        QCOMPARE(cell(*table->model(), 0, ConversationListModel::SubjectColumn), QStringLiteral("Weekly sync"));

        makeCurrent(table, proxyRowOf(*table->model(), QStringLiteral("conv-1")));
        QCOMPARE(panel.currentConversationId(), QStringLiteral("conv-1"));
        for (const char *part : {"Fix login bug", "task", "completed", "closed: fixed", "created by alice"})
            QVERIFY2(header->text().contains(QLatin1String(part)), qPrintable(header->text()));
        // One entry per agent, with its role: bob joined twice (agent id, then his session).
        const QString who = participants->text();
        QCOMPARE(who.count(QLatin1String("<b>alice</b>")), 1);
        QCOMPARE(who.count(QLatin1String("<b>bob</b>")), 1);
        QVERIFY2(who.contains(QLatin1String("initiator")) && who.contains(QLatin1String("assistant")), qPrintable(who));
        QVERIFY(!who.contains(QLatin1String("sess-")));
        QCOMPARE(threads->topLevelItemCount(), 1);
        QCOMPARE(threads->topLevelItem(0)->text(0), QStringLiteral("repro steps"));
        QCOMPARE(threads->topLevelItem(0)->text(1), QStringLiteral("#2"));
        QCOMPARE(turnTable->model()->rowCount(), 4);

        // A reply offers the turn it answers; going there shows that turn's whole text.
        makeCurrent(turnTable, 1);
        QCOMPARE(turnText->toPlainText(), QStringLiteral("On it."));
        QVERIFY(goToAnswered->isEnabled());
        goToAnswered->click();
        QCOMPARE(turnTable->selectionModel()->currentIndex().row(), 0);
        QCOMPARE(turnText->toPlainText(), QStringLiteral("Can you look at the login bug?\nIt fails since Monday."));
        QVERIFY(!goToAnswered->isEnabled());

        // Double-clicking the reply cell goes to the answered turn too, and opens nothing.
        const auto doubleClick = [turnTable](int row, int column) {
            doubleClickAt(turnTable, turnTable->visualRect(turnTable->model()->index(row, column)));
        };
        doubleClick(1, TurnListModel::ReplyToColumn);
        QCOMPARE(turnTable->selectionModel()->currentIndex().row(), 0);
        QCOMPARE(hub.focusKind(), SelectionHub::Kind::None);

        // Double-clicking a turn (or Enter) opens its event in the inspector.
        doubleClick(2, TurnListModel::TextColumn);
        QCOMPARE(hub.focusKind(), SelectionHub::Kind::Event);
        QCOMPARE(hub.focusKey(), QString::number(turnTable->model()->index(2, 0).data(TurnListModel::EventRowRole).toInt()));
        makeCurrent(turnTable, 3);
        QTest::keyClick(turnTable, Qt::Key_Return);
        QCOMPARE(hub.focusKey(), QString::number(turnTable->model()->index(3, 0).data(TurnListModel::EventRowRole).toInt()));

        // A thread's root turn, by double-click.
        doubleClickAt(threads, threads->visualItemRect(threads->topLevelItem(0)));
        QCOMPARE(turnTable->selectionModel()->currentIndex().row(), 1);

        // The filter: by subject, by type, by participant name.
        auto *filter = panel.findChild<QLineEdit *>(QStringLiteral("conversationFilter"));
        const auto filterBy = [filter](const QString &text) {
            filter->setText(text);
            QTest::keyClick(filter, Qt::Key_Return); // applies at once
        };
        filterBy(QStringLiteral("weekly"));
        QCOMPARE(table->model()->rowCount(), 1);
        QCOMPARE(cell(*table->model(), 0, 0, ConversationListModel::ConversationIdRole), QStringLiteral("conv-2"));
        filterBy(QStringLiteral("task"));
        QCOMPARE(table->model()->rowCount(), 1);
        QCOMPARE(cell(*table->model(), 0, 0, ConversationListModel::ConversationIdRole), QStringLiteral("conv-1"));
        filterBy(QStringLiteral("carol"));
        QCOMPARE(table->model()->rowCount(), 1);
        QCOMPARE(cell(*table->model(), 0, 0, ConversationListModel::ConversationIdRole), QStringLiteral("conv-2"));
        QCOMPARE(panel.currentConversationId(), QStringLiteral("conv-1")); // filtered out, still shown
        filterBy(QString());
        QCOMPARE(table->model()->rowCount(), 2);
        const QModelIndexList selected = table->selectionModel()->selectedRows();
        QCOMPARE(selected.size(), qsizetype(1)); // the conversation shown is selected again
        QCOMPARE(selected.first().data(ConversationListModel::ConversationIdRole).toString(), QStringLiteral("conv-1"));

        // Who left is marked.
        makeCurrent(table, proxyRowOf(*table->model(), QStringLiteral("conv-2")));
        QVERIFY2(participants->text().contains(QLatin1String("left")), qPrintable(participants->text()));
        QCOMPARE(participants->text().count(QLatin1String("<b>carol</b>")), 1);

        makeCurrent(table, proxyRowOf(*table->model(), QStringLiteral("conv-1")));
        makeCurrent(turnTable, 1);
        QTest::qWait(50); // lays out and paints the selection
        // What the picture shows: both conversations' subjects, conv-1 selected; the current turn
        // selected with its sender and text in their cells; its text in the turn's box; who takes part.
        const QImage shot = mapi::test::picture(&panel);
        QVERIFY(shot.save(screenshotPath("conversations-light.png")));
        QString why;
        for (int r = 0; r < table->model()->rowCount(); ++r) {
            const QModelIndex subject = table->model()->index(r, ConversationListModel::SubjectColumn);
            QVERIFY2(mapi::test::cellDrawn(shot, &panel, table, subject, &why), qPrintable(why));
            const bool shown = subject.data(ConversationListModel::ConversationIdRole).toString() == QStringLiteral("conv-1");
            QCOMPARE(mapi::test::selectedColor(shot, mapi::test::cellRect(&panel, table, subject), table), shown);
        }
        for (int c : {int(TurnListModel::ParticipantColumn), int(TurnListModel::TextColumn)}) {
            const QModelIndex turn = turnTable->model()->index(1, c);
            QVERIFY2(mapi::test::cellDrawn(shot, &panel, turnTable, turn, &why), qPrintable(why));
            QVERIFY(mapi::test::selectedColor(shot, mapi::test::cellRect(&panel, turnTable, turn), turnTable));
            QVERIFY(!mapi::test::selectedColor(shot, mapi::test::cellRect(&panel, turnTable, turn.siblingAtRow(0)), turnTable));
        }
        const QRect firstLine = mapi::test::rectIn(&panel, turnText->viewport(),
                                                   QRect(0, 0, turnText->viewport()->width(), turnText->fontMetrics().height() + 8));
        QVERIFY2(mapi::test::inkSpansText(shot, firstLine, turnText->toPlainText().section(u'\n', 0, 0), turnText->font(), &why),
                 qPrintable(why));
        QVERIFY(mapi::test::inkPixels(shot, mapi::test::rectIn(&panel, participants)) > 200);
    }

    void emptyStatesSayWhy()
    {
        {
            InspectorSession session;
            SelectionHub hub;
            ConversationsPanel panel(&session, &hub);
            QSignalSpy available(&panel, &ConversationsPanel::availabilityChanged);
            MailFeed feed(session.store());
            feed.connect(false, true);
            feed.flush();
            auto *empty = panel.findChild<QLabel *>(QStringLiteral("conversationsEmpty"));
            QVERIFY(empty);
            QCOMPARE(empty->text(), QStringLiteral("This server does not serve conversations (no capabilities.mail in map/connect)"));
            QVERIFY(!panel.hasContent());
            QCOMPARE(available.count(), 0);
        }
        InspectorSession session;
        SelectionHub hub;
        ConversationsPanel panel(&session, &hub);
        QSignalSpy available(&panel, &ConversationsPanel::availabilityChanged);
        MailFeed feed(session.store());
        feed.connect(true, false);
        feed.flush();
        QCOMPARE(panel.findChild<QLabel *>(QStringLiteral("conversationsEmpty"))->text(), QStringLiteral("No conversations yet"));
        QVERIFY(panel.hasContent());
        QCOMPARE(available.count(), 1);
        QCOMPARE(available.at(0).at(0).toBool(), true);
    }

    void agentWorkListsTheSelectedAgentsCheckpoints()
    {
        InspectorSession session;
        SelectionHub hub;
        MailFeed feed(session.store());
        playScenario(feed);
        AgentWorkPanel panel(&session, &hub);
        QVERIFY(panel.hasContent());
        auto *title = panel.findChild<QLabel *>(QStringLiteral("agentWorkTitle"));
        auto *table = panel.findChild<QTableView *>(QStringLiteral("checkpointsTable"));
        auto *fetch = panel.findChild<QPushButton *>(QStringLiteral("fetchCheckpointContent"));
        auto *reason = panel.findChild<QLabel *>(QStringLiteral("checkpointFetchReason"));
        QVERIFY(title && table && fetch && reason);
        QVERIFY2(title->text().startsWith(QLatin1String("Select an agent")), qPrintable(title->text()));
        QCOMPARE(table->model()->rowCount(), 0);
        QAbstractItemModelTester tester(table->model(), kFatal);

        hub.selectAgents({QStringLiteral("agent-bob")});
        QCOMPARE(panel.agentId(), QStringLiteral("agent-bob"));
        QVERIFY(title->text().contains(QLatin1String("bob")));
        QCOMPARE(table->model()->rowCount(), 2);
        QCOMPARE(cell(*table->model(), 0, CheckpointModel::LabelColumn), QStringLiteral("reproduced bug"));
        QCOMPARE(cell(*table->model(), 1, CheckpointModel::LabelColumn), QStringLiteral("fix committed"));
        QCOMPARE(cell(*table->model(), 0, CheckpointModel::WorkSessionColumn), QStringLiteral("work-42"));
        QVERIFY(cell(*table->model(), 0, CheckpointModel::MetadataColumn).contains(QLatin1String("\"tokens\":1200")));
        QVERIFY(table->model()->index(0, 0).data(CheckpointModel::EventRowRole).toInt() >= 0);

        // Not live: listed, not fetched, and said why.
        makeCurrent(table, 0);
        QVERIFY(!fetch->isEnabled());
        QCOMPARE(reason->text(), QStringLiteral("content is fetched from a live server; not connected"));
        auto *tabs = panel.findChild<QTabWidget *>(QStringLiteral("agentWorkTabs"));
        QVERIFY(tabs->isTabEnabled(1)); // the server advertised its workspace
        QCOMPARE(panel.findChild<QLabel *>(QStringLiteral("workspaceReason"))->text(),
                 QStringLiteral("files are read from a live server; not connected"));
        QVERIFY(!panel.findChild<QPushButton *>(QStringLiteral("workspaceList"))->isEnabled());

        // An empty selection keeps the agent; another agent shows its own; new ones arrive.
        hub.selectAgents({});
        QCOMPARE(panel.agentId(), QStringLiteral("agent-bob"));
        hub.selectAgents({QStringLiteral("agent-alice")});
        QCOMPARE(table->model()->rowCount(), 1);
        QCOMPARE(cell(*table->model(), 0, CheckpointModel::LabelColumn), QStringLiteral("asked for a fix"));
        QSignalSpy inserted(table->model(), &QAbstractItemModel::rowsInserted);
        feed.checkpoint("cp-4", "agent-alice", "reviewed the fix", "work-7", Json::object());
        feed.checkpoint("cp-5", "agent-bob", "deployed", "work-42", Json::object());
        feed.flush();
        QCOMPARE(inserted.count(), 1);
        QCOMPARE(table->model()->rowCount(), 2);
    }

    void loadedTraceListsCheckpointsButFetchesNothing()
    {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const QString path = dir.filePath(QStringLiteral("mail-system.jsonl"));
        {
            MailFeed frames(nullptr);
            playScenario(frames);
            QVERIFY(frames.writeTrace(path));
        }
        InspectorSession session;
        SelectionHub hub;
        AgentWorkPanel work(&session, &hub);
        ConversationsPanel conversations(&session, &hub);
        QVERIFY(!work.hasContent());
        QString error;
        QVERIFY2(session.openTraceAndWait(path, &error), qPrintable(error));
        session.store()->flushChanges();
        QCOMPARE(session.source(), InspectorSession::Source::Trace);
        QCOMPARE(session.store()->checkpoints().checkpoints().size(), size_t(3));
        QVERIFY(work.hasContent());
        QVERIFY(conversations.hasContent());
        QCOMPARE(conversations.findChild<QTableView *>(QStringLiteral("conversationsTable"))->model()->rowCount(), 2);

        hub.selectAgents({QStringLiteral("agent-bob")});
        auto *table = work.findChild<QTableView *>(QStringLiteral("checkpointsTable"));
        QCOMPARE(table->model()->rowCount(), 2);
        makeCurrent(table, 0);
        auto *fetch = work.findChild<QPushButton *>(QStringLiteral("fetchCheckpointContent"));
        auto *reason = work.findChild<QLabel *>(QStringLiteral("checkpointFetchReason"));
        auto *fetching = work.findChild<QWidget *>(QStringLiteral("checkpointFetching"));
        auto *status = work.findChild<QLabel *>(QStringLiteral("checkpointContentStatus"));
        QVERIFY(!fetch->isEnabled());
        QCOMPARE(reason->text(), QStringLiteral("content is fetched from a live server; this is a recording"));
        QCOMPARE(work.findChild<QLabel *>(QStringLiteral("workspaceReason"))->text(),
                 QStringLiteral("files are read from a live server; this is a recording"));

        work.resize(1000, 600);
        work.show();
        QVERIFY(QTest::qWaitForWindowExposed(&work));
        QVERIFY(reason->isVisible());
        // Double-clicking asks for nothing: no request waits, nothing is said to be fetched.
        doubleClickAt(table, table->visualRect(table->model()->index(0, CheckpointModel::LabelColumn)));
        QVERIFY(!fetching->isVisible());
        QVERIFY(status->text().isEmpty());
        QTest::qWait(50);
        // What the picture shows: the reason, the checkpoint's label selected in its row.
        const QImage shot = mapi::test::picture(&work);
        QVERIFY(shot.save(screenshotPath("checkpoints-light.png")));
        QString why;
        QVERIFY2(mapi::test::labelDrawn(shot, &work, reason, &why), qPrintable(why));
        const QModelIndex label = table->model()->index(0, CheckpointModel::LabelColumn);
        QVERIFY2(mapi::test::cellDrawn(shot, &work, table, label, &why), qPrintable(why));
        QVERIFY(mapi::test::selectedColor(shot, mapi::test::cellRect(&work, table, label), table));
        QVERIFY2(mapi::test::cellDrawn(shot, &work, table, label.siblingAtRow(1), &why), qPrintable(why));
    }

    void readableArtifactsAndWorkspaceListings()
    {
        // The captured answer of trajectory/content (map-extensions.md §4.3), with one more
        // artifact that does not read as text.
        const Json artifacts = Json::parse(
            "{\"transcript\":[{\"role\":\"user\",\"text\":\"fix login\"},{\"role\":\"assistant\",\"text\":\"patched src/login.ts\"}],"
            "\"prompts\":[\"fix login\"],\"metadata\":{\"note\":\"transcript is streamed\"}}");
        const ReadableText readable = readableArtifacts(artifacts, AgentWorkPanel::kMaxShownChars);
        QCOMPARE(readable.artifacts, 2);
        QVERIFY(!readable.cut);
        QCOMPARE(readable.text, QStringLiteral("── prompts ──\nfix login\n\n── transcript ──\nuser: fix login\nassistant: patched src/login.ts\n"));
        const ReadableText cut = readableArtifacts(artifacts, 10);
        QVERIFY(cut.cut);
        QCOMPARE(cut.text.size(), qsizetype(10));
        const ReadableText longLog = readableArtifacts(Json{{"log", std::string(5000, 'x')}}, 100);
        QVERIFY(longLog.cut);
        QCOMPARE(longLog.text.size(), qsizetype(100));
        bool textCut = false;
        QCOMPARE(boundedText(Json("h\xC3\xA9llo"), 2, &textCut), QStringLiteral("h")); // not inside "é"
        QVERIFY(textCut);
        QCOMPARE(boundedText(Json(42), 10), QString());

        WorkspaceFileModel files;
        QAbstractItemModelTester tester(&files, kFatal);
        const Json listing = Json::parse("{\"files\":[{\"path\":\"README.md\",\"isDirectory\":false,\"size\":21},"
                                         "{\"path\":\"src/login.ts\",\"isDirectory\":false,\"size\":44},{\"path\":\"src\",\"isDirectory\":true}]}");
        QCOMPARE(files.setFiles(listing), 0);
        QCOMPARE(files.rowCount(), 3);
        QCOMPARE(cell(files, 0, WorkspaceFileModel::PathColumn), QStringLiteral("src/")); // directories first
        QVERIFY(files.index(0, 0).data(WorkspaceFileModel::IsDirectoryRole).toBool());
        QCOMPARE(cell(files, 1, WorkspaceFileModel::PathColumn, WorkspaceFileModel::PathRole), QStringLiteral("README.md"));
        QCOMPARE(files.index(1, 0).data(WorkspaceFileModel::SizeRole).toLongLong(), qint64(21));
        QCOMPARE(files.index(0, 0).data(WorkspaceFileModel::SizeRole).toLongLong(), qint64(-1));
        QCOMPARE(cell(files, 2, WorkspaceFileModel::PathColumn), QStringLiteral("src/login.ts"));
    }
};

QTEST_MAIN(TestConversations)
#include "tst_conversations.moc"
