// Scope boxes (issue 41 item 9): a scope is drawn in parts that cover no other scope's agent.
// computeScopeBoxes on hand-made rows (a placeholder among another scope's roots, interleaved
// siblings, nesting, a scope that sits together), then the topology of the demo system's trace
// as drawn: no part of a scope covers an agent that is not its own. Any Qt warning fails.
#include "TopologyTestSupport.h"
#include "PictureProbe.h"

#include "topology/ScopeBoxes.h"

using namespace mapi;
using namespace mapi::ui;
using namespace mapi::test_topology;

namespace {

// A node 60 wide and 45 high (shape and label) centred on (x, row × 88).
QRectF node(double x, int row)
{
    return QRectF(x - 30, row * 88.0 - 20, 60, 45);
}

ScopeBoxInput scope(std::vector<int> members, int parent = -1, int depth = 0)
{
    ScopeBoxInput s;
    s.members = std::move(members);
    s.parent = parent;
    s.depth = depth;
    return s;
}

// The nodes of `nodes` that some part of `out` covers, other than those in `own`.
QList<int> coveredStrangers(const ScopeBoxOutput &out, const std::vector<QRectF> &nodes, const QSet<int> &own)
{
    QList<int> strangers;
    for (int v = 0; v < int(nodes.size()); ++v)
        if (!own.contains(v) && !nodes[size_t(v)].isNull())
            for (const QRectF &part : out.parts)
                if (part.intersects(nodes[size_t(v)])) {
                    strangers << v;
                    break;
                }
    return strangers;
}

} // namespace

