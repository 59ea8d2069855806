#include "SystemsAlertModel.h"

#include "SystemView.h"
#include "models/AlertModel.h"
#include "panels/AlertsPanel.h"

#include <QColor>

namespace mapi::ui {

SystemsAlertModel::SystemsAlertModel(QObject *parent)
    : QAbstractTableModel(parent)
{
}

void SystemsAlertModel::setSystems(const QList<SystemView *> &systems)
{
    // The same systems (another came to the front, a label changed): the rows stay, and with them
    // the selection; a label is read when painted.
    QList<SystemView *> kept;
    for (const Source &s : std::as_const(m_sources))
        kept << s.system.data();
    QList<SystemView *> wanted;
    for (SystemView *system : systems)
        if (system && system->alerts())
            wanted << system;
    if (kept == wanted) {
        if (!m_sources.isEmpty() && rowCount() > 0)
            Q_EMIT dataChanged(index(0, SystemColumn), index(rowCount() - 1, SystemColumn), {Qt::DisplayRole, Qt::ToolTipRole});
        return;
    }
    beginResetModel();
    for (const Source &s : std::as_const(m_sources))
        for (const QMetaObject::Connection &c : s.connections)
            disconnect(c);
    m_sources.clear();
    for (SystemView *system : std::as_const(wanted)) {
        m_sources.append(Source{system, system->alerts()->model(), {}});
        follow(m_sources.last());
    }
    endResetModel();
}

void SystemsAlertModel::follow(Source &source)
{
    AlertModel *m = source.model;
    QList<QMetaObject::Connection> &c = source.connections;
    // Each source signal becomes ours at the source's offset: the offset is read when the signal
    // comes, and the sources before this one have not changed in between (one thread).
    c << connect(m, &QAbstractItemModel::rowsAboutToBeInserted, this, [this, m](const QModelIndex &, int first, int last) {
        const int at = offsetOf(m);
        beginInsertRows({}, at + first, at + last);
    });
    c << connect(m, &QAbstractItemModel::rowsInserted, this, [this] { endInsertRows(); });
    c << connect(m, &QAbstractItemModel::rowsAboutToBeRemoved, this, [this, m](const QModelIndex &, int first, int last) {
        const int at = offsetOf(m);
        beginRemoveRows({}, at + first, at + last);
    });
    c << connect(m, &QAbstractItemModel::rowsRemoved, this, [this] { endRemoveRows(); });
    c << connect(m, &QAbstractItemModel::modelAboutToBeReset, this, [this] { beginResetModel(); });
    c << connect(m, &QAbstractItemModel::modelReset, this, [this] { endResetModel(); });
    c << connect(m, &QAbstractItemModel::layoutAboutToBeChanged, this, [this] { Q_EMIT layoutAboutToBeChanged(); });
    c << connect(m, &QAbstractItemModel::layoutChanged, this, [this] { Q_EMIT layoutChanged(); });
    c << connect(m, &QAbstractItemModel::dataChanged, this,
                 [this, m](const QModelIndex &topLeft, const QModelIndex &bottomRight, const QList<int> &roles) {
                     const int at = offsetOf(m);
                     // The system column shows the same row's state (greyed when acknowledged).
                     Q_EMIT dataChanged(index(at + topLeft.row(), 0), index(at + bottomRight.row(), bottomRight.column() + FirstAlertColumn),
                                        roles);
                 });
    c << connect(m, &AlertModel::groupingChanged, this, &SystemsAlertModel::groupingChanged);
    // A system closing takes its inbox with it, maybe before the window says it is gone.
    c << connect(m, &QObject::destroyed, this, &SystemsAlertModel::forget);
}

void SystemsAlertModel::forget(QObject *model)
{
    for (int i = 0; i < m_sources.size(); ++i) {
        if (m_sources.at(i).model != model)
            continue;
        beginResetModel();
        for (const QMetaObject::Connection &c : m_sources.at(i).connections)
            disconnect(c);
        m_sources.removeAt(i);
        endResetModel();
        return;
    }
}

int SystemsAlertModel::offsetOf(const AlertModel *model) const
{
    int at = 0;
    for (const Source &s : m_sources) {
        if (s.model == model)
            return at;
        at += s.model->rowCount();
    }
    return at;
}

std::pair<int, int> SystemsAlertModel::locate(int row) const
{
    if (row < 0)
        return {-1, -1};
    for (int i = 0; i < m_sources.size(); ++i) {
        const int rows = m_sources.at(i).model->rowCount();
        if (row < rows)
            return {i, row};
        row -= rows;
    }
    return {-1, -1};
}

SystemView *SystemsAlertModel::systemAt(int row) const
{
    const auto [source, inner] = locate(row);
    return source < 0 ? nullptr : m_sources.at(source).system.data();
}

std::pair<const AlertModel *, int> SystemsAlertModel::alertRow(int row) const
{
    const auto [source, inner] = locate(row);
    return source < 0 ? std::pair<const AlertModel *, int>{nullptr, -1} : std::pair<const AlertModel *, int>{m_sources.at(source).model, inner};
}

QString SystemsAlertModel::keyAt(int row) const
{
    return index(row, 0).data(AlertModel::KeyRole).toString();
}

int SystemsAlertModel::rowCount(const QModelIndex &parent) const
{
    if (parent.isValid())
        return 0;
    int rows = 0;
    for (const Source &s : m_sources)
        rows += s.model->rowCount();
    return rows;
}

int SystemsAlertModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : FirstAlertColumn + AlertModel::ColumnCount;
}

QVariant SystemsAlertModel::data(const QModelIndex &index, int role) const
{
    const auto [source, inner] = locate(index.row());
    if (!index.isValid() || source < 0)
        return {};
    const Source &s = m_sources.at(source);
    if (index.column() == SystemColumn) {
        if (role == SystemNumberRole)
            return s.system ? s.system->number() : 0;
        if (role == Qt::DisplayRole || role == Qt::ToolTipRole)
            return s.system ? s.system->label() : QString();
        const QModelIndex first = s.model->index(inner, 0);
        if (role == Qt::ForegroundRole) // grey when acknowledged, as the rest of the row
            return first.data(AlertModel::AcknowledgedRole).toBool() ? QVariant(QColor(Qt::gray)) : QVariant();
        if (role < Qt::UserRole)
            return {};
        return first.data(role); // every AlertModel role, for the order and the filter

    }
    return s.model->index(inner, index.column() - FirstAlertColumn).data(role);
}

QVariant SystemsAlertModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return {};
    if (section == SystemColumn)
        return tr("System");
    return AlertModel::columnTitle(section - FirstAlertColumn);
}

} // namespace mapi::ui
