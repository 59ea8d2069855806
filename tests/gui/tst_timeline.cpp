// The timeline: time ↔ pixel geometry, lanes and groups over the real capture, clicking arrows,
// marks and lane headers, follow-live, level of detail.
#include "GuiTestSupport.h"
#include "StateSpellings.h"
#include "TraceReplayer.h"

#include "panels/TimelinePanel.h"
#include "session/InspectorSession.h"
#include "session/SelectionHub.h"
#include "common/NaturalSort.h"
#include "timeline/TimelineAxis.h"
#include "style/Colors.h"
#include "timeline/TimelineColors.h"
#include "timeline/TimelineView.h"
#include "timeline/SortedTimes.h"
#include "trace/Trace.h"

#include <QSet>
#include <QComboBox>
#include <QHelpEvent>
#include <QWheelEvent>
#include <QLabel>
#include <QScrollBar>
#include <QSignalSpy>
#include <QToolButton>
#include <QToolTip>
#include <QtTest>

#include <algorithm>
#include <random>
#include <set>

using namespace mapi;
using namespace mapi::ui;

namespace {

const QString kCapture = QStringLiteral(MAPI_TEST_DATA "/scenario-deliver.ndjson");

std::vector<TraceRecord> captureRecords()
{
    std::vector<TraceRecord> records;
    TraceReadStats stats;
    QString error;
    readTrace(kCapture, [&](const TraceRecord &r) {
        records.push_back(r);
        return true;
    }, stats, &error);
    return records;
}

qint64 newestMessageTime(const SystemStore &store)
{
    qint64 newest = 0;
    for (const Message &m : store.messages())
        newest = std::max(newest, m.timestampMs);
    return newest;
}

// A panel over the capture, laid out at a typical bottom-dock size.
struct Fixture
{
    InspectorSession session;
    SelectionHub hub;
    TimelinePanel panel{&session, &hub};
    TimelineView *view = panel.view();

    explicit Fixture(bool fill = true)
    {
        panel.resize(1400, 420);
        panel.show();
        if (fill) {
            QString error;
            if (!session.openTraceAndWait(kCapture, &error))
                qFatal("capture: %s", qPrintable(error));
        }
    }
    const SystemStore &store() const { return *session.store(); }
};

// A message drawn as an arrow with its sender known, no other message within `clearanceMs`.
int isolatedMessage(const TimelineView &view, const SystemStore &store, qint64 clearanceMs)
{
    const auto &refs = view.index().messages();
    for (size_t i = 0; i < refs.size(); ++i) {
        const Message &m = store.messages()[size_t(refs[i].messageRow)];
        if (refs[i].senderAgentRow < 0 || m.toAgentIds.isEmpty() || m.convention == ConventionKind::Heartbeat)
            continue;
        const bool clearBefore = i == 0 || refs[i].timeMs - refs[i - 1].timeMs >= clearanceMs;
        const bool clearAfter = i + 1 == refs.size() || refs[i + 1].timeMs - refs[i].timeMs >= clearanceMs;
        if (clearBefore && clearAfter)
            return int(i);
    }
    return -1;
}

} // namespace

class TimelineTest : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase() { test::failOnQtWarnings(); }

    void mapping_data();
    void mapping();
    void roundTrip_data();
    void roundTrip();
    void zoomKeepsPointFixed_data();
    void zoomKeepsPointFixed();
    void showRange();
    void tickSteps_data();
    void tickSteps();
    void naturalOrder();
    void stateStripsFollowTheStateClass();
    void sortedTimesKeepEveryTime();

    void lanesForEveryAgent();
    void laneIndexesMatchTheStore();
    void slicedIngestGivesTheSameIndex();
    void clickArrowFocusesMessage();
    void clickMarkFocusesEvent();
    void clickHeaderSelectsAgent();
    void clickActionAndGap();
    void wheelAndKeys();
    void followLive();
    void followButtonResumes();
    void groupByScope();
    void collapseAndExpand();
    void groupBySubtree();
    void denseColumnsAggregate();
    void recipientsLearnedLaterLandOnTheirLanes();
    void resetEmptiesTheView();
    void trimmedHistoryLeavesTheIndexAndIsMarked();
};

// ---- geometry ------------------------------------------------------------------------------

void TimelineTest::mapping_data()
{
    QTest::addColumn<double>("startMs");
    QTest::addColumn<double>("msPerPixel");
    QTest::addColumn<double>("left");
    QTest::addColumn<double>("timeMs");
    QTest::addColumn<double>("x");
    QTest::newRow("origin") << 1000.0 << 10.0 << 0.0 << 1000.0 << 0.0;
    QTest::newRow("halfway") << 1000.0 << 10.0 << 0.0 << 6000.0 << 500.0;
    QTest::newRow("header offset") << 1000.0 << 10.0 << 200.0 << 6000.0 << 700.0;
    QTest::newRow("before start") << 1000.0 << 2.0 << 100.0 << 800.0 << 0.0;
    QTest::newRow("epoch, sub-ms zoom") << 1795252123000.0 << 0.01 << 200.0 << 1795252123005.5 << 750.0;
}

void TimelineTest::mapping()
{
    QFETCH(double, startMs);
    QFETCH(double, msPerPixel);
    QFETCH(double, left);
    QFETCH(double, timeMs);
    QFETCH(double, x);
    TimelineAxis axis;
    axis.startMs = startMs;
    axis.msPerPixel = msPerPixel;
    axis.left = left;
    axis.width = 1000;
    QVERIFY(qAbs(axis.mapTimeToX(timeMs) - x) < 1e-6);
    QVERIFY(qAbs(axis.mapXToTime(x) - timeMs) < 1e-6);
}

void TimelineTest::roundTrip_data()
{
    QTest::addColumn<double>("msPerPixel");
    QTest::addColumn<double>("timeMs");
    QTest::newRow("10 ms/px") << 10.0 << 1795252125432.0;
    QTest::newRow("10 µs/px") << 0.01 << 1795252123000.125;
    QTest::newRow("1 h/px") << 3600000.0 << 1795252123000.0;
    QTest::newRow("before the window") << 5.0 << 1795252000000.0;
}

