// The attention inbox (AlertsPanel over AlertMonitor) and desktop notifications (AlertNotifier):
// order, selection into the hub, acknowledge, snooze, the control buttons' state; the notifier's
// rate limit and its silence while the window is in front. A screenshot of the inbox is saved
// (alerts-inbox.png in the build folder) and was looked at.
#include "GuiTestSupport.h"

#include "alerts/AlertMonitor.h"
#include "common/AlertNotifier.h"
#include "common/NotificationToast.h"
#include "models/AlertModel.h"
#include "panels/AlertsPanel.h"
#include "session/InspectorSession.h"
#include "session/SelectionHub.h"

#include <QLabel>
#include <QSignalSpy>
#include <QTableView>
#include <QToolButton>

using namespace mapi;
using namespace mapi::ui;

namespace {

constexpr qint64 kStart = 1790000000000;

using Feed = mapi::test::FrameFeed;

QStringList column(QTableView *table, int column)
{
    QStringList out;
    for (int r = 0; r < table->model()->rowCount(); ++r)
        out << table->model()->index(r, column).data().toString();
    return out;
}

} // namespace

class TestAlertsInbox : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase() { mapi::test::failOnQtWarnings(); }

    void inboxOrdersSelectsAcknowledgesAndSnoozes()
    {
        InspectorSession session;
        SelectionHub hub;
        AlertMonitor monitor;
        monitor.setStore(session.store());
        AlertsPanel panel(&session, &hub, &monitor);
        panel.resize(900, 300);
        Feed feed(session.store(), kStart);
        for (const char *id : {"planner", "coder", "tester", "reviewer"})
            feed.agent(id, id, kStart);
        // A deadlock (critical) of three task requests, a budget overrun (warning), an error storm.
        feed.send("planner", "coder", "TASK_REQUEST", {{"task_id", "T1"}}, kStart + 1000);
        feed.send("coder", "tester", "TASK_REQUEST", {{"task_id", "T2"}}, kStart + 1100);
        feed.send("tester", "planner", "TASK_REQUEST", {{"task_id", "T3"}}, kStart + 1200);
        feed.send("reviewer", "planner", "STATUS_UPDATE", {{"resource_usage", {{"cost_usd", 14.2}}}}, kStart + 2000);
        for (int i = 0; i < 12; ++i)
            feed.send("coder", "planner", "ERROR_REPORT", {{"severity", "ERROR"}, {"message", "upstream 503"}}, kStart + 3000 + i * 100);
        session.store()->advanceTime(kStart + 25000);
        monitor.evaluateNow();

        auto *table = panel.findChild<QTableView *>(QStringLiteral("alertsTable"));
        QVERIFY(table);
        QCOMPARE(column(table, AlertModel::KindColumn),
                 (QStringList{QStringLiteral("deadlock"), QStringLiteral("budget"), QStringLiteral("error-storm")}));
        QCOMPARE(column(table, AlertModel::SeverityColumn).first(), QStringLiteral("critical"));
        QCOMPARE(table->model()->index(0, AlertModel::AgentsColumn).data().toString(), QStringLiteral("coder → tester → planner"));
        auto *summary = panel.findChild<QLabel *>(QStringLiteral("alertsSummary"));
        QCOMPARE(summary->text(), QStringLiteral("3 open · 1 critical"));

        // Selecting the deadlock selects its three agents everywhere.
        table->selectRow(0);
        QCOMPARE(hub.selectedAgents(), (QStringList{QStringLiteral("coder"), QStringLiteral("tester"), QStringLiteral("planner")}));
        // Not connected: the control buttons are off and say why.
        auto *stop = panel.findChild<QToolButton *>(QStringLiteral("alertStop"));
        QVERIFY(!stop->isEnabled());
        QVERIFY(!stop->toolTip().isEmpty());

        const QString picture = QStringLiteral("alerts-inbox.png");
        QVERIFY(panel.grab().save(picture));

        // Acknowledged: greyed, listed last.
        panel.acknowledgeSelected();
        QCOMPARE(column(table, AlertModel::KindColumn).last(), QStringLiteral("deadlock"));
        QVERIFY(table->model()->index(2, AlertModel::ReasonColumn).data().toString().startsWith(QStringLiteral("acknowledged")));
        QCOMPARE(summary->text(), QStringLiteral("3 open · 1 acknowledged"));
        // Snoozed: hidden.
        table->selectRow(0);
        const QString snoozed = panel.selectedKey();
        QVERIFY(snoozed.startsWith(QStringLiteral("budget")));
        panel.snoozeSelected(15 * 60000);
        QCOMPARE(table->model()->rowCount(), 2);
        QCOMPARE(summary->text(), QStringLiteral("3 open · 1 acknowledged · 1 snoozed (hidden)"));

        // The deadlock ends (T1 accepted): its row goes.
        feed.send("coder", "planner", "TASK_ACCEPT", {{"task_id", "T1"}}, kStart + 26000);
        session.store()->advanceTime(kStart + 26500);
        monitor.evaluateNow();
        QCOMPARE(column(table, AlertModel::KindColumn), QStringList{QStringLiteral("error-storm")});
    }

    void notifierIsQuietInFrontAndRateLimited()
    {
        QWidget window;
        window.resize(800, 600);
        AlertNotifier notifier(&window);
        QSignalSpy shown(&notifier, &AlertNotifier::notified);
        QSignalSpy activated(&notifier, &AlertNotifier::activated);
        auto raised = [](AlertKind kind, AlertSeverity severity, const char *agent) {
            Alert a;
            a.kind = kind;
            a.severity = severity;
            a.agents = QStringList{QString::fromLatin1(agent)};
            a.reason = QStringLiteral("%1 reason").arg(QString::fromLatin1(agent));
            return AlertChange{a, true, 0};
        };
        const qint64 t = 1000000;
        notifier.offer({raised(AlertKind::Loop, AlertSeverity::Warning, "a")}, true, t); // window in front
        QCOMPARE(shown.count(), 0);
        notifier.offer({raised(AlertKind::Loop, AlertSeverity::Warning, "b")}, false, t);
        QCOMPARE(shown.count(), 1);
        QCOMPARE(shown.at(0).at(0).toString(), QStringLiteral("warning: loop"));
        // Within the gap: kept for later, then gathered under the most severe.
        notifier.offer({raised(AlertKind::Budget, AlertSeverity::Warning, "c")}, false, t + 2000);
        notifier.offer({raised(AlertKind::Failed, AlertSeverity::Critical, "d")}, false, t + 4000);
        QCOMPARE(shown.count(), 1);
        notifier.offer({}, false, t + AlertNotifier::kMinGapMs + 1);
        QCOMPARE(shown.count(), 2);
        QCOMPARE(shown.at(1).at(0).toString(), QStringLiteral("critical: failed"));
        QVERIFY2(shown.at(1).at(1).toString().contains(QStringLiteral("and 1 more")), qPrintable(shown.at(1).at(1).toString()));
        // No system tray here (as on GNOME): the notification is a toast in the screen's corner.
        if (!notifier.hasTray()) {
            NotificationToast *toast = notifier.toast();
            QVERIFY(toast);
            QVERIFY(toast->isVisible());
            QCOMPARE(toast->title(), QStringLiteral("critical: failed"));
            QVERIFY(toast->text().startsWith(QStringLiteral("d reason")));
            QVERIFY(toast->text().contains(QStringLiteral("and 1 more")));
            QVERIFY(toast->grab().save(QStringLiteral("alerts-notification.png")));
            QTest::mouseClick(toast, Qt::LeftButton);
            QCOMPARE(activated.count(), 1);
            QVERIFY(!toast->isVisible());
        }
        // Raised and cleared before its turn: never shown.
        notifier.offer({raised(AlertKind::Stalled, AlertSeverity::Warning, "e")}, false, t + AlertNotifier::kMinGapMs + 2000);
        AlertChange cleared = raised(AlertKind::Stalled, AlertSeverity::Warning, "e");
        cleared.raised = false;
        notifier.offer({cleared}, false, t + AlertNotifier::kMinGapMs + 3000);
        notifier.offer({}, false, t + 3 * AlertNotifier::kMinGapMs);
        QCOMPARE(shown.count(), 2);
    }
};

QTEST_MAIN(TestAlertsInbox)
#include "tst_alerts_inbox.moc"