class ScopeBoxesTest : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void initTestCase() { mapi::test::failOnQtWarnings(); }

    // What the demo system showed: "ops" holds the roots' row, "squad-a" a placeholder at the end
    // of that row and the workers below. One box for squad-a covered all of ops.
    void aPlaceholderAmongAnotherScopesRootsGetsItsOwnPart()
    {
        std::vector<QRectF> nodes;
        for (int i = 0; i < 4; ++i)
            nodes.push_back(node(i * 100, 0)); // 0..3: ops
        nodes.push_back(node(400, 0));         // 4: squad-a's placeholder
        for (int i = 0; i < 5; ++i)
            nodes.push_back(node(i * 100, 1)); // 5..9: squad-a's workers
        const auto out = computeScopeBoxes(nodes, {scope({0, 1, 2, 3}), scope({4, 5, 6, 7, 8, 9})});
        QCOMPARE(out[0].parts.size(), size_t(1));
        QCOMPARE(out[1].parts.size(), size_t(2));
        QCOMPARE(coveredStrangers(out[0], nodes, {0, 1, 2, 3}), QList<int>());
        QCOMPARE(coveredStrangers(out[1], nodes, {4, 5, 6, 7, 8, 9}), QList<int>());
        for (const QRectF &a : out[0].parts)
            for (const QRectF &b : out[1].parts)
                QVERIFY(!a.intersects(b));
        QCOMPARE(out[1].box, out[1].parts[0].united(out[1].parts[1]));
    }

    void interleavedSiblingsAreSplitWhereTheOtherSits()
    {
        std::vector<QRectF> nodes = {node(0, 1), node(100, 1), node(200, 1), node(300, 1)};
        const auto out = computeScopeBoxes(nodes, {scope({0, 2, 3}), scope({1})});
        QCOMPARE(out[0].parts.size(), size_t(2)); // 0 | 2 3
        QCOMPARE(coveredStrangers(out[0], nodes, {0, 2, 3}), QList<int>());
        QCOMPARE(coveredStrangers(out[1], nodes, {1}), QList<int>());
    }

    void aScopeThatSitsTogetherIsOneBox()
    {
        std::vector<QRectF> nodes = {node(0, 0), node(-100, 1), node(0, 1), node(100, 1), node(300, 1)};
        const auto out = computeScopeBoxes(nodes, {scope({0, 1, 2, 3}), scope({4})});
        QCOMPARE(out[0].parts.size(), size_t(1));
        const QRectF members = nodes[0] | nodes[1] | nodes[2] | nodes[3];
        QCOMPARE(out[0].parts[0], members.adjusted(-10, -26, 10, 10)); // padding and the label band
        QVERIFY(out[2 - 1].parts.size() == 1);
    }

    void nestedScopesAreEnclosed()
    {
        std::vector<QRectF> nodes = {node(0, 0), node(0, 1), node(100, 1), node(400, 1)};
        // 0: outer (node 0 and the inner scope), 1: inner (nodes 1, 2), 2: another (node 3)
        const auto out = computeScopeBoxes(nodes, {scope({0}), scope({1, 2}, 0, 1), scope({3})});
        for (const QRectF &inner : out[1].parts) {
            bool enclosed = false;
            for (const QRectF &outer : out[0].parts)
                enclosed = enclosed || outer.contains(inner);
            QVERIFY(enclosed);
        }
        QCOMPARE(coveredStrangers(out[0], nodes, {0, 1, 2}), QList<int>());
        const auto none = computeScopeBoxes(nodes, {scope({})});
        QVERIFY(none[0].parts.empty() && none[0].box.isNull());
    }

    // The trace of the demo system at rest: no part of a scope covers a node that is not its own
    // (its agents, its nested scopes' agents, the collapsed nodes standing for them).
    void theDemoSystemsScopesCoverOnlyTheirOwn()
    {
        InspectorSession session;
        SelectionHub hub;
        QString error;
        QVERIFY2(session.openTraceAndWait(QStringLiteral(MAPI_SAMPLE_TRACE), &error), qPrintable(error));
        TopologyPanel panel(&session, &hub);
        panel.resize(1600, 900);
        panel.show();
        QVERIFY(QTest::qWaitForWindowExposed(&panel));
        TopologyView *view = panel.view();
        QTRY_VERIFY(view->isSettled());
        const QImage shot = mapi::test::picture(view);
        if (const QString shots = qEnvironmentVariable("MAPI_TEST_SHOTS"); !shots.isEmpty())
            shot.save(QDir(shots).filePath(QStringLiteral("scope-parts.png")));
        const TopologyGraph &graph = view->graph();
        const auto &scopes = graph.scopes();
        std::vector<QRectF> nodes(graph.nodes().size());
        for (size_t v = 0; v < nodes.size(); ++v)
            if (!graph.nodes()[v].hidden && graph.nodes()[v].positioned)
                nodes[v] = graph.nodeBounds(int(v), true);
        int drawn = 0, split = 0;
        for (size_t s = 0; s < scopes.size(); ++s) {
            if (scopes[s].deleted || scopes[s].parts.empty())
                continue;
            ++drawn;
            split += scopes[s].parts.size() > 1 ? 1 : 0;
            QSet<int> own;
            for (size_t t = 0; t < scopes.size(); ++t) // s and the scopes nested in it
                for (int p = int(t); p >= 0; p = scopes[size_t(p)].parent)
                    if (p == int(s)) {
                        for (int member : scopes[t].members)
                            own.insert(graph.representative(member));
                        break;
                    }
            const QList<int> strangers = coveredStrangers(ScopeBoxOutput{scopes[s].parts, scopes[s].box}, nodes, own);
            QVERIFY2(strangers.isEmpty(), qPrintable(QStringLiteral("scope %1 covers %2 node(s) of others, the first %3")
                                                         .arg(scopes[s].name).arg(strangers.size())
                                                         .arg(strangers.isEmpty() ? QString() : graph.nodes()[size_t(strangers.first())].name)));
        }
        QVERIFY2(drawn >= 3, qPrintable(QString::number(drawn)));

        // Drawn: every part's top edge in view carries its outline, a line across the part that
        // stands out from what is either side of it (the fill inside, what lies outside).
        int edgesSeen = 0;
        for (const ScopeGroup &g : scopes) {
            if (g.deleted)
                continue;
            for (const QRectF &part : g.parts) {
                const QRect onScreen = QRectF(view->mapToView(part.topLeft()), view->mapToView(part.bottomRight())).toRect();
                if (!shot.rect().adjusted(0, 6, 0, 0).contains(QRect(onScreen.left(), onScreen.top() - 5, onScreen.width(), 10)))
                    continue;
                const QRect strip(onScreen.left() + 14, onScreen.top() - 4, onScreen.width() - 28, 9);
                const QColor around = mapi::test::commonColor(shot, strip);
                int inked = 0;
                for (int x = strip.left(); x <= strip.right(); ++x)
                    inked += mapi::test::inkPixels(shot, QRect(x, strip.top(), 1, strip.height()), around, 24) > 0 ? 1 : 0;
                QVERIFY2(inked >= strip.width() * 6 / 10, qPrintable(QStringLiteral("scope %1: outline in %2 of %3 columns at y %4")
                                                                          .arg(g.name).arg(inked).arg(strip.width()).arg(onScreen.top())));
                ++edgesSeen;
            }
        }
        QVERIFY2(edgesSeen >= 3, qPrintable(QString::number(edgesSeen)));
        qInfo("%d scopes drawn, %d in several parts", drawn, split);
    }
};

QTEST_MAIN(ScopeBoxesTest)
#include "tst_scope_boxes.moc"