void TimelineTest::roundTrip()
{
    QFETCH(double, msPerPixel);
    QFETCH(double, timeMs);
    TimelineAxis axis;
    axis.startMs = 1795252123000.0;
    axis.msPerPixel = msPerPixel;
    axis.left = 200;
    axis.width = 1400;
    // Time → x → time within a twentieth of a pixel's worth of time; x → time → x likewise
    // (doubles at epoch milliseconds resolve about 0.25 µs).
    QVERIFY(qAbs(axis.mapXToTime(axis.mapTimeToX(timeMs)) - timeMs) <= msPerPixel * 0.05);
    for (const double x : {200.0, 333.5, 1599.0})
        QVERIFY(qAbs(axis.mapTimeToX(axis.mapXToTime(x)) - x) < 0.05);
}

void TimelineTest::zoomKeepsPointFixed_data()
{
    QTest::addColumn<double>("x");
    QTest::addColumn<double>("factor");
    QTest::newRow("in at the left edge") << 200.0 << 2.0;
    QTest::newRow("in at the middle") << 900.0 << 1.25;
    QTest::newRow("out at the right") << 1599.0 << 0.5;
    QTest::newRow("far in (clamped)") << 640.0 << 1e9;
    QTest::newRow("far out (clamped)") << 450.0 << 1e-9;
}

void TimelineTest::zoomKeepsPointFixed()
{
    QFETCH(double, x);
    QFETCH(double, factor);
    TimelineAxis axis;
    axis.startMs = 1795252123000.0;
    axis.msPerPixel = 7.0;
    axis.left = 200;
    axis.width = 1400;
    const double before = axis.mapXToTime(x);
    const double scaleBefore = axis.msPerPixel;
    axis.zoomAround(x, factor);
    QVERIFY(qAbs(axis.mapXToTime(x) - before) < 1e-3);
    QVERIFY(axis.msPerPixel >= TimelineAxis::kMinMsPerPixel && axis.msPerPixel <= TimelineAxis::kMaxMsPerPixel);
    if (factor > 1)
        QVERIFY(axis.msPerPixel < scaleBefore);
    else
        QVERIFY(axis.msPerPixel > scaleBefore);
}

void TimelineTest::showRange()
{
    TimelineAxis axis;
    axis.left = 200;
    axis.width = 1000;
    axis.showRange(5000, 15000);
    QCOMPARE(axis.msPerPixel, 10.0);
    QCOMPARE(axis.mapTimeToX(5000), 200.0);
    QCOMPARE(axis.mapTimeToX(15000), 1200.0);
    axis.placeTimeAt(20000, 0.5);
    QCOMPARE(axis.mapTimeToX(20000), 700.0);
    axis.panByPixels(100);
    QCOMPARE(axis.mapTimeToX(20000), 600.0);
}

void TimelineTest::tickSteps_data()
{
    QTest::addColumn<double>("msPerPixel");
    QTest::addColumn<double>("step");
    QTest::newRow("µs") << 0.001 << 0.1;     // 90 px = 0.09 ms → 0.1 ms
    QTest::newRow("ms") << 0.1 << 10.0;      // 9 ms → 10 ms
    QTest::newRow("2-5") << 0.03 << 5.0;     // 2.7 ms → 5 ms
    QTest::newRow("seconds") << 30.0 << 5000.0;   // 2.7 s → 5 s
    QTest::newRow("15 s") << 120.0 << 15000.0;    // 10.8 s → 15 s
    QTest::newRow("minutes") << 2000.0 << 300000.0; // 180 s → 5 min
    QTest::newRow("days") << 3600000.0 << 4.0 * 86400000.0; // 90 h → 4 days
}

void TimelineTest::tickSteps()
{
    QFETCH(double, msPerPixel);
    QFETCH(double, step);
    const double actual = timelineTickStepMs(msPerPixel, 90);
    QVERIFY2(qAbs(actual - step) < step * 1e-9, qPrintable(QString::number(actual)));
    QVERIFY(actual / msPerPixel >= 90 - 1e-6);
}

// The lanes' state strips colour every spelling of a state the one way (map/AgentStates.h).
void TimelineTest::stateStripsFollowTheStateClass()
{
    for (const auto &spelling : mapi::test::stateSpellings()) {
        const QColor color = agentStateColor(QString::fromUtf8(spelling.state));
        QColor expected = healthColor(Health::Healthy);
        switch (spelling.expected) {
        case StateClass::Failed: expected = healthColor(Health::Failed); break;
        case StateClass::Suspended: expected = healthColor(Health::Suspended); break;
        case StateClass::Stopping:
        case StateClass::Stopped: expected = healthColor(Health::Stopped); break;
        case StateClass::Idle: expected.setAlpha(90); break; // resting: the working colour, faded
        case StateClass::Busy: break;
        case StateClass::Other:
            if (QString::fromUtf8(spelling.state).isEmpty())
                expected.setAlpha(90);
            break;
        }
        QVERIFY2(color == expected, spelling.state);
    }
}

void TimelineTest::naturalOrder()
{
    QVERIFY(naturalLess(QStringLiteral("worker-2"), QStringLiteral("worker-10")));
    QVERIFY(!naturalLess(QStringLiteral("worker-10"), QStringLiteral("worker-2")));
    QVERIFY(naturalLess(QStringLiteral("worker-1"), QStringLiteral("worker-1.sub-1")));
    QVERIFY(naturalLess(QStringLiteral("worker-1.sub-2"), QStringLiteral("worker-1.sub-10")));
    QVERIFY(naturalLess(QStringLiteral("Alpha"), QStringLiteral("beta")));
    QVERIFY(!naturalLess(QStringLiteral("same"), QStringLiteral("same")));
    QCOMPARE(naturalCompare(QStringLiteral("worker-007"), QStringLiteral("worker-7")), 0); // leading zeros do not count

    // The topology sorts by precomputed keys, the tables and lanes by comparison: one order.
    const QStringList names = {QStringLiteral("worker-10.sub-2"), QStringLiteral("Worker-9"), QStringLiteral("worker-1.sub-10"),
                               QStringLiteral("auditor"), QStringLiteral("worker-1.sub-9"), QStringLiteral("worker-100"),
                               QStringLiteral("worker-1"), QStringLiteral("agent-2b"), QStringLiteral("agent-12a")};
    QStringList byCompare = names, byKey = names;
    std::sort(byCompare.begin(), byCompare.end(), [](const QString &a, const QString &b) { return naturalLess(a, b); });
    std::sort(byKey.begin(), byKey.end(), [](const QString &a, const QString &b) { return naturalSortKey(a) < naturalSortKey(b); });
    QCOMPARE(byKey, byCompare);
    QCOMPARE(byCompare.first(), QStringLiteral("agent-2b"));
    QCOMPARE(byCompare.last(), QStringLiteral("worker-100"));
}

