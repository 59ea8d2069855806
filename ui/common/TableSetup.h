// How the panels' read-only tables look and behave, in one place.
#pragma once

#include <QAbstractItemView>

#include <functional>

class QSortFilterProxyModel;
class QTableView;
class QTreeView;

namespace mapi::ui {

// Rows selected whole (`mode`: single or extended), no editing, alternating colours, no grid,
// no word wrap, no row header, fixed row height from the font, no highlighted header sections;
// the columns are Interactive, `stretchColumn` (when >= 0) takes the remaining width.
void setUpReadOnlyTable(QTableView *table, QAbstractItemView::SelectionMode mode, int stretchColumn = -1);

// The read-only trees (scopes, the inspector's JSON, a task's history): uniform row heights (the
// view need not measure every row), alternating colours, no editing, selection `mode`.
void setUpReadOnlyTree(QTreeView *tree, QAbstractItemView::SelectionMode mode);

// A log's table (rows only ever appended): while the view is at the bottom, new rows scroll into
// view; while the operator reads older rows, the view stays put. Call after setModel().
void followNewRows(QTableView *table);

// Selects and shows `row` when it is in the table; otherwise clears the selection (what was
// selected elsewhere is not in this table).
void selectRowOrNothing(QTableView *table, int row);

// Selects, whole, the rows of `view` (whose model is `proxy`) that show the source rows of
// `ids`; `sourceRowOf` gives an id's source row or -1. Ids unknown or filtered out are skipped.
// The topmost selected row becomes current and is scrolled to. Returns how many were selected.
int selectRowsOf(QAbstractItemView *view, const QSortFilterProxyModel *proxy, const QStringList &ids,
                 const std::function<int(const QString &)> &sourceRowOf);

} // namespace mapi::ui
