// Every system's open alerts in one table (issue 43 item 2, "one alert inbox across systems"):
// the rows of each system's AlertModel one after the other, with the system named in a first
// column. A view over the systems' own inboxes, not a copy: acknowledging or snoozing in a
// system's Alerts panel shows here at once, and a row here leads to that panel (SystemsPanel).
// Columns are AlertModel's shifted by one; every AlertModel role is answered for every column
// (AlertOrder sorts and filters on them). Rows follow the sources' insertions and removals one
// for one, so a selection survives another system's changes. GUI thread.
#pragma once

#include <QAbstractTableModel>
#include <QList>
#include <QMetaObject>
#include <QPointer>

#include <utility>

namespace mapi::ui {

class AlertModel;
class SystemView;

class SystemsAlertModel : public QAbstractTableModel
{
    Q_OBJECT
public:
    enum Column { SystemColumn, FirstAlertColumn };
    enum Role { SystemNumberRole = Qt::UserRole + 100 }; // int: SystemView::number()

    explicit SystemsAlertModel(QObject *parent = nullptr);

    // The window's systems, in its order (systems came or went).
    void setSystems(const QList<SystemView *> &systems);
    // The system of a row and its alert's key; nullptr / "" out of range.
    SystemView *systemAt(int row) const;
    QString keyAt(int row) const;
    // The system's inbox and the row in it that a row shows; {nullptr, -1} out of range.
    std::pair<const AlertModel *, int> alertRow(int row) const;

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

Q_SIGNALS:
    // A system's inbox regrouped its rows (AlertModel::groupingChanged).
    void groupingChanged();

private:
    struct Source
    {
        QPointer<SystemView> system;
        AlertModel *model = nullptr;
        QList<QMetaObject::Connection> connections;
    };
    // The source of a row and the row within it; {-1, -1} out of range.
    std::pair<int, int> locate(int row) const;
    int offsetOf(const AlertModel *model) const;
    void follow(Source &source);
    void forget(QObject *model);

    QList<Source> m_sources;
};

} // namespace mapi::ui