// ---- the view over the capture -------------------------------------------------------------

void TimelineTest::lanesForEveryAgent()
{
    Fixture f; // the panel exists before the trace: it fills from the store's changed() batches
    const SystemStore &store = f.store();
    QCOMPARE(int(store.agents().size()), 20);
    QCOMPARE(f.view->index().laneCount(), 20);
    std::set<int> agentsWithLanes;
    for (const LaneRow &row : f.view->lanes().rows()) {
        if (row.kind != LaneRow::Kind::Agent)
            continue;
        QVERIFY(agentsWithLanes.insert(row.agentRow).second); // one lane per agent
        QCOMPARE(row.id, store.agents()[size_t(row.agentRow)].id);
    }
    QCOMPARE(int(agentsWithLanes.size()), 20);
    for (int a = 0; a < 20; ++a)
        QCOMPARE(f.view->lanes().rows()[size_t(f.view->lanes().rowOfAgent(a))].agentRow, a);
    auto *summary = f.panel.findChild<QLabel *>(QStringLiteral("timelineSummary"));
    QVERIFY(summary->text().contains(QStringLiteral("102 messages")));
}

// A message indexed with one recipient learns a second from a delivery (as the official server's
// do): each recipient's lane gets the message once, whichever order the store keeps them in.
// The lanes' endpoint times in 4 bytes: against a plain sorted list, through times weeks apart
// (more spans than one), out of order, equal, and trimmed from the front.
void TimelineTest::sortedTimesKeepEveryTime()
{
    std::mt19937_64 random(21);
    const qint64 day = 24LL * 3600 * 1000;
    const qint64 clusters[] = {1795252123457LL, 1795252123457LL + 60 * day, 1795252123457LL - 90 * day,
                               1795252123457LL + 200 * day};
    SortedTimes times;
    std::vector<qint64> plain;
    int reorders = 0;
    size_t mostSpans = 0;
    for (int i = 0; i < 6000; ++i) {
        qint64 t;
        if (i % 500 < 400) // mostly in order within a cluster, as messages arrive
            t = (plain.empty() ? clusters[0] : plain.back()) + qint64(random() % 50);
        else
            t = clusters[random() % 4] + qint64(random() % (2 * day)) - day;
        if (i % 97 == 0 && !plain.empty())
            t = plain[size_t(random() % plain.size())]; // equal to one kept
        const auto at = std::upper_bound(plain.begin(), plain.end(), t);
        const bool appended = at == plain.end();
        plain.insert(at, t);
        QCOMPARE(times.insert(t), appended);
        reorders += !appended;
        mostSpans = std::max(mostSpans, times.spanCount());
        QVERIFY(times.spanCount() <= times.size());
        if (i % 1000 == 999) { // trimmed from the front
            const size_t gone = size_t(random() % (plain.size() / 3));
            plain.erase(plain.begin(), plain.begin() + qsizetype(gone));
            times.eraseFront(gone);
        }
        if (i % 50 == 0 || i == 5999) {
            QCOMPARE(times.toVector(), plain);
            for (int probe = 0; probe < 20; ++probe) {
                const double at = double(clusters[random() % 4] + qint64(random() % (2 * day)) - day) + 0.5 * (probe % 2);
                const size_t from = plain.empty() ? 0 : size_t(random() % plain.size()) / 4;
                const size_t expected = size_t(std::lower_bound(plain.begin() + qsizetype(from), plain.end(), at,
                                                                [](qint64 e, double v) { return double(e) < v; })
                                               - plain.begin());
                QCOMPARE(times.lowerBound(at, std::min(from, expected)), expected);
                QCOMPARE(times.upperBound(qint64(at)), size_t(std::upper_bound(plain.begin(), plain.end(), qint64(at)) - plain.begin()));
            }
        }
    }
    QVERIFY(reorders > 500);
    QVERIFY2(mostSpans > 3, qPrintable(QString::number(mostSpans))); // the weeks apart made spans
    // One span when the times lie within 49 days: 4 bytes each.
    SortedTimes near;
    for (int i = 0; i < 1000; ++i)
        near.insert(clusters[0] + qint64(i) * 3 * day / 1000);
    QCOMPARE(near.spanCount(), size_t(1));
    QVERIFY(near.memoryBytes() < 1000 * 6);
}

void TimelineTest::recipientsLearnedLaterLandOnTheirLanes()
{
    SystemStore store;
    ProtocolPipeline pipeline;
    qint64 now = 1'000'000;
    int sequence = 0;
    const auto event = [&](const char *type, const Json &data, const char *agent) {
        now += 10;
        const std::string id = "evt-" + std::to_string(++sequence);
        const Json frame = {{"jsonrpc", "2.0"}, {"method", "map/event"},
                            {"params", {{"subscriptionId", "s"}, {"sequenceNumber", sequence}, {"eventId", id},
                                        {"event", {{"id", id}, {"type", type}, {"timestamp", now},
                                                   {"source", {{"agentId", agent}}}, {"data", data}}}}}};
        store.apply(pipeline.frameReceived(QByteArray::fromStdString(frame.dump()), now).inputs);
    };
    for (const char *agent : {"zed", "amy", "kim"})
        event("agent.registered", {{"agent", {{"id", agent}, {"name", agent}, {"state", "idle"}}}}, agent);
    TimelineIndex index;
    // Sent to "zed"; delivered to "amy" too, whom the store's list then keeps first (by id).
    event("message.sent", {{"message", {{"id", "m1"}, {"from", "kim"}, {"to", "zed"}, {"payload", {{"x", 1}}}}}}, "kim");
    index.ingest(store);
    event("message.delivered", {{"messageId", "m1"}, {"agentId", "amy"}}, "amy");
    index.ingest(store);
    QCOMPARE(store.messages().recipientCount(0), 2);
    for (const char *agent : {"zed", "amy", "kim"})
        QCOMPARE(int(index.endpointTimes(store.agentRow(QString::fromLatin1(agent))).size()), 1);
}

