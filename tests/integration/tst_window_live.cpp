// The real window against the official MAP server (demo system, extended mode), driven with
// QTest mouse and keyboard events: connect, agents appear in the table and the graph, filter,
// select, inject, stop, and the tracked outcome shows. Any Qt warning fails the test.
#include "DemoSystem.h"
#include "WindowLiveSupport.h"
#include "dialogs/IncidentDialog.h"
#include "trace/IncidentBundle.h"
#include "trace/TraceLoader.h"
#include "pipeline/ClockSkew.h"

#include <QElapsedTimer>
#include <QThread>
#include <QDir>
#include <QFile>
#include <QProcess>
#include <QScopeGuard>

#include "MainWindow.h"
#include "controllers/ExportController.h"
#include "controllers/TraceController.h"
#include "controllers/ConnectionController.h"
#include "model/StateJson.h"
#include "session/InspectorSession.h"
#include "session/SelectionHub.h"
#include "models/AgentTableModel.h"
#include "trace/TraceTimeline.h"
#include "panels/TopologyPanel.h"
#include "panels/TimelinePanel.h"
#include "timeline/TimelineView.h"
#include "alerts/AlertMonitor.h"
#include "panels/AlertsPanel.h"
#include "topology/TopologyView.h"

#include <QAbstractItemView>
#include <QAction>
#include <QCheckBox>
#include <QGroupBox>
#include <QSettings>
#include <QTemporaryDir>
#include <QComboBox>
#include <QSpinBox>
#include <QToolButton>
#include <QListWidget>
#include <QApplication>
#include <QDialog>
#include <QDialogButtonBox>
#include <QDockWidget>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QPointer>
#include <QMessageBox>
#include <QStatusBar>
#include <QPushButton>
#include <QTimer>
#include <QTableView>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTreeView>
#include <QtTest>

#include <algorithm>
#include <memory>

using namespace mapi;
using namespace mapi::test;


