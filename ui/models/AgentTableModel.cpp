#include "models/AgentTableModel.h"

#include "common/ColumnTitles.h"
#include "common/ModelSignals.h"
#include "common/NaturalSort.h"
#include "common/TimeText.h"
#include "map/Federation.h"
#include "model/SystemStore.h"
#include "models/HealthModel.h"
#include "style/Colors.h"

#include <QDateTime>
#include <QFont>
#include <QGuiApplication>
#include <QLocale>
#include <QPainter>
#include <QPalette>
#include <QPixmap>

#include <algorithm>
#include <array>

namespace mapi::ui {

// ---- shared helpers ------------------------------------------------------------------------

QIcon healthDotIcon(Health health)
{
    static std::array<QIcon, kHealthCount> cache; // one per Health value
    QIcon &icon = cache[size_t(health)];
    if (icon.isNull()) {
        // Drawn at 1x and 2x so high-DPI screens get a crisp dot. The outline is a translucent
        // mid grey, visible on light and dark bases alike (dark-grey "stopped" on a dark base).
        for (int scale : {1, 2}) {
            QPixmap pixmap(12 * scale, 12 * scale);
            pixmap.setDevicePixelRatio(scale);
            pixmap.fill(Qt::transparent);
            QPainter painter(&pixmap);
            painter.setRenderHint(QPainter::Antialiasing);
            painter.setPen(QPen(QColor(128, 128, 128, 170), 1.0));
            painter.setBrush(healthColor(health));
            painter.drawEllipse(QRectF(1.5, 1.5, 9, 9));
            painter.end();
            icon.addPixmap(pixmap);
        }
    }
    return icon;
}

QColor inactiveTextColor()
{
    const QPalette palette = QGuiApplication::palette();
    const QColor text = palette.color(QPalette::Text);
    const QColor base = palette.color(QPalette::Base);
    const auto mix = [](int a, int b) { return (a * 55 + b * 45) / 100; };
    return QColor(mix(text.red(), base.red()), mix(text.green(), base.green()), mix(text.blue(), base.blue()));
}

QVariant inactiveRowStyle(int role, bool inactive)
{
    if (!inactive)
        return {};
    if (role == Qt::ForegroundRole)
        return inactiveTextColor();
    if (role == Qt::FontRole) {
        QFont font;
        font.setItalic(true);
        return font;
    }
    return {};
}

QString relativeTime(qint64 thenMs, qint64 nowMs)
{
    if (thenMs <= 0)
        return QStringLiteral("—");
    return QCoreApplication::translate("AgentTableModel", "%1 ago").arg(formatAge(thenMs, nowMs));
}

namespace {

QString shortId(const QString &id)
{
    // ULIDs share their leading time part; the tail is what tells them apart.
    return id.size() > 8 ? QStringLiteral("…") + id.right(6) : id;
}

} // namespace

// ---- model ---------------------------------------------------------------------------------

AgentTableModel::AgentTableModel(const SystemStore *store, QObject *parent)
    : QAbstractTableModel(parent)
    , m_store(store)
{
    m_rowCount = int(store->agents().size());
    m_lastRefreshNowMs = store->now();
    for (const Agent &a : store->agents())
        m_names.push_back(a.name);
    for (const Scope &s : store->scopes())
        m_scopeNames.push_back(s.name);
    connect(store, &SystemStore::changed, this, &AgentTableModel::onStoreChanged);
    connect(store, &SystemStore::aboutToReset, this, &AgentTableModel::onAboutToReset);
    connect(store, &SystemStore::wasReset, this, &AgentTableModel::onWasReset);
    m_relativeTimeTimer.setObjectName(QStringLiteral("agentAges"));
    m_relativeTimeTimer.setInterval(kRelativeTimeRefreshMs);
    connect(&m_relativeTimeTimer, &QTimer::timeout, this, &AgentTableModel::refreshRelativeTimes);
    m_relativeTimeTimer.start();
}

const Agent *AgentTableModel::agentAt(int row) const
{
    return row >= 0 && row < m_rowCount ? &m_store->agents()[size_t(row)] : nullptr;
}

int AgentTableModel::rowOfAgent(const QString &id) const
{
    const int row = m_store->agentRow(id);
    return row < m_rowCount ? row : -1;
}

int AgentTableModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : m_rowCount;
}

int AgentTableModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant AgentTableModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const Agent &agent = m_store->agents()[size_t(index.row())];
    const int column = index.column();
    const bool inactive = agent.unregistered || agent.placeholder;
    switch (role) {
    case Qt::DisplayRole:
        return displayText(agent, column);
    case SortRole:
        return sortValue(agent, column);
    case AgentIdRole:
        return agent.id;
    case HealthRole:
        return int(agent.health);
    case InactiveRole:
        return inactive;
    case Qt::DecorationRole:
        return column == HealthColumn ? QVariant(healthDotIcon(agent.health)) : QVariant();
    case Qt::ForegroundRole:
    case Qt::FontRole:
        return inactiveRowStyle(role, inactive);
    case Qt::TextAlignmentRole:
        if (column == TokensColumn || column == CostColumn)
            return QVariant(Qt::AlignRight | Qt::AlignVCenter);
        return {};
    case Qt::ToolTipRole:
        switch (column) {
        case SessionColumn: return agent.sessionId;
        case IdColumn: return agent.id;
        case LastActivityColumn: return dateAndTime(agent.lastActivityMs);
        default: return toolTip(agent);
        }
    default:
        return {};
    }
}

QVariant AgentTableModel::displayText(const Agent &agent, int column) const
{
    switch (column) {
    case NameColumn: {
        const QString name = shownName(agent);
        if (agent.placeholder)
            return tr("%1 (placeholder)").arg(name);
        if (agent.unregistered)
            return tr("%1 (departed)").arg(name);
        return name;
    }
    case RoleColumn: return agent.role;
    case StateColumn: return agent.state;
    case HealthColumn: return healthName(agent.health);
    case ParentColumn: {
        return m_store->agentName(agent.parentId);
    }
    case ScopesColumn: {
        QStringList names;
        for (const QString &scopeId : agent.scopes)
            names << m_store->scopeName(scopeId);
        return names.join(QLatin1String(", "));
    }
    case SessionColumn: return shortId(agent.sessionId);
    case LastActivityColumn: return relativeTime(agent.lastActivityMs, m_store->now());
    case TaskColumn:
        if (agent.currentTaskId.isEmpty())
            return QString();
        if (agent.progress)
            return tr("%1 (%2 %)").arg(agent.currentTaskId).arg(qRound(*agent.progress)); // percent
        return agent.currentTaskId;
    case TokensColumn: return agent.tokensUsed ? QLocale().toString(*agent.tokensUsed) : QString();
    case CostColumn:
        // Sub-dollar costs are the common case for one agent: keep four decimals there.
        return agent.costUsd ? QStringLiteral("$") + QLocale().toString(*agent.costUsd, 'f', *agent.costUsd < 1 ? 4 : 2)
                             : QString();
    case IdColumn: return agent.id;
    case SystemColumn: return originSystem(agent);
    default: return {};
    }
}

QVariant AgentTableModel::sortValue(const Agent &agent, int column) const
{
    switch (column) {
    case NameColumn: return shownName(agent);
    case HealthColumn: return qint64(healthRank(agent.health));
    case LastActivityColumn: return agent.lastActivityMs;
    case TokensColumn: return agent.tokensUsed ? *agent.tokensUsed : qint64(-1);
    case CostColumn: return agent.costUsd ? *agent.costUsd : -1.0;
    case SessionColumn: return agent.sessionId;
    case TaskColumn: return agent.currentTaskId;
    default: return displayText(agent, column);
    }
}

QString AgentTableModel::originSystem(const Agent &agent)
{
    return federatedOrigin(agent.id, agent.metadata, agent.placeholder);
}

