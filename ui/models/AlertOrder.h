// The order and filter of an attention inbox over AlertModel's roles (the one system's inbox,
// AlertsPanel, and every system's, SystemsPanel): most severe first, acknowledged after the
// others, then the longest waiting first; snoozed rows hidden until their time has passed. The
// owner calls refilter() when a snooze ends (AlertModel::snoozeEndedBetween) or is set. GUI thread.
#pragma once

#include <QSortFilterProxyModel>

namespace mapi::ui {

class AlertOrder : public QSortFilterProxyModel
{
public:
    using QSortFilterProxyModel::QSortFilterProxyModel;
    void refilter() { invalidateFilter(); }

protected:
    bool lessThan(const QModelIndex &left, const QModelIndex &right) const override;
    bool filterAcceptsRow(int row, const QModelIndex &parent) const override;
};

} // namespace mapi::ui