class WindowLiveTest : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void initTestCase()
    {
        QApplication::setOrganizationName(QStringLiteral("MAP Inspector tests"));
        qInstallMessageHandler(failOnWarnings);
    }

    // A token over plain ws:// to a host that is not this machine: the window asks first, Cancel
    // is the default, and Cancel connects to nothing; "Send it unencrypted" connects.
    void tokenOverPlainWsIsAskedFirst()
    {
        ui::MainWindow window;
        window.show();
        ClientOptions options;
        options.url = QUrl(QStringLiteral("ws://192.0.2.7:9/map")); // TEST-NET-1: never answers
        options.auth.method = AuthConfig::Method::Bearer;
        options.auth.credential = QStringLiteral("not-a-real-token");
        for (const bool send : {false, true}) {
            QString title;
            bool cancelIsDefault = false;
            QTimer poll;
            poll.setInterval(20);
            connect(&poll, &QTimer::timeout, &window, [&] {
                auto *box = qobject_cast<QMessageBox *>(QApplication::activeModalWidget());
                if (!box)
                    return;
                poll.stop();
                title = box->windowTitle();
                cancelIsDefault = box->defaultButton() == box->button(QMessageBox::Cancel);
                if (const QString shots = qEnvironmentVariable("MAPI_TEST_SHOTS"); !shots.isEmpty() && !send)
                    box->grab().save(QDir(shots).filePath(QStringLiteral("token-over-ws.png")));
                QAbstractButton *choice = box->button(QMessageBox::Cancel);
                for (QAbstractButton *b : box->buttons())
                    if (send && box->buttonRole(b) == QMessageBox::AcceptRole)
                        choice = b;
                choice->click();
            });
            poll.start();
            window.connection()->connectTo(options, false);
            QCOMPARE(title, QStringLiteral("Send the token unencrypted?"));
            QVERIFY(cancelIsDefault);
            QCOMPARE(window.session()->source() == InspectorSession::Source::Live, send);
        }
        window.close();
    }

    // File → Renew credential… on a live connection made with a token: it asks for the new token
    // (hidden as typed) and sends it with map/auth/refresh; the status bar gives the answer. The
    // server checks credentials: a wrong token is refused and a right one accepted, so the
    // refresh is shown to reach it and its answer to come back.
    void renewCredentialAsksAndSendsTheRefresh()
    {
        static constexpr const char *kKey = "window-renewal-key-51c9";
        DemoProcess demo;
        QVERIFY2(demo.start(QStringLiteral("stock"), 0,
                            {QStringLiteral("--agents"), QStringLiteral("2"), QStringLiteral("--auth"), QStringLiteral("bearer"),
                             QStringLiteral("--credential"), QLatin1String(kKey)}),
                 qPrintable(demo.error()));
        ui::MainWindow window;
        window.resize(1200, 800);
        window.show();
        ClientOptions options;
        options.url = QUrl(demo.url());
        options.auth.method = AuthConfig::Method::Bearer;
        options.auth.credential = QLatin1String(kKey);
        window.connection()->connectTo(options, false);
        QTRY_VERIFY_WITH_TIMEOUT(window.session()->clientState() == ClientState::Live, 15000);
        QAction *renew = window.action(QStringLiteral("renewCredential"));
        QVERIFY(renew && renew->isEnabled());
        QSignalSpy renewed(window.session(), &InspectorSession::credentialRenewed);
        const auto renewWith = [&](const QString &token) {
            bool hidden = false;
            answerNextDialog([&](QDialog *dialog) {
                auto *edit = dialog->findChild<QLineEdit *>();
                QVERIFY(edit);
                hidden = edit->echoMode() == QLineEdit::Password;
                edit->setText(token);
                if (const QString shots = qEnvironmentVariable("MAPI_TEST_SHOTS"); !shots.isEmpty())
                    dialog->grab().save(QDir(shots).filePath(QStringLiteral("renew-credential.png")));
            });
            renew->trigger();
            return hidden;
        };
        QVERIFY(renewWith(QLatin1String(kKey)));
        QTRY_COMPARE_WITH_TIMEOUT(renewed.size(), 1, 10000);
        QVERIFY2(renewed.first().at(0).toBool(), qPrintable(renewed.first().at(1).toString()));
        QCOMPARE(window.statusBar()->currentMessage(), QStringLiteral("The server accepted the new credential"));
        QCOMPARE(window.session()->clientState(), ClientState::Live);
        QVERIFY(renewWith(QStringLiteral("not-the-key")));
        QTRY_COMPARE_WITH_TIMEOUT(renewed.size(), 2, 10000);
        QVERIFY(!renewed.last().at(0).toBool()); // refused by a server that checks
        const QString refusal = renewed.last().at(1).toString();
        QVERIFY(!refusal.isEmpty());
        QCOMPARE(window.statusBar()->currentMessage(), refusal);
        QVERIFY(!refusal.contains(QLatin1String("not-the-key")));
        if (const QString shots = qEnvironmentVariable("MAPI_TEST_SHOTS"); !shots.isEmpty())
            window.grab().save(QDir(shots).filePath(QStringLiteral("renew-credential-answer.png")));
        window.close();
    }

    // The incidents scenario's budget overrun raises an alert in the inbox; the operator lets the
    // budget rule act (nudge at once, suspend after 2 s, no stop): the window sends exactly those
    // two actions to that agent, tracked and marked automatic, and nothing else.
    void supervisionLadderActsOnlyAsAllowed()
    {
        DemoProcess demo;
        QVERIFY2(demo.start(QStringLiteral("extended"), 0,
                            {QStringLiteral("--agents"), QStringLiteral("20"), QStringLiteral("--scenario"), QStringLiteral("incidents")}),
                 qPrintable(demo.error()));
        ui::MainWindow window;
        window.resize(1400, 900);
        window.show();
        ClientOptions options;
        options.url = QUrl(demo.url());
        window.connection()->connectTo(options, false);
        QTRY_VERIFY_WITH_TIMEOUT(window.session()->clientState() == ClientState::Live, 15000);
        auto budgetAlert = [&]() -> const Alert * {
            for (const auto &[key, alert] : window.alertMonitor()->openAlerts())
                if (key.startsWith(QLatin1String("budget:")))
                    return &alert;
            return nullptr;
        };
        QTRY_VERIFY_WITH_TIMEOUT(budgetAlert() != nullptr, 20000);
        const QString spender = budgetAlert()->agents.first();
        // The topology marks the agents with open alerts.
        auto *topology = window.findChild<ui::TopologyPanel *>();
        QTRY_VERIFY_WITH_TIMEOUT(topology->view()->alertBadgeCount() >= 1, 5000);
        const SystemStore &store = *window.session()->store();
        QCOMPARE(store.actions().size(), size_t(0)); // nothing acts before the operator says so

        answerNextDialog([&](QDialog *dialog) {
            auto *budget = dialog->findChild<QCheckBox *>(QStringLiteral("supervise-budget"));
            QVERIFY(budget);
            auto *preview = dialog->findChild<QLabel *>(QStringLiteral("preview-budget"));
            QVERIFY2(preview->text().contains(store.agentName(spender)), qPrintable(preview->text()));
            budget->setChecked(true);
            const QList<QSpinBox *> delays = dialog->findChildren<QSpinBox *>();
            // Row order: nudge, suspend, stop per rule; the budget row is the sixth (AlertKind order).
            const int first = int(AlertKind::Budget) * 3;
            delays[first]->setValue(0);
            delays[first + 1]->setValue(2);
            delays[first + 2]->setValue(-1);
            if (const QString shots = qEnvironmentVariable("MAPI_TEST_SHOTS"); !shots.isEmpty())
                dialog->grab().save(QDir(shots).filePath(QStringLiteral("supervision-dialog.png")));
        });
        window.findChild<QToolButton *>(QStringLiteral("alertSupervise"))->click();

        auto actionsOf = [&](ActionKind kind) {
            int n = 0;
            for (const OperatorAction &a : store.actions())
                n += a.kind == kind ? 1 : 0;
            return n;
        };
        QTRY_VERIFY_WITH_TIMEOUT(actionsOf(ActionKind::Inject) == 1 && actionsOf(ActionKind::Suspend) == 1, 15000);
        for (const OperatorAction &a : store.actions()) {
            QCOMPARE(a.agentId, spender);
            QCOMPARE(window.session()->actionOrigin(a.id), QStringLiteral("automatic (rule budget)"));
        }
        // The audit log says so on each row.
        auto *actionsTable = window.dock(QStringLiteral("actionsDock"))->findChild<QTableView *>();
        for (int row = 0; row < actionsTable->model()->rowCount(); ++row) {
            QString detail;
            for (int c = 0; c < actionsTable->model()->columnCount(); ++c)
                detail += actionsTable->model()->index(row, c).data().toString() + u'|';
            QVERIFY2(detail.contains(QStringLiteral("automatic (rule budget)")), qPrintable(detail));
        }
        // The demo's agent obeys the suspension; no stop follows (not in the plan).
        QTRY_COMPARE_WITH_TIMEOUT(store.agent(spender)->state, QStringLiteral("suspended"), 15000);
        QTest::qWait(3000);
        QCOMPARE(actionsOf(ActionKind::Stop), 0);
        QCOMPARE(store.actions().size(), size_t(2));
        if (const QString shots = qEnvironmentVariable("MAPI_TEST_SHOTS"); !shots.isEmpty()) {
            window.dock(QStringLiteral("actionsDock"))->raise();
            QTest::qWait(100);
            window.grab().save(QDir(shots).filePath(QStringLiteral("supervision-actions.png")));
        }

        // The timeline draws the budget alert on the spender's lane; a click on its bar shows
        // it in the inbox.
        ui::TimelineView *timeline = window.findChild<ui::TimelinePanel *>()->view();
        const auto budgetSpan = [&]() -> const ui::TimelineView::AlertSpan * {
            for (const auto &span : timeline->alertSpans())
                if (span.kind == AlertKind::Budget && span.untilMs < 0 && span.agents.contains(spender))
                    return &span;
            return nullptr;
        };
        QVERIFY(budgetSpan());
        const QString budgetKey = budgetSpan()->key;
        Q_EMIT timeline->alertClicked(budgetKey);
        QCOMPARE(window.findChild<ui::AlertsPanel *>()->selectedKey(), budgetKey);
        if (const QString shots = qEnvironmentVariable("MAPI_TEST_SHOTS"); !shots.isEmpty()) {
            window.dock(QStringLiteral("timelineDock"))->raise();
            QTest::qWait(300);
            window.grab().save(QDir(shots).filePath(QStringLiteral("alerts-window.png")));
        }

        // Alerts → Settings…: the budget rule switched off is saved to the rules file and applies
        // at once (the budget alert goes, and is not raised again).
        QTemporaryDir config;
        const QString rulesPath = config.filePath(QStringLiteral("alert-rules.json"));
        QSettings().setValue(QStringLiteral("alerts/rulesFile"), rulesPath);
        auto forgetRulesFile = qScopeGuard([] { QSettings().remove(QStringLiteral("alerts/rulesFile")); });
        answerNextDialog([&](QDialog *dialog) {
            auto *budget = dialog->findChild<QGroupBox *>(QStringLiteral("rule.budget"));
            QVERIFY(budget);
            budget->setChecked(false);
        });
        window.findChild<QToolButton *>(QStringLiteral("alertSettings"))->click();
        QVERIFY(!window.alertMonitor()->rules().rule(AlertKind::Budget).enabled);
        const ErrorOr<AlertRules> saved = readAlertRulesFile(rulesPath);
        QVERIFY2(saved, qPrintable(saved ? QString() : saved.error()));
        QVERIFY(!saved->rule(AlertKind::Budget).enabled);
        QTest::qWait(2500); // two evaluations
        QVERIFY(budgetAlert() == nullptr);
        QVERIFY(!window.alertMonitor()->openAlerts().empty()); // the other incidents are still seen
    }

    void connectFilterSelectInjectStop()
    {
        DemoProcess demo;
        QVERIFY2(demo.start(QStringLiteral("extended"), 0, {QStringLiteral("--agents"), QStringLiteral("20")}), qPrintable(demo.error()));

        ui::MainWindow window;
        window.resize(1400, 900);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        window.activateWindow();

        // Connect through the Connect… dialog, opened with its shortcut.
        answerNextDialog([&](QDialog *dialog) {
            auto *url = dialog->findChild<QComboBox *>(QStringLiteral("url"));
            QVERIFY(url);
            url->setCurrentText(demo.url());
        });
        QTest::keyClick(&window, Qt::Key_K, Qt::ControlModifier);
        QTRY_VERIFY_WITH_TIMEOUT(window.session()->clientState() == ClientState::Live, 15000);

        // Agents appear in the table and in the graph.
        QAbstractItemView *table = agentsView(window);
        QVERIFY(table);
        QTRY_VERIFY_WITH_TIMEOUT(table->model()->rowCount() >= 20, 20000);
        auto *topology = window.findChild<ui::TopologyPanel *>();
        QVERIFY(topology);
        QTRY_VERIFY_WITH_TIMEOUT(topology->view()->visibleNodeCount() >= 20, 10000);

        // Filter to the sub-agents with the keyboard (the window is active again once the dialog closed).
        window.activateWindow();
        QVERIFY(QTest::qWaitForWindowActive(&window));
        QTest::keyClick(&window, Qt::Key_F, Qt::ControlModifier);
        auto *filter = window.dock(QStringLiteral("agentsDock"))->findChild<QLineEdit *>();
        QVERIFY(filter);
        QTRY_VERIFY(filter->hasFocus());
        QTest::keyClicks(filter, QStringLiteral("role:subagent -state:stopped"));
        QTRY_VERIFY_WITH_TIMEOUT(table->model()->rowCount() > 0 && table->model()->rowCount() < 20, 5000);
        for (int row = 0; row < table->model()->rowCount(); ++row)
            QVERIFY(table->model()->index(row, 0).data().toString().contains(QLatin1String(".sub-")));

        // Select the first row with the mouse.
        const QRect cell = table->visualRect(table->model()->index(0, 0));
        QTest::mouseClick(table->viewport(), Qt::LeftButton, Qt::NoModifier, cell.center());
        QTRY_COMPARE(window.selection()->selectedAgents().size(), 1);
        const QString agent = window.selection()->selectedAgents().first();

        // Inject through the dialog; the outcome is tracked to confirmation.
        QTRY_VERIFY(window.action(QStringLiteral("inject"))->isEnabled());
        answerNextDialog([](QDialog *dialog) {
            auto *text = dialog->findChild<QPlainTextEdit *>();
            QVERIFY(text);
            QTest::keyClicks(text, QStringLiteral("summarise your progress"));
        });
        QTest::keyClick(&window, Qt::Key_I, Qt::ControlModifier);
        const SystemStore *store = window.session()->store();
        auto actionFor = [&](ActionKind kind) -> const OperatorAction * {
            for (const OperatorAction &a : store->actions())
                if (a.kind == kind && a.agentId == agent)
                    return &a;
            return nullptr;
        };
        QTRY_VERIFY_WITH_TIMEOUT(actionFor(ActionKind::Inject) && actionFor(ActionKind::Inject)->status == ActionStatus::Confirmed, 15000);
        // The outcome is in view: the Actions panel came forward (not just named in the status bar).
        QVERIFY(!window.dock(QStringLiteral("actionsDock"))->visibleRegion().isEmpty());

        // Stop, with its confirmation dialog listing the agent.
        answerNextDialog([&](QDialog *dialog) {
            auto *list = dialog->findChild<QListWidget *>();
            QVERIFY(list);
            QCOMPARE(list->count(), 1);
        });
        window.activateWindow();
        QVERIFY(QTest::qWaitForWindowActive(&window));
        QTest::keyClick(&window, Qt::Key_X, Qt::ControlModifier | Qt::ShiftModifier);
        QTRY_VERIFY2_WITH_TIMEOUT(actionFor(ActionKind::Stop), "no stop action was sent", 5000);
        QTRY_VERIFY_WITH_TIMEOUT(actionFor(ActionKind::Stop) && actionFor(ActionKind::Stop)->status == ActionStatus::Confirmed, 15000);
        QTRY_COMPARE(store->agent(agent)->state, QStringLiteral("stopped"));

        // The Actions panel shows both outcomes.
        auto *actionsView = window.dock(QStringLiteral("actionsDock"))->findChild<QAbstractItemView *>();
        QVERIFY(actionsView);
        QTRY_COMPARE(actionsView->model()->rowCount(), 2);
        int confirmed = 0;
        for (int row = 0; row < 2; ++row)
            for (int col = 0; col < actionsView->model()->columnCount(); ++col)
                confirmed += actionsView->model()->index(row, col).data().toString() == QLatin1String("confirmed");
        QCOMPARE(confirmed, 2);

        // Observer-only disables every control action, with the reason shown.
        window.activateWindow();
        QVERIFY(QTest::qWaitForWindowActive(&window));
        QTest::keyClick(&window, Qt::Key_O, Qt::ControlModifier | Qt::ShiftModifier);
        QTRY_VERIFY(window.action(QStringLiteral("observer"))->isChecked());
        QVERIFY(!window.action(QStringLiteral("stop"))->isEnabled());
        QVERIFY(!window.action(QStringLiteral("inject"))->isEnabled());
        QVERIFY(window.action(QStringLiteral("stop"))->toolTip().contains(QLatin1String("Observer")));

        // The session refuses with a typed reason and tracks nothing ...
        InspectorSession *session = window.session();
        const ActionStart refused = session->suspend({agent}, QString());
        QCOMPARE(refused.refused, ActionBlock::ObserverOnly);
        QVERIFY(refused.actionIds.isEmpty());
        QCOMPARE(store->actions().size(), size_t(2));
        // ... and, allowed, names each action it starts; the store tracks it by that name.
        session->setObserverOnly(false);
        const ActionStart started = session->resume({agent});
        QCOMPARE(started.refused, ActionBlock::None);
        QCOMPARE(started.actionIds.size(), 1);
        QTRY_VERIFY_WITH_TIMEOUT(store->action(started.actionIds.front()) != nullptr, 5000);
        const OperatorAction *resumed = store->action(started.actionIds.front());
        QCOMPARE(resumed->kind, ActionKind::Resume);
        QCOMPARE(resumed->agentId, agent);
        QTRY_VERIFY_WITH_TIMEOUT(store->action(started.actionIds.front())->status != ActionStatus::Sent, 15000);
        window.close();
    }

    // File → Export incident… of a live session (the official server): the dialog saves the
    // session's journal first (off the GUI thread), then counts and writes; the bundle holds the
    // range's messages, and the state at its start.
    void incidentOfALiveSession()
    {
        DemoProcess demo;
        QVERIFY2(demo.start(QStringLiteral("extended"), 0, kDemoOptions), qPrintable(demo.error()));
        QTemporaryDir dir;
        ui::MainWindow window;
        connectAndFill(window, demo.url());
        if (QTest::currentTestFailed())
            return;
        const SystemStore *store = window.session()->store();
        const qint64 from = store->messages().timestampMs(store->messages().size() / 2);
        ui::IncidentDialog *dialog = window.exports()->exportIncident();
        QVERIFY(dialog);
        dialog->setRange(from, store->now());
        dialog->setRedaction({QStringLiteral("content")}, {});
        dialog->setPictures(false);
        QSignalSpy previewed(dialog, &ui::IncidentDialog::previewed);
        dialog->preview();
        QTRY_COMPARE_WITH_TIMEOUT(previewed.size(), 1, 20000);
        QVERIFY2(previewed.first().at(0).toBool(), qPrintable(dialog->previewText()));
        QVERIFY(dialog->lastResult().recordsWritten > 20);
        QVERIFY(dialog->lastResult().recordsLeftOutBeforeFrom > 0);
        const QString bundle = dir.filePath(QStringLiteral("live.incident.jsonl.zst"));
        QSignalSpy exported(dialog, &ui::IncidentDialog::exported);
        dialog->exportTo(bundle);
        QTRY_COMPARE_WITH_TIMEOUT(exported.size(), 1, 20000);
        QVERIFY2(exported.first().at(0).toBool(), qPrintable(exported.first().at(1).toString()));
        dialog->close();

        SystemStore loaded;
        const TraceLoadResult r = loadTraceInto(loaded, bundle);
        QVERIFY2(r.ok, qPrintable(r.error));
        QVERIFY(incidentFromHeader(r.stats.header).has_value());
        QVERIFY(loaded.agents().size() >= 20);
        QCOMPARE(loaded.counters().gaps, qint64(0));
        for (size_t m = loaded.messages().firstRow(); m < loaded.messages().size(); ++m)
            QVERIFY(loaded.messages().timestampMs(m) >= from - 1000); // the server's clock, the record's: close

        // The bundle's state at its start is the session's at `from`: the session saved up to
        // `from` (a path the bundle does not take) and the bundle read up to `from` hold the same
        // agents, in the same states, roles, parents and scopes.
        const QString upTo = dir.filePath(QStringLiteral("up-to-from.jsonl.zst"));
        QSignalSpy saved(window.session(), &InspectorSession::sessionSaved);
        QString error;
        QVERIFY2(window.session()->saveSessionAs(upTo, &error, std::nullopt, from), qPrintable(error));
        QTRY_COMPARE_WITH_TIMEOUT(saved.size(), 1, 20000);
        QVERIFY2(saved.first().at(0).toBool(), qPrintable(saved.first().at(2).toString()));
        const auto agentsAt = [](const QString &path, qint64 untilMs) {
            SystemStore s;
            TraceLoadOptions options;
            options.untilTimeMs = untilMs;
            loadTraceInto(s, path, options);
            QStringList rows;
            for (const Agent &a : s.agents())
                if (!a.placeholder)
                    rows << QStringLiteral("%1|%2|%3|%4|%5|%6").arg(a.id, a.name, a.role, a.state, a.parentId, toStringList(a.scopes).join(u','));
            rows.sort();
            return rows;
        };
        const QStringList sessionAtFrom = agentsAt(upTo, from);
        QVERIFY(sessionAtFrom.size() >= 20);
        QCOMPARE(agentsAt(bundle, from), sessionAtFrom);
        window.close();
    }

    // Time travel while live: the window shows the session as it was (rebuilt from the journal)
    // while the live connection keeps feeding a background model; back at the live edge the
    // model equals a fresh snapshot of the server, taken by a second session.
    // A server two minutes behind: the status bar says so, and agents that beat every half second
    // stay healthy under a two-second rule (on the local clock they would all be two minutes late).
    void serverClockBehindIsShownAndCorrected()
    {
        DemoProcess demo;
        QVERIFY2(demo.start(QStringLiteral("extended"), 0,
                            {QStringLiteral("--agents"), QStringLiteral("12"), QStringLiteral("--heartbeat-ms"), QStringLiteral("500"),
                             QStringLiteral("--clock-skew-ms"), QStringLiteral("-120000")}),
                 qPrintable(demo.error()));
        ui::MainWindow window;
        HealthPolicy strict;
        strict.intervalMs = 2000;
        window.session()->store()->setHealthPolicy(strict);
        window.show();
        ClientOptions options;
        options.url = QUrl(demo.url());
        window.connection()->connectTo(options, true);
        const SystemStore *store = window.session()->store();
        QTRY_VERIFY_WITH_TIMEOUT(store->connection().clockSamples >= ClockSkewEstimator::kMinSamples, 20000);
        QTRY_VERIFY_WITH_TIMEOUT(store->agents().size() >= 12, 20000);
        auto *label = window.findChild<QLabel *>(QStringLiteral("clockOffset"));
        QVERIFY(label);
        QTRY_VERIFY2_WITH_TIMEOUT(label->isVisible() && label->text().startsWith(QStringLiteral("times: this computer's clock · server 12"))
                                      && label->text().endsWith(QLatin1String("s behind")),
                                  qPrintable(label->text()), 5000);
        // Every time shown is on this computer's clock: an agent that beat just now reads "now" in
        // the agents table, not two minutes ago (issue 43 item 4).
        auto *agents = window.dock(QStringLiteral("agentsDock"))->findChild<QTableView *>();
        QVERIFY(agents && agents->model()->rowCount() > 0);
        const int lastActivity = int(ui::AgentTableModel::LastActivityColumn);
        const QString text = agents->model()->index(0, lastActivity).data(Qt::ToolTipRole).toString();
        const QDateTime shown = QDateTime::fromString(text, QStringLiteral("yyyy-MM-dd HH:mm:ss"));
        QVERIFY2(shown.isValid() && std::abs(shown.secsTo(QDateTime::currentDateTime())) < 20, qPrintable(text));
        QTest::qWait(5000); // more than two intervals of the rule
        int healthy = 0;
        for (const Agent &a : store->agents())
            healthy += a.health == Health::Healthy;
        // The demo's scripted incidents may take one or two agents down; the rest are healthy.
        QVERIFY2(healthy >= int(store->agents().size()) - 2, qPrintable(QStringLiteral("%1 of %2").arg(healthy).arg(store->agents().size())));
        if (const QString shots = qEnvironmentVariable("MAPI_TEST_SHOTS"); !shots.isEmpty()) {
            for (const char *name : {"timelineDock", "healthDock"}) { // the ruler and the charts, on this computer's clock
                window.dock(QLatin1String(name))->show();
                window.dock(QLatin1String(name))->raise();
            }
            QTest::qWait(1500);
            window.grab().save(QDir(shots).filePath(QStringLiteral("clock-behind.png")));
        }
    }

    // A trace never takes a live connection's place silently: the window asks, Cancel is the
    // default and keeps the connection; "Disconnect and open" agrees. Not connected: no question.
    void openingATraceWhileLiveAsksFirst()
    {
        DemoProcess demo;
        QVERIFY2(demo.start(QStringLiteral("extended"), 0, kDemoOptions), qPrintable(demo.error()));
        ui::MainWindow window;
        connectAndFill(window, demo.url());
        if (QTest::currentTestFailed())
            return;
        const auto answer = [](const char *button, QString *text) {
            QTimer::singleShot(300, [button, text] {
                auto *box = qobject_cast<QMessageBox *>(QApplication::activeModalWidget());
                if (!box || box->objectName() != QLatin1String("endLiveConnectionBox"))
                    return; // the test's QVERIFYs below fail
                *text = box->text() + u'\n' + box->informativeText();
                if (qstrcmp(button, "cancel") == 0) {
                    QCOMPARE(box->defaultButton(), box->button(QMessageBox::Cancel));
                    box->button(QMessageBox::Cancel)->click();
                } else {
                    box->findChild<QPushButton *>(QString::fromLatin1(button))->click();
                }
            });
        };
        QString asked;
        answer("cancel", &asked);
        QVERIFY(!window.traces()->mayEndLiveConnection(QStringLiteral("/tmp/other.jsonl.zst")));
        QVERIFY2(asked.contains(QLatin1String("other.jsonl.zst")) && asked.contains(window.session()->sourceLabel()), qPrintable(asked));
        QCOMPARE(window.session()->clientState(), ClientState::Live); // still connected
        asked.clear();
        answer("disconnectAndOpen", &asked);
        QVERIFY(window.traces()->mayEndLiveConnection(QStringLiteral("/tmp/other.jsonl.zst")));
        QVERIFY(!asked.isEmpty());
        window.session()->disconnectFromServer();
        QTRY_VERIFY_WITH_TIMEOUT(window.session()->clientState() == ClientState::Closed, 10000);
        QVERIFY(window.traces()->mayEndLiveConnection(QStringLiteral("/tmp/other.jsonl.zst"))); // nothing to end: no question
        window.close();
    }

    void timeTravelWhileLiveThenBackEqualsAFreshSnapshot()
    {
        DemoProcess demo;
        QVERIFY2(demo.start(QStringLiteral("extended"), 0, kDemoOptions), qPrintable(demo.error()));
        ui::MainWindow window;
        connectAndFill(window, demo.url());
        if (QTest::currentTestFailed())
            return;
        InspectorSession *session = window.session();
        const SystemStore *shown = session->store();
        QVERIFY(window.action(QStringLiteral("timeTravel"))->isEnabled());
        QVERIFY(!window.action(QStringLiteral("backToLive"))->isEnabled());

        session->setObserverOnly(false); // actions are refused while viewing the past, not only here
        QSignalSpy ready(session, &InspectorSession::timeTravelReady);
        window.action(QStringLiteral("timeTravel"))->trigger();
        QVERIFY(session->isTimeTravelling());
        QVERIFY(session->liveStore() != shown);
        QTRY_COMPARE_WITH_TIMEOUT(ready.size(), 1, 20000);
        QVERIFY2(ready.first().at(0).toBool(), qPrintable(ready.first().at(1).toString()));
        QVERIFY(session->replay());
        QVERIFY(window.action(QStringLiteral("backToLive"))->isEnabled());
        QCOMPARE(session->actionBlock(), ActionBlock::TimeTravelling);

        // Back to the first seconds: fewer agents and events than the live model holds.
        session->replay()->seek(session->replay()->startMs() + 300);
        const qint64 pastEvents = shown->counters().eventsApplied;
        QVERIFY(pastEvents < session->liveStore()->counters().eventsApplied);
        // Live goes on in the background meanwhile.
        const qint64 liveBefore = session->liveStore()->counters().eventsApplied;
        QTRY_VERIFY_WITH_TIMEOUT(session->liveStore()->counters().eventsApplied > liveBefore, 10000);
        QCOMPARE(shown->counters().eventsApplied, pastEvents); // the past stays where it was put
        // The status bar says where the operator is and how the connection is (it said "live live").
        const QString state = window.findChild<QLabel *>(QStringLiteral("connectionState"))->text();
        QVERIFY2(state.startsWith(QLatin1String("Viewing the past")) && state.contains(QLatin1String("connection live")), qPrintable(state));
        if (const QString shots = qEnvironmentVariable("MAPI_TEST_SHOTS"); !shots.isEmpty()) {
            QTest::qWait(200); // a repaint at ~30 Hz
            window.grab().save(QDir(shots).filePath(QStringLiteral("time-travel-live.png")));
        }

        // The system goes quiet (server-side), then back to the live edge.
        QVERIFY(!demoHttp(demo.url(), QStringLiteral("/control/quiesce"), true).is_null());
        QTest::qWait(1500);
        auto *timeline = window.findChild<ui::TimelineView *>();
        QVERIFY(timeline);
        timeline->showTimeRange(timeline->axis().startMs, timeline->axis().startMs + 10000); // the operator's 10 s
        const double spanInThePast = timeline->axis().spanMs();
        window.action(QStringLiteral("backToLive"))->trigger();
        QVERIFY(!session->isTimeTravelling());
        QTest::qWait(300);
        // Issue 41 item 9: the zoom does not jump on the way back (it went from 10 s to 2.9 min).
        QVERIFY2(std::abs(timeline->axis().spanMs() - spanInThePast) < 1.0,
                 qPrintable(QStringLiteral("%1 ms before, %2 ms after").arg(spanInThePast).arg(timeline->axis().spanMs())));
        QCOMPARE(session->liveStore(), shown);
        QCOMPARE(session->actionBlock(), ActionBlock::None);

        // What the server knows ...
        const QString diff = diffStateWithView(stateToJson(*shown), demoHttp(demo.url(), QStringLiteral("/view")));
        QVERIFY2(diff.isEmpty(), qPrintable(diff));
        // ... and a fresh snapshot of it by a second session.
        InspectorSession fresh;
        fresh.setJournaling(false);
        ClientOptions options;
        options.url = QUrl(demo.url());
        fresh.connectTo(options, true);
        QTRY_VERIFY_WITH_TIMEOUT(fresh.clientState() == ClientState::Live, 15000);
        auto essentials = [](const SystemStore &store) {
            QStringList out;
            for (const Agent &a : store.agents())
                if (!a.placeholder && !a.unregistered)
                    out << QStringLiteral("%1|%2|%3|%4|%5").arg(a.id, a.name, a.role, a.state, a.parentId);
            for (const Scope &sc : store.scopes())
                if (!sc.placeholder && !sc.deleted)
                    out << QStringLiteral("scope %1|%2").arg(sc.id, toStringList(sc.members).join(QLatin1Char(',')));
            out.sort();
            return out;
        };
        QTRY_COMPARE_WITH_TIMEOUT(essentials(*shown), essentials(*fresh.store()), 5000);
        QVERIFY(essentials(*shown).size() >= 20);
        window.close();
    }

    // A flood faster than this thread applies: the client waits for room (the backlog holds at
    // most kMaxPendingInputs), and a session destroyed meanwhile ends at once, not waiting for a
    // client that waits for it.
    void aSessionEndsWhileAFloodHoldsTheClientBack()
    {
        QProcess flood;
        flood.start(QStringLiteral(MAPI_FLOOD_SERVER), {QStringLiteral("--agents"), QStringLiteral("50"),
                                                        QStringLiteral("--seconds"), QStringLiteral("20")});
        QVERIFY(flood.waitForStarted(5000));
        const auto stopFlood = qScopeGuard([&flood] {
            flood.kill();
            flood.waitForFinished(3000);
        });
        QVERIFY(flood.waitForReadyRead(5000));
        const QString url = QString::fromUtf8(flood.readLine()).trimmed().section(QLatin1Char(' '), 1);
        auto session = std::make_unique<InspectorSession>();
        ClientOptions options;
        options.url = QUrl(url);
        session->connectTo(options, true);
        QTRY_VERIFY_WITH_TIMEOUT(session->store()->counters().eventsApplied > 1000, 10000);
        // This thread applies nothing for a while: the client fills the backlog and waits (within
        // 1.5 s here; up to 8 s on a machine busy with other work).
        QElapsedTimer busy;
        busy.start();
        while (busy.elapsed() < 1500 || (session->inputBacklog().waits() == 0 && busy.elapsed() < 8000))
            QThread::msleep(10);
        QVERIFY(session->inputBacklog().waits() > 0);
        QVERIFY(session->inputBacklog().size() >= InspectorSession::kMaxPendingInputs);
        QElapsedTimer ending;
        ending.start();
        session.reset();
        QVERIFY2(ending.elapsed() < 5000, qPrintable(QString::number(ending.elapsed())));
    }

    // Journal retention under a flood (tools/flood-server, 50 agents, as fast as the socket
    // takes them): the journal drops its oldest parts, the store trims the history they held,
    // and nothing else is lost: every event sent is counted, every agent's state is the last
    // one sent, and the kept history's frames still read back from the journal.
    void journalRetentionTrimsHistoryAndKeepsTheModelExact()
    {
        QProcess flood;
        // 5 s of flood: several times the retention even on a machine busy with other work.
        flood.start(QStringLiteral(MAPI_FLOOD_SERVER), {QStringLiteral("--agents"), QStringLiteral("50"),
                                                        QStringLiteral("--seconds"), QStringLiteral("5")});
        QVERIFY(flood.waitForStarted(5000));
        const auto stopFlood = qScopeGuard([&flood] { // on every way out, a failed check too
            flood.kill();
            flood.waitForFinished(3000);
        });
        QVERIFY(flood.waitForReadyRead(5000));
        const QString url = QString::fromUtf8(flood.readLine()).trimmed().section(QLatin1Char(' '), 1);
        QVERIFY2(url.startsWith(QLatin1String("ws://")), qPrintable(url));

        ui::MainWindow window;
        window.show();
        JournalOptions retention;
        retention.maxBytes = 512 << 10; // parts of 128 KiB: the oldest go within the first second
        window.session()->setJournalOptions(retention);
        ClientOptions options;
        options.url = QUrl(url);
        // The client reads the agent list again every 2 s instead of every minute: the lists then
        // come between the flood's events and after them, and must agree with them (a list from
        // a server is the truth; the flood server once listed every agent idle, which a run past
        // the minute showed as agents whose state was not their newest event's).
        options.reconcileIntervalMs = 2000;
        window.connection()->connectTo(options, true);
        const SystemStore *store = window.session()->store();
        // The window falls behind now and then (a stall of its thread, as a slow paint or a busy
        // machine makes): the journal drops parts while their events still wait to be applied.
        for (int stall = 0; stall < 3; ++stall) {
            QTest::qWait(300);
            QThread::msleep(700);
        }
        QByteArray out;
        qint64 sent = -1;
        QTRY_VERIFY_WITH_TIMEOUT([&] {
            out += flood.readAll();
            for (const QByteArray &line : out.split('\n'))
                if (line.startsWith("done "))
                    sent = line.mid(5).toLongLong();
            return sent > 0;
        }(), 30000);
        // What 5 s of flood sent is applied whole, however long a busy machine takes: 39 s once
        // here beside a compile and the portability passes (this whole test: 42 s alone).
        QTRY_COMPARE_WITH_TIMEOUT(store->counters().eventsApplied, sent, 90000);
        QTRY_VERIFY_WITH_TIMEOUT(store->historyTrim().events > 0, 10000);

        QVERIFY(store->events().firstRow() > 0);
        QCOMPARE(qint64(store->events().firstRow()), store->historyTrim().events);
        QVERIFY(store->eventFrame(int(store->events().firstRow()) - 1).isEmpty());
        // The journal drops a part in its own thread and tells the session afterwards (queued):
        // until that news arrives, the oldest rows name frames that are gone. Once it has, the
        // oldest row kept reads its own frame back.
        const auto oldestReadsBack = [&] {
            const size_t first = store->events().firstRow();
            return store->eventFrame(int(first)).contains(store->events().eventId(first).toUtf8());
        };
        QTRY_VERIFY_WITH_TIMEOUT(oldestReadsBack(), 10000);
        if (!oldestReadsBack()) { // what the journal and the store hold, for the failure's reader
            const size_t first = store->events().firstRow();
            const FrameRef ref = store->events().journalRef(first);
            QFAIL(qPrintable(QStringLiteral("row %1 (received %2, ref %3+%4) unreadable; journal dropped before %5, %6 records")
                                 .arg(first).arg(store->events().receivedMs(first)).arg(ref.offset).arg(ref.size)
                                 .arg(window.session()->journalDroppedBeforeMs()).arg(window.session()->journalRecordsDropped())));
        }
        QCOMPARE(store->counters().duplicateEvents, qint64(0));
        QCOMPARE(int(store->agents().size()), 50);
        // The flood cycles over the agents, each event naming the state it sets: the model
        // holds the state of each agent's newest event.
        for (size_t row = store->events().size() - 50; row < store->events().size(); ++row) {
            const EventEntry &e = store->events()[row];
            QCOMPARE(store->agent(store->events().agentId(e))->state, store->stateName(e.stateRow()));
        }
        QVERIFY(window.session()->journalRecordsDropped() > 0);
        QVERIFY(window.session()->journalDroppedBeforeMs() > 0);

        // The past of a trimmed session: the replay bar says what retention dropped; back at the
        // live edge the model is as exact as before.
        const Json before = modelState(*store);
        QSignalSpy ready(window.session(), &InspectorSession::timeTravelReady);
        window.action(QStringLiteral("timeTravel"))->trigger();
        QTRY_COMPARE_WITH_TIMEOUT(ready.size(), 1, 30000);
        QVERIFY2(ready.first().at(0).toBool(), qPrintable(ready.first().at(1).toString()));
        auto *note = window.findChild<QLabel *>(QStringLiteral("replayNote"));
        QVERIFY(note && note->isVisible());
        QVERIFY2(note->text().contains(QLatin1String("dropped by retention")), qPrintable(note->text()));
        if (const QString shots = qEnvironmentVariable("MAPI_TEST_SHOTS"); !shots.isEmpty())
            window.grab().save(QDir(shots).filePath(QStringLiteral("time-travel-trimmed.png")));
        QVERIFY(store->counters().eventsApplied < sent); // the past holds what the journal kept
        window.action(QStringLiteral("backToLive"))->trigger();
        QVERIFY(!note->isVisible());
        QCOMPARE(store->counters().eventsApplied, sent);
        QCOMPARE(QString::fromStdString(modelState(*store)["agents"].dump()), QString::fromStdString(before["agents"].dump()));
        window.close();
    }
};

QTEST_MAIN(WindowLiveTest)
#include "tst_window_live.moc"
