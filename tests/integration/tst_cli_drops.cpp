// An observation survives drops: `map-inspector-cli state --url URL --duration S` against the
// official MAP server behind a proxy that breaks the connection part-way, in each of the ways a
// connection dies (a text frame that is not UTF-8, a close frame, a reset, silence). The CLI
// reconnects within its duration, reads the model again, prints the whole model with the drop
// listed, and exits with 8 (an incomplete observation); with no drop it exits with 0.
#include "DemoSystem.h"
#include "DropProxy.h"

#include <QElapsedTimer>
#include <QProcess>
#include <QtTest>

using namespace mapi;
using namespace mapi::test;

class CliDropsTest : public QObject
{
    Q_OBJECT
private:
    DemoProcess m_demo;

private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY2(m_demo.start(QStringLiteral("stock"), 0, {QStringLiteral("--agents"), QStringLiteral("10"), QStringLiteral("--rate"), QStringLiteral("20")}),
                 qPrintable(m_demo.error()));
        QTRY_VERIFY_WITH_TIMEOUT(demoHttp(m_demo.url(), QStringLiteral("/view")).value("agents", Json::array()).size() >= 8, 30000);
    }

    void observationSurvivesTheDrop_data()
    {
        QTest::addColumn<int>("drop");
        QTest::addColumn<int>("durationS");
        QTest::addColumn<QString>("reason"); // a word the drop's reason must hold ("": any)
        QTest::newRow("no drop") << int(Drop::None) << 5 << QString();
        QTest::newRow("a text frame that is not UTF-8") << int(Drop::BadUtf8) << 8 << QStringLiteral("UTF-8");
        QTest::newRow("a close frame") << int(Drop::CloseFrame) << 8 << QString();
        QTest::newRow("a reset") << int(Drop::Reset) << 8 << QString();
        // Detected by the client's probe: 4 s of silence, then 6 s without an answer.
        QTest::newRow("silence") << int(Drop::Silence) << 24 << QString();
    }

    void observationSurvivesTheDrop()
    {
        QFETCH(int, drop);
        QFETCH(int, durationS);
        QFETCH(QString, reason);
        QVERIFY(!demoHttp(m_demo.url(), QStringLiteral("/control/activity"), true).is_null());
        DropProxy proxy{QUrl(m_demo.url())};
        QProcess cli;
        cli.start(QStringLiteral(MAPI_CLI_PATH),
                  {QStringLiteral("state"), QStringLiteral("--url"), proxy.url(), QStringLiteral("--duration"), QString::number(durationS)});
        QVERIFY(cli.waitForStarted());
        // Live, with events flowing, before the drop.
        QTRY_VERIFY_WITH_TIMEOUT(proxy.framesForwarded() >= 40, 15000);
        if (Drop(drop) != Drop::None) {
            proxy.breakNewest(Drop(drop));
            QTRY_VERIFY_WITH_TIMEOUT(proxy.connections() == 2, 20000); // reconnected
            QTRY_VERIFY_WITH_TIMEOUT(proxy.framesForwarded() >= 5, 10000);
        }
        // The server stops changing, so that the model printed at the end can equal its view.
        QVERIFY(!demoHttp(m_demo.url(), QStringLiteral("/control/quiesce"), true).is_null());
        QTRY_VERIFY_WITH_TIMEOUT(cli.state() == QProcess::NotRunning, (durationS + 30) * 1000);
        const Json view = demoHttp(m_demo.url(), QStringLiteral("/view"));
        const QByteArray err = cli.readAllStandardError();
        QCOMPARE(cli.exitStatus(), QProcess::NormalExit);
        const QByteArray out = cli.readAllStandardOutput();
        const Json state = Json::parse(out.constBegin(), out.constEnd(), nullptr, false);
        QVERIFY2(state.is_object(), err.constData());

        const Json &observation = state["observation"];
        QVERIFY2(observation.is_object(), out.left(400).constData());
        QCOMPARE(observation["durationS"].get<double>(), double(durationS));
        const QString diff = diffStateWithView(state, view);
        QVERIFY2(diff.isEmpty(), qPrintable(diff)); // the whole model, as the server knows it
        if (Drop(drop) == Drop::None) {
            QVERIFY2(cli.exitCode() == 0, err.constData());
            QCOMPARE(observation["complete"].get<bool>(), true);
            QCOMPARE(observation["drops"].size(), size_t(0));
            return;
        }
        QVERIFY2(cli.exitCode() == 8, err.constData()); // the observation says it is incomplete
        QCOMPARE(observation["complete"].get<bool>(), false);
        QCOMPARE(observation["drops"].size(), size_t(1));
        const Json &dropped = observation["drops"][0];
        QVERIFY(dropped["backAt"].is_string()); // reconnected within the duration
        const QString why = QString::fromStdString(dropped["reason"].get<std::string>());
        QVERIFY2(!why.isEmpty() && why.contains(reason), qPrintable(why));
        bool reconnectGap = false; // the model lists the gap the drop made
        for (const Json &gap : state["gaps"])
            reconnectGap |= gap.value("kind", "") == "reconnect";
        QVERIFY2(reconnectGap, state["gaps"].dump().c_str());
        QVERIFY2(err.contains("connection lost") && err.contains("connection back") && err.contains("incomplete"), err.constData());
    }

    void cleanup()
    {
        demoHttp(m_demo.url(), QStringLiteral("/control/activity"), true);
    }
};

QTEST_GUILESS_MAIN(CliDropsTest)
#include "tst_cli_drops.moc"