void TimelineTest::laneIndexesMatchTheStore()
{
    Fixture f;
    const SystemStore &store = f.store();
    const TimelineIndex &index = f.view->index();
    QCOMPARE(index.messages().size(), store.messages().size());
    QVERIFY(std::is_sorted(index.messages().begin(), index.messages().end(),
                           [](const auto &a, const auto &b) { return a.timeMs < b.timeMs; }));
    // Every endpoint of every message is on its agent's lane, once.
    std::vector<int> expected(store.agents().size(), 0);
    for (const Message &m : store.messages()) {
        const int sender = store.agentRow(m.fromAgentId);
        if (sender >= 0)
            ++expected[size_t(sender)];
        for (const QString &to : m.toAgentIds)
            if (const int r = store.agentRow(to); r >= 0 && r != sender)
                ++expected[size_t(r)];
    }
    for (int a = 0; a < int(store.agents().size()); ++a) {
        QCOMPARE(int(index.endpointTimes(a).size()), expected[size_t(a)]);
        const std::vector<qint64> times = index.endpointTimes(a).toVector();
        QVERIFY(std::is_sorted(times.begin(), times.end()));
    }
    // Every message's recipients as the view draws its arrow: the store's, as agent rows.
    int severalRecipients = 0;
    for (size_t row = 0; row < store.messages().size(); ++row) {
        QSet<int> inStore;
        for (const QString &to : store.messages()[row].toAgentIds)
            if (const int r = store.agentRow(to); r >= 0)
                inStore.insert(r);
        QSet<int> drawn;
        int calls = 0;
        index.forEachRecipient(store, int(row), [&](int agentRow) {
            drawn.insert(agentRow);
            ++calls;
        });
        QCOMPARE(drawn, inStore);
        QCOMPARE(calls, int(inStore.size()));
        severalRecipients += inStore.size() > 1;
    }
    QVERIFY2(severalRecipients > 30, qPrintable(QString::number(severalRecipients))); // 37 in this capture
    // Lifecycle marks: one per registration, state change and unregistration, each with the
    // state the event announced.
    int lifecycle = 0;
    for (const EventEntry &e : store.events())
        lifecycle += store.events().kind(e) == EventKind::AgentRegistered || store.events().kind(e) == EventKind::AgentStateChanged
                     || store.events().kind(e) == EventKind::AgentUnregistered;
    int marks = 0;
    for (int a = 0; a < int(store.agents().size()); ++a) {
        for (const TimelineIndex::StateMark &mark : index.stateMarks(a)) {
            ++marks;
            QCOMPARE(store.events().agentId(store.events()[size_t(mark.eventRow)]), store.agents()[size_t(a)].id);
            if (mark.kind() == EventKind::AgentStateChanged)
                QVERIFY(!index.stateName(mark.stateId).isEmpty());
        }
        // The newest mark carries the agent's current state.
        const auto &list = index.stateMarks(a);
        if (!list.empty() && list.back().kind() != EventKind::AgentUnregistered)
            QCOMPARE(index.stateName(list.back().stateId), store.agents()[size_t(a)].state);
    }
    QCOMPARE(marks, lifecycle);
    QCOMPARE(lifecycle, 20 + 121 + 7);
    QCOMPARE(index.firstTimeMs() <= index.lastTimeMs(), true);
}

void TimelineTest::slicedIngestGivesTheSameIndex()
{
    SystemStore store;
    test::fillFromCapture(store);
    TimelineIndex whole;
    QVERIFY(whole.ingest(store).complete);
    TimelineIndex sliced;
    int calls = 0;
    while (!sliced.ingest(store, 7).complete)
        ++calls;
    QVERIFY(calls > 50); // 695 events, 7 per call
    QCOMPARE(sliced.messages().size(), whole.messages().size());
    for (size_t i = 0; i < whole.messages().size(); ++i) {
        QCOMPARE(sliced.messages()[i].messageRow, whole.messages()[i].messageRow);
        QCOMPARE(sliced.messages()[i].senderAgentRow, whole.messages()[i].senderAgentRow);
    }
    for (int a = 0; a < whole.laneCount(); ++a) {
        QCOMPARE(sliced.endpointTimes(a).toVector(), whole.endpointTimes(a).toVector());
        const auto &wholeMarks = whole.stateMarks(a);
        const auto &slicedMarks = sliced.stateMarks(a);
        QCOMPARE(slicedMarks.size(), wholeMarks.size());
        for (size_t k = 0; k < wholeMarks.size(); ++k) {
            QCOMPARE(slicedMarks[k].eventRow, wholeMarks[k].eventRow);
            QCOMPARE(sliced.stateName(slicedMarks[k].stateId), whole.stateName(wholeMarks[k].stateId));
        }
    }
    QCOMPARE(sliced.firstTimeMs(), whole.firstTimeMs());
    QCOMPARE(sliced.lastTimeMs(), whole.lastTimeMs());
}

void TimelineTest::clickArrowFocusesMessage()
{
    Fixture f;
    const SystemStore &store = f.store();
    const int i = isolatedMessage(*f.view, store, 3);
    QVERIFY(i >= 0);
    const TimelineIndex::MessageRef ref = f.view->index().messages()[size_t(i)];
    // 40 ms across the plot: neighbours are ≥ 3 ms, i.e. ≥ 90 px, away.
    f.view->showTimeRange(double(ref.timeMs) - 20, double(ref.timeMs) + 20);
    const int senderRow = f.view->lanes().rowOfAgent(ref.senderAgentRow);
    f.view->scrollRowIntoView(senderRow);
    const int x = int(std::floor(f.view->axis().mapTimeToX(double(ref.timeMs))));
    const QPoint onArrow(x, f.view->rowCenterY(senderRow));
    QVERIFY(f.view->plotRect().contains(onArrow));

    QSignalSpy focusSpy(&f.hub, &SelectionHub::focusChanged);
    QTest::mouseClick(f.view->viewport(), Qt::LeftButton, {}, onArrow + QPoint(40, 0)); // empty lane: nothing
    QCOMPARE(focusSpy.count(), 0);
    QTest::mouseClick(f.view->viewport(), Qt::LeftButton, {}, onArrow + QPoint(2, 0));
    QCOMPARE(f.hub.focusKind(), SelectionHub::Kind::Message);
    QCOMPARE(f.hub.focusKey(), QString::number(ref.messageRow));

    // Its tooltip names the sender and the recipients.
    QHelpEvent help(QEvent::ToolTip, onArrow, f.view->viewport()->mapToGlobal(onArrow));
    QApplication::sendEvent(f.view->viewport(), &help);
    const Message &m = store.messages()[size_t(ref.messageRow)];
    QVERIFY2(QToolTip::text().contains(store.agent(m.fromAgentId)->name), qPrintable(QToolTip::text()));
    QVERIFY(QToolTip::text().contains(QStringLiteral("→")));
    QToolTip::hideText();
}

