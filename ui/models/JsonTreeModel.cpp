#include "models/JsonTreeModel.h"

#include "common/ColumnTitles.h"
#include <QGuiApplication>
#include <QPalette>
#include <QSet>

#include <vector>

namespace mapi::ui {

struct JsonTreeModel::Node
{
    Node *parent = nullptr;
    int row = 0;
    bool isArrayElement = false;
    QString key;                        // object member name, or the element index for arrays
    const OrderedJson *value = nullptr; // points into m_document
    bool childrenBuilt = false;
    std::vector<std::unique_ptr<Node>> children;

    // A child of `parent` for the member `key` (rows are numbered by the caller).
    static std::unique_ptr<Node> member(Node *parent, const QString &key, const OrderedJson *value)
    {
        auto child = std::make_unique<Node>();
        child->parent = parent;
        child->key = key;
        child->value = value;
        return child;
    }
    // A child of `parent` for element `index` of its array.
    static std::unique_ptr<Node> element(Node *parent, size_t index, const OrderedJson *value)
    {
        auto child = member(parent, QString::number(index), value);
        child->row = int(index);
        child->isArrayElement = true;
        return child;
    }
};

namespace {

enum class Shape { Object, Array, Scalar };

Shape shapeOf(const OrderedJson &value)
{
    if (value.is_object())
        return Shape::Object;
    if (value.is_array())
        return Shape::Array;
    return Shape::Scalar;
}

QString dumpJson(const OrderedJson &value, int indent = -1)
{
    return QString::fromStdString(value.dump(indent, ' ', false, OrderedJson::error_handler_t::replace));
}

QString typeName(const OrderedJson &value)
{
    switch (value.type()) {
    case OrderedJson::value_t::object: return QStringLiteral("object");
    case OrderedJson::value_t::array: return QStringLiteral("array");
    case OrderedJson::value_t::string: return QStringLiteral("string");
    case OrderedJson::value_t::boolean: return QStringLiteral("boolean");
    case OrderedJson::value_t::number_integer:
    case OrderedJson::value_t::number_unsigned:
    case OrderedJson::value_t::number_float: return QStringLiteral("number");
    case OrderedJson::value_t::null: return QStringLiteral("null");
    case OrderedJson::value_t::binary: return QStringLiteral("binary");
    case OrderedJson::value_t::discarded: break;
    }
    return QStringLiteral("invalid");
}

QString containerSummary(const OrderedJson &value)
{
    const int count = int(value.size());
    if (value.is_object())
        return count == 1 ? JsonTreeModel::tr("{ 1 key }") : JsonTreeModel::tr("{ %1 keys }").arg(count);
    return count == 1 ? JsonTreeModel::tr("[ 1 item ]") : JsonTreeModel::tr("[ %1 items ]").arg(count);
}

// One line, at most kDisplayChars characters: line breaks shown as ⏎, the rest as "…".
QString elided(const QString &text)
{
    QString shown = text.left(JsonTreeModel::kDisplayChars);
    if (!shown.isEmpty() && shown.back().isHighSurrogate())
        shown.chop(1); // never cut a surrogate pair in half
    shown.replace(QLatin1Char('\n'), QChar(0x23CE));
    shown.replace(QLatin1Char('\r'), QChar(0x23CE));
    shown.replace(QLatin1Char('\t'), QLatin1Char(' '));
    if (shown.size() < text.size())
        shown += QChar(0x2026);
    return shown;
}

// Whether the row's displayed text (value summary or scalar) differs between the two versions.
bool rowTextChanged(const OrderedJson &previous, const OrderedJson &next)
{
    if (previous.type() != next.type())
        return true;
    if (shapeOf(next) == Shape::Scalar)
        return previous != next;
    return previous.size() != next.size();
}

QString pointerToken(const QString &key)
{
    QString token = key;
    token.replace(QLatin1Char('~'), QStringLiteral("~0"));
    token.replace(QLatin1Char('/'), QStringLiteral("~1"));
    return token;
}

} // namespace

JsonTreeModel::JsonTreeModel(QObject *parent)
    : QAbstractItemModel(parent)
    , m_root(std::make_unique<Node>())
{
    m_root->value = &m_document;
}

JsonTreeModel::~JsonTreeModel() = default;

void JsonTreeModel::clear()
{
    beginResetModel();
    m_document = OrderedJson();
    m_root = std::make_unique<Node>();
    m_root->value = &m_document;
    endResetModel();
}

void JsonTreeModel::setJson(OrderedJson json)
{
    // The previous document stays alive until the merge is done: the built nodes still point
    // into it (moving a json keeps its children where they are).
    const OrderedJson previous = std::move(m_document);
    m_document = std::move(json);
    merge(m_root.get(), previous, m_document);
}

void JsonTreeModel::buildChildren(Node *node) const
{
    if (node->childrenBuilt)
        return;
    node->childrenBuilt = true;
    const OrderedJson &value = *node->value;
    if (value.is_object()) {
        node->children.reserve(value.size());
        for (auto it = value.begin(); it != value.end(); ++it) {
            node->children.push_back(Node::member(node, QString::fromStdString(it.key()), &it.value()));
            node->children.back()->row = int(node->children.size()) - 1;
        }
    } else if (value.is_array()) {
        node->children.reserve(value.size());
        for (size_t i = 0; i < value.size(); ++i)
            node->children.push_back(Node::element(node, i, &value[i]));
    }
}

void JsonTreeModel::replaceChildren(Node *node)
{
    const QModelIndex parentIndex = indexFor(node, KeyColumn);
    if (!node->children.empty()) {
        beginRemoveRows(parentIndex, 0, int(node->children.size()) - 1);
        node->children.clear();
        endRemoveRows();
    }
    const int count = shapeOf(*node->value) == Shape::Scalar ? 0 : int(node->value->size());
    if (count == 0)
        return;
    beginInsertRows(parentIndex, 0, count - 1);
    node->childrenBuilt = false;
    buildChildren(node);
    endInsertRows();
}

void JsonTreeModel::merge(Node *node, const OrderedJson &previous, const OrderedJson &next)
{
    node->value = &next;
    if (node != m_root.get() && rowTextChanged(previous, next))
        Q_EMIT dataChanged(indexFor(node, KeyColumn), indexFor(node, TypeColumn));
    if (!node->childrenBuilt)
        return; // nobody has seen the children yet: they are built from `next` when asked for

    const Shape shape = shapeOf(next);
    if (shape != shapeOf(previous)) {
        replaceChildren(node);
        return;
    }
    const QModelIndex parentIndex = indexFor(node, KeyColumn);
    auto &children = node->children;
    auto renumber = [&children] {
        for (size_t i = 0; i < children.size(); ++i)
            children[i]->row = int(i);
    };

    if (shape == Shape::Array) {
        const size_t oldCount = children.size();
        const size_t newCount = next.size();
        for (size_t i = 0; i < std::min(oldCount, newCount); ++i)
            merge(children[i].get(), *children[i]->value, next[i]);
        if (newCount < oldCount) {
            beginRemoveRows(parentIndex, int(newCount), int(oldCount) - 1);
            children.resize(newCount);
            endRemoveRows();
        } else if (newCount > oldCount) {
            beginInsertRows(parentIndex, int(oldCount), int(newCount) - 1);
            for (size_t i = oldCount; i < newCount; ++i)
                children.push_back(Node::element(node, i, &next[i]));
            endInsertRows();
        }
        return;
    }
    if (shape == Shape::Scalar)
        return; // no children on either side

    // Objects: remove the members that are gone (one signal per contiguous run), then walk the new
    // members in order, merging the survivors and inserting runs of new ones.
    std::vector<std::pair<QString, const OrderedJson *>> members;
    members.reserve(next.size());
    QSet<QString> newKeys;
    for (auto it = next.begin(); it != next.end(); ++it) {
        members.emplace_back(QString::fromStdString(it.key()), &it.value());
        newKeys.insert(members.back().first);
    }
    for (int last = int(children.size()) - 1; last >= 0;) {
        if (newKeys.contains(children[size_t(last)]->key)) {
            --last;
            continue;
        }
        int first = last;
        while (first > 0 && !newKeys.contains(children[size_t(first - 1)]->key))
            --first;
        beginRemoveRows(parentIndex, first, last);
        children.erase(children.begin() + first, children.begin() + last + 1);
        renumber();
        endRemoveRows();
        last = first - 1;
    }
    // The surviving members must appear in the same relative order; if a member moved, the
    // children are rebuilt (built records never reorder, so this is for odd documents only).
    size_t survivor = 0;
    for (const auto &member : members)
        if (survivor < children.size() && children[survivor]->key == member.first)
            ++survivor;
    if (survivor != children.size()) {
        replaceChildren(node);
        return;
    }
    size_t row = 0;
    for (size_t m = 0; m < members.size();) {
        if (row < children.size() && children[row]->key == members[m].first) {
            merge(children[row].get(), *children[row]->value, *members[m].second);
            ++row;
            ++m;
            continue;
        }
        size_t runEnd = m;
        while (runEnd < members.size() && (row >= children.size() || children[row]->key != members[runEnd].first))
            ++runEnd;
        beginInsertRows(parentIndex, int(row), int(row + (runEnd - m)) - 1);
        for (size_t k = m; k < runEnd; ++k)
            children.insert(children.begin() + qsizetype(row + (k - m)), Node::member(node, members[k].first, members[k].second));
        renumber();
        endInsertRows();
        row += runEnd - m;
        m = runEnd;
    }
}

JsonTreeModel::Node *JsonTreeModel::nodeFor(const QModelIndex &index) const
{
    return index.isValid() ? static_cast<Node *>(index.internalPointer()) : m_root.get();
}

QModelIndex JsonTreeModel::indexFor(const Node *node, int column) const
{
    if (node == m_root.get())
        return {};
    return createIndex(node->row, column, const_cast<Node *>(node));
}

QModelIndex JsonTreeModel::index(int row, int column, const QModelIndex &parent) const
{
    if (!hasIndex(row, column, parent))
        return {};
    Node *node = nodeFor(parent);
    return createIndex(row, column, node->children[size_t(row)].get());
}

QModelIndex JsonTreeModel::parent(const QModelIndex &child) const
{
    if (!child.isValid())
        return {};
    return indexFor(nodeFor(child)->parent, KeyColumn);
}

int JsonTreeModel::rowCount(const QModelIndex &parent) const
{
    if (parent.column() > 0)
        return 0;
    Node *node = nodeFor(parent);
    buildChildren(node);
    return int(node->children.size());
}

int JsonTreeModel::columnCount(const QModelIndex &) const
{
    return ColumnCount;
}

QVariant JsonTreeModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid))
        return {};
    const Node *node = nodeFor(index);
    const OrderedJson &value = *node->value;
    switch (role) {
    case Qt::DisplayRole:
        switch (index.column()) {
        case KeyColumn: return node->isArrayElement ? QStringLiteral("[%1]").arg(node->key) : node->key;
        case ValueColumn:
            if (shapeOf(value) != Shape::Scalar)
                return containerSummary(value);
            return value.is_string() ? elided(QString::fromStdString(value.get_ref<const std::string &>())) : dumpJson(value);
        case TypeColumn: return typeName(value);
        }
        break;
    case Qt::ToolTipRole:
        if (index.column() == KeyColumn)
            return data(index, PathRole);
        if (index.column() == ValueColumn && value.is_string()) {
            const QString text = QString::fromStdString(value.get_ref<const std::string &>());
            if (text.size() <= kDisplayChars && !text.contains(QLatin1Char('\n')))
                return {};
            if (text.size() <= kMaxToolTipChars)
                return text;
            return tr("%1\n… %2 more characters (copy the value to get all of it)")
                .arg(text.left(kMaxToolTipChars))
                .arg(text.size() - kMaxToolTipChars);
        }
        break;
    case Qt::ForegroundRole:
        if (index.column() == TypeColumn || (index.column() == ValueColumn && (shapeOf(value) != Shape::Scalar || value.is_null())))
            return QGuiApplication::palette().color(QPalette::PlaceholderText);
        break;
    case CopyTextRole:
        if (value.is_string())
            return QString::fromStdString(value.get_ref<const std::string &>());
        return dumpJson(value, shapeOf(value) == Shape::Scalar ? -1 : 2);
    case PathRole: {
        QStringList tokens;
        for (const Node *n = node; n != m_root.get(); n = n->parent)
            tokens.prepend(pointerToken(n->key));
        return QString(QLatin1Char('/') + tokens.join(QLatin1Char('/')));
    }
    default: break;
    }
    return {};
}

QVariant JsonTreeModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    return columnTitle(section, orientation, role, {tr("Key"), tr("Value"), tr("Type")});
}

} // namespace mapi::ui
