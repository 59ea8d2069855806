// A JSON document as a tree for QTreeView: key, value and type columns; objects and arrays expand.
//
// Thread: GUI thread.
// Children are built lazily, one level at a time, when a view asks for them (rowCount/index),
// so a large payload costs only what is looked at.
// setJson() merges the new document into the nodes built so far instead of resetting: nodes whose
// key path survives keep their QModelIndex (expansion, selection and scroll position survive a
// refresh), changed values emit dataChanged for their row only, added and removed keys emit row
// inserts and removals. Only clear() resets.
#pragma once

#include <QAbstractItemModel>

#include <nlohmann/json.hpp>

#include <memory>

namespace mapi::ui {

// Keys keep the order they were written in (frames) or built in (store records), so an agent
// reads "id, name, role, state…" and a frame's tree matches its raw text.
using OrderedJson = nlohmann::ordered_json;

class JsonTreeModel : public QAbstractItemModel
{
    Q_OBJECT
public:
    enum Column { KeyColumn, ValueColumn, TypeColumn, ColumnCount };
    enum Role {
        // The node's whole value as text: a string unquoted and unabridged, other scalars as JSON,
        // objects and arrays pretty-printed (2 spaces). What Ctrl+C copies.
        CopyTextRole = Qt::UserRole + 1,
        // JSON Pointer (RFC 6901) of the node, e.g. "/metadata/tags/0".
        PathRole,
    };
    // Strings longer than this many characters are elided in the value column (full in the
    // tooltip, up to kMaxToolTipChars, and in CopyTextRole).
    static constexpr int kDisplayChars = 160;
    static constexpr int kMaxToolTipChars = 64 * 1024;

    explicit JsonTreeModel(QObject *parent = nullptr);
    ~JsonTreeModel() override;

    // The top-level rows are the members of the root object or the elements of the root array;
    // a scalar root shows no rows.
    void setJson(OrderedJson json);
    void clear();
    const OrderedJson &json() const { return m_document; }

    QModelIndex index(int row, int column, const QModelIndex &parent = {}) const override;
    QModelIndex parent(const QModelIndex &child) const override;
    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    struct Node;
    Node *nodeFor(const QModelIndex &index) const;
    QModelIndex indexFor(const Node *node, int column) const;
    void buildChildren(Node *node) const;
    void merge(Node *node, const OrderedJson &previous, const OrderedJson &next);
    void replaceChildren(Node *node);

    OrderedJson m_document;
    std::unique_ptr<Node> m_root;
};

} // namespace mapi::ui