void TimelineTest::clickMarkFocusesEvent()
{
    Fixture f;
    const SystemStore &store = f.store();
    // A state change with no other mark on its lane within 3 ms.
    for (int a = 0; a < int(store.agents().size()); ++a) {
        const auto &marks = f.view->index().stateMarks(a);
        for (size_t k = 0; k < marks.size(); ++k) {
            if (marks[k].kind() != EventKind::AgentStateChanged)
                continue;
            if ((k > 0 && marks[k].timeMs - marks[k - 1].timeMs < 3)
                || (k + 1 < marks.size() && marks[k + 1].timeMs - marks[k].timeMs < 3))
                continue;
            f.view->showTimeRange(double(marks[k].timeMs) - 20, double(marks[k].timeMs) + 20);
            const int row = f.view->lanes().rowOfAgent(a);
            f.view->scrollRowIntoView(row);
            const QPoint onMark(int(std::floor(f.view->axis().mapTimeToX(double(marks[k].timeMs)))),
                                f.view->rowTopY(row) + TimelineLanes::kLaneHeight - 4);
            QTest::mouseClick(f.view->viewport(), Qt::LeftButton, {}, onMark);
            QCOMPARE(f.hub.focusKind(), SelectionHub::Kind::Event);
            QCOMPARE(f.hub.focusKey(), QString::number(marks[k].eventRow));
            QCOMPARE(store.events().kind(store.events()[size_t(marks[k].eventRow)]), EventKind::AgentStateChanged);
            return;
        }
    }
    QFAIL("no isolated state change in the capture");
}

void TimelineTest::clickHeaderSelectsAgent()
{
    Fixture f;
    const SystemStore &store = f.store();
    const int agent = store.agentRow(store.agents().back().id);
    const int row = f.view->lanes().rowOfAgent(agent);
    f.view->scrollRowIntoView(row);
    QTest::mouseClick(f.view->viewport(), Qt::LeftButton, {}, QPoint(120, f.view->rowCenterY(row)));
    QCOMPARE(f.hub.selectedAgents(), QStringList{store.agents()[size_t(agent)].id});
    QCOMPARE(f.hub.focusKind(), SelectionHub::Kind::Agent);

    // Ctrl+click adds another agent; clicking a group header selects the whole group.
    const int other = f.view->lanes().rowOfAgent(0);
    f.view->scrollRowIntoView(other);
    QTest::mouseClick(f.view->viewport(), Qt::LeftButton, Qt::ControlModifier, QPoint(120, f.view->rowCenterY(other)));
    QCOMPARE(f.hub.selectedAgents().size(), 2);
    const int group = 0; // the first row is a scope group
    QCOMPARE(f.view->lanes().rows()[group].kind, LaneRow::Kind::Group);
    f.view->scrollRowIntoView(group);
    QTest::mouseClick(f.view->viewport(), Qt::LeftButton, {}, QPoint(120, f.view->rowCenterY(group)));
    QCOMPARE(f.hub.selectedAgents(), f.view->lanes().agentIdsUnder(store, group));
}

void TimelineTest::clickActionAndGap()
{
    Fixture f;
    SystemStore &store = *f.session.store();
    const Agent &target = store.agents()[3];
    const qint64 middle = (f.view->index().firstTimeMs() + f.view->index().lastTimeMs()) / 2;
    ActionUpdate created;
    created.step = ActionUpdate::Step::Created;
    created.action.id = QStringLiteral("act-1");
    created.action.kind = ActionKind::Suspend;
    created.action.agentId = target.id;
    created.timeMs = middle;
    Gap gap;
    gap.kind = Gap::Kind::Reconnect;
    gap.timeMs = middle + 400;
    gap.detail = QStringLiteral("replay unavailable");
    store.apply(ModelInputs{created, GapInput{gap}});
    store.flushChanges();
    QCOMPARE(int(f.view->index().actions().size()), 1);
    QCOMPARE(int(f.view->index().gaps().size()), 1);
    auto *summary = f.panel.findChild<QLabel *>(QStringLiteral("timelineSummary"));
    QVERIFY(summary->text().contains(QStringLiteral("1 gap")));

    // The action's flag hangs at the top of the target's lane.
    f.view->showTimeRange(double(middle) - 20, double(middle) + 20);
    const int row = f.view->lanes().rowOfAgent(store.agentRow(target.id));
    f.view->scrollRowIntoView(row);
    const QPoint onFlag(int(std::floor(f.view->axis().mapTimeToX(double(middle)))) + 3, f.view->rowTopY(row) + 4);
    QTest::mouseClick(f.view->viewport(), Qt::LeftButton, {}, onFlag);
    QCOMPARE(f.hub.focusKind(), SelectionHub::Kind::Action);
    QCOMPARE(f.hub.focusKey(), QStringLiteral("act-1"));
    QHelpEvent help(QEvent::ToolTip, onFlag, f.view->viewport()->mapToGlobal(onFlag));
    QApplication::sendEvent(f.view->viewport(), &help);
    QVERIFY2(QToolTip::text().contains(actionStatusName(ActionStatus::Sent)), qPrintable(QToolTip::text()));
    QToolTip::hideText();

    // The gap crosses every lane: found on any row, including the group headers.
    f.view->showTimeRange(double(gap.timeMs) - 20, double(gap.timeMs) + 20);
    const int gapX = int(std::floor(f.view->axis().mapTimeToX(double(gap.timeMs))));
    int gapHits = 0;
    for (const int y : {f.view->rowCenterY(0), f.view->plotRect().center().y(), f.view->plotRect().bottom() - 2}) {
        const TimelineView::Hit hit = f.view->hitTest(QPoint(gapX + 1, y));
        if (hit.kind == TimelineView::Hit::Kind::Message)
            continue; // an arrow at the same time wins
        QCOMPARE(hit.kind, TimelineView::Hit::Kind::Gap);
        QCOMPARE(hit.index, 0);
        ++gapHits;
    }
    QVERIFY(gapHits > 0);
    QVERIFY(f.view->hitTest(QPoint(gapX + 30, f.view->rowCenterY(0))).kind != TimelineView::Hit::Kind::Gap);
}

