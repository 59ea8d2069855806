#include "common/ModelSignals.h"

#include <algorithm>

namespace mapi::ui {

void emitRowsChanged(QAbstractItemModel *model, std::vector<int> rows, int rowCount, int firstColumn, int lastColumn)
{
    rows.erase(std::remove_if(rows.begin(), rows.end(), [rowCount](int row) { return row < 0 || row >= rowCount; }),
               rows.end());
    if (rows.empty())
        return;
    if (int(rows.size()) * 2 > rowCount) {
        Q_EMIT model->dataChanged(model->index(0, firstColumn), model->index(rowCount - 1, lastColumn));
        return;
    }
    std::sort(rows.begin(), rows.end());
    rows.erase(std::unique(rows.begin(), rows.end()), rows.end());
    size_t start = 0;
    for (size_t i = 1; i <= rows.size(); ++i) {
        if (i == rows.size() || rows[i] != rows[i - 1] + 1) {
            Q_EMIT model->dataChanged(model->index(rows[start], firstColumn), model->index(rows[i - 1], lastColumn));
            start = i;
        }
    }
}

void emitRowsChanged(QAbstractItemModel *model, const QSet<int> &rows, int rowCount, int firstColumn, int lastColumn)
{
    emitRowsChanged(model, std::vector<int>(rows.cbegin(), rows.cend()), rowCount, firstColumn, lastColumn);
}

} // namespace mapi::ui
