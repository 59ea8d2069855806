// The base of the tables over one of the store's logs: lists that only grow at their end and,
// when bounded, drop their oldest entries (problems, gaps, operator actions). Row == the log's
// row. GUI thread.
#pragma once

#include "model/SystemStore.h"

#include <QAbstractTableModel>

#include <functional>

namespace mapi::ui {

class LogTableModel : public QAbstractTableModel
{
    Q_OBJECT
public:
    int rowCount(const QModelIndex &parent = {}) const override { return parent.isValid() ? 0 : m_rows; }
    int columnCount(const QModelIndex &parent = {}) const override { return parent.isValid() ? 0 : m_columns; }
    // Checks the index once for every log table, then asks entryData().
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const final;

protected:
    // `size`: the log's length now; `dropped`: how many entries it has dropped from its front so
    // far (none when not given). The model follows the store's resets by itself; a subclass
    // calls followLog() from its SystemStore::changed handler.
    LogTableModel(const SystemStore *store, int columns, std::function<int()> size, std::function<qint64()> dropped,
                  QObject *parent);

    // Announces the rows appended since the last call (one insert); when the log dropped entries
    // from its front since, every row moved, so the model resets. Returns the row count the views
    // knew before: rows below it are old rows, whose changes the subclass may still announce.
    int followLog();

    // What the view shows for `column` of the log's entry `row` (a valid row of this model).
    virtual QVariant entryData(size_t row, int column, int role) const = 0;

    const SystemStore *m_store;

private:
    const int m_columns;
    const std::function<int()> m_size;
    const std::function<qint64()> m_dropped;
    int m_rows = 0;            // rows announced to the views; the log may already hold more
    qint64 m_droppedSeen = 0;  // m_dropped() when the rows were counted
};

} // namespace mapi::ui