void TimelineTest::wheelAndKeys()
{
    Fixture f;
    f.view->panByPixels(-100); // paused: zoom keeps the point under the mouse
    QVERIFY(!f.view->followLive());
    auto wheel = [&](QPoint at, QPoint angle, Qt::KeyboardModifiers modifiers) {
        QWheelEvent event(at, f.view->viewport()->mapToGlobal(at), QPoint(), angle, Qt::NoButton, modifiers,
                          Qt::NoScrollPhase, false);
        QApplication::sendEvent(f.view->viewport(), &event);
    };
    const QPoint at(f.view->plotRect().left() + 300, f.view->plotRect().center().y());

    // Ctrl+wheel zooms around the mouse.
    const double timeUnderMouse = f.view->axis().mapXToTime(at.x());
    const double scale = f.view->axis().msPerPixel;
    wheel(at, QPoint(0, 120), Qt::ControlModifier);
    QVERIFY(f.view->axis().msPerPixel < scale);
    QVERIFY(qAbs(f.view->axis().mapXToTime(at.x()) - timeUnderMouse) < 1e-6);
    wheel(at, QPoint(0, -240), Qt::ControlModifier);
    QVERIFY(f.view->axis().msPerPixel > scale);
    QVERIFY(qAbs(f.view->axis().mapXToTime(at.x()) - timeUnderMouse) < 1e-6);

    // The wheel scrolls time (down: later), Shift+wheel the lanes.
    const double start = f.view->axis().startMs;
    wheel(at, QPoint(0, -120), {});
    QVERIFY(f.view->axis().startMs > start);
    const int laneScroll = f.view->verticalScrollBar()->value();
    wheel(at, QPoint(0, -120), Qt::ShiftModifier);
    QVERIFY(f.view->verticalScrollBar()->value() > laneScroll);
    QVERIFY(!f.view->followLive());

    // Keys: + and − zoom, Home goes to the start, End follows again.
    f.view->setFocus();
    const double beforeKeys = f.view->axis().msPerPixel;
    QTest::keyClick(f.view, Qt::Key_Plus);
    QVERIFY(f.view->axis().msPerPixel < beforeKeys);
    QTest::keyClick(f.view, Qt::Key_Minus);
    QVERIFY(qAbs(f.view->axis().msPerPixel - beforeKeys) < beforeKeys * 1e-9);
    QTest::keyClick(f.view, Qt::Key_Home);
    QVERIFY(f.view->axis().containsTime(double(f.view->index().firstTimeMs())));
    QTest::keyClick(f.view, Qt::Key_End);
    QVERIFY(f.view->followLive());
    QVERIFY(f.view->axis().containsTime(f.view->liveEdgeMs()));
}

void TimelineTest::followLive()
{
    const std::vector<TraceRecord> records = captureRecords();
    QVERIFY(records.size() > 100);
    Fixture f(false);
    SystemStore &store = *f.session.store();
    mapi::test::TraceReplayer replayer(&store);
    QVERIFY(f.view->followLive());

    // Feed the capture in eight slices; after each batch the newest message is in sight.
    const size_t slice = records.size() / 8 + 1;
    size_t fed = 0;
    auto feedSlice = [&] {
        for (size_t end = std::min(records.size(), fed + slice); fed < end; ++fed)
            replayer.feed(records[fed]);
        store.flushChanges();
    };
    for (int k = 0; k < 4; ++k) {
        feedSlice();
        if (store.messages().empty())
            continue;
        const double newest = double(newestMessageTime(store));
        QVERIFY2(f.view->axis().containsTime(newest), qPrintable(QStringLiteral("slice %1").arg(k)));
        QVERIFY(f.view->plotRect().contains(QPoint(int(f.view->axis().mapTimeToX(newest)), f.view->plotRect().center().y())));
    }
    QVERIFY(!store.messages().empty());

    // Scrolling back (the Left key, then the scroll bar) pauses following.
    QSignalSpy followSpy(f.view, &TimelineView::followLiveChanged);
    f.view->setFocus();
    QTest::keyClick(f.view, Qt::Key_Left);
    QVERIFY(!f.view->followLive());
    QCOMPARE(followSpy.count(), 1);
    auto *followButton = f.panel.findChild<QToolButton *>(QStringLiteral("timelineFollow"));
    QVERIFY(!followButton->isChecked());
    f.view->horizontalScrollBar()->triggerAction(QAbstractSlider::SliderSingleStepSub);
    QVERIFY(!f.view->followLive());
    const double pausedStart = f.view->axis().startMs;

    // Data keeps arriving while paused: indexed, but the window stays where the operator put it.
    const size_t messagesBefore = f.view->index().messages().size();
    while (fed < records.size())
        feedSlice();
    QVERIFY(f.view->index().messages().size() > messagesBefore);
    QCOMPARE(f.view->index().messages().size(), store.messages().size());
    QCOMPARE(f.view->axis().startMs, pausedStart);
    QVERIFY(!f.view->axis().containsTime(double(newestMessageTime(store))));

    // End resumes: the newest message is in sight again.
    QTest::keyClick(f.view, Qt::Key_End);
    QVERIFY(f.view->followLive());
    QVERIFY(followButton->isChecked());
    QVERIFY(f.view->axis().containsTime(double(newestMessageTime(store))));
}

