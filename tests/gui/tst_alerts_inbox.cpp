// The attention inbox (AlertsPanel over AlertMonitor) and desktop notifications (AlertNotifier):
// order, selection into the hub, acknowledge, snooze, the control buttons' state, evidence into
// the inspector and the timeline; the notifier's rate limit, its silence while the window is in
// front, its toast where there is no tray; alerts as bars on the timeline; the settings dialog.
// Screenshots are saved in the build folder (alerts-inbox.png, alerts-notification.png,
// alerts-timeline.png, alert-settings-rules.png, alert-settings-notifications.png) and were
// looked at.
#include "GuiTestSupport.h"
#include "PictureProbe.h"

#include "alerts/AlertMonitor.h"
#include "common/AlertNotifier.h"
#include "common/NotificationToast.h"
#include "dialogs/AlertSettingsDialog.h"
#include "model/SystemStore.h"
#include "timeline/TimelineView.h"
#include "models/AlertModel.h"
#include "panels/AlertsPanel.h"
#include "session/InspectorSession.h"
#include "session/SelectionHub.h"
#include "style/Colors.h"

#include <QCheckBox>
#include <QDateTime>
#include <QDoubleSpinBox>
#include <QGroupBox>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QPushButton>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTabWidget>
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
        // Waiting counts from when the condition began (the last of the cycle's requests, 1.2 s
        // in), not from when the inbox first listed it (25 s in).
        QCOMPARE(table->model()->index(0, AlertModel::WaitingColumn).data().toString(), QStringLiteral("23 s"));

        // Selecting the deadlock selects its three agents everywhere.
        table->selectRow(0);
        QCOMPARE(hub.selectedAgents(), (QStringList{QStringLiteral("coder"), QStringLiteral("tester"), QStringLiteral("planner")}));
        // Not connected: the control buttons are off and say why.
        auto *stop = panel.findChild<QToolButton *>(QStringLiteral("alertStop"));
        QVERIFY(!stop->isEnabled());
        QVERIFY(!stop->toolTip().isEmpty());

        // Evidence: the deadlock's three tasks (in the cycle's order); a task opens in the inspector.
        QSignalSpy timelineAsked(&panel, &AlertsPanel::timelineRequested);
        auto *evidenceMenu = panel.findChild<QMenu *>(QStringLiteral("alertEvidenceMenu"));
        QVERIFY(evidenceMenu);
        QMetaObject::invokeMethod(evidenceMenu, "aboutToShow");
        QStringList texts;
        for (QAction *a : evidenceMenu->actions())
            texts << a->text();
        QStringList sorted = texts;
        sorted.sort();
        QCOMPARE(sorted, (QStringList{QStringLiteral("task T1"), QStringLiteral("task T2"), QStringLiteral("task T3")}));
        evidenceMenu->actions().first()->trigger();
        QCOMPARE(hub.focusKind(), SelectionHub::Kind::Task);
        QCOMPARE(QStringLiteral("task ") + hub.focusKey(), texts.first());
        panel.findChild<QToolButton *>(QStringLiteral("alertTimeline"))->click();
        QCOMPARE(timelineAsked.count(), 1);
        QCOMPARE(timelineAsked.at(0).at(0).toLongLong(), kStart + 1200); // the cycle closed with the third request
        // The error storm's evidence is its messages: one opens in the inspector (the hub's
        // focus) and asks the timeline for its moment.
        table->selectRow(2);
        QMetaObject::invokeMethod(evidenceMenu, "aboutToShow");
        const QList<QAction *> messages = evidenceMenu->actions();
        QVERIFY(messages.size() >= 10);
        QVERIFY2(messages.first()->text().contains(QStringLiteral("message coder → planner (ERROR_REPORT)")),
                 qPrintable(messages.first()->text()));
        messages.first()->trigger();
        QCOMPARE(hub.focusKind(), SelectionHub::Kind::Message);
        QCOMPARE(session.store()->messages().timestampMs(size_t(hub.focusKey().toInt())), kStart + 3000 + 11 * 100);
        QCOMPARE(timelineAsked.count(), 2);
        QCOMPARE(timelineAsked.at(1).at(0).toLongLong(), kStart + 3000 + 11 * 100);
        table->selectRow(0);

        // What the picture shows: each row's kind in its cell, the deadlock's row selected, no
        // row under the three, the summary's text.
        const QImage shot = mapi::test::picture(&panel);
        QVERIFY(shot.save(QStringLiteral("alerts-inbox.png")));
        QString why;
        for (int r = 0; r < 3; ++r)
            QVERIFY2(mapi::test::cellDrawn(shot, &panel, table, table->model()->index(r, AlertModel::KindColumn), &why), qPrintable(why));
        const QModelIndex reason0 = table->model()->index(0, AlertModel::ReasonColumn);
        QVERIFY(mapi::test::selectedColor(shot, mapi::test::cellRect(&panel, table, reason0), table));
        QVERIFY(!mapi::test::selectedColor(shot, mapi::test::cellRect(&panel, table, reason0.siblingAtRow(1)), table));
        const QRect lastRow = table->visualRect(reason0.siblingAtRow(2));
        const QRect below = mapi::test::rectIn(&panel, table->viewport(), QRect(0, lastRow.bottom() + 2, table->viewport()->width(), lastRow.height()));
        QVERIFY(below.bottom() < mapi::test::rectIn(&panel, table->viewport()).bottom());
        QCOMPARE(mapi::test::inkPixels(shot, below), 0);
        QVERIFY2(mapi::test::labelDrawn(shot, &panel, summary, &why), qPrintable(why));

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
            // Drawn: the title and the first line of the text in their places.
            const QImage shot = mapi::test::picture(toast);
            QVERIFY(shot.save(QStringLiteral("alerts-notification.png")));
            QString why;
            auto *title = toast->findChild<QLabel *>(QStringLiteral("toastTitle"));
            auto *text = toast->findChild<QLabel *>(QStringLiteral("toastText"));
            QVERIFY(title && text);
            QVERIFY2(mapi::test::labelDrawn(shot, toast, title, &why), qPrintable(why));
            const QString firstLine = text->text().section(u'\n', 0, 0);
            const QRect textRect = mapi::test::rectIn(toast, text);
            const QRect firstLineRect(textRect.left(), textRect.top(), textRect.width(), text->fontMetrics().height());
            QVERIFY2(mapi::test::inkSpansText(shot, firstLineRect, firstLine, text->font(), &why), qPrintable(why));
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

    // One evaluation's changes go in at once: ten thousand raised rows, then every other one
    // cleared, one raised and cleared in the same batch (never shown), one raised again (refreshed).
    void modelTakesABatchAtOnce()
    {
        InspectorSession session;
        AlertModel model(session.store());
        QSignalSpy inserted(&model, &QAbstractItemModel::rowsInserted);
        QSignalSpy removed(&model, &QAbstractItemModel::rowsRemoved);
        auto alert = [](int i) {
            Alert a;
            a.kind = AlertKind::Stalled;
            a.agents = {QStringLiteral("agent-%1").arg(i)};
            a.sinceMs = kStart + i;
            return a;
        };
        std::vector<AlertChange> raised;
        for (int i = 0; i < 10000; ++i)
            raised.push_back({alert(i), true, kStart});
        model.apply(raised);
        QCOMPARE(model.rowCount(), 10000);
        QCOMPARE(inserted.count(), 1);
        QCOMPARE(model.rowOf(alert(9999).key()), 9999);
        std::vector<AlertChange> next;
        for (int i = 0; i < 10000; i += 2)
            next.push_back({alert(i), false, kStart + 1});
        next.push_back({alert(20000), true, kStart + 1});
        next.push_back({alert(20000), false, kStart + 1});
        Alert again = alert(1);
        again.reason = QStringLiteral("refreshed");
        next.push_back({again, true, kStart + 1});
        model.apply(next);
        QCOMPARE(model.rowCount(), 5000);
        QCOMPARE(inserted.count(), 1);   // nothing new shown
        QCOMPARE(removed.count(), 5000); // no two cleared rows were neighbours
        QCOMPARE(model.rowOf(alert(0).key()), -1);
        QCOMPARE(model.rowOf(alert(20000).key()), -1);
        for (int i = 1; i < 10000; i += 2) {
            const int row = model.rowOf(alert(i).key());
            QVERIFY(row >= 0);
            QCOMPARE(model.alertAt(row)->agents, alert(i).agents);
        }
        QCOMPARE(model.alertAt(model.rowOf(alert(1).key()))->reason, QStringLiteral("refreshed"));

        // New rules: the model is cleared and the detectors raise again what still holds; what
        // the operator acknowledged or snoozed stays so.
        model.setAcknowledged(alert(1).key(), true);
        model.snooze(alert(3).key(), QDateTime::currentMSecsSinceEpoch() + 60000);
        model.clear();
        QCOMPARE(model.rowCount(), 0);
        model.apply({{alert(1), true, kStart + 2}, {alert(5), true, kStart + 2}});
        model.apply({{alert(3), true, kStart + 2}}); // the verdict's second part
        QVERIFY(model.index(model.rowOf(alert(1).key()), 0).data(AlertModel::AcknowledgedRole).toBool());
        QVERIFY(model.index(model.rowOf(alert(3).key()), 0).data(AlertModel::SnoozedUntilRole).toLongLong() > 0);
        QVERIFY(!model.index(model.rowOf(alert(5).key()), 0).data(AlertModel::AcknowledgedRole).toBool());
        // Only the evaluation right after the clear (its verdict may come in several parts):
        // cleared and raised later, an alert is new.
        model.evaluationEnded();
        model.apply({{alert(1), false, kStart + 3}});
        model.apply({{alert(1), true, kStart + 4}});
        QVERIFY(!model.index(model.rowOf(alert(1).key()), 0).data(AlertModel::AcknowledgedRole).toBool());
    }

    // Alerts as bars on their agents' lanes: hit, tooltip, a click selects the agents and names
    // the alert; a cleared one keeps its bar up to when it cleared; cleared bars are bounded.
    void timelineShowsAlertBars()
    {
        InspectorSession session;
        SelectionHub hub;
        AlertMonitor monitor;
        monitor.setStore(session.store());
        TimelineView view(session.store(), &hub);
        view.resize(900, 260);
        connect(&monitor, &AlertMonitor::alertsChanged, &view, &TimelineView::takeAlertChanges);
        Feed feed(session.store(), kStart);
        for (const char *id : {"planner", "coder", "tester", "reviewer"})
            feed.agent(id, id, kStart);
        feed.send("reviewer", "planner", "STATUS_UPDATE", {{"resource_usage", {{"cost_usd", 14.2}}}}, kStart + 2000);
        for (int i = 0; i < 12; ++i)
            feed.send("coder", "planner", "ERROR_REPORT", {{"severity", "ERROR"}, {"message", "upstream 503"}}, kStart + 3000 + i * 100);
        session.store()->advanceTime(kStart + 8000);
        monitor.evaluateNow();
        QCOMPARE(view.alertSpans().size(), size_t(2));
        view.show();
        view.showTimeRange(double(kStart), double(kStart + 10000));
        QCoreApplication::processEvents();

        // The budget bar on the reviewer's lane, at its start.
        const auto spanIt = std::find_if(view.alertSpans().begin(), view.alertSpans().end(),
                                         [](const TimelineView::AlertSpan &s) { return s.kind == AlertKind::Budget; });
        QVERIFY(spanIt != view.alertSpans().end());
        QTRY_VERIFY(view.lanes().rowOfAgent(session.store()->agentRow(QStringLiteral("reviewer"))) >= 0);
        const int row = view.lanes().rowOfAgent(session.store()->agentRow(QStringLiteral("reviewer")));
        const QPoint onBar(int(view.axis().mapTimeToX(double(spanIt->sinceMs))) + 20, view.rowTopY(row) + 1);
        const TimelineView::Hit hit = view.hitTest(onBar);
        QCOMPARE(hit.kind, TimelineView::Hit::Kind::Alert);
        QCOMPARE(view.alertSpans()[size_t(hit.index)].kind, AlertKind::Budget);
        // Below the bar, the lane is the lane's.
        QVERIFY(view.hitTest(QPoint(onBar.x(), view.rowTopY(row) + 14)).kind != TimelineView::Hit::Kind::Alert);
        QSignalSpy clicked(&view, &TimelineView::alertClicked);
        QTest::mouseClick(view.viewport(), Qt::LeftButton, {}, onBar);
        QCOMPARE(clicked.count(), 1);
        QVERIFY(clicked.at(0).at(0).toString().startsWith(QStringLiteral("budget")));
        QCOMPARE(hub.selectedAgents(), QStringList{QStringLiteral("reviewer")});
        // Drawn: the budget's bar in the warning colour along the top of the reviewer's lane, from
        // where it was raised; no bar on the tester's lane (no alert names it), nor left of the raise.
        const QImage shot = mapi::test::picture(&view);
        QVERIFY(shot.save(QStringLiteral("alerts-timeline.png")));
        const QColor barColor = alertSeverityColor(int(spanIt->severity));
        const QPoint barInShot = view.viewport()->mapTo(&view, onBar);
        const QRect barStrip(barInShot.x(), barInShot.y(), 30, 2);
        QVERIFY2(mapi::test::mostlyColor(shot, barStrip, barColor, 0.9),
                 qPrintable(mapi::test::commonColor(shot, barStrip).name() + QStringLiteral(" for ") + barColor.name()));
        const int testerRow = view.lanes().rowOfAgent(session.store()->agentRow(QStringLiteral("tester")));
        QVERIFY(testerRow >= 0);
        const QPoint testerLane = view.viewport()->mapTo(&view, QPoint(onBar.x(), view.rowTopY(testerRow) + 1));
        QCOMPARE(mapi::test::shareOf(shot, QRect(testerLane, QSize(30, 2)), barColor), 0.0);
        QCOMPARE(mapi::test::shareOf(shot, barStrip.translated(-60, 0), barColor), 0.0);

        // The budget falls back under its limit: the alert clears, its bar stays up to then.
        feed.send("reviewer", "planner", "STATUS_UPDATE", {{"resource_usage", {{"cost_usd", 2.0}}}}, kStart + 9000);
        session.store()->advanceTime(kStart + 9500);
        monitor.evaluateNow();
        const auto cleared = std::find_if(view.alertSpans().begin(), view.alertSpans().end(),
                                          [](const TimelineView::AlertSpan &s) { return s.kind == AlertKind::Budget; });
        QVERIFY(cleared != view.alertSpans().end());
        QVERIFY(cleared->untilMs >= kStart + 9000);

        // Cleared bars are bounded: the oldest go.
        std::vector<AlertChange> many;
        for (size_t i = 0; i < TimelineView::kMaxClearedAlertSpans + 50; ++i) {
            Alert a;
            a.kind = AlertKind::Stalled;
            a.agents = {QStringLiteral("coder")};
            a.sinceMs = kStart + qint64(i);
            a.subject = QString::number(i);
            many.push_back({a, true, a.sinceMs});
            many.push_back({a, false, a.sinceMs + 1});
        }
        view.takeAlertChanges(many);
        QCOMPARE(view.alertSpans().size(), TimelineView::kMaxClearedAlertSpans + 1); // + the open error storm
        view.clearAlerts();
        QVERIFY(view.alertSpans().empty());
    }

    // A folded lane holds several agents' alerts: they are drawn in the alerts' order (cleared
    // first, open on top), whatever the order of the agents that carry them.
    void foldedLaneDrawsOpenAlertsOnTop()
    {
        InspectorSession session;
        SelectionHub hub;
        TimelineView view(session.store(), &hub);
        view.resize(900, 260);
        Feed feed(session.store(), kStart);
        for (const char *id : {"coder", "tester"})
            feed.agent(id, id, kStart);
        feed.send("coder", "tester", "STATUS_UPDATE", {{"state", "working"}}, kStart + 100);
        session.store()->advanceTime(kStart + 10000);
        QVERIFY(session.store()->agentRow(QStringLiteral("coder")) < session.store()->agentRow(QStringLiteral("tester")));
        const auto stalled = [](AlertSeverity severity, const char *agent, qint64 sinceMs, const char *subject) {
            Alert a;
            a.kind = AlertKind::Stalled;
            a.severity = severity;
            a.agents = {QString::fromLatin1(agent)};
            a.sinceMs = sinceMs;
            a.subject = QString::fromLatin1(subject);
            return a;
        };
        const Alert open = stalled(AlertSeverity::Critical, "coder", kStart + 2000, "open");
        const Alert cleared = stalled(AlertSeverity::Warning, "tester", kStart + 1000, "cleared");
        view.takeAlertChanges({{open, true, open.sinceMs}, {cleared, true, cleared.sinceMs}, {cleared, false, kStart + 9000}});
        view.show();
        view.showTimeRange(double(kStart), double(kStart + 10000));
        QTRY_VERIFY(view.lanes().rowOfAgent(session.store()->agentRow(QStringLiteral("tester"))) >= 0);
        view.collapseAll();
        QCoreApplication::processEvents();
        const int row = view.lanes().rowOfAgent(session.store()->agentRow(QStringLiteral("coder")));
        QVERIFY(row >= 0);
        QCOMPARE(view.lanes().rowOfAgent(session.store()->agentRow(QStringLiteral("tester"))), row); // one folded lane
        const QImage shot = mapi::test::picture(&view);
        QVERIFY(shot.save(QStringLiteral("alerts-folded-lane.png")));
        const QPoint onBoth = view.viewport()->mapTo(
            &view, QPoint(int(view.axis().mapTimeToX(double(kStart + 5000))), view.rowTopY(row)));
        const QColor openColor = alertSeverityColor(int(AlertSeverity::Critical));
        const QRect barStrip(onBoth.x(), onBoth.y(), 30, 2);
        QVERIFY2(mapi::test::mostlyColor(shot, barStrip, openColor, 0.9),
                 qPrintable(mapi::test::commonColor(shot, barStrip).name() + QStringLiteral(" for ") + openColor.name()));
    }

    // The settings dialog: the rules as a form (values in, edits out), refusals naming the key,
    // the webhook address checked, the defaults restored.
    void settingsDialogEditsTheRules()
    {
        AlertRules rules;
        rules.loopExchanges = 33;
        AlertDelivery delivery;
        AlertSettingsDialog dialog(rules, QStringLiteral("/home/op/.config/MAP Inspector/alert-rules.json"), delivery);
        auto find = [&](const char *name) { return dialog.findChild<QWidget *>(QString::fromLatin1(name)); };
        QCOMPARE(qobject_cast<QDoubleSpinBox *>(find("rule.loop.exchanges"))->value(), 33.0);
        qobject_cast<QDoubleSpinBox *>(find("rule.budget.usdPerAgent"))->setValue(25);
        qobject_cast<QGroupBox *>(find("rule.stalled"))->setChecked(false);
        qobject_cast<QLineEdit *>(find("rule.budget.usdPerRole"))->setText(QStringLiteral("researcher=5, writer=2.5"));
        dialog.show();
        {
            // Drawn: the values set, in their fields (the roles' one when it is not scrolled away).
            const QImage shot = mapi::test::picture(&dialog);
            QVERIFY(shot.save(QStringLiteral("alert-settings-rules.png")));
            QString why;
            auto *roles = qobject_cast<QLineEdit *>(find("rule.budget.usdPerRole"));
            const QRect rolesField = mapi::test::rectIn(&dialog, roles).adjusted(3, 3, -3, -3);
            if (!roles->visibleRegion().isEmpty() && shot.rect().contains(rolesField))
                QVERIFY2(mapi::test::inkSpansText(shot, rolesField, roles->text(), roles->font(), &why), qPrintable(why));
            auto *exchanges = qobject_cast<QDoubleSpinBox *>(find("rule.loop.exchanges"));
            QVERIFY(exchanges->isVisible());
            QRect field = mapi::test::rectIn(&dialog, exchanges).adjusted(3, 3, -3, -3);
            QVERIFY(shot.rect().contains(field));
            field.setWidth(field.width() - 20); // not the arrows
            QVERIFY2(mapi::test::inkSpansText(shot, field, exchanges->text(), exchanges->font(), &why), qPrintable(why));
        }
        dialog.accept();
        QCOMPARE(dialog.result(), int(QDialog::Accepted));
        QCOMPARE(dialog.rules().budgetUsdPerAgent, 25.0);
        QVERIFY(!dialog.rules().rule(AlertKind::Stalled).enabled);
        QCOMPARE(dialog.rules().loopExchanges, 33);
        QCOMPARE(dialog.rules().budgetUsdPerRole.value(QStringLiteral("writer")), 2.5);

        // Refused: a value the rules file refuses, with the key's name; a roles text not of the form.
        AlertSettingsDialog bad(rules, QStringLiteral("rules.json"), delivery);
        auto *error = bad.findChild<QLabel *>(QStringLiteral("alertSettingsError"));
        qobject_cast<QDoubleSpinBox *>(bad.findChild<QWidget *>(QStringLiteral("rule.loop.exchanges")))->setValue(1);
        bad.accept();
        QCOMPARE(bad.result(), int(QDialog::Rejected));
        QVERIFY2(error->text().contains(QStringLiteral("rules.loop.exchanges")), qPrintable(error->text()));
        qobject_cast<QDoubleSpinBox *>(bad.findChild<QWidget *>(QStringLiteral("rule.loop.exchanges")))->setValue(20);
        qobject_cast<QLineEdit *>(bad.findChild<QWidget *>(QStringLiteral("rule.budget.usdPerRole")))->setText(QStringLiteral("researcher"));
        bad.accept();
        QVERIFY2(error->text().contains(QStringLiteral("rules.budget.usdPerRole")), qPrintable(error->text()));
        qobject_cast<QLineEdit *>(bad.findChild<QWidget *>(QStringLiteral("rule.budget.usdPerRole")))->clear();
        // The webhook: on with an address it cannot use (an error the picture shows).
        bad.findChild<QCheckBox *>(QStringLiteral("webhookOn"))->setChecked(true);
        bad.findChild<QLineEdit *>(QStringLiteral("webhookUrl"))->setText(QStringLiteral("ftp://example.com/hook"));
        bad.accept();
        QCOMPARE(bad.result(), int(QDialog::Rejected));
        QVERIFY2(error->text().startsWith(QStringLiteral("Webhook address")), qPrintable(error->text()));
        bad.findChild<QLineEdit *>(QStringLiteral("webhookUrl"))->setText(QStringLiteral("https://hooks.example.com/T0/secret"));
        bad.findChild<QLineEdit *>(QStringLiteral("webhookToken"))->setText(QStringLiteral("tok"));
        QCOMPARE(bad.findChild<QLineEdit *>(QStringLiteral("webhookToken"))->echoMode(), QLineEdit::Password);
        bad.findChild<QTabWidget *>(QStringLiteral("alertSettingsTabs"))->setCurrentIndex(1);
        bad.show();
        {
            // Drawn: the webhook's address, its token (as dots), the error.
            const QImage shot = mapi::test::picture(&bad);
            QVERIFY(shot.save(QStringLiteral("alert-settings-notifications.png")));
            QString why;
            auto *url = bad.findChild<QLineEdit *>(QStringLiteral("webhookUrl"));
            QVERIFY2(mapi::test::inkSpansText(shot, mapi::test::rectIn(&bad, url).adjusted(3, 3, -3, -3), url->text(), url->font(), &why),
                     qPrintable(why));
            auto *token = bad.findChild<QLineEdit *>(QStringLiteral("webhookToken"));
            const QRect tokenField = mapi::test::rectIn(&bad, token).adjusted(3, 3, -3, -3);
            QVERIFY(mapi::test::inkPixels(shot, tokenField) > 0);
            QVERIFY2(mapi::test::labelDrawn(shot, &bad, error, &why, 2 * error->fontMetrics().height()), qPrintable(why));
        }
        bad.accept();
        QCOMPARE(bad.result(), int(QDialog::Accepted));
        QCOMPARE(bad.delivery().webhookUrl, QStringLiteral("https://hooks.example.com/T0/secret"));
        QCOMPARE(bad.delivery().webhookToken, QStringLiteral("tok"));

        // Restore the defaults: the form is the built-in rules again.
        AlertSettingsDialog restore(rules, QStringLiteral("rules.json"), delivery);
        restore.findChild<QPushButton *>(QStringLiteral("alertRulesDefaults"))->click();
        const ErrorOr<AlertRules> restored = alertRulesFromJson(restore.formJson());
        QVERIFY(restored);
        // Compared as text: QCOMPARE on nlohmann::json does not compile for Windows (MinGW).
        QCOMPARE(QString::fromStdString(alertRulesToJson(*restored).dump()), QString::fromStdString(alertRulesToJson(AlertRules()).dump()));
    }
};

QTEST_MAIN(TestAlertsInbox)
#include "tst_alerts_inbox.moc"
