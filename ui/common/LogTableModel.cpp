#include "common/LogTableModel.h"

namespace mapi::ui {

LogTableModel::LogTableModel(const SystemStore *store, int columns, std::function<int()> size,
                             std::function<qint64()> dropped, QObject *parent)
    : QAbstractTableModel(parent)
    , m_store(store)
    , m_columns(columns)
    , m_size(std::move(size))
    , m_dropped(dropped ? std::move(dropped) : [] { return qint64(0); })
    , m_rows(m_size())
    , m_droppedSeen(m_dropped())
{
    connect(store, &SystemStore::aboutToReset, this, [this] { beginResetModel(); });
    connect(store, &SystemStore::wasReset, this, [this] {
        m_rows = m_size();
        m_droppedSeen = m_dropped();
        endResetModel();
    });
}

int LogTableModel::followLog()
{
    const int before = m_rows;
    if (m_dropped() != m_droppedSeen) {
        beginResetModel();
        m_droppedSeen = m_dropped();
        m_rows = m_size();
        endResetModel();
        return 0;
    }
    const int total = m_size();
    if (total > m_rows) {
        beginInsertRows({}, m_rows, total - 1);
        m_rows = total;
        endInsertRows();
    }
    return before;
}

QVariant LogTableModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    return entryData(size_t(index.row()), index.column(), role);
}

} // namespace mapi::ui