void TimelineTest::followButtonResumes()
{
    Fixture f;
    f.view->panByPixels(-600);
    QVERIFY(!f.view->followLive());
    QVERIFY(!f.view->axis().containsTime(f.view->liveEdgeMs()));
    // Zooming while paused stays paused; the tool button resumes.
    f.view->zoomBy(1.5);
    QVERIFY(!f.view->followLive());
    auto *followButton = f.panel.findChild<QToolButton *>(QStringLiteral("timelineFollow"));
    followButton->click();
    QVERIFY(f.view->followLive());
    QVERIFY(f.view->axis().containsTime(f.view->liveEdgeMs()));
    // Zooming while following keeps the live edge in place.
    const double edgeX = f.view->axis().mapTimeToX(f.view->liveEdgeMs());
    f.view->zoomBy(2);
    QVERIFY(f.view->followLive());
    QVERIFY(qAbs(f.view->axis().mapTimeToX(f.view->liveEdgeMs()) - edgeX) < 1e-6);
}

void TimelineTest::groupByScope()
{
    Fixture f;
    const SystemStore &store = f.store();
    QCOMPARE(f.view->grouping(), LaneGrouping::Scope);
    // Expected: one group per live scope that has members (the deleted one has none left).
    std::set<QString> expected;
    bool unscoped = false;
    for (const Agent &a : store.agents()) {
        bool inLiveScope = false;
        for (const QString &scopeId : a.scopes)
            if (const Scope *s = store.scope(scopeId); s && !s->deleted) {
                expected.insert(scopeId);
                inLiveScope = true;
            }
        unscoped = unscoped || !inLiveScope;
    }
    QCOMPARE(int(expected.size()), 3);
    std::set<QString> groups;
    for (const LaneRow &row : f.view->lanes().rows())
        if (row.kind == LaneRow::Kind::Group && row.key != QLatin1String("noscope"))
            QVERIFY(groups.insert(row.id).second);
    QCOMPARE(groups, expected);
    QCOMPARE(f.view->lanes().groupCount(), int(expected.size()) + (unscoped ? 1 : 0));
    // Nested as the scopes are: squads sit one level below the project.
    for (const LaneRow &row : f.view->lanes().rows())
        if (row.kind == LaneRow::Kind::Group && row.key != QLatin1String("noscope"))
            QCOMPARE(row.depth, store.scope(row.id)->parentId.isEmpty() ? 0 : 1);
    // An agent's lane sits in one of its own scopes.
    for (int r = 0; r < int(f.view->lanes().rows().size()); ++r) {
        const LaneRow &row = f.view->lanes().rows()[size_t(r)];
        if (row.kind != LaneRow::Kind::Agent)
            continue;
        int g = r;
        while (g >= 0 && f.view->lanes().rows()[size_t(g)].kind != LaneRow::Kind::Group)
            --g;
        QVERIFY(g >= 0);
        const LaneRow &group = f.view->lanes().rows()[size_t(g)];
        if (group.key != QLatin1String("noscope"))
            QVERIFY(store.agents()[size_t(row.agentRow)].scopes.count(group.id) == 1);
    }
}

void TimelineTest::collapseAndExpand()
{
    Fixture f;
    const SystemStore &store = f.store();
    const TimelineLanes &lanes = f.view->lanes();
    const int rowsBefore = int(lanes.rows().size());
    // The squad with the most agents of its own.
    int group = -1;
    for (int r = 0; r < rowsBefore; ++r)
        if (lanes.rows()[size_t(r)].kind == LaneRow::Kind::Group && lanes.rows()[size_t(r)].depth == 1) {
            group = r;
            break;
        }
    QVERIFY(group >= 0);
    const QString key = lanes.rows()[size_t(group)].key;
    const QStringList members = lanes.agentIdsUnder(store, group);
    QVERIFY(members.size() >= 2);

    // The toggle triangle collapses: one aggregated lane stands for every member.
    f.view->scrollRowIntoView(group);
    const int toggleX = 6 + lanes.rows()[size_t(group)].depth * 12 + 4;
    QTest::mouseClick(f.view->viewport(), Qt::LeftButton, {}, QPoint(toggleX, f.view->rowCenterY(group)));
    QVERIFY(f.view->isCollapsed(key));
    QCOMPARE(int(lanes.rows().size()), rowsBefore - int(members.size()));
    const int collapsedRow = lanes.rowWithKey(key);
    QVERIFY(lanes.rows()[size_t(collapsedRow)].collapsed);
    QCOMPARE(int(lanes.rows()[size_t(collapsedRow)].members.size()), int(members.size()));
    for (const QString &id : members)
        QCOMPARE(lanes.rowOfAgent(store.agentRow(id)), collapsedRow);
    f.view->viewport()->grab(); // paints the merged lane

    // And expands again.
    f.view->scrollRowIntoView(collapsedRow);
    QTest::mouseClick(f.view->viewport(), Qt::LeftButton, {}, QPoint(toggleX, f.view->rowCenterY(collapsedRow)));
    QVERIFY(!f.view->isCollapsed(key));
    QCOMPARE(int(lanes.rows().size()), rowsBefore);

    // Collapse all leaves only the top-level groups.
    f.view->collapseAll();
    for (const LaneRow &row : lanes.rows()) {
        QCOMPARE(row.depth, 0);
        QVERIFY(row.collapsed);
    }
    int covered = 0;
    for (const LaneRow &row : lanes.rows())
        covered += int(row.members.size());
    QCOMPARE(covered, int(store.agents().size()));
    f.view->expandAll();
    QCOMPARE(int(lanes.rows().size()), rowsBefore);
}

