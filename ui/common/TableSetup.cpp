#include "common/TableSetup.h"

#include <QHeaderView>
#include <QScrollBar>
#include <QSortFilterProxyModel>
#include <QTableView>
#include <QTreeView>

#include <memory>

namespace mapi::ui {

void setUpReadOnlyTable(QTableView *table, QAbstractItemView::SelectionMode mode, int stretchColumn)
{
    table->setSelectionBehavior(QAbstractItemView::SelectRows);
    table->setSelectionMode(mode);
    table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    table->setAlternatingRowColors(true);
    table->setWordWrap(false);
    table->setShowGrid(false);
    QHeaderView *rows = table->verticalHeader();
    rows->hide();
    rows->setSectionResizeMode(QHeaderView::Fixed);
    rows->setDefaultSectionSize(table->fontMetrics().height() + 6);
    QHeaderView *columns = table->horizontalHeader();
    columns->setHighlightSections(false);
    columns->setSectionResizeMode(QHeaderView::Interactive);
    columns->setStretchLastSection(false);
    if (stretchColumn >= 0)
        columns->setSectionResizeMode(stretchColumn, QHeaderView::Stretch);
}

void followNewRows(QTableView *table)
{
    QAbstractItemModel *model = table->model();
    auto atBottom = std::make_shared<bool>(true);
    QObject::connect(model, &QAbstractItemModel::rowsAboutToBeInserted, table, [table, atBottom] {
        *atBottom = table->verticalScrollBar()->value() == table->verticalScrollBar()->maximum();
    });
    QObject::connect(model, &QAbstractItemModel::rowsInserted, table, [table, atBottom] {
        if (*atBottom)
            table->scrollToBottom();
    });
}

void setUpReadOnlyTree(QTreeView *tree, QAbstractItemView::SelectionMode mode)
{
    tree->setUniformRowHeights(true);
    tree->setAlternatingRowColors(true);
    tree->setEditTriggers(QAbstractItemView::NoEditTriggers);
    tree->setSelectionMode(mode);
}

void selectRowOrNothing(QTableView *table, int row)
{
    if (row >= 0 && row < table->model()->rowCount()) {
        table->selectRow(row);
        table->scrollTo(table->model()->index(row, 0));
    } else {
        table->selectionModel()->clear();
    }
}

int selectRowsOf(QAbstractItemView *view, const QSortFilterProxyModel *proxy, const QStringList &ids,
                 const std::function<int(const QString &)> &sourceRowOf)
{
    QItemSelection selection;
    QModelIndex topmost;
    const int lastColumn = proxy->columnCount() - 1;
    for (const QString &id : ids) {
        const int sourceRow = sourceRowOf(id);
        if (sourceRow < 0)
            continue;
        const QModelIndex index = proxy->mapFromSource(proxy->sourceModel()->index(sourceRow, 0));
        if (!index.isValid())
            continue; // filtered out
        selection.select(index, index.siblingAtColumn(lastColumn));
        if (!topmost.isValid() || index.row() < topmost.row())
            topmost = index;
    }
    view->selectionModel()->select(selection, QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
    if (topmost.isValid()) {
        view->selectionModel()->setCurrentIndex(topmost, QItemSelectionModel::NoUpdate);
        view->scrollTo(topmost);
    }
    return int(selection.size());
}

} // namespace mapi::ui
