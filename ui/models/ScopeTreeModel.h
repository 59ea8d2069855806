// The scope tree: scopes nested by Scope::parentId, each followed by its member agents.
//
//   project            7     (scopes first, then members; each group by name in natural
//   ├ squad-a          9      order, so worker-2 comes before worker-10)
//   │ ├ worker-3
//   │ └ …
//   ├ coordinator
//   └ …
//
// A scope whose parent is unknown, or whose parent chain loops, is shown at the top level.
// Deleted scopes stay, greyed (the store never removes rows; their members are gone).
//
// Updates are incremental, so expansion and selection survive live traffic: for a batch that
// touches scopes (or renames a member), the child lists that can differ — of the changed scopes,
// of their old and new parents, of the scopes holding a renamed member — are reconciled with the
// store, removing and inserting only what differs, as ranges. Agent changes become dataChanged on
// their member rows and on the scopes holding them (which show their members' worst health).
// Reset follows SystemStore::reset.
// Thread: GUI thread (the store's).
#pragma once

#include <QAbstractItemModel>
#include <QHash>

#include <memory>
#include <vector>

namespace mapi {
class SystemStore;
struct ChangeSet;
} // namespace mapi

namespace mapi::ui {

class ScopeTreeModel : public QAbstractItemModel
{
    Q_OBJECT
public:
    enum Column { NameColumn, MembersColumn, ColumnCount };
    enum class NodeKind { Scope, Member };
    enum Roles {
        NodeKindRole = Qt::UserRole + 1, // int(NodeKind)
        IdRole,                          // scope id or agent id
        HealthRole,                      // members: int(mapi::Health); scopes: worst health of the members, or invalid
    };

    explicit ScopeTreeModel(const SystemStore *store, QObject *parent = nullptr);
    ~ScopeTreeModel() override;

    // The index of a scope's node (column 0), invalid when the scope is unknown.
    QModelIndex indexOfScope(const QString &scopeId) const;

    QModelIndex index(int row, int column, const QModelIndex &parent = QModelIndex()) const override;
    QModelIndex parent(const QModelIndex &child) const override;
    int rowCount(const QModelIndex &parent = QModelIndex()) const override;
    int columnCount(const QModelIndex &parent = QModelIndex()) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    struct Node;
    struct ChildKey;
    using ScopeChildren = QHash<QString, QStringList>; // parent scope id ("" = top level) → child scope ids

    Node *nodeOf(const QModelIndex &index) const;
    QModelIndex indexOf(Node *node, int column = 0) const;
    ScopeChildren scopeChildren() const;
    static QHash<QString, QString> placement(const ScopeChildren &children); // scope id → parent shown
    std::vector<ChildKey> wantedChildren(const Node *node, const ScopeChildren &children) const;
    std::unique_ptr<Node> buildNode(const ChildKey &key, Node *parent, const ScopeChildren &children);
    void reconcile(Node *node, const ScopeChildren &children);
    void rebuild();
    void removeChildren(Node *node, int first, int last);
    void forget(Node *node);
    void renumber(Node *node);
    void emitChanged(const std::vector<Node *> &nodes);

    void onStoreChanged(const ChangeSet &changes);
    void onAboutToReset();
    void onWasReset();

    const SystemStore *m_store;
    std::unique_ptr<Node> m_root;
    QHash<QString, Node *> m_scopeNodes;       // scope id → its node
    QMultiHash<QString, Node *> m_memberNodes; // agent id → its member rows (one per scope)
    QHash<QString, QString> m_placedUnder;     // scope id → the scope it is shown under ("" = top)
};

} // namespace mapi::ui
