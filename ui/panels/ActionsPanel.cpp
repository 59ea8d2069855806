#include "panels/ActionsPanel.h"

#include "common/TableSetup.h"
#include "models/ActionModel.h"
#include "session/InspectorSession.h"

#include <QHeaderView>
#include <QLabel>
#include <QScrollBar>
#include <QTableView>
#include <QVBoxLayout>

namespace mapi::ui {

ActionsPanel::ActionsPanel(InspectorSession *session, SelectionHub *selection, QWidget *parent)
    : QWidget(parent)
    , m_selection(selection)
    , m_store(session->store())
    , m_model(new ActionModel(session->store(), this))
{
    m_summary = new QLabel(this);
    m_summary->setObjectName(QStringLiteral("actionsSummary"));
    m_summary->setWordWrap(true);

    m_table = new QTableView(this);
    m_table->setObjectName(QStringLiteral("actionsTable"));
    m_table->setModel(m_model);
    m_model->setOriginLookup([session](const QString &id) { return session->actionOrigin(id); });
    // Detail stretches in the middle; the latencies stay visible at the right edge.
    setUpReadOnlyTable(m_table, QAbstractItemView::SingleSelection, ActionModel::DetailColumn);
    followNewRows(m_table);
    QHeaderView *header = m_table->horizontalHeader();
    const int em = fontMetrics().horizontalAdvance(QLatin1Char('m'));
    const struct { int column; int widthEm; } widths[] = {
        {ActionModel::SentColumn, 8},    {ActionModel::KindColumn, 5},   {ActionModel::TargetColumn, 10},
        {ActionModel::MethodColumn, 12}, {ActionModel::FallbackColumn, 6}, {ActionModel::StatusColumn, 9},
        {ActionModel::AnswerColumn, 5},  {ActionModel::SettledColumn, 5},
    };
    for (const auto &w : widths)
        header->resizeSection(w.column, w.widthEm * em);

    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->addWidget(m_summary);
    layout->addWidget(m_table, 1);

    // Selection, not the current index: keyboard focus entering the table sets a current index
    // without selecting anything, and that must not steal the inspector's focus.
    connect(m_table->selectionModel(), &QItemSelectionModel::selectionChanged, this, [this] {
        const QModelIndexList rows = m_table->selectionModel()->selectedRows();
        if (m_syncingSelection || rows.isEmpty())
            return;
        m_selection->focus(SelectionHub::Kind::Action, rows.first().data(ActionModel::ActionIdRole).toString(), this);
    });
    connect(m_selection, &SelectionHub::focusChanged, this, &ActionsPanel::followFocus);
    connect(m_store, &SystemStore::changed, this, [this](const ChangeSet &changes) {
        if (!changes.actionRows.isEmpty())
            updateSummary();
    });
    connect(m_store, &SystemStore::wasReset, this, &ActionsPanel::updateSummary);
    updateSummary();
}

void ActionsPanel::updateSummary()
{
    const auto &actions = m_store->actions();
    if (actions.empty()) {
        m_summary->setText(tr("No operator actions yet. Select agents, then use the Agent menu (inject, suspend, "
                              "resume, stop): each action is followed here from request to confirmation."));
        return;
    }
    int inFlight = 0, confirmed = 0, failed = 0, timedOut = 0, unsupported = 0, unknown = 0;
    for (const OperatorAction &a : actions) {
        switch (a.status) {
        case ActionStatus::Sent:
        case ActionStatus::Accepted: ++inFlight; break;
        case ActionStatus::Confirmed: ++confirmed; break;
        case ActionStatus::Failed: ++failed; break;
        case ActionStatus::TimedOut: ++timedOut; break;
        case ActionStatus::Unsupported: ++unsupported; break;
        case ActionStatus::Unknown: ++unknown; break;
        }
    }
    QStringList parts{actions.size() == 1 ? tr("1 action") : tr("%1 actions").arg(actions.size())};
    const struct { int count; QString label; } counts[] = {
        {inFlight, tr("%1 in flight")}, {confirmed, tr("%1 confirmed")},     {failed, tr("%1 failed")},
        {timedOut, tr("%1 timed out")}, {unsupported, tr("%1 unsupported")},
        {unknown, tr("%1 unknown (answer lost: may have taken effect)")},
    };
    for (const auto &c : counts)
        if (c.count > 0)
            parts << c.label.arg(c.count);
    m_summary->setText(parts.join(QStringLiteral(" · ")));
}

void ActionsPanel::followFocus(SelectionHub::Kind kind, const QString &key, QObject *origin)
{
    if (origin == this)
        return;
    m_syncingSelection = true;
    const OperatorAction *action = kind == SelectionHub::Kind::Action ? m_store->action(key) : nullptr;
    const int row = action ? int(action - m_store->actions().data()) : -1;
    selectRowOrNothing(m_table, row);
    m_syncingSelection = false;
}

} // namespace mapi::ui
