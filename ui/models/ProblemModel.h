// Protocol problems (SystemStore::problems(): frames the client could not use) and gaps
// (SystemStore::gaps(): events the server sent that never arrived) as two tables, oldest first
// (row == store row).
//
// Thread: GUI thread. Both lists only grow and their entries never change, and the store reports
// them through ChangeSet::countersChanged only, so each changed() appends the new tail with one
// row insert. aboutToReset()/wasReset() reset the models.
#pragma once

#include "common/LogTableModel.h"

namespace mapi::ui {

class ProblemModel : public LogTableModel
{
    Q_OBJECT
public:
    enum Column { TimeColumn, KindColumn, DetailColumn, SizeColumn, ColumnCount };

    explicit ProblemModel(const SystemStore *store, QObject *parent = nullptr);

    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    QVariant entryData(size_t row, int column, int role) const override;
};

class GapModel : public LogTableModel
{
    Q_OBJECT
public:
    enum Column { TimeColumn, KindColumn, MissingColumn, DetailColumn, RecoveredColumn, ColumnCount };

    explicit GapModel(const SystemStore *store, QObject *parent = nullptr);

    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    QVariant entryData(size_t row, int column, int role) const override;
};

} // namespace mapi::ui
