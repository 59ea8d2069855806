// Bounded on every input (issue 42 item 5), the live pipeline's part: a server that names
// subscription ids without end (ours are a few) does not grow what the pipeline follows past
// ProtocolPipeline::kMaxSubscriptions; it says so once (limit-reached), loses no event, and
// still sees a gap in the subscription it follows.
#include "TestSupport.h"

#include "pipeline/ProtocolPipeline.h"

using namespace mapi;

namespace {

QByteArray eventFrame(const QString &subscription, qint64 sequence, const QString &eventId, qint64 t)
{
    return QStringLiteral("{\"jsonrpc\":\"2.0\",\"method\":\"map/event\",\"params\":{\"subscriptionId\":\"%1\",\"sequenceNumber\":%2,"
                          "\"eventId\":\"%3\",\"timestamp\":%4,\"event\":{\"id\":\"%3\",\"type\":\"agent.registered\",\"timestamp\":%4,"
                          "\"data\":{\"agent\":{\"id\":\"%3\",\"name\":\"%3\",\"state\":\"idle\"}}}}}")
        .arg(subscription).arg(sequence).arg(eventId).arg(t)
        .toUtf8();
}

} // namespace

class InputBoundsTest : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void subscriptionIdsWithoutEndAreBounded()
    {
        ProtocolPipeline pipeline;
        SystemStore store;
        qint64 t = 1000;
        store.apply(pipeline.connectionOpened(QStringLiteral("ws://test"), t));
        constexpr int kIds = 5000;
        const auto receive = [&](const QString &subscription, qint64 sequence, const QString &eventId) {
            ++t;
            store.apply(pipeline.frameReceived(eventFrame(subscription, sequence, eventId, t), t).inputs);
        };
        for (int i = 0; i < kIds; ++i)
            receive(QStringLiteral("sub-%1").arg(i), 1, QStringLiteral("e%1").arg(i));
        // The one we follow keeps going, with a gap in it: still seen.
        receive(QStringLiteral("ours"), 1, QStringLiteral("o1"));
        receive(QStringLiteral("ours"), 3, QStringLiteral("o3"));
        store.flushChanges();
        QVERIFY(pipeline.subscriptionsFollowed() <= ProtocolPipeline::kMaxSubscriptions);
        QCOMPARE(pipeline.subscriptionsForgotten(), qint64(kIds + 1 - ProtocolPipeline::kMaxSubscriptions));
        QCOMPARE(store.agents().size(), size_t(kIds + 2)); // no event lost
        int limits = 0;
        for (const ProtocolProblem &p : store.problems())
            limits += p.kind == ProblemKind::LimitReached ? 1 : 0;
        QCOMPARE(limits, 1); // said once
        QCOMPARE(store.counters().gaps, qint64(1));
    }
};

QTEST_GUILESS_MAIN(InputBoundsTest)
#include "tst_input_bounds.moc"