QString AgentTableModel::toolTip(const Agent &agent) const
{
    QStringList lines;
    lines << QStringLiteral("<b>%1</b> — %2").arg(shownName(agent).toHtmlEscaped(),
                                                 healthName(agent.health));
    lines << tr("id: %1").arg(agent.id.toHtmlEscaped());
    if (!agent.role.isEmpty() || !agent.state.isEmpty())
        lines << tr("role: %1 · state: %2").arg(agent.role.toHtmlEscaped(), agent.state.toHtmlEscaped());
    if (const QString system = originSystem(agent); !system.isEmpty())
        lines << tr("from system %1 (federated; its id there: %2)")
                     .arg(system.toHtmlEscaped(), federatedOriginalId(agent.id, agent.metadata).toHtmlEscaped());
    if (agent.placeholder)
        lines << tr("<i>Placeholder: referenced (as a parent, member or sender) but never described by the server.</i>");
    if (agent.unregistered)
        lines << tr("<i>Departed: unregistered at %1.</i>").arg(dateAndTime(agent.unregisteredAtMs));
    if (!agent.heartbeatStatus.isEmpty())
        lines << tr("status: %1").arg(agent.heartbeatStatus.toHtmlEscaped());
    if (!agent.lastErrorMessage.isEmpty())
        lines << tr("last error (%1): %2").arg(agent.lastErrorSeverity.toHtmlEscaped(), agent.lastErrorMessage.toHtmlEscaped());
    if (agent.lastHeartbeatMs > 0)
        lines << tr("last heartbeat: %1").arg(relativeTime(agent.lastHeartbeatMs, m_store->now()));
    return lines.join(QLatin1String("<br>"));
}

QVariant AgentTableModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || section < 0 || section >= ColumnCount)
        return {};
    if (role == Qt::DisplayRole)
        return columnTitle(section, orientation, role,
                           {tr("Name"), tr("Health"), tr("State"), tr("Role"), tr("Parent"), tr("Scopes"), tr("Last activity"),
                            tr("Current task"), tr("Session"), tr("Tokens"), tr("Cost"), tr("Id"), tr("System")});
    if (role == Qt::InitialSortOrderRole) {
        // The first click on a header shows what matters first: worst health (healthRank is
        // worst-first), the most recent activity, the biggest spenders.
        switch (section) {
        case LastActivityColumn:
        case TokensColumn:
        case CostColumn: return int(Qt::DescendingOrder);
        default: return int(Qt::AscendingOrder);
        }
    }
    if (role == Qt::ToolTipRole) {
        switch (section) {
        case HealthColumn:
            return tr("Sorts worst first: failed, unresponsive, disconnected, late, suspended, healthy, stopped");
        case LastActivityColumn: return tr("Newest event or message from or about the agent");
        case SessionColumn: return tr("The MAP session the agent is registered on (the tail of its id)");
        case TokensColumn:
        case CostColumn: return tr("As reported by the agent's status updates");
        case SystemColumn:
            return tr("Another system's agent, listed by this server through federation (filter: system:NAME); "
                      "the server sends no event about it, so it is followed by the list, each reconciliation");
        default: return {};
        }
    }
    return {};
}

// ---- updates -------------------------------------------------------------------------------

void AgentTableModel::onStoreChanged(const ChangeSet &changes)
{
    const std::vector<Agent> &agents = m_store->agents();
    const int oldCount = m_rowCount;
    const int newCount = int(agents.size());

    std::vector<int> changedRows;
    bool renamed = false;
    for (int row : changes.agentRows) {
        if (row >= oldCount)
            continue; // new: inserted below
        changedRows.push_back(row);
        const QString &name = agents[size_t(row)].name;
        if (name != m_names[size_t(row)]) {
            m_names[size_t(row)] = name;
            renamed = true;
        }
    }
    if (!changedRows.empty())
        emitRowsChanged(this, std::move(changedRows), m_rowCount, 0, ColumnCount - 1);
    // Rows whose only change is the last activity: that column alone, so a proxy sorted or
    // filtered by another column neither re-sorts nor re-filters them.
    emitRowsChanged(this, changes.activeAgentRows, m_rowCount, LastActivityColumn, LastActivityColumn);

    if (newCount > oldCount) {
        beginInsertRows(QModelIndex(), oldCount, newCount - 1);
        for (int row = oldCount; row < newCount; ++row)
            m_names.push_back(agents[size_t(row)].name);
        m_rowCount = newCount;
        endInsertRows();
    }

    // Other rows show these names: children their parent's, members their scopes'.
    if (renamed)
        emitColumn(ParentColumn);
    bool scopeRenamed = false;
    const std::vector<Scope> &scopes = m_store->scopes();
    for (int row : changes.scopeRows) {
        if (row >= int(m_scopeNames.size()))
            continue;
        if (scopes[size_t(row)].name != m_scopeNames[size_t(row)]) {
            m_scopeNames[size_t(row)] = scopes[size_t(row)].name;
            scopeRenamed = true;
        }
    }
    for (size_t row = m_scopeNames.size(); row < scopes.size(); ++row)
        m_scopeNames.push_back(scopes[row].name);
    if (scopeRenamed)
        emitColumn(ScopesColumn);
}

