// map-inspector-cli record as an unattended collector (no --duration) against the official MAP
// server (the demo system): started before its system is up, it keeps trying and records once it
// is; the system killed and started again on the same port, it reconnects; parts rotate and the
// oldest go past --keep-parts; SIGTERM stops it in order (exit 0 or 8, the last part whole).
#include "DemoSystem.h"

#include <QDir>
#include <QElapsedTimer>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QtTest>

#include <csignal>

using namespace mapi;
using namespace mapi::test;

class TestCollectorLive : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void recordsUntilStoppedThroughOutagesKeepingItsNewestParts()
    {
#ifdef Q_OS_WIN
        QSKIP("SIGTERM is POSIX: Windows stops the collector with Ctrl+Break (CliSupport.h)");
#else
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const int port = freePort();
        const QString url = QStringLiteral("ws://127.0.0.1:%1").arg(port);
        const QString out = dir.filePath(QStringLiteral("collector.jsonl.zst"));

        RunningCli cli; // before its system exists: a collector started with the machine
        cli.process.setProcessChannelMode(QProcess::SeparateChannels);
        cli.start({QStringLiteral("record"), QStringLiteral("--url"), url, QStringLiteral("--out"), out,
                   QStringLiteral("--rotate-seconds"), QStringLiteral("2"), QStringLiteral("--keep-parts"), QStringLiteral("2")});
        QVERIFY(cli.process.waitForStarted(10000));
        QTest::qWait(2500);
        QCOMPARE(cli.process.state(), QProcess::Running); // not given up

        {
            DemoProcess demo;
            QVERIFY2(demo.start(QStringLiteral("extended"), port, {QStringLiteral("--agents"), QStringLiteral("8")}), qPrintable(demo.error()));
            QTest::qWait(6000); // connected (the client's backoff is at most a few seconds here) and recording
            demo.kill();
        }
        QTest::qWait(1500);
        QCOMPARE(cli.process.state(), QProcess::Running); // a lost system is no reason to stop
        DemoProcess again;
        QVERIFY2(again.start(QStringLiteral("extended"), port, {QStringLiteral("--agents"), QStringLiteral("8")}), qPrintable(again.error()));
        QTest::qWait(7000); // back, and a few more parts

        ::kill(pid_t(cli.process.processId()), SIGTERM);
        const CliResult r = cli.finish(30000);
        const QString err = QString::fromUtf8(r.err);
        QVERIFY2(!r.crashed && (r.exitCode == 0 || r.exitCode == 8), qPrintable(QStringLiteral("exit %1: %2").arg(r.exitCode).arg(err)));
        QVERIFY2(err.contains(QLatin1String("cannot connect to")) && err.contains(QLatin1String("trying again")), qPrintable(err));
        QVERIFY2(err.contains(QLatin1String("connection lost")) && err.contains(QLatin1String("connection back")), qPrintable(err));
        QVERIFY2(err.contains(QLatin1String("recorded")), qPrintable(err));

        // Retention: at most the two newest parts remain, and they are the last ones written.
        const QStringList parts = QDir(dir.path()).entryList({QStringLiteral("collector*.jsonl.zst")}, QDir::Files, QDir::Name);
        QVERIFY2(!parts.isEmpty() && parts.size() <= 2, qPrintable(parts.join(u' ')));
        static const QRegularExpression deleted(QStringLiteral("deleted|removed"));
        QVERIFY2(deleted.match(err).hasMatch(), qPrintable(err)); // ≥ 7 parts were started, 2 kept
        qint64 events = 0;
        for (const QString &part : parts) {
            const CliResult stats = runCli({QStringLiteral("stats"), QStringLiteral("--trace"), dir.filePath(part)}, 30000);
            QVERIFY2(stats.exitCode == 0, qPrintable(part + QStringLiteral(": ") + QString::fromUtf8(stats.err)));
            events += stats.json().value("records", Json(0)).get<qint64>();
        }
        QVERIFY(events > 0);
#endif
    }
};

QTEST_GUILESS_MAIN(TestCollectorLive)
#include "tst_collector_live.moc"
