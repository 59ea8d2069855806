// The topology panel on a real capture (20 agents, 3 scopes, messages): nodes, the tidy tree,
// collapse, the stable layout when agents arrive, search, the N-hop neighbourhood, selection
// by mouse and from other panels, store reset, and what the picture looks like in both themes.
// Set MAPI_TOPOLOGY_PNG_DIR to keep the rendered pictures.
#include "GuiTestSupport.h"
#include "StateSpellings.h"

#include "panels/TopologyPanel.h"
#include "session/InspectorSession.h"
#include "session/SelectionHub.h"
#include "style/Colors.h"
#include "style/Theme.h"
#include "topology/TopologyCamera.h"
#include "common/NaturalSort.h"
#include "topology/TopologyGraph.h"
#include "topology/TopologyLayout.h"
#include "topology/TopologyStyle.h"
#include "topology/TopologyView.h"

#include <QLabel>
#include <QLineEdit>
#include <QSpinBox>

#include <cmath>
#include <memory>

using namespace mapi;
using namespace mapi::ui;

namespace {

const QString kCoordinator = QStringLiteral("01M7YNTXTCR87GCYP22D2WXKWD");
const QString kWorker2 = QStringLiteral("01M7YNTXW4C4PZ4HWW1FC4QC1G");
const QString kWorker3Sub1 = QStringLiteral("01M7YNTY1C23FTTF8NPNWQFD9J"); // custom:failed

double distance(QPointF a, QPointF b)
{
    return std::hypot(a.x() - b.x(), a.y() - b.y());
}

// A panel on a session replaying the capture, shown and laid out.
struct Fixture
{
    InspectorSession session;
    SelectionHub hub;
    std::unique_ptr<TopologyPanel> panel;
    TopologyView *view = nullptr;

    // `showDeparted`: the capture's departed leaf drawn too (the default hides it), so that every
    // agent has a node.
    bool open(bool showDeparted = true)
    {
        QString error;
        if (!session.openTraceAndWait(QStringLiteral(MAPI_TEST_DATA "/scenario-deliver.ndjson"), &error))
            return false;
        panel = std::make_unique<TopologyPanel>(&session, &hub);
        panel->resize(1200, 800);
        panel->show();
        view = panel->view();
        view->setShowDeparted(showDeparted);
        return QTest::qWaitForWindowExposed(panel.get());
    }
    const SystemStore &store() const { return *session.store(); }
    QPointF position(const QString &id) const { return view->nodePosition(id).value(); }
    QPoint screenPoint(const QString &id) const { return view->mapToView(position(id)).toPoint(); }
};

ModelInput agentRegistered(const QString &id, const QString &name, const QStringList &scopes)
{
    EventInput input;
    input.event.kind = EventKind::AgentRegistered;
    input.event.type = QStringLiteral("agent.registered");
    input.event.eventId = QStringLiteral("registered-") + id + QLatin1Char('-') + name; // a rename is a new event
    input.event.agentId = id;
    input.event.timestampMs = 1800000000000;
    AgentRecord record;
    record.id = id;
    record.name = name;
    record.state = QStringLiteral("idle");
    record.scopes = scopes;
    input.event.agent = record;
    input.receivedMs = input.event.timestampMs;
    return input;
}

ModelInput messageSent(int index, const QString &from, const QString &to, qint64 timeMs)
{
    EventInput input;
    input.event.kind = EventKind::MessageSent;
    input.event.type = QStringLiteral("message.sent");
    input.event.eventId = QStringLiteral("message-event-%1").arg(index);
    input.event.timestampMs = timeMs;
    MessageRecord message;
    message.id = QStringLiteral("message-%1").arg(index);
    message.from = from;
    message.to = Json(to.toStdString());
    message.timestampMs = timeMs;
    input.event.message = message;
    input.receivedMs = timeMs;
    return input;
}

bool colorsClose(const QColor &a, const QColor &b, int tolerance = 12)
{
    return std::abs(a.red() - b.red()) <= tolerance && std::abs(a.green() - b.green()) <= tolerance
           && std::abs(a.blue() - b.blue()) <= tolerance;
}

} // namespace