void AgentTableModel::emitColumn(int column)
{
    if (m_rowCount > 0)
        Q_EMIT dataChanged(index(0, column), index(m_rowCount - 1, column));
}

void AgentTableModel::refreshRelativeTimes()
{
    const qint64 now = m_store->now();
    if (m_rowCount == 0 || now == m_lastRefreshNowMs)
        return; // a replayed trace's clock stands still: nothing to repaint
    m_lastRefreshNowMs = now;
    // Only the text moves with the clock: the sort value (raw time) and the filter do not, so the
    // roles tell the proxy it need not re-sort or re-filter.
    Q_EMIT dataChanged(index(0, LastActivityColumn), index(m_rowCount - 1, LastActivityColumn),
                       {Qt::DisplayRole, Qt::ToolTipRole});
}

void AgentTableModel::onAboutToReset()
{
    beginResetModel();
}

void AgentTableModel::onWasReset()
{
    m_rowCount = int(m_store->agents().size());
    m_names.clear();
    for (const Agent &a : m_store->agents())
        m_names.push_back(a.name);
    m_scopeNames.clear();
    for (const Scope &s : m_store->scopes())
        m_scopeNames.push_back(s.name);
    m_lastRefreshNowMs = m_store->now();
    endResetModel();
}

// ---- proxy ---------------------------------------------------------------------------------

AgentFilterProxy::AgentFilterProxy(QObject *parent)
    : QSortFilterProxyModel(parent)
{
    setSortRole(AgentTableModel::SortRole);
    // filterAcceptsRow() reads the agent itself. The filter role only tells the proxy which
    // dataChanged roles can change acceptance: store changes carry every role (so rows are
    // re-filtered), the once-a-second clock refresh only display text (so they are not).
    setFilterRole(AgentTableModel::AgentIdRole);
}

void AgentFilterProxy::setSourceModel(QAbstractItemModel *model)
{
    m_agents = qobject_cast<AgentTableModel *>(model);
    QSortFilterProxyModel::setSourceModel(model);
}

bool AgentFilterProxy::setFilter(const AgentFilter &filter)
{
    if (!filter.isValid())
        return false;
    m_filter = filter;
    invalidateFilter();
    return true;
}

void AgentFilterProxy::setShowDeparted(bool show)
{
    if (show == m_showDeparted)
        return;
    m_showDeparted = show;
    invalidateFilter();
}

bool AgentFilterProxy::filterAcceptsRow(int sourceRow, const QModelIndex &sourceParent) const
{
    if (!m_agents || sourceParent.isValid())
        return false;
    const Agent *agent = m_agents->agentAt(sourceRow);
    if (!agent)
        return false;
    if (!m_showDeparted && agent->unregistered)
        return false;
    return m_filter.matchesEverything() || m_filter.matches(*agent, *m_agents->store());
}

int AgentFilterProxy::compareValues(const QVariant &left, const QVariant &right)
{
    const auto isNumber = [](const QVariant &v) {
        const int type = v.typeId();
        return type == QMetaType::LongLong || type == QMetaType::Int || type == QMetaType::Double;
    };
    if (isNumber(left) && isNumber(right)) {
        const double l = left.toDouble(), r = right.toDouble();
        return l < r ? -1 : (r < l ? 1 : 0);
    }
    return naturalCompare(left.toString(), right.toString());
}

bool AgentFilterProxy::lessThan(const QModelIndex &left, const QModelIndex &right) const
{
    const int byValue = compareValues(left.data(sortRole()), right.data(sortRole()));
    if (byValue != 0)
        return byValue < 0;
    // Ties (same health, same role, …) fall back to the name, then to arrival order.
    const int byName = compareValues(left.siblingAtColumn(AgentTableModel::NameColumn).data(sortRole()),
                                     right.siblingAtColumn(AgentTableModel::NameColumn).data(sortRole()));
    if (byName != 0)
        return byName < 0;
    return left.row() < right.row();
}

} // namespace mapi::ui
