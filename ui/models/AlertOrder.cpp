#include "models/AlertOrder.h"

#include "models/AlertModel.h"

#include <QDateTime>

namespace mapi::ui {

bool AlertOrder::lessThan(const QModelIndex &left, const QModelIndex &right) const
{
    const bool ackLeft = left.data(AlertModel::AcknowledgedRole).toBool();
    const bool ackRight = right.data(AlertModel::AcknowledgedRole).toBool();
    if (ackLeft != ackRight)
        return !ackLeft;
    const int sevLeft = left.data(AlertModel::SeverityRole).toInt();
    const int sevRight = right.data(AlertModel::SeverityRole).toInt();
    if (sevLeft != sevRight)
        return sevLeft > sevRight;
    return left.data(AlertModel::SinceRole).toLongLong() < right.data(AlertModel::SinceRole).toLongLong();
}

bool AlertOrder::filterAcceptsRow(int row, const QModelIndex &parent) const
{
    const qint64 until = sourceModel()->index(row, 0, parent).data(AlertModel::SnoozedUntilRole).toLongLong();
    return until <= QDateTime::currentMSecsSinceEpoch();
}

} // namespace mapi::ui
