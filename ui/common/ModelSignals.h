// Change signalling shared by the item models: how a batch of changed rows becomes as few
// dataChanged() signals as possible. GUI thread, like the models.
#pragma once

#include <QAbstractItemModel>
#include <QSet>

#include <vector>

namespace mapi::ui {

// Emits dataChanged for `rows` (those in [0, rowCount), duplicates allowed) over the columns
// [firstColumn, lastColumn], one signal per run of adjacent rows; one signal for the whole table
// when more than half of it changed (cheaper for the views than hundreds of small ones).
void emitRowsChanged(QAbstractItemModel *model, std::vector<int> rows, int rowCount, int firstColumn, int lastColumn);
void emitRowsChanged(QAbstractItemModel *model, const QSet<int> &rows, int rowCount, int firstColumn, int lastColumn);

} // namespace mapi::ui