class TopologyTest : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void initTestCase()
    {
        test::failOnQtWarnings();
        applyTheme(Theme::Light);
    }

    // The camera's maths, without a widget.
    void cameraMapsBothWaysAndAgreesWithItsTransform()
    {
        TopologyCamera camera;
        camera.center = QPointF(120, -40);
        camera.scale = 0.37;
        camera.viewport = QSizeF(900, 600);
        QCOMPARE(camera.mapToView(camera.center), QPointF(450, 300)); // the centre is the viewport's middle
        for (const QPointF world : {QPointF(0, 0), QPointF(1234.5, 678.25), QPointF(-300, 90)}) {
            const QPointF view = camera.mapToView(world);
            QVERIFY(distance(camera.mapToWorld(view), world) < 1e-9);
            QVERIFY(distance(camera.worldTransform().map(world), view) < 1e-9);
        }
        const QPointF before = camera.mapToView(QPointF(10, 10));
        camera.panByPixels(QPointF(25, -5)); // the picture follows the pointer
        QVERIFY(distance(camera.mapToView(QPointF(10, 10)), before + QPointF(25, -5)) < 1e-9);
    }

    void cameraZoomKeepsTheAnchorAndTheLimits()
    {
        TopologyCamera camera;
        camera.center = QPointF(50, 50);
        camera.viewport = QSizeF(800, 500);
        const QPointF anchor(120, 430);
        const QPointF world = camera.mapToWorld(anchor);
        for (const double scale : {2.5, 0.1, 1e9, 1e-9}) {
            camera.zoomAround(anchor, scale);
            QVERIFY(camera.scale >= TopologyCamera::kMinScale && camera.scale <= TopologyCamera::kMaxScale);
            QVERIFY2(distance(camera.mapToView(world), anchor) < 1e-6, "the point under the cursor stays under it");
        }
        QCOMPARE(camera.scale, TopologyCamera::kMinScale);
    }

    void cameraFitsBoundsIntoAnArea()
    {
        TopologyCamera camera;
        camera.viewport = QSizeF(1000, 700);
        const QRectF bounds(-500, 200, 4000, 1000);
        const QRectF area(300, 24, 676, 500); // beside a legend: not centred in the viewport
        camera.fit(bounds, area, 1.5);
        const QRectF shown(camera.mapToView(bounds.topLeft()), camera.mapToView(bounds.bottomRight()));
        QVERIFY(distance(shown.center(), area.center()) < 1e-6);
        QVERIFY(shown.width() <= area.width() + 1e-6 && shown.height() <= area.height() + 1e-6);
        QVERIFY2(qAbs(shown.width() - area.width()) < 1e-6, "as large as fits: the wide graph fills the width");
        camera.fit(QRectF(0, 0, 10, 10), area, 1.5);
        QCOMPARE(camera.scale, 1.5); // a tiny graph is not blown up past the cap
        const TopologyCamera unchanged = camera;
        camera.fit(bounds, QRectF(0, 0, 0, 100), 1.5);
        QCOMPARE(camera.scale, unchanged.scale);
        QCOMPARE(camera.center, unchanged.center);
    }

    void cameraAnimatesTheScaleGeometrically()
    {
        TopologyCamera from, to;
        from.center = QPointF(0, 0);
        from.scale = 0.25;
        to.center = QPointF(100, -50);
        to.scale = 4.0;
        QCOMPARE(TopologyCamera::between(from, to, 0).scale, 0.25);
        QCOMPARE(TopologyCamera::between(from, to, 1).center, to.center);
        const TopologyCamera half = TopologyCamera::between(from, to, 0.5);
        QVERIFY(qAbs(half.scale - 1.0) < 1e-12); // the geometric mean of 0.25 and 4
        QCOMPARE(half.center, QPointF(50, -25));
    }

    void everyAgentHasANode()
    {
        Fixture f;
        QVERIFY(f.open(false));
        QTRY_VERIFY(f.view->isSettled());
        QCOMPARE(int(f.store().agents().size()), 20);
        // A departed leaf (a subtree that departed whole) is drawn only when asked for.
        int departedLeaves = 0;
        for (const Agent &a : f.store().agents())
            departedLeaves += a.unregistered && std::none_of(f.store().agents().begin(), f.store().agents().end(),
                                                             [&](const Agent &c) { return c.parentId == a.id; });
        QVERIFY(departedLeaves > 0);
        QCOMPARE(f.view->visibleNodeCount(), 20 - departedLeaves);
        f.view->setShowDeparted(true);
        QTRY_VERIFY(f.view->isSettled());
        QCOMPARE(f.view->visibleNodeCount(), 20);
        for (const Agent &a : f.store().agents())
            QVERIFY2(f.view->nodePosition(a.id).has_value(), qPrintable(a.id));
        // The first layout fits the whole system into the view.
        for (const Agent &a : f.store().agents())
            QVERIFY(f.view->rect().contains(f.screenPoint(a.id)));
    }

    void tidyTree()
    {
        Fixture f;
        QVERIFY(f.open());
        QTRY_VERIFY(f.view->isSettled());
        QHash<QString, QList<QPointF>> children;
        for (const Agent &a : f.store().agents()) {
            if (a.parentId.isEmpty())
                continue;
            const QPointF child = f.position(a.id), parent = f.position(a.parentId);
            QVERIFY2(child.y() > parent.y(), qPrintable(a.name));
            children[a.parentId] << child;
        }
        QVERIFY(children.size() >= 6);
        for (auto it = children.cbegin(); it != children.cend(); ++it) {
            double left = 1e9, right = -1e9;
            for (const QPointF &c : it.value()) {
                left = std::min(left, c.x());
                right = std::max(right, c.x());
            }
            QVERIFY2(std::abs(f.position(it.key()).x() - (left + right) / 2) < 0.01, "parent not centred over its children");
        }
        // No two nodes on one level closer than a node's width.
        const auto &agents = f.store().agents();
        for (size_t i = 0; i < agents.size(); ++i)
            for (size_t j = i + 1; j < agents.size(); ++j) {
                const QPointF a = f.position(agents[i].id), b = f.position(agents[j].id);
                if (std::abs(a.y() - b.y()) < 1)
                    QVERIFY2(std::abs(a.x() - b.x()) >= 30, "overlapping nodes");
            }
    }

    void layoutGridForestAndIncrementalPins()
    {
        // Two trees: a root with 20 leaves (stacked in rows), and a root with two subtrees.
        LayoutInput input;
        auto add = [&](int parent, double width) {
            LayoutNode n;
            n.parent = parent;
            n.width = width;
            n.sortKey = QString::number(input.nodes.size()).rightJustified(4, QLatin1Char('0'));
            input.nodes.push_back(n);
            return int(input.nodes.size()) - 1;
        };
        const int a = add(-1, 40);
        for (int i = 0; i < 20; ++i)
            add(a, 30 + (i % 3) * 20);
        const int b = add(-1, 40);
        const int b1 = add(b, 60), b2 = add(b, 30);
        for (int i = 0; i < 3; ++i) {
            add(b1, 50);
            add(b2, 50);
        }
        const LayoutResult full = computeLayout(input);
        const double level = input.metrics.levelHeight;
        QCOMPARE(full.positions.size(), input.nodes.size());
        auto assertNoOverlap = [](const std::vector<LayoutNode> &nodes, const LayoutResult &r) {
            for (size_t i = 0; i < nodes.size(); ++i)
                for (size_t j = i + 1; j < nodes.size(); ++j) {
                    if (!r.placed[i] || !r.placed[j] || std::abs(r.positions[i].y() - r.positions[j].y()) > 1)
                        continue;
                    const double room = (nodes[i].width + nodes[j].width) / 2;
                    QVERIFY2(std::abs(r.positions[i].x() - r.positions[j].x()) >= room, "overlap");
                }
        };
        assertNoOverlap(input.nodes, full);
        // 20 leaves in rows of 6 (the threshold, above ceil(sqrt(20)) = 5): 4 rows below the root.
        double deepest = 0;
        for (size_t i = 1; i <= 20; ++i)
            deepest = std::max(deepest, full.positions[i].y());
        QCOMPARE(deepest, 4 * level);
        // Trees side by side, the second right of the first; a parent centred over its children.
        double rightOfFirst = -1e9;
        for (size_t i = 0; i <= 20; ++i)
            rightOfFirst = std::max(rightOfFirst, full.positions[i].x() + input.nodes[i].width / 2);
        for (size_t i = size_t(b); i < input.nodes.size(); ++i)
            QVERIFY(full.positions[i].x() - input.nodes[i].width / 2 > rightOfFirst);
        QCOMPARE(full.positions[size_t(b)].x(), (full.positions[size_t(b1)].x() + full.positions[size_t(b2)].x()) / 2);

        // Incremental: pin everything, add a leaf under b1 and a new two-node tree; pins stay exactly.
        LayoutInput more = input;
        more.incremental = true;
        for (size_t i = 0; i < more.nodes.size(); ++i) {
            more.nodes[i].pinned = true;
            more.nodes[i].position = full.positions[i];
        }
        const int leaf = int(more.nodes.size());
        more.nodes.push_back(LayoutNode{b1, 50, true, false, {}, QStringLiteral("z")});
        const int newRoot = int(more.nodes.size());
        more.nodes.push_back(LayoutNode{-1, 40, true, false, {}, QStringLiteral("z")});
        more.nodes.push_back(LayoutNode{newRoot, 40, true, false, {}, QStringLiteral("z")});
        const LayoutResult incremental = computeLayout(more);
        for (size_t i = 0; i < full.positions.size(); ++i)
            QCOMPARE(incremental.positions[i], full.positions[i]);
        QCOMPARE(incremental.positions[size_t(leaf)].y(), full.positions[size_t(b1)].y() + level);
        QVERIFY(incremental.positions[size_t(newRoot)].x() > full.positions[size_t(b)].x());
        QCOMPARE(incremental.positions[size_t(newRoot) + 1].y(), level);
        assertNoOverlap(more.nodes, incremental);
    }

    void layoutWrapsWideFamiliesAndForests()
    {
        auto bounds = [](const std::vector<LayoutNode> &nodes, const LayoutResult &r) {
            QRectF box;
            for (size_t i = 0; i < nodes.size(); ++i)
                box |= QRectF(r.positions[i].x() - nodes[i].width / 2, r.positions[i].y(), nodes[i].width, 1);
            return box;
        };
        auto assertNoOverlap = [](const std::vector<LayoutNode> &nodes, const LayoutResult &r) {
            for (size_t i = 0; i < nodes.size(); ++i)
                for (size_t j = i + 1; j < nodes.size(); ++j)
                    if (std::abs(r.positions[i].y() - r.positions[j].y()) < 1)
                        QVERIFY2(std::abs(r.positions[i].x() - r.positions[j].x()) >= (nodes[i].width + nodes[j].width) / 2, "overlap");
        };
        // A coordinator with 30 workers of 30 sub-agents: the workers wrap into several rows,
        // the coordinator stays centred over them, and the picture is not a thin strip.
        LayoutInput family;
        family.nodes.push_back(LayoutNode{-1, 40, true, false, {}, QStringLiteral("c")});
        for (int w = 0; w < 30; ++w) {
            const int worker = int(family.nodes.size());
            family.nodes.push_back(LayoutNode{0, 34, true, false, {}, QStringLiteral("w%1").arg(w, 2, 10, QLatin1Char('0'))});
            for (int s = 0; s < 30; ++s)
                family.nodes.push_back(LayoutNode{worker, 90, true, false, {}, QStringLiteral("s%1").arg(s, 2, 10, QLatin1Char('0'))});
        }
        const LayoutResult wrapped = computeLayout(family);
        assertNoOverlap(family.nodes, wrapped);
        QSet<double> workerRows;
        double left = 1e9, right = -1e9;
        for (size_t i = 0; i < family.nodes.size(); ++i) {
            if (family.nodes[i].parent != 0)
                continue;
            workerRows << wrapped.positions[i].y();
            left = std::min(left, wrapped.positions[i].x());
            right = std::max(right, wrapped.positions[i].x());
        }
        QVERIFY(workerRows.size() >= 3);
        QVERIFY(std::abs(wrapped.positions[0].x() - (left + right) / 2) < 0.01);
        const QRectF familyBox = bounds(family.nodes, wrapped);
        QVERIFY2(familyBox.width() / familyBox.height() < 4, "still a strip");

        // 300 agents without parents: rows of trees, not one row 300 wide.
        LayoutInput forest;
        for (int i = 0; i < 300; ++i)
            forest.nodes.push_back(LayoutNode{-1, 60, true, false, {}, QStringLiteral("a%1").arg(i, 3, 10, QLatin1Char('0'))});
        const LayoutResult rows = computeLayout(forest);
        assertNoOverlap(forest.nodes, rows);
        const QRectF forestBox = bounds(forest.nodes, rows);
        QVERIFY(forestBox.width() / forestBox.height() < 6);

        // The same forest arriving one agent at a time keeps wrapping, and never moves a placed one.
        LayoutInput growing;
        growing.incremental = true;
        for (int i = 0; i < 300; ++i) {
            growing.nodes.push_back(forest.nodes[size_t(i)]);
            const LayoutResult step = computeLayout(growing);
            growing.nodes.back().pinned = true;
            growing.nodes.back().position = step.positions.back();
            for (int j = 0; j < i; ++j)
                QCOMPARE(step.positions[size_t(j)], growing.nodes[size_t(j)].position);
        }
        LayoutResult grown;
        for (const LayoutNode &n : growing.nodes)
            grown.positions.push_back(n.position);
        assertNoOverlap(growing.nodes, grown);
        const QRectF grownBox = bounds(growing.nodes, grown);
        QVERIFY(grownBox.width() / grownBox.height() < 6);
    }

    void collapseHidesDescendants()
    {
        Fixture f;
        QVERIFY(f.open());
        QTRY_VERIFY(f.view->isSettled());
        QCOMPARE(f.store().subtree(kWorker2).size(), 3); // worker-2 and its two sub-agents
        f.view->setCollapsed(kWorker2, true);
        QVERIFY(f.view->isCollapsed(kWorker2));
        QCOMPARE(f.view->hiddenDescendantCount(kWorker2), 2);
        QTRY_VERIFY(f.view->isSettled());
        QCOMPARE(f.view->visibleNodeCount(), 18);
        for (const QString &id : f.store().subtree(kWorker2).mid(1))
            QVERIFY(!f.view->nodePosition(id));

        f.view->setCollapsed(kCoordinator, true);
        QTRY_VERIFY(f.view->isSettled());
        QCOMPARE(f.view->visibleNodeCount(), 1);
        QCOMPARE(f.view->hiddenDescendantCount(kCoordinator), 19);

        // A double-click on the node expands it again; worker-2 stays collapsed inside.
        QTest::mouseDClick(f.view, Qt::LeftButton, Qt::NoModifier, f.screenPoint(kCoordinator));
        QVERIFY(!f.view->isCollapsed(kCoordinator));
        QTRY_VERIFY(f.view->isSettled());
        QCOMPARE(f.view->visibleNodeCount(), 18);
        QTest::mouseDClick(f.view, Qt::LeftButton, Qt::NoModifier, f.screenPoint(kWorker2));
        QTRY_VERIFY(f.view->isSettled());
        QCOMPARE(f.view->visibleNodeCount(), 20);
        QCOMPARE(f.view->hiddenDescendantCount(kWorker2), 0);
    }

    void newAgentKeepsExistingPositions()
    {
        Fixture f;
        QVERIFY(f.open());
        QTRY_VERIFY(f.view->isSettled());
        QHash<QString, QPointF> before;
        for (const Agent &a : f.store().agents())
            before.insert(a.id, f.position(a.id));

        auto registered = [&](const QString &id, const QString &name, const QString &role, const QString &parent) {
            EventInput input;
            input.event.kind = EventKind::AgentRegistered;
            input.event.type = QStringLiteral("agent.registered");
            input.event.eventId = QStringLiteral("test-") + id;
            input.event.agentId = id;
            input.event.timestampMs = f.store().now() + 1;
            AgentRecord record;
            record.id = id;
            record.name = name;
            record.role = role;
            record.state = QStringLiteral("idle");
            if (!parent.isEmpty())
                record.parentId = parent;
            input.event.agent = record;
            input.receivedMs = input.event.timestampMs;
            return ModelInput(input);
        };
        f.session.store()->apply(ModelInputs{registered(QStringLiteral("NEW-SUB"), QStringLiteral("worker-2.sub-9"), QStringLiteral("subagent"), kWorker2),
                                             registered(QStringLiteral("NEW-ROOT"), QStringLiteral("auditor"), QStringLiteral("monitor"), {}),
                                             registered(QStringLiteral("NEW-LEAF"), QStringLiteral("auditor.helper"), QStringLiteral("subagent"),
                                                        QStringLiteral("NEW-ROOT"))});
        f.session.store()->flushChanges();
        QTRY_VERIFY(f.view->isSettled());
        QCOMPARE(f.view->visibleNodeCount(), 23);
        for (auto it = before.cbegin(); it != before.cend(); ++it)
            QCOMPARE(f.position(it.key()), it.value());
        const QPointF sub = f.position(QStringLiteral("NEW-SUB"));
        QVERIFY(sub.y() > f.position(kWorker2).y());
        QVERIFY(f.position(QStringLiteral("NEW-LEAF")).y() > f.position(QStringLiteral("NEW-ROOT")).y());
        for (const Agent &a : f.store().agents()) {
            if (a.id == QLatin1String("NEW-SUB"))
                continue;
            const QPointF p = f.position(a.id);
            if (std::abs(p.y() - sub.y()) < 1)
                QVERIFY2(std::abs(p.x() - sub.x()) >= 30, "the new node overlaps another");
        }
    }

    // The graph opens fitted beside the legend, and stays fitted while agents join (a live system
    // registers them one by one) until the operator moves the camera.
    void staysFittedBesideTheLegendUntilTheCameraMoves()
    {
        Fixture f;
        QVERIFY(f.open());
        QTRY_VERIFY(f.view->isSettled());
        const QRectF legend = f.view->legendRect();
        QVERIFY(!legend.isNull());
        auto allInViewBesideTheLegend = [&] {
            for (const Agent &a : f.store().agents()) {
                const auto world = f.view->nodePosition(a.id);
                if (!world)
                    continue;
                const QPointF at = f.view->mapToView(*world);
                if (!QRectF(f.view->rect()).contains(at) || legend.contains(at))
                    return false;
            }
            return true;
        };
        QVERIFY(allInViewBesideTheLegend());

        int serial = 0;
        auto addRoots = [&](int count) {
            ModelInputs inputs;
            for (int i = 0; i < count; ++i, ++serial) {
                EventInput input;
                input.event.kind = EventKind::AgentRegistered;
                input.event.type = QStringLiteral("agent.registered");
                input.event.agentId = QStringLiteral("GROW-%1").arg(serial);
                input.event.eventId = QStringLiteral("grow-event-%1").arg(serial);
                input.event.timestampMs = f.store().now() + 1;
                AgentRecord record;
                record.id = input.event.agentId;
                record.name = QStringLiteral("grown-%1").arg(serial);
                record.role = QStringLiteral("monitor");
                record.state = QStringLiteral("idle");
                input.event.agent = record;
                input.receivedMs = input.event.timestampMs;
                inputs.push_back(ModelInput(input));
            }
            f.session.store()->apply(inputs);
            f.session.store()->flushChanges();
        };
        const double zoomBefore = f.view->zoom();
        addRoots(120);
        QTRY_VERIFY(f.view->isSettled());
        QTRY_VERIFY(f.view->nodePosition(QStringLiteral("GROW-119")).has_value());
        QVERIFY2(f.view->zoom() < zoomBefore, qPrintable(QStringLiteral("a larger graph is shown smaller, to keep it all in view: zoom %1, before %2")
                                                            .arg(f.view->zoom()).arg(zoomBefore)));
        QVERIFY(allInViewBesideTheLegend());

        // The operator pans: from now on the camera is theirs.
        f.view->panBy(QPointF(15, 10));
        const double zoomOwned = f.view->zoom();
        addRoots(120);
        QTRY_VERIFY(f.view->nodePosition(QStringLiteral("GROW-239")).has_value());
        QTRY_VERIFY(f.view->isSettled());
        QCOMPARE(f.view->zoom(), zoomOwned);
    }

    void searchFocusesAgent()
    {
        Fixture f;
        QVERIFY(f.open());
        QTRY_VERIFY(f.view->isSettled());
        f.view->setCollapsed(kWorker2, true); // the agent searched for is hidden inside
        QTRY_VERIFY(f.view->isSettled());
        const QString target = f.store().subtree(kWorker2).value(1);
        const QString name = f.store().agent(target)->name;

        auto *search = f.panel->findChild<QLineEdit *>(QStringLiteral("topologySearch"));
        QVERIFY(search);
        f.panel->focusSearch();
        QVERIFY(search->hasFocus());
        QTest::keyClicks(search, name);
        QTest::keyClick(search, Qt::Key_Return);
        QCOMPARE(f.hub.selectedAgents(), QStringList{target});
        QVERIFY(!f.view->isCollapsed(kWorker2));
        QTRY_VERIFY(f.view->isSettled());
        QVERIFY(f.view->zoom() >= 1.0);
        QVERIFY(distance(f.view->mapToView(f.position(target)), QRectF(f.view->rect()).center()) < 1.5);

        search->clear();
        QTest::keyClicks(search, QStringLiteral("no-such-agent"));
        QTest::keyClick(search, Qt::Key_Return);
        QCOMPARE(f.hub.selectedAgents(), QStringList{target});
        QVERIFY(!f.panel->findChild<QLabel *>(QStringLiteral("topologySearchStatus"))->text().isEmpty());
    }

    void neighbourhoodDimming()
    {
        Fixture f;
        QVERIFY(f.open());
        QTRY_VERIFY(f.view->isSettled());
        // Expected from the store itself: parent, children and message partners of worker-2.
        QSet<QString> near{kWorker2};
        for (const Agent &a : f.store().agents()) {
            if (a.id == kWorker2 && !a.parentId.isEmpty())
                near << a.parentId;
            if (a.parentId == kWorker2)
                near << a.id;
        }
        for (const Message &m : f.store().messages()) {
            if (m.fromAgentId == kWorker2)
                for (const QString &to : m.toAgentIds)
                    near << to;
            if (m.toAgentIds.contains(kWorker2) && !m.fromAgentId.isEmpty())
                near << m.fromAgentId;
        }
        QVERIFY(near.size() >= 4);
        QVERIFY(near.size() < 20);

        f.hub.selectAgents({kWorker2});
        for (const Agent &a : f.store().agents())
            QVERIFY(!f.view->isDimmed(a.id)); // off by default
        auto *hops = f.panel->findChild<QSpinBox *>(QStringLiteral("topologyHops"));
        QVERIFY(hops);
        hops->setValue(1);
        for (const Agent &a : f.store().agents())
            QVERIFY2(f.view->isDimmed(a.id) == !near.contains(a.id), qPrintable(a.name));
        hops->setValue(0);
        for (const Agent &a : f.store().agents())
            QVERIFY(!f.view->isDimmed(a.id));
    }

    void clickSelects()
    {
        Fixture f;
        QVERIFY(f.open());
        QTRY_VERIFY(f.view->isSettled());
        QTest::mouseClick(f.view, Qt::LeftButton, Qt::NoModifier, f.screenPoint(kWorker2));
        QCOMPARE(f.hub.selectedAgents(), QStringList{kWorker2});
        QCOMPARE(f.hub.focusKind(), SelectionHub::Kind::Agent);
        QTest::mouseClick(f.view, Qt::LeftButton, Qt::ControlModifier, f.screenPoint(kCoordinator));
        QCOMPARE(f.hub.selectedAgents(), (QStringList{kWorker2, kCoordinator}));
        QTest::mouseClick(f.view, Qt::LeftButton, Qt::ControlModifier, f.screenPoint(kWorker2));
        QCOMPARE(f.hub.selectedAgents(), QStringList{kCoordinator});
        // A drag pans and selects nothing.
        const QPointF before = f.view->mapToView(f.position(kCoordinator));
        QTest::mousePress(f.view, Qt::LeftButton, Qt::NoModifier, QPoint(20, 200));
        QMouseEvent move(QEvent::MouseMove, QPointF(80, 230), f.view->mapToGlobal(QPointF(80, 230)), Qt::NoButton,
                         Qt::LeftButton, Qt::NoModifier);
        QCoreApplication::sendEvent(f.view, &move);
        QTest::mouseRelease(f.view, Qt::LeftButton, Qt::NoModifier, QPoint(80, 230));
        QCOMPARE(f.view->mapToView(f.position(kCoordinator)), before + QPointF(60, 30));
        QCOMPARE(f.hub.selectedAgents(), QStringList{kCoordinator});
    }

    void edgeClickFocusesMessage()
    {
        Fixture f;
        QVERIFY(f.open());
        QTRY_VERIFY(f.view->isSettled());
        f.view->setLegendVisible(false);
        // The busiest directed pair by recent rate (messages decayed with τ = 10 s): the view
        // draws edges busiest first, so this one is drawn whatever the budget.
        QHash<QPair<QString, QString>, int> latest;
        QHash<QPair<QString, QString>, double> recent;
        const qint64 now = f.store().now();
        for (size_t row = 0; row < f.store().messages().size(); ++row) {
            const Message &m = f.store().messages()[row];
            if (m.fromAgentId.isEmpty())
                continue;
            for (const QString &to : m.toAgentIds) {
                if (to == m.fromAgentId)
                    continue;
                latest[{m.fromAgentId, to}] = int(row);
                recent[{m.fromAgentId, to}] += std::exp(-double(now - m.timestampMs) / 10000.0);
            }
        }
        QVERIFY(!recent.isEmpty());
        QPair<QString, QString> busiest = recent.cbegin().key();
        for (auto it = recent.cbegin(); it != recent.cend(); ++it)
            if (it.value() > recent.value(busiest))
                busiest = it.key();
        f.view->grab(); // paints: edges are hit where they were drawn
        // A point of the curve (a quadratic whose control point lies 18 % of its length, at
        // most 90 px, right of its middle) at least 30 px from every node and label.
        const QPointF a = f.view->mapToView(f.position(busiest.first));
        const QPointF b = f.view->mapToView(f.position(busiest.second));
        const QPointF d = b - a;
        const double length = std::hypot(d.x(), d.y());
        const QPointF control = (a + b) / 2 + QPointF(-d.y() / length, d.x() / length) * std::min(0.18 * length, 90.0);
        QPointF clickAt;
        for (double t = 0.5; t > 0.1 && clickAt.isNull(); t -= 0.05) {
            for (double u : {t, 1 - t}) {
                const QPointF p = a * ((1 - u) * (1 - u)) + control * (2 * u * (1 - u)) + b * (u * u);
                bool clear = true;
                for (const Agent &agent : f.store().agents())
                    clear = clear && distance(p, f.view->mapToView(f.position(agent.id))) > 30;
                if (clear) {
                    clickAt = p;
                    break;
                }
            }
        }
        QVERIFY(!clickAt.isNull());
        QTest::mouseClick(f.view, Qt::LeftButton, Qt::NoModifier, clickAt.toPoint());
        QCOMPARE(f.hub.focusKind(), SelectionHub::Kind::Message);
        QCOMPARE(f.hub.focusKey(), QString::number(latest.value(busiest)));
    }

    void externalSelectionRevealsWithoutZooming()
    {
        Fixture f;
        QVERIFY(f.open());
        QTRY_VERIFY(f.view->isSettled());
        f.view->setZoom(2.0);
        f.view->panBy(QPointF(5000, 0));
        QVERIFY(!f.view->rect().contains(f.screenPoint(kWorker3Sub1)));
        f.hub.selectAgents({kWorker3Sub1}); // from another panel
        QTRY_VERIFY(f.view->isSettled());
        QVERIFY(f.view->rect().contains(f.screenPoint(kWorker3Sub1)));
        QCOMPARE(f.view->zoom(), 2.0);

        // The view's own selection does not move the camera.
        const QPointF before = f.view->mapToView(f.position(kCoordinator));
        f.hub.selectAgents({kCoordinator}, f.view);
        QTRY_VERIFY(f.view->isSettled());
        QCOMPARE(f.view->mapToView(f.position(kCoordinator)), before);
    }

    void storeResetRebuilds()
    {
        Fixture f;
        QVERIFY(f.open());
        QTRY_VERIFY(f.view->isSettled());
        f.view->setCollapsed(kCoordinator, true);
        f.session.store()->reset();
        QCOMPARE(f.view->visibleNodeCount(), 0);
        f.view->grab(); // an empty store paints a hint, not a crash
        QString error;
        QVERIFY(f.session.openTraceAndWait(QStringLiteral(MAPI_TEST_DATA "/scenario-deliver.ndjson"), &error));
        QTRY_VERIFY(f.view->isSettled());
        QCOMPARE(f.view->visibleNodeCount(), 20);
        QVERIFY(!f.view->isCollapsed(kCoordinator));
    }

    // The node badge reads every spelling of a state the one way (map/AgentStates.h), whatever
    // the agent's health says.
    void badgesFollowTheStateClass()
    {
        for (const auto &spelling : mapi::test::stateSpellings()) {
            const StateBadge badge = badgeForState(QString::fromUtf8(spelling.state), Health::Healthy);
            StateBadge expected = StateBadge::None;
            switch (spelling.expected) {
            case StateClass::Busy: expected = StateBadge::Busy; break;
            case StateClass::Suspended: expected = StateBadge::Suspended; break;
            case StateClass::Stopping:
            case StateClass::Stopped: expected = StateBadge::Stopped; break;
            case StateClass::Failed: expected = StateBadge::Failed; break;
            case StateClass::Idle:
            case StateClass::Other: break;
            }
            QVERIFY2(badge == expected, spelling.state);
        }
        QCOMPARE(badgeForState(QStringLiteral("idle"), Health::Failed), StateBadge::Failed); // a failed agent's badge
    }

    // Past TopologyGraph::kRankedInOrder edges, only the busiest are put in order (a paint looks
    // at no more): they must be exactly the busiest, in order, and no edge may be lost.
    void rankedEdgesPutTheBusiestInOrder()
    {
        SystemStore store;
        ModelInputs inputs;
        constexpr int kAgents = 160; // 160 × 159 = 25,440 ordered pairs
        for (int a = 0; a < kAgents; ++a)
            inputs.push_back(agentRegistered(QStringLiteral("agent-%1").arg(a), QStringLiteral("a%1").arg(a), {}));
        // Every pair once, and a pseudo-random tenth of them 1–5 more times, at spread times.
        int index = 0;
        const qint64 start = 1800000001000;
        for (int from = 0; from < kAgents; ++from)
            for (int to = 0; to < kAgents; ++to) {
                if (from == to)
                    continue;
                const int extra = (from * 31 + to * 17) % 10 == 0 ? 1 + (from + to) % 5 : 0;
                for (int k = 0; k <= extra; ++k, ++index)
                    inputs.push_back(messageSent(index, QStringLiteral("agent-%1").arg(from), QStringLiteral("agent-%1").arg(to),
                                                 start + (index * 7919) % 600000));
            }
        store.apply(inputs);
        TopologyGraph graph;
        graph.syncAll(store);
        const TopologyGraph::RankedEdges ranked = graph.rankedEdges();
        QCOMPARE(int(ranked.size()), kAgents * (kAgents - 1));
        QVERIFY(int(ranked.size()) > TopologyGraph::kRankedInOrder);
        auto key = [](const TrafficEdge &e) { return std::log(e.weight) + double(e.lastMs) / TopologyGraph::kTrafficTimeConstantMs; };
        for (int i = 1; i < TopologyGraph::kRankedInOrder; ++i)
            QVERIFY2(key(ranked[size_t(i - 1)]) >= key(ranked[size_t(i)]), qPrintable(QString::number(i)));
        double weakestInOrder = key(ranked[size_t(TopologyGraph::kRankedInOrder - 1)]);
        int messages = 0;
        QSet<quint64> pairs;
        for (size_t i = 0; i < ranked.size(); ++i) {
            if (i >= size_t(TopologyGraph::kRankedInOrder))
                QVERIFY2(key(ranked[i]) <= weakestInOrder, "a busier edge was left out of the ordered part");
            messages += ranked[i].total;
            pairs.insert(quint64(ranked[i].from) << 32 | quint32(ranked[i].to));
        }
        QCOMPARE(messages, index);
        QCOMPARE(int(pairs.size()), int(ranked.size()));
    }

    // Between two rankings that only added traffic, the ranking is brought up to date from the
    // edges that changed (TopologyGraph::rankChangedEdges). After batches that raise quiet edges
    // into the busiest, let busy ones fall out and add new pairs, it must rank exactly as a graph
    // that ranks every edge at once.
    void rankingAfterNewTrafficEqualsAWholeRanking()
    {
        SystemStore store;
        ModelInputs agents;
        constexpr int kAgents = 160;
        for (int a = 0; a < kAgents; ++a)
            agents.push_back(agentRegistered(QStringLiteral("agent-%1").arg(a), QStringLiteral("a%1").arg(a), {}));
        store.apply(agents);
        int index = 0;
        const qint64 start = 1800000001000;
        auto send = [&](ModelInputs &inputs, int from, int to, qint64 timeMs) {
            inputs.push_back(messageSent(index++, QStringLiteral("agent-%1").arg(from), QStringLiteral("agent-%1").arg(to), timeMs));
        };
        // First: every pair but a seventh of them, a tenth of them busier.
        ModelInputs first;
        for (int from = 0; from < kAgents; ++from)
            for (int to = 0; to < kAgents; ++to)
                if (from != to && (from + 2 * to) % 7 != 0)
                    for (int k = 0; k <= ((from * 31 + to * 17) % 10 == 0 ? 3 : 0); ++k)
                        send(first, from, to, start + (index * 7919) % 600000);
        store.apply(first);
        store.flushChanges();
        TopologyGraph graph;
        graph.syncAll(store);
        QVERIFY(int(graph.rankedEdges().size()) > TopologyGraph::kRankedInOrder);

        ChangeSet seen;
        QObject::connect(&store, &SystemStore::changed, &store, [&](const ChangeSet &c) { seen = c; });
        for (int batch = 0; batch < 4; ++batch) {
            ModelInputs inputs;
            const qint64 t = start + 600000 + batch * 20000;
            for (int from = batch; from < kAgents; from += 4)
                for (int to = 0; to < kAgents; to += 3)
                    if (from != to)
                        for (int k = 0; k < 1 + (from + to + batch) % 4; ++k)
                            send(inputs, from, to, t + k);
            store.apply(inputs);
            store.flushChanges();
            QVERIFY(seen.firstNewMessage >= 0);
            graph.sync(store, seen);
            graph.rankedEdges();
        }
        TopologyGraph whole;
        whole.syncAll(store);
        const TopologyGraph::RankedEdges incremental = graph.rankedEdges();
        const TopologyGraph::RankedEdges reference = whole.rankedEdges();
        QCOMPARE(int(incremental.size()), int(reference.size()));
        QCOMPARE(int(incremental.size()), int(graph.traffic().size()));
        auto key = [](const TrafficEdge &e) { return std::log(e.weight) + double(e.lastMs) / TopologyGraph::kTrafficTimeConstantMs; };
        int rose = 0; // edges new or quiet in the first ranking that are among the busiest now
        for (int i = 0; i < TopologyGraph::kRankedInOrder; ++i) {
            QCOMPARE(key(incremental[size_t(i)]), key(reference[size_t(i)]));
            rose += incremental[size_t(i)].lastMs >= start + 600000 ? 1 : 0;
        }
        QVERIFY(rose > 1000);
        QSet<quint64> pairs;
        int messages = 0;
        for (size_t i = 0; i < incremental.size(); ++i) {
            pairs.insert(quint64(incremental[i].from) << 32 | quint32(incremental[i].to));
            messages += incremental[i].total;
        }
        QCOMPARE(int(pairs.size()), int(incremental.size()));
        QCOMPARE(messages, index);
    }

    // The siblings' order key follows a rename of the agent and of its scope at the next
    // rebuild of the structure (the keys are kept between rebuilds, made again only for what
    // was renamed).
    void orderKeysFollowRenames()
    {
        SystemStore store;
        ScopesSnapshot scopes;
        scopes.timeMs = 1800000000000;
        scopes.data.scopes.push_back(ScopeRecord{QStringLiteral("scope-1"), QStringLiteral("alpha"), std::nullopt, Json()});
        ModelInputs inputs;
        inputs.push_back(scopes);
        inputs.push_back(agentRegistered(QStringLiteral("agent-1"), QStringLiteral("worker-9"), {QStringLiteral("scope-1")}));
        inputs.push_back(agentRegistered(QStringLiteral("agent-2"), QStringLiteral("worker-10"), {QStringLiteral("scope-1")}));
        store.apply(inputs);
        TopologyGraph graph;
        graph.syncAll(store);
        const int one = graph.row(QStringLiteral("agent-1")), two = graph.row(QStringLiteral("agent-2"));
        QVERIFY(graph.nodes()[size_t(one)].sortKey < graph.nodes()[size_t(two)].sortKey); // 9 before 10
        const QString scopeKeyBefore = graph.nodes()[size_t(one)].sortKey;

        store.flushChanges();
        ChangeSet seen;
        QObject::connect(&store, &SystemStore::changed, &store, [&](const ChangeSet &c) { seen = c; });
        // Renamed; the order is made again with the structure (here: an agent joins).
        store.apply(agentRegistered(QStringLiteral("agent-1"), QStringLiteral("worker-11"), {QStringLiteral("scope-1")}));
        store.apply(agentRegistered(QStringLiteral("agent-3"), QStringLiteral("worker-1"), {}));
        store.flushChanges();
        QCOMPARE(store.agents()[size_t(store.agentRow(QStringLiteral("agent-1")))].name, QStringLiteral("worker-11"));
        graph.sync(store, seen);
        QVERIFY(graph.nodes()[size_t(one)].sortKey > graph.nodes()[size_t(two)].sortKey); // 11 after 10

        ScopesSnapshot renamed = scopes;
        renamed.data.scopes[0].name = QStringLiteral("omega");
        store.apply(renamed);
        store.flushChanges();
        graph.sync(store, seen);
        QVERIFY(graph.nodes()[size_t(two)].sortKey > scopeKeyBefore);
        QVERIFY(graph.nodes()[size_t(two)].sortKey.startsWith(naturalSortKey(QStringLiteral("omega"))));
    }

    void rendersInBothThemes_data()
    {
        QTest::addColumn<int>("theme");
        QTest::newRow("light") << int(Theme::Light);
        QTest::newRow("dark") << int(Theme::Dark);
    }

    void rendersInBothThemes()
    {
        QFETCH(int, theme);
        applyTheme(Theme(theme));
        Fixture f;
        QVERIFY(f.open());
        QTRY_VERIFY(f.view->isSettled());
        const QString dir = qEnvironmentVariable("MAPI_TOPOLOGY_PNG_DIR");
        const QString prefix = dir + QStringLiteral("/topo-capture-") + (theme == int(Theme::Dark) ? QStringLiteral("dark") : QStringLiteral("light"));
        if (!dir.isEmpty())
            f.panel->grab().save(prefix + QStringLiteral(".png"));
        const QImage image = f.view->grab().toImage();
        // Background from the palette, a failed agent in the failed colour, a departed one faded.
        QVERIFY(colorsClose(image.pixelColor(f.view->width() - 3, 3), QApplication::palette().color(QPalette::Base)));
        QVERIFY(colorsClose(image.pixelColor(f.screenPoint(kWorker3Sub1)), healthColor(Health::Failed)));
        QVERIFY(!colorsClose(image.pixelColor(f.screenPoint(kCoordinator)), healthColor(Health::Stopped), 4));
        if (!dir.isEmpty()) {
            f.hub.selectAgents({kWorker2});
            f.panel->findChild<QSpinBox *>(QStringLiteral("topologyHops"))->setValue(1);
            f.view->setZoom(1.6);
            QTRY_VERIFY(f.view->isSettled());
            f.panel->grab().save(prefix + QStringLiteral("-zoomed.png"));
        }
        applyTheme(Theme::Light);
    }
};

QTEST_MAIN(TopologyTest)
#include "tst_topology.moc"