void TimelineTest::groupBySubtree()
{
    Fixture f;
    const SystemStore &store = f.store();
    auto *combo = f.panel.findChild<QComboBox *>(QStringLiteral("timelineGrouping"));
    combo->setCurrentIndex(combo->findData(int(LaneGrouping::Subtree)));
    QCOMPARE(f.view->grouping(), LaneGrouping::Subtree);
    const TimelineLanes &lanes = f.view->lanes();
    QCOMPARE(int(lanes.rows().size()), int(store.agents().size()));
    // Each child sits below its parent, one level deeper.
    for (int r = 0; r < int(lanes.rows().size()); ++r) {
        const LaneRow &row = lanes.rows()[size_t(r)];
        const int parent = store.agentRow(store.agents()[size_t(row.agentRow)].parentId);
        if (parent < 0) {
            QCOMPARE(row.depth, 0);
            continue;
        }
        const int parentRow = lanes.rowOfAgent(parent);
        QVERIFY(parentRow < r);
        QCOMPARE(row.depth, lanes.rows()[size_t(parentRow)].depth + 1);
        QVERIFY(lanes.rows()[size_t(parentRow)].expandable);
    }
    // Collapsing the coordinator folds its whole tree into its lane.
    const int coordinator = lanes.rowOfAgent(store.agentRow(store.subtree(store.agents()[0].id).first()));
    const QStringList tree = store.subtree(store.agents()[size_t(lanes.rows()[size_t(coordinator)].agentRow)].id);
    f.view->setCollapsed(lanes.rows()[size_t(coordinator)].key, true);
    for (const QString &id : tree)
        QCOMPARE(lanes.rowOfAgent(store.agentRow(id)), coordinator);
    QCOMPARE(int(lanes.rows()[size_t(coordinator)].members.size()), int(tree.size()));
}

void TimelineTest::denseColumnsAggregate()
{
    Fixture f;
    const TimelineIndex &index = f.view->index();
    // A day across the plot: every message falls in one or two pixel columns.
    f.view->showTimeRange(double(index.firstTimeMs()) - 3600e3, double(index.firstTimeMs()) + 23 * 3600e3);
    const int x = int(std::floor(f.view->axis().mapTimeToX(double(index.messages().front().timeMs))));
    // On a group header row: no marks there, only messages passing through.
    QCOMPARE(f.view->lanes().rows()[0].kind, LaneRow::Kind::Group);
    const TimelineView::Hit hit = f.view->hitTest(QPoint(x, f.view->rowCenterY(0)));
    QCOMPARE(hit.kind, TimelineView::Hit::Kind::Dense);
    QVERIFY(hit.count > TimelineView::kMaxArrowsPerColumn);
    // Painting the density with collapsed groups (merged lanes) and then zoomed in works too.
    f.view->collapseAll();
    QVERIFY(!f.view->viewport()->grab().isNull());
    f.view->showAll();
    QVERIFY(!f.view->viewport()->grab().isNull());
}

void TimelineTest::resetEmptiesTheView()
{
    Fixture f;
    f.view->panByPixels(-300);
    QVERIFY(!f.view->followLive());
    f.session.store()->reset();
    QVERIFY(f.view->index().isEmpty());
    QCOMPARE(f.view->index().messages().size(), size_t(0));
    QVERIFY(f.view->lanes().rows().empty());
    QVERIFY(f.view->followLive()); // a new source is followed again
    QVERIFY(!f.view->viewport()->grab().isNull());
    QString error;
    QVERIFY(f.session.openTraceAndWait(kCapture, &error));
    QCOMPARE(f.view->index().messages().size(), size_t(102));
    QCOMPARE(f.view->index().laneCount(), 20);
}

void TimelineTest::trimmedHistoryLeavesTheIndexAndIsMarked()
{
    // A live session's store trims its oldest history (the journal dropped it, or the memory
    // budget): the index lets go of the trimmed messages and marks, and the view marks the cut.
    Fixture f;
    SystemStore &store = *f.session.store();
    const size_t messagesBefore = f.view->index().messages().size();
    const size_t cutRow = store.events().size() / 2;
    store.trimHistoryBefore(store.events().receivedMs(cutRow));
    store.flushChanges();
    QTRY_COMPARE(f.view->index().trimmedEvents(), store.historyTrim().events);
    QVERIFY(store.historyTrim().events > 0);
    const TimelineIndex &index = f.view->index();
    QCOMPARE(index.trimmedBeforeMs(), store.historyTrim().beforeMs);
    QCOMPARE(index.messages().size(), store.messages().keptCount());
    QVERIFY(index.messages().size() < messagesBefore);
    for (const auto &ref : index.messages())
        QVERIFY(store.messages().isKept(size_t(ref.messageRow)));
    for (int a = 0; a < index.laneCount(); ++a)
        for (const TimelineIndex::StateMark &mark : index.stateMarks(a))
            QVERIFY(store.events().isKept(size_t(mark.eventRow)));
    QVERIFY(index.firstTimeMs() >= store.historyTrim().beforeMs || !index.actions().empty() || !index.gaps().empty());

    auto *summary = f.panel.findChild<QLabel *>(QStringLiteral("timelineSummary"));
    QTRY_VERIFY(summary->text().contains(QStringLiteral("trimmed")));
    QVERIFY(summary->text().contains(QStringLiteral("%1 events trimmed").arg(store.historyTrim().events)));
    QVERIFY(historyTrimmedText(store.historyTrim().beforeMs, store.historyTrim().events)
                .endsWith(QStringLiteral("trimmed (%1 events)").arg(store.historyTrim().events)));

    // The whole span in view: the trimmed stretch is shaded up to the boundary.
    const double cut = double(store.historyTrim().beforeMs);
    f.view->showTimeRange(cut - (double(index.lastTimeMs()) - cut), double(index.lastTimeMs()) + 100);
    QCoreApplication::processEvents(); // the bar's layout takes the summary's new width
    const QImage image = f.panel.grab().toImage();
    const QString shots = qEnvironmentVariable("MAPI_TIMELINE_PNG_DIR"); // to look at it
    if (!shots.isEmpty())
        image.save(shots + QStringLiteral("/timeline-trimmed.png"));
    const QImage plot = f.view->viewport()->grab().toImage();
    const int boundaryX = int(f.view->axis().mapTimeToX(cut));
    QVERIFY(boundaryX > 40 && boundaryX < plot.width());
    // One flat shade over lanes, marks and arrows alike, left of the boundary.
    const QColor shaded = plot.pixelColor(boundaryX - 12, plot.height() / 2);
    QCOMPARE(plot.pixelColor(boundaryX - 12, plot.height() * 3 / 4), shaded);
    QCOMPARE(plot.pixelColor(boundaryX - 30, plot.height() / 2 + 7), shaded);
    QVERIFY2(shaded != f.view->palette().color(QPalette::Base), qPrintable(shaded.name()));
}

QTEST_MAIN(TimelineTest)
#include "tst_timeline.moc"
