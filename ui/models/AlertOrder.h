// The order and filter of an attention inbox over AlertModel's rows (the one system's inbox,
// AlertsPanel, and every system's, SystemsPanel): most severe first, acknowledged after the
// others, then the longest waiting first; snoozed rows hidden until their time has passed. A
// group's members sort right below its row, listed only while it is expanded. The owner calls
// refilter() when a snooze ends (AlertModel::snoozeEndedBetween) or is set, and regroup() on
// AlertModel::groupingChanged. GUI thread.
#pragma once

#include <QSortFilterProxyModel>

#include <functional>
#include <utility>

namespace mapi::ui {

class AlertModel;

class AlertOrder : public QSortFilterProxyModel
{
public:
    using QSortFilterProxyModel::QSortFilterProxyModel;
    void refilter() { invalidateFilter(); }
    void regroup() { invalidate(); }
    // For a source that is not an AlertModel itself (SystemsAlertModel): the AlertModel and row
    // that a source row shows ({nullptr, -1}: none). Rows are compared on the AlertModel's own
    // data, without QVariants: a storm's thousands of rows are sorted at every evaluation.
    using RowLocator = std::function<std::pair<const AlertModel *, int>(int sourceRow)>;
    void setRowLocator(RowLocator locate) { m_locate = std::move(locate); }

protected:
    bool lessThan(const QModelIndex &left, const QModelIndex &right) const override;
    bool filterAcceptsRow(int row, const QModelIndex &parent) const override;

private:
    std::pair<const AlertModel *, int> locate(int sourceRow) const;

    RowLocator m_locate;
};

} // namespace mapi::ui
