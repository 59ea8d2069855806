#include "panels/TasksPanel.h"

#include "common/TypingFilter.h"
#include "common/TableSetup.h"

#include "models/TaskModels.h"
#include "session/InspectorSession.h"

#include <QApplication>
#include <QEvent>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QLabel>
#include <QLineEdit>
#include <QPainter>
#include <QSortFilterProxyModel>
#include <QSplitter>
#include <QStyledItemDelegate>
#include <QTableView>
#include <QTreeView>
#include <QVBoxLayout>

#include <algorithm>
#include <array>

namespace mapi::ui {

namespace {

constexpr int kSwatchSize = 10; // px: status colour squares in the table and the lifecycle

// Progress cells: a bar in the highlight colour behind the percentage.
class ProgressDelegate : public QStyledItemDelegate
{
public:
    using QStyledItemDelegate::QStyledItemDelegate;

    void paint(QPainter *painter, const QStyleOptionViewItem &option, const QModelIndex &index) const override
    {
        const QVariant progress = index.data(TaskTableModel::ProgressRole);
        if (!progress.isValid()) {
            QStyledItemDelegate::paint(painter, option, index);
            return;
        }
        QStyleOptionViewItem opt(option);
        initStyleOption(&opt, index);
        const QString text = opt.text;
        opt.text.clear();
        const QWidget *widget = opt.widget;
        (widget ? widget->style() : QApplication::style())->drawControl(QStyle::CE_ItemViewItem, &opt, painter, widget);

        const bool selected = opt.state & QStyle::State_Selected;
        const QRect bar = opt.rect.adjusted(3, 3, -3, -3);
        const double fraction = std::clamp(progress.toDouble() / 100.0, 0.0, 1.0);
        QColor fill = opt.palette.color(selected ? QPalette::HighlightedText : QPalette::Highlight);
        fill.setAlpha(selected ? 70 : 80);
        painter->save();
        painter->fillRect(QRect(bar.left(), bar.top(), int(bar.width() * fraction), bar.height()), fill);
        painter->setPen(opt.palette.color(selected ? QPalette::HighlightedText : QPalette::Text));
        painter->drawText(bar.adjusted(0, 0, -2, 0), Qt::AlignRight | Qt::AlignVCenter, text);
        painter->restore();
    }
};

} // namespace

TasksPanel::TasksPanel(InspectorSession *session, SelectionHub *selection, QWidget *parent)
    : QWidget(parent)
    , m_session(session)
    , m_selection(selection)
    , m_model(new TaskTableModel(session->store(), this))
    , m_proxy(new QSortFilterProxyModel(this))
    , m_history(new TaskHistoryModel(session->store(), this))
{
    m_proxy->setSourceModel(m_model);
    m_proxy->setSortRole(TaskTableModel::SortRole);
    m_proxy->setFilterKeyColumn(-1); // any column: id, type, status, agent names
    m_proxy->setFilterCaseSensitivity(Qt::CaseInsensitive);
    m_proxy->setDynamicSortFilter(true);

    m_filter = new QLineEdit(this);
    m_filter->setObjectName(QStringLiteral("taskFilter"));
    m_filter->setPlaceholderText(tr("Filter tasks: id, type, status, agent"));
    m_filter->setClearButtonEnabled(true);
    m_counts = new QLabel(this);
    m_counts->setObjectName(QStringLiteral("taskCounts"));
    m_counts->setTextFormat(Qt::RichText);
    auto *top = new QHBoxLayout;
    top->addWidget(m_filter, 2);
    top->addWidget(m_counts, 3);

    // Fixed widths from sample texts: ResizeToContents would measure every row on each change.
    const QFontMetrics metrics = fontMetrics();
    auto widthOf = [&metrics](const char *sample) { return metrics.horizontalAdvance(QLatin1String(sample)) + 16; };
    const int swatch = kSwatchSize + 8; // status cells carry a colour swatch; sorted headers an arrow
    m_table = new QTableView(this);
    m_table->setObjectName(QStringLiteral("tasksTable"));
    m_table->setModel(m_proxy);
    m_table->setSortingEnabled(true);
    // Newest first, in arrival order: rows stay put while tasks update (sorting by Updated
    // re-sorts on every change, one click away).
    m_table->sortByColumn(TaskTableModel::IdColumn, Qt::DescendingOrder);
    setUpReadOnlyTable(m_table, QAbstractItemView::SingleSelection, TaskTableModel::TypeColumn);
    m_table->setItemDelegateForColumn(TaskTableModel::ProgressColumn, new ProgressDelegate(m_table));
    m_table->setIconSize(QSize(kSwatchSize, kSwatchSize));
    QHeaderView *header = m_table->horizontalHeader();
    header->resizeSection(TaskTableModel::IdColumn, widthOf("task-000000-00"));
    header->resizeSection(TaskTableModel::StatusColumn, widthOf("handed-off") + swatch);
    header->resizeSection(TaskTableModel::RequesterColumn, widthOf("worker-10.sub-10"));
    header->resizeSection(TaskTableModel::AssigneeColumn, widthOf("worker-10.sub-10"));
    header->resizeSection(TaskTableModel::ProgressColumn, widthOf("Progress"));
    header->resizeSection(TaskTableModel::UpdatedColumn, widthOf("Updated") + swatch);
    header->resizeSection(TaskTableModel::TransitionsColumn, widthOf("Steps"));

    m_historyTitle = new QLabel(this);
    m_historyTitle->setObjectName(QStringLiteral("taskHistoryTitle"));
    m_historyTitle->setTextFormat(Qt::RichText);
    m_historyTitle->setWordWrap(true);
    m_historyView = new QTreeView(this);
    m_historyView->setObjectName(QStringLiteral("taskHistory"));
    m_historyView->setModel(m_history);
    setUpReadOnlyTree(m_historyView, QAbstractItemView::NoSelection);
    m_historyView->setRootIsDecorated(false);
    m_historyView->setFocusPolicy(Qt::NoFocus);
    m_historyView->setIconSize(QSize(kSwatchSize, kSwatchSize));
    m_historyView->header()->setStretchLastSection(true);
    m_historyView->header()->resizeSection(TaskHistoryModel::TimeColumn, widthOf("00:00:00.000"));
    m_historyView->header()->resizeSection(TaskHistoryModel::StatusColumn, widthOf("handed-off") + swatch);
    m_historyView->header()->resizeSection(TaskHistoryModel::AgentColumn, widthOf("worker-10.sub-10"));
    auto *historyBox = new QWidget(this);
    auto *historyLayout = new QVBoxLayout(historyBox);
    historyLayout->setContentsMargins(0, 0, 0, 0);
    historyLayout->setSpacing(2);
    historyLayout->addWidget(m_historyTitle);
    historyLayout->addWidget(m_historyView, 1);

    auto *splitter = m_splitter = new QSplitter(Qt::Vertical, this);
    splitter->setObjectName(QStringLiteral("tasksSplitter"));
    splitter->setChildrenCollapsible(false);
    splitter->addWidget(m_table);
    splitter->addWidget(historyBox);
    splitter->setStretchFactor(0, 3);
    splitter->setStretchFactor(1, 2);

    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->setSpacing(4);
    layout->addLayout(top);
    layout->addWidget(splitter, 1);

    whenTypingSettles(m_filter, [this] { m_proxy->setFilterFixedString(m_filter->text()); });

    connect(m_table->selectionModel(), &QItemSelectionModel::currentRowChanged, this, [this](const QModelIndex &current) {
        showTask(current.data(TaskTableModel::TaskIdRole).toString());
    });
    connect(m_selection, &SelectionHub::focusChanged, this, &TasksPanel::followFocus);
    connect(session->store(), &SystemStore::changed, this, [this](const ChangeSet &changes) {
        if (!changes.taskRows.isEmpty())
            updateCounts();
        if (!m_history->taskId().isEmpty() && changes.taskRows.contains(m_model->rowOfTask(m_history->taskId())))
            updateHistoryTitle();
    });
    connect(m_model, &QAbstractItemModel::modelReset, this, [this] {
        m_history->setTaskId({});
        updateCounts();
        updateHistoryTitle();
    });
    updateCounts();
    updateHistoryTitle();
}

void TasksPanel::resizeEvent(QResizeEvent *event)
{
    QWidget::resizeEvent(event);
    const Qt::Orientation wanted = width() > 2 * height() ? Qt::Horizontal : Qt::Vertical;
    if (m_splitter->orientation() != wanted) {
        m_splitter->setOrientation(wanted);
        const int length = wanted == Qt::Horizontal ? m_splitter->width() : m_splitter->height();
        m_splitter->setSizes({length * 3 / 5, length * 2 / 5});
    }
}

void TasksPanel::changeEvent(QEvent *event)
{
    QWidget::changeEvent(event);
    if (event->type() == QEvent::PaletteChange) { // the summaries' colours come from the palette
        updateCounts();
        updateHistoryTitle();
    }
}

void TasksPanel::showTask(const QString &taskId)
{
    m_history->setTaskId(taskId);
    updateHistoryTitle();
    if (!m_following && !taskId.isEmpty())
        m_selection->focus(SelectionHub::Kind::Task, taskId, this);
}

void TasksPanel::updateCounts()
{
    const std::vector<Task> &tasks = m_session->store()->tasks();
    if (tasks.empty()) {
        m_counts->setText(tr("No tasks yet"));
        return;
    }
    std::array<int, 8> perPhase{};
    for (const Task &task : tasks)
        ++perPhase[size_t(taskPhase(task.status))];
    const std::array<std::pair<TaskPhase, QString>, 8> labels{{
        {TaskPhase::Pending, tr("open")},
        {TaskPhase::Active, tr("in progress")},
        {TaskPhase::Blocked, tr("blocked")},
        {TaskPhase::HandedOff, tr("handed off")},
        {TaskPhase::Completed, tr("completed")},
        {TaskPhase::Failed, tr("failed")},
        {TaskPhase::Rejected, tr("rejected")},
        {TaskPhase::Cancelled, tr("cancelled")},
    }};
    QStringList parts;
    parts << QStringLiteral("<b>%1</b>").arg(tasks.size() == 1 ? tr("1 task") : tr("%1 tasks").arg(tasks.size()));
    for (const auto &[phase, label] : labels) {
        const int count = perPhase[size_t(phase)];
        if (count > 0)
            parts << QStringLiteral("<span style=\"color:%1\">&#9679;</span>&nbsp;%2&nbsp;%3")
                         .arg(taskPhaseColor(phase, palette()).name())
                         .arg(count)
                         .arg(label.toHtmlEscaped());
    }
    m_counts->setText(parts.join(QStringLiteral(" &nbsp; ")));
}

void TasksPanel::updateHistoryTitle()
{
    const SystemStore &store = *m_session->store();
    const Task *task = m_history->taskId().isEmpty() ? nullptr : store.task(m_history->taskId());
    if (!task) {
        m_historyTitle->setText(tr("Select a task to see its lifecycle."));
        return;
    }
    QString text = QStringLiteral("<b>%1</b>").arg(task->id.toHtmlEscaped());
    if (!task->type.isEmpty())
        text += QStringLiteral(" · %1").arg(task->type.toHtmlEscaped());
    if (!task->requesterId.isEmpty())
        text += QStringLiteral(" · ") + tr("requested by %1").arg(store.agentName(task->requesterId).toHtmlEscaped());
    if (!task->assigneeId.isEmpty())
        text += QStringLiteral(" · ") + tr("assignee %1").arg(store.agentName(task->assigneeId).toHtmlEscaped());
    text += QStringLiteral(" · <span style=\"color:%1\">%2</span>")
                .arg(taskPhaseColor(taskPhase(task->status), palette()).name(), task->status.toHtmlEscaped());
    m_historyTitle->setText(text);
}

void TasksPanel::followFocus(SelectionHub::Kind kind, const QString &key, QObject *origin)
{
    if (origin == this || kind != SelectionHub::Kind::Task)
        return;
    const int row = m_model->rowOfTask(key);
    if (row < 0)
        return;
    const QModelIndex index = m_proxy->mapFromSource(m_model->index(row, 0));
    if (!index.isValid())
        return; // filtered out: the filter stays as the operator set it
    m_following = true;
    m_table->selectionModel()->setCurrentIndex(index, QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
    m_table->scrollTo(index);
    m_following = false;
}

} // namespace mapi::ui
