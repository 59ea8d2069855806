// AlertDeliveryController on its own: the rules are saved to the rules file (named in the
// settings from then on) and applied at once to the detectors, with the delivery settings; a
// rules file that cannot be read leaves the defaults and says why. Offscreen, in Qt's test
// folders (QStandardPaths test mode); any Qt warning fails.
#include "GuiTestSupport.h"

#include "alerts/AlertMonitor.h"
#include "alerts/AlertRules.h"
#include "common/AlertNotifier.h"
#include "controllers/AlertDeliveryController.h"
#include "session/InspectorSession.h"

#include <QApplication>
#include <QFile>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QWidget>
#include <QtTest>

using namespace mapi;
using namespace mapi::ui;

class AlertDeliveryTest : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void initTestCase()
    {
        QStandardPaths::setTestModeEnabled(true);
        QApplication::setOrganizationName(QStringLiteral("MAP Inspector tests"));
        mapi::test::failOnQtWarnings();
    }
    void init() { QSettings().remove(QStringLiteral("alerts")); }

    void rulesAreSavedAndAppliedAtOnce()
    {
        InspectorSession session;
        AlertMonitor monitor;
        monitor.setStore(session.store());
        QWidget window;
        AlertDeliveryController delivery(&session, &monitor, &window);
        delivery.loadSettings();
        const QString path = delivery.rulesPath();
        QVERIFY2(path.endsWith(QLatin1String("/alert-rules.json")), qPrintable(path));
        QFile::remove(path);

        AlertRules rules;
        rules.stalledAfterMs = 10000;
        rules.rule(AlertKind::Budget).enabled = false;
        AlertDelivery how;
        how.desktop = false;
        QSignalSpy applied(&delivery, &AlertDeliveryController::rulesApplied);
        QString error;
        QVERIFY2(delivery.applySettings(rules, how, &error), qPrintable(error));
        QCOMPARE(applied.size(), 1);
        // Applied to the detectors now, and kept for the next start.
        QCOMPARE(monitor.rules().stalledAfterMs, qint64(10000));
        QVERIFY(!monitor.rules().rule(AlertKind::Budget).enabled);
        const ErrorOr<AlertRules> saved = readAlertRulesFile(path);
        QVERIFY(saved);
        QCOMPARE(saved->stalledAfterMs, qint64(10000));
        QVERIFY(!saved->rule(AlertKind::Budget).enabled);
        QCOMPARE(QSettings().value(QStringLiteral("alerts/rulesFile")).toString(), path);
        QVERIFY(!delivery.notifier()->isEnabled());
        QCOMPARE(QSettings().value(QStringLiteral("alerts/notify")).toBool(), false);

        // A second controller (the next start) reads them back.
        AlertMonitor next;
        next.setStore(session.store());
        AlertDeliveryController again(&session, &next, &window);
        again.loadSettings();
        QCOMPARE(next.rules().stalledAfterMs, qint64(10000));
        QVERIFY(!again.delivery().desktop);
    }

    void unreadableRulesKeepTheDefaultsAndSaySo()
    {
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("rules.json"));
        QFile file(path);
        QVERIFY(file.open(QIODevice::WriteOnly));
        file.write("{\"rules\": {\"stalled\": {\"afterSeconds\": 60}}}");
        file.close();
        QSettings().setValue(QStringLiteral("alerts/rulesFile"), path);
        InspectorSession session;
        AlertMonitor monitor;
        monitor.setStore(session.store());
        QWidget window;
        AlertDeliveryController delivery(&session, &monitor, &window);
        QSignalSpy said(&delivery, &AlertDeliveryController::statusMessage);
        delivery.loadSettings();
        QCOMPARE(said.size(), 1);
        QVERIFY2(said.first().at(0).toString().contains(QLatin1String("the defaults apply")), qPrintable(said.first().at(0).toString()));
        QCOMPARE(monitor.rules().stalledAfterMs, AlertRules().stalledAfterMs);
    }
};

QTEST_MAIN(AlertDeliveryTest)
#include "tst_alert_delivery.moc"
