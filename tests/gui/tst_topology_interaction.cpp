// The topology panel on a real capture: search, the N-hop neighbourhood, selection by mouse and
// from other panels, store reset, badges, the ranking of traffic, order keys, and what the
// picture looks like in both themes. Set MAPI_TOPOLOGY_PNG_DIR to keep the rendered pictures.
#include "TopologyTestSupport.h"

using namespace mapi;
using namespace mapi::ui;
using namespace mapi::test_topology;

class TopologyInteractionTest : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void initTestCase()
    {
        test::failOnQtWarnings();
        applyTheme(Theme::Light);
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

    // Issue 41 item 9: zoomed out, nested scopes share their top edge; their labels do not sit on
    // one another (the outer one keeps the corner, the inner one moves below it).
    void scopeLabelsNeverOverlap()
    {
        // "outer" holds "inner" and has no member of its own: both boxes start at one corner,
        // their label bands 26 world units apart, which a zoom under one half makes less than
        // a label's height.
        InspectorSession session;
        SelectionHub hub;
        SystemStore &store = *session.store();
        for (const auto &[id, parent] : {std::pair{"outer", ""}, std::pair{"inner", "outer"}}) {
            EventInput input;
            input.event.kind = EventKind::ScopeCreated;
            input.event.type = QStringLiteral("scope.created");
            input.event.eventId = QStringLiteral("scope-") + QLatin1String(id);
            input.event.timestampMs = 1800000000000;
            ScopeRecord scope;
            scope.id = QLatin1String(id);
            scope.name = QLatin1String(id);
            if (*parent)
                scope.parentId = QLatin1String(parent);
            input.event.scope = scope;
            input.receivedMs = input.event.timestampMs;
            store.apply(ModelInput(input));
        }
        for (int i = 0; i < 60; ++i)
            store.apply(agentRegistered(QStringLiteral("agent-%1").arg(i), QStringLiteral("worker-%1").arg(i),
                                        {QStringLiteral("outer"), QStringLiteral("inner")}));
        store.flushChanges();
        TopologyPanel panel(&session, &hub);
        panel.resize(1200, 800);
        panel.show();
        QVERIFY(QTest::qWaitForWindowExposed(&panel));
        TopologyView *view = panel.view();
        QTRY_VERIFY(view->isSettled());
        for (const QSize size : {QSize(1200, 800), QSize(640, 400), QSize(420, 300)}) { // fitted at three zooms
            panel.resize(size);
            view->zoomToFit(false);
            view->grab();
            const auto &labels = view->scopeLabelRects();
            QVERIFY2(labels.size() >= 1, qPrintable(QString::number(labels.size())));
            for (size_t a = 0; a < labels.size(); ++a)
                for (size_t b = a + 1; b < labels.size(); ++b)
                    QVERIFY2(!labels[a].first.intersects(labels[b].first),
                             qPrintable(QStringLiteral("scope labels %1 and %2 overlap at %3 px wide (zoom %4)")
                                            .arg(labels[a].second).arg(labels[b].second).arg(size.width()).arg(view->zoom())));
        }
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

QTEST_MAIN(TopologyInteractionTest)
#include "tst_topology_interaction.moc"
