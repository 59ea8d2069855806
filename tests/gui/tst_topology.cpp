// The topology panel on a real capture (20 agents, 3 scopes, messages): the camera, nodes, the
// tidy tree, collapse, departed subtrees, the stable layout when agents arrive and the legend.
// Search, selection, traffic and themes: tst_topology_interaction.cpp.
#include "TopologyTestSupport.h"

using namespace mapi;
using namespace mapi::ui;
using namespace mapi::test_topology;

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

};

QTEST_MAIN(TopologyTest)
#include "tst_topology.moc"
