// Reconnection against the official MAP server: a killed and restarted server, and a dropped
// connection to a server that stayed up (the gap is replayed with map/replay).
#include "DemoSystem.h"

#include "client/MapClient.h"
#include "model/StateJson.h"
#include "model/SystemStore.h"

#include <QtTest>

using namespace mapi;
using namespace mapi::test;

class ReconnectLiveTest : public QObject
{
    Q_OBJECT
private:
    static bool hasGap(const SystemStore &store, Gap::Kind kind)
    {
        for (const Gap &g : store.gaps())
            if (g.kind == kind)
                return true;
        return false;
    }

private Q_SLOTS:
    void serverKilledAndRestarted()
    {
        DemoProcess first;
        QVERIFY2(first.start(QStringLiteral("stock"), 0, {QStringLiteral("--agents"), QStringLiteral("12")}), qPrintable(first.error()));
        const int port = first.port();

        ClientOptions options;
        options.url = QUrl(first.url());
        options.backoffInitialMs = 200;
        options.backoffMaxMs = 2000;
        MapClient client(options);
        SystemStore store;
        connect(&client, &MapClient::inputsReady, &store, [&](const ModelInputs &in) { store.apply(in); });
        client.start();
        QTRY_VERIFY_WITH_TIMEOUT(client.state() == ClientState::Live, 15000);
        QTRY_VERIFY_WITH_TIMEOUT(stateToJson(store)["agents"].size() >= 12, 20000);
        // A replay is only attempted after an event was seen (the snapshot may have brought
        // every agent before any event reached this subscription): wait for one.
        QTRY_VERIFY_WITH_TIMEOUT(!store.events().empty(), 20000);
        const Json before = stateToJson(store);

        first.kill();
        QTRY_VERIFY_WITH_TIMEOUT(client.state() == ClientState::Backoff, 5000);

        DemoProcess second;
        QVERIFY2(second.start(QStringLiteral("stock"), port, {QStringLiteral("--agents"), QStringLiteral("12"),
                                                               QStringLiteral("--seed"), QStringLiteral("7")}),
                 qPrintable(second.error()));
        QTRY_VERIFY_WITH_TIMEOUT(client.state() == ClientState::Live && client.reconnectCount() == 1, 30000);
        QTRY_VERIFY_WITH_TIMEOUT(demoHttp(second.url(), QStringLiteral("/view")).value("agents", Json::array()).size() >= 12, 20000);
        QVERIFY(!demoHttp(second.url(), QStringLiteral("/control/quiesce"), true).is_null());
        QTest::qWait(1000);
        store.flushChanges();

        // The model now equals the new server: the old agents are departed, not shown as live.
        const Json after = stateToJson(store);
        const QString diff = diffStateWithView(after, demoHttp(second.url(), QStringLiteral("/view")));
        QVERIFY2(diff.isEmpty(), qPrintable(diff));
        QVERIFY(after["departedAgents"].size() >= before["agents"].size());
        // The gap is visible: a reconnect gap, and replay was impossible on a new server.
        QVERIFY(hasGap(store, Gap::Kind::Reconnect));
        QVERIFY(hasGap(store, Gap::Kind::ReplayUnavailable));
        client.stop();
    }

    void droppedConnectionReplaysTheGap()
    {
        DemoProcess demo;
        QVERIFY2(demo.start(QStringLiteral("stock"), 0, {QStringLiteral("--agents"), QStringLiteral("12"),
                                                          QStringLiteral("--rate"), QStringLiteral("30")}),
                 qPrintable(demo.error()));
        QTRY_VERIFY_WITH_TIMEOUT(demoHttp(demo.url(), QStringLiteral("/view")).value("agents", Json::array()).size() >= 12, 20000);
        QVERIFY(!demoHttp(demo.url(), QStringLiteral("/control/quiesce"), true).is_null());

        ClientOptions options;
        options.url = QUrl(demo.url());
        options.backoffInitialMs = 1500; // stay away long enough for events to happen meanwhile
        options.backoffJitter = 0;
        auto *transport = new WebSocketTransport();
        MapClient client(options, transport);
        SystemStore store;
        QSet<QString> eventIds;
        connect(&client, &MapClient::inputsReady, &store, [&](const ModelInputs &in) {
            for (const ModelInput &input : in)
                if (const auto *e = std::get_if<EventInput>(&input))
                    eventIds.insert(e->event.eventId);
            store.apply(in);
        });
        client.start();
        QTRY_VERIFY_WITH_TIMEOUT(client.state() == ClientState::Live, 15000);
        QTest::qWait(300);
        const qint64 emittedBefore = demoHttp(demo.url(), QStringLiteral("/stats")).value("eventsEmitted", qint64(-1));
        const qsizetype idsBefore = eventIds.size();

        QVERIFY(!demoHttp(demo.url(), QStringLiteral("/control/activity"), true).is_null());
        QTest::qWait(1000);
        transport->abort(); // the network drops us; the server stays up
        QTRY_VERIFY_WITH_TIMEOUT(client.state() == ClientState::Live && client.reconnectCount() == 1, 20000);
        QTest::qWait(1000);
        QVERIFY(!demoHttp(demo.url(), QStringLiteral("/control/quiesce"), true).is_null());
        QTest::qWait(1500);
        const qint64 emittedAfter = demoHttp(demo.url(), QStringLiteral("/stats")).value("eventsEmitted", qint64(-1));

        const Gap *reconnect = nullptr;
        for (const Gap &g : store.gaps())
            if (g.kind == Gap::Kind::Reconnect)
                reconnect = &g;
        QVERIFY(reconnect);
        QVERIFY2(reconnect->recovered, qPrintable(reconnect->detail));
        QVERIFY(!hasGap(store, Gap::Kind::ReplayUnavailable));
        // Every event the server emitted since we were live is in the model exactly once.
        const qint64 emitted = emittedAfter - emittedBefore;
        const qint64 got = eventIds.size() - idsBefore;
        qInfo("emitted %lld, unique events received %lld, duplicates dropped %lld", static_cast<long long>(emitted),
              static_cast<long long>(got), static_cast<long long>(store.counters().duplicateEvents));
        QVERIFY(emitted > 30);
        QCOMPARE(got, emitted);
        const QString diff = diffStateWithView(stateToJson(store), demoHttp(demo.url(), QStringLiteral("/view")));
        QVERIFY2(diff.isEmpty(), qPrintable(diff));
        client.stop();
    }
};

QTEST_GUILESS_MAIN(ReconnectLiveTest)
#include "tst_reconnect_live.moc"
