#include "common/TableSetup.h"

#include <QHeaderView>
#include <QScrollBar>
#include <QTableView>

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

void selectRowOrNothing(QTableView *table, int row)
{
    if (row >= 0 && row < table->model()->rowCount()) {
        table->selectRow(row);
        table->scrollTo(table->model()->index(row, 0));
    } else {
        table->selectionModel()->clear();
    }
}

} // namespace mapi::ui
