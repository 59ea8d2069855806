#include "common/FoldingBar.h"
#include "panels/AlertsPanel.h"

#include "alerts/AlertMonitor.h"
#include "common/TableSetup.h"
#include "common/TimeText.h"
#include "model/SystemStore.h"
#include "models/AlertModel.h"
#include "models/AlertOrder.h"
#include "session/InspectorSession.h"

#include <QDateTime>
#include <QToolBar>
#include <QHeaderView>
#include <QLabel>
#include <QMenu>
#include <QSortFilterProxyModel>
#include <QTableView>
#include <QTimer>
#include <QToolButton>
#include <QVBoxLayout>

#include <utility>

namespace mapi::ui {

namespace {

QToolButton *button(const QString &objectName, const QString &text, const QString &tip, QWidget *parent)
{
    auto *b = new QToolButton(parent);
    b->setObjectName(objectName);
    b->setText(text);
    b->setToolTip(tip);
    b->setToolButtonStyle(Qt::ToolButtonTextOnly);
    return b;
}

} // namespace

AlertsPanel::AlertsPanel(InspectorSession *session, SelectionHub *selection, AlertMonitor *monitor, QWidget *parent)
    : QWidget(parent)
    , m_session(session)
    , m_selection(selection)
    , m_model(new AlertModel(session->store(), this))
    , m_proxy(new AlertOrder(this))
{
    m_summary = new QLabel(this);
    m_summary->setObjectName(QStringLiteral("alertsSummary"));
    m_summary->setWordWrap(true);

    m_model->setGroups(&monitor->groups());
    m_proxy->setSourceModel(m_model);
    m_proxy->setDynamicSortFilter(true);
    m_proxy->sort(0);
    m_table = new QTableView(this);
    m_table->setObjectName(QStringLiteral("alertsTable"));
    m_table->setModel(m_proxy);
    setUpReadOnlyTable(m_table, QAbstractItemView::SingleSelection, AlertModel::ReasonColumn);
    const int em = fontMetrics().horizontalAdvance(QLatin1Char('m'));
    QHeaderView *header = m_table->horizontalHeader();
    header->resizeSection(AlertModel::SeverityColumn, 6 * em);
    header->resizeSection(AlertModel::KindColumn, 9 * em);
    header->resizeSection(AlertModel::AgentsColumn, 16 * em);
    header->resizeSection(AlertModel::WaitingColumn, 6 * em);

    m_inspect = button(QStringLiteral("alertInspect"), tr("Inspect"), tr("Show the first agent in the inspector (double-click does the same)"), this);
    m_expand = button(QStringLiteral("alertExpand"), tr("List"),
                      tr("List the group's alerts under it, or fold them again (double-click on the group does the same)"), this);
    m_acknowledge = button(QStringLiteral("alertAcknowledge"), tr("Acknowledge"), tr("Mark as seen: greyed and listed last while it stays open"), this);
    m_snooze = button(QStringLiteral("alertSnooze"), tr("Snooze"), tr("Hide it for a while; it comes back if still open"), this);
    m_snooze->setPopupMode(QToolButton::InstantPopup);
    auto *snoozeMenu = new QMenu(m_snooze);
    const struct { QString text; qint64 ms; } periods[] = {
        {tr("15 minutes"), 15 * 60000}, {tr("1 hour"), 3600000}, {tr("4 hours"), 4 * 3600000}};
    for (const auto &p : periods)
        snoozeMenu->addAction(p.text, this, [this, ms = p.ms] { snoozeSelected(ms); });
    m_snooze->setMenu(snoozeMenu);
    m_timeline = button(QStringLiteral("alertTimeline"), tr("Timeline"), tr("Show when it began in the timeline"), this);
    m_evidence = button(QStringLiteral("alertEvidence"), tr("Evidence"),
                        tr("What made it fire, newest first: a message, task or agent opens in the inspector"), this);
    m_evidence->setPopupMode(QToolButton::InstantPopup);
    m_evidenceMenu = new QMenu(m_evidence);
    m_evidenceMenu->setObjectName(QStringLiteral("alertEvidenceMenu"));
    connect(m_evidenceMenu, &QMenu::aboutToShow, this, &AlertsPanel::fillEvidenceMenu);
    m_evidence->setMenu(m_evidenceMenu);
    m_inject = button(QStringLiteral("alertInject"), tr("Inject…"), tr("Steer the alert's agents (asks first)"), this);
    m_suspend = button(QStringLiteral("alertSuspend"), tr("Suspend…"), tr("Suspend the alert's agents (asks first)"), this);
    m_stop = button(QStringLiteral("alertStop"), tr("Stop…"), tr("Stop the alert's agents (asks first)"), this);

    m_supervise = button(QStringLiteral("alertSupervise"), tr("Supervise…"),
                         tr("Let rules act by themselves on this connection: nudge, then suspend, then stop (asks which)"), this);
    connect(m_supervise, &QToolButton::clicked, this, [this] { Q_EMIT superviseRequested(selectedKey()); });
    m_settings = button(QStringLiteral("alertSettings"), tr("Settings…"),
                        tr("The detectors' rules and thresholds, desktop notifications and the webhook"), this);
    connect(m_settings, &QToolButton::clicked, this, &AlertsPanel::settingsRequested);
    QToolBar *buttons = foldingBar(this, QStringLiteral("alertsBar"));
    for (QToolButton *b : {m_inspect, m_expand, m_timeline, m_evidence, m_acknowledge, m_snooze})
        buttons->addWidget(b);
    buttons->addSeparator();
    for (QToolButton *b : {m_inject, m_suspend, m_stop})
        buttons->addWidget(b);
    addStretch(buttons);
    buttons->addWidget(m_supervise);
    buttons->addWidget(m_settings);

    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->addWidget(m_summary);
    layout->addWidget(buttons);
    layout->addWidget(m_table, 1);

    connect(monitor, &AlertMonitor::alertsChanged, this, [this](const std::vector<AlertChange> &changes) {
        const QString kept = selectedKey();
        m_model->apply(changes);
        if (!kept.isEmpty())
            selectKey(kept);
        updateSummary();
    });
    connect(monitor, &AlertMonitor::alertsReset, this, [this] {
        m_model->clear();
        m_evaluated = false; // "nothing needs attention" only once the detectors have read the new model
        updateSummary();
    });
    connect(monitor, &AlertMonitor::evaluated, this, [this] {
        m_model->evaluationEnded();
        if (!std::exchange(m_evaluated, true))
            updateSummary();
    });
    connect(m_model, &AlertModel::groupingChanged, this, [this] {
        const QString kept = selectedKey();
        m_proxy->regroup();
        if (!kept.isEmpty())
            selectKey(kept);
        updateButtons();
    });
    connect(m_table->selectionModel(), &QItemSelectionModel::selectionChanged, this, [this] {
        selectAgentsOfSelection();
        updateButtons();
    });
    connect(m_table, &QTableView::doubleClicked, this, [this] {
        const int row = m_model->rowOf(selectedKey());
        (row >= 0 && m_model->isGroupAt(row) ? m_expand : m_inspect)->click();
    });
    connect(m_inspect, &QToolButton::clicked, this, [this] {
        const QStringList agents = m_model->agentsAt(m_model->rowOf(selectedKey()));
        if (!agents.isEmpty())
            m_selection->focus(SelectionHub::Kind::Agent, agents.first(), this);
    });
    connect(m_expand, &QToolButton::clicked, this, [this] {
        const int row = m_model->rowOf(selectedKey());
        if (row >= 0 && m_model->isGroupAt(row))
            m_model->setExpanded(m_model->groupAt(row), !m_model->isExpanded(m_model->groupAt(row)));
    });
    connect(m_timeline, &QToolButton::clicked, this, [this] {
        if (const Alert *a = m_model->alertAt(m_model->rowOf(selectedKey())))
            Q_EMIT timelineRequested(a->sinceMs);
    });
    connect(m_acknowledge, &QToolButton::clicked, this, &AlertsPanel::acknowledgeSelected);
    auto act = [this](void (AlertsPanel::*signal)()) {
        selectAgentsOfSelection();
        Q_EMIT(this->*signal)();
    };
    connect(m_inject, &QToolButton::clicked, this, [act] { act(&AlertsPanel::injectRequested); });
    connect(m_suspend, &QToolButton::clicked, this, [act] { act(&AlertsPanel::suspendRequested); });
    connect(m_stop, &QToolButton::clicked, this, [act] { act(&AlertsPanel::stopRequested); });
    connect(session, &InspectorSession::stateChanged, this, &AlertsPanel::updateButtons);
    connect(session, &InspectorSession::sourceChanged, this, [this] {
        updateButtons();
        updateSummary(); // a trace began or ended loading
    });
    connect(session, &InspectorSession::traceLoadFinished, this, &AlertsPanel::updateSummary);
    connect(session, &InspectorSession::observerOnlyChanged, this, &AlertsPanel::updateButtons);

    auto *refresh = new QTimer(this);
    refresh->setInterval(1000); // "waiting" counts seconds; snoozes end on the second
    // Sorting needs no refresh (the order is by start, not by waiting time); the filter looks
    // again only when a snooze has ended (a full re-sort of ten thousand rows each second was a
    // stall of its own).
    connect(refresh, &QTimer::timeout, this, [this, lastTick = QDateTime::currentMSecsSinceEpoch()]() mutable {
        const qint64 now = QDateTime::currentMSecsSinceEpoch();
        m_model->refreshWaiting();
        if (m_model->snoozeEndedBetween(lastTick, now))
            m_proxy->refilter();
        lastTick = now;
        updateSummary();
    });
    refresh->start();
    updateButtons();
    updateSummary();
}

QString AlertsPanel::selectedKey() const
{
    const QModelIndexList rows = m_table->selectionModel()->selectedRows();
    return rows.isEmpty() ? QString() : rows.first().data(AlertModel::KeyRole).toString();
}

void AlertsPanel::selectKey(const QString &key)
{
    const int source = m_model->rowOf(key);
    if (source >= 0 && m_model->hiddenInGroupAt(source)) // an alert of a folded group (a timeline bar clicked): listed
        m_model->setExpanded(m_model->groupAt(source), true);
    const QModelIndex index = source < 0 ? QModelIndex() : m_proxy->mapFromSource(m_model->index(source, 0));
    selectRowOrNothing(m_table, index.isValid() ? index.row() : -1);
}

void AlertsPanel::acknowledgeSelected()
{
    const QString key = selectedKey();
    if (key.isEmpty())
        return;
    const bool acknowledged = m_model->index(m_model->rowOf(key), 0).data(AlertModel::AcknowledgedRole).toBool();
    m_model->setAcknowledged(key, !acknowledged);
    selectKey(key);
    updateSummary();
}

void AlertsPanel::snoozeSelected(qint64 forMs)
{
    const QString key = selectedKey();
    if (key.isEmpty())
        return;
    m_model->snooze(key, QDateTime::currentMSecsSinceEpoch() + forMs);
    m_proxy->refilter();
    updateSummary();
}

void AlertsPanel::selectAgentsOfSelection()
{
    // A group row: every agent of its alerts (inject, suspend and stop act on the whole group,
    // through the window's usual confirmation).
    const QStringList agents = m_model->agentsAt(m_model->rowOf(selectedKey()));
    if (!agents.isEmpty())
        m_selection->selectAgents(agents, this);
}

void AlertsPanel::fillEvidenceMenu()
{
    m_evidenceMenu->clear();
    const Alert *a = m_model->alertAt(m_model->rowOf(selectedKey()));
    if (!a)
        return;
    const SystemStore &store = *m_session->store();
    for (auto it = a->evidence.crbegin(); it != a->evidence.crend(); ++it) {
        const QString &item = *it;
        const int colon = item.indexOf(u':');
        const QString kind = item.left(colon);
        const QString id = item.mid(colon + 1);
        if (kind == QLatin1String("message")) {
            const int row = store.messages().find(id);
            if (row < 0) {
                m_evidenceMenu->addAction(tr("message %1 (no longer kept)").arg(id))->setEnabled(false);
                continue;
            }
            const Message m = store.messages()[size_t(row)];
            const QString text = tr("%1  message %2 → %3 (%4)")
                                     .arg(timeOfDay(m.timestampMs), store.agentName(m.fromAgentId),
                                          m.toAgentIds.isEmpty() ? m.toDisplay : store.agentName(m.toAgentIds.first()),
                                          m.payloadType.isEmpty() ? tr("no type") : m.payloadType);
            m_evidenceMenu->addAction(text, this, [this, row, at = m.timestampMs] {
                m_selection->focus(SelectionHub::Kind::Message, QString::number(row), this);
                Q_EMIT timelineRequested(at);
            });
        } else if (kind == QLatin1String("task")) {
            const bool known = store.task(id) != nullptr;
            QAction *action = m_evidenceMenu->addAction(known ? tr("task %1").arg(id) : tr("task %1 (no longer kept)").arg(id), this,
                                                        [this, id] { m_selection->focus(SelectionHub::Kind::Task, id, this); });
            action->setEnabled(known);
        } else if (kind == QLatin1String("agent")) {
            m_evidenceMenu->addAction(tr("agent %1").arg(store.agentName(id)), this,
                                      [this, id] { m_selection->focus(SelectionHub::Kind::Agent, id, this); });
        }
    }
    if (m_evidenceMenu->isEmpty())
        m_evidenceMenu->addAction(tr("No evidence kept for this alert"))->setEnabled(false);
}

void AlertsPanel::updateButtons()
{
    const int row = m_model->rowOf(selectedKey());
    const Alert *a = m_model->alertAt(row);
    const bool group = a && m_model->isGroupAt(row);
    const bool hasAgents = a && (group || !a->agents.isEmpty());
    m_inspect->setEnabled(hasAgents);
    m_expand->setEnabled(group);
    m_expand->setText(group && m_model->isExpanded(m_model->groupAt(row)) ? tr("Fold") : tr("List"));
    m_timeline->setEnabled(a != nullptr);
    m_evidence->setEnabled(a != nullptr && !a->evidence.isEmpty());
    m_acknowledge->setEnabled(a != nullptr);
    m_snooze->setEnabled(a != nullptr);
    const QString blocked = m_session->actionBlockedReason();
    for (QToolButton *b : {m_inject, m_suspend, m_stop}) {
        b->setEnabled(hasAgents && blocked.isEmpty());
        if (!blocked.isEmpty())
            b->setToolTip(blocked);
    }
}

void AlertsPanel::updateSummary()
{
    const AlertModel::Counts c = m_model->counts(QDateTime::currentMSecsSinceEpoch());
    const int waiting = c.open - c.acknowledged - c.snoozed;
    if (c.open == 0 && m_session->isLoadingTrace()) {
        m_summary->setText(tr("Loading the trace: its alerts are shown once the detectors have read it."));
    } else if (c.open == 0 && !m_evaluated) {
        m_summary->setText(tr("The detectors are reading the model…"));
    } else if (c.open == 0) {
        m_summary->setText(tr("Nothing needs attention: no open alert. The detectors are described in docs/alerts.md."));
    } else {
        QStringList parts{tr("%n open", nullptr, c.open)};
        if (c.groups)
            parts << (c.groups == 1 ? tr("1 storm grouped") : tr("%1 storms grouped").arg(c.groups));
        if (c.critical)
            parts << tr("%n critical", nullptr, c.critical);
        if (c.acknowledged)
            parts << tr("%n acknowledged", nullptr, c.acknowledged);
        if (c.snoozed)
            parts << tr("%n snoozed (hidden)", nullptr, c.snoozed);
        m_summary->setText(parts.join(QStringLiteral(" · ")));
    }
    Q_EMIT attentionChanged(waiting, c.critical);
}

} // namespace mapi::ui
