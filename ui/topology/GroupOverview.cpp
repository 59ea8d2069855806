#include "topology/GroupOverview.h"

#include "model/AgentGroupLabels.h"
#include "model/SystemStore.h"
#include "models/HealthModel.h"
#include "common/PoolThreadPaint.h"
#include "style/Colors.h"
#include "topology/TopologyStyle.h"

#include <QFontMetricsF>
#include <QElapsedTimer>
#include <QHelpEvent>
#include <QKeyEvent>
#include <QLocale>
#include <QMouseEvent>
#include <QPainter>
#include <QPainterPath>
#include <QToolTip>

#include <algorithm>
#include <cmath>

namespace mapi::ui {

namespace {

constexpr double kMargin = 16;
constexpr int kMostGroups = 400; // more would not be legible in one view; the rest are counted in the status line

} // namespace

int GroupOverview::Group::trouble() const
{
    return health[size_t(Health::Failed)] + health[size_t(Health::Unresponsive)] + alerted;
}

GroupOverview::GroupOverview(const SystemStore *store, QWidget *parent)
    : QWidget(parent)
    , m_store(store)
{
    setObjectName(QStringLiteral("groupOverview"));
    setMouseTracking(true);
    setFocusPolicy(Qt::StrongFocus);
    setMinimumSize(120, 80);
    m_tick.setInterval(1000); // health moves with time alone; a second is its unit
    connect(&m_tick, &QTimer::timeout, this, [this] {
        if (!isVisible() || !m_store)
            return;
        // A trace at rest (or a paused replay) is not counted again every second.
        if (m_store->now() == m_seenNowMs && m_store->agents().size() == m_seenAgents && m_store->messages().size() == m_seenMessages
            && !m_badgesChanged && m_countedRows >= m_store->messages().size())
            return;
        refresh();
    });
    m_tick.start();
    if (store)
        connect(store, &SystemStore::wasReset, this, [this] {
            m_flows.clear();
            m_groupKeyOfNameRow.clear();
            m_countedRows = 0;
            m_busiest.clear();
        });
}

QString GroupOverview::groupByName(GroupBy groupBy)
{
    switch (groupBy) {
    case GroupBy::Scope: return QStringLiteral("scope");
    case GroupBy::Subtree: return QStringLiteral("subtree");
    case GroupBy::Role: return QStringLiteral("role");
    }
    return {};
}

void GroupOverview::setGroupBy(GroupBy groupBy)
{
    if (groupBy == m_groupBy)
        return;
    m_groupBy = groupBy;
    m_flows.clear(); // counted for the other grouping: counted again
    m_groupKeyOfNameRow.clear();
    m_countedRows = 0;
    refresh();
}

void GroupOverview::setAlertBadges(const QHash<QString, int> &severityByAgent)
{
    m_alertBadges = severityByAgent; // counted at the next tick: not in the alerts' own turn
    m_badgesChanged = true;
}

QString GroupOverview::groupKeyOf(const Agent &agent, const QSet<QString> &scopeParents, QString *title) const
{
    switch (m_groupBy) {
    case GroupBy::Scope:
        // The title is made only for a group's first agent (title non-null).
        if (const Scope *scope = mostSpecificScope(agent, *m_store, scopeParents)) {
            if (title)
                *title = scope->name.isEmpty() ? scope->id : scope->name;
            return QStringLiteral("scope:") + scope->id;
        }
        if (title)
            *title = tr("(in no scope)");
        return QStringLiteral("scope:");
    case GroupBy::Subtree: {
        const Agent &top = topBelowRoot(agent, *m_store);
        if (title)
            *title = tr("under %1").arg(top.name.isEmpty() ? top.id : top.name);
        return QStringLiteral("subtree:") + top.id;
    }
    case GroupBy::Role:
        if (title)
            *title = agent.role.isEmpty() ? tr("(no role)") : tr("role %1").arg(agent.role);
        return QStringLiteral("role:") + agent.role;
    }
    return {};
}

void GroupOverview::refresh()
{
    refreshGroups(true);
}

void GroupOverview::refreshGroups(bool countFlows)
{
    m_groupKeyOfNameRow.clear(); // an agent's group may have changed (it joined a scope since)
    m_groups.clear();
    m_groupOfKey.clear();
    m_keyOfAgent.clear();
    if (!m_store) {
        update();
        return;
    }
    const QSet<QString> scopeParents = parentScopeIds(*m_store);
    for (const Agent &agent : m_store->agents()) {
        if (agent.unregistered)
            continue;
        const QString key = groupKeyOf(agent, scopeParents, nullptr);
        auto at = m_groupOfKey.find(key);
        if (at == m_groupOfKey.end()) {
            at = m_groupOfKey.insert(key, int(m_groups.size()));
            Group fresh;
            fresh.key = key;
            groupKeyOf(agent, scopeParents, &fresh.title);
            m_groups.push_back(std::move(fresh));
        }
        Group &g = m_groups[size_t(*at)];
        g.agents << agent.id;
        ++g.health[size_t(agent.health)];
        if (const auto alert = m_alertBadges.constFind(agent.id); alert != m_alertBadges.cend()) {
            ++g.alerted;
            g.worstAlert = std::max(g.worstAlert, *alert);
        }
        m_keyOfAgent.insert(agent.id, key);
    }
    // The most troubled first, then the largest: the grid reads from the top left.
    std::sort(m_groups.begin(), m_groups.end(), [](const Group &a, const Group &b) {
        if (a.trouble() != b.trouble())
            return a.trouble() > b.trouble();
        if (a.agents.size() != b.agents.size())
            return a.agents.size() > b.agents.size();
        return a.title < b.title;
    });
    m_groupOfKey.clear();
    for (size_t i = 0; i < m_groups.size(); ++i)
        m_groupOfKey.insert(m_groups[i].key, int(i));
    if (countFlows)
        countMessages();
    findBusiestFlows();
    layoutGroups();
    shapeEdges();
    m_seenNowMs = m_store->now();
    m_seenAgents = m_store->agents().size();
    m_seenMessages = m_store->messages().size();
    m_badgesChanged = false;
    update();
}

void GroupOverview::countMessages()
{
    const MessageLog &log = m_store->messages();
    if (log.size() < m_countedRows) { // a new log (a reset not seen): counted again
        m_flows.clear();
        m_countedRows = 0;
    }
    const auto keyOf = [this, &log](int nameRow) -> QString {
        if (nameRow <= 0)
            return {};
        if (size_t(nameRow) < m_groupKeyOfNameRow.size() && !m_groupKeyOfNameRow[size_t(nameRow)].isNull())
            return m_groupKeyOfNameRow[size_t(nameRow)];
        const QString key = m_keyOfAgent.value(log.name(nameRow));
        if (key.isEmpty())
            return key; // not an agent the model lists (yet): not remembered
        if (size_t(nameRow) >= m_groupKeyOfNameRow.size())
            m_groupKeyOfNameRow.resize(size_t(nameRow) + 1);
        m_groupKeyOfNameRow[size_t(nameRow)] = key;
        return key;
    };
    // Rows younger than kFlowSettleMs wait: their recipients may come in later events.
    const qint64 settled = m_store->now() - kFlowSettleMs;
    QElapsedTimer spent;
    spent.start();
    QSet<QString> reached; // the other groups one message reached (counted once each)
    size_t row = std::max(m_countedRows, log.firstRow());
    for (; row < log.size(); ++row) {
        if ((row & 1023) == 0 && spent.elapsed() >= kFlowBudgetMs)
            break;
        if (log.timestampMs(row) > settled)
            break;
        const QString from = keyOf(log.fromAgentNameRow(row));
        if (from.isEmpty())
            continue;
        reached.clear();
        const int recipients = log.recipientCount(row);
        for (int i = 0; i < recipients; ++i) {
            const QString to = keyOf(log.recipientNameRow(row, i));
            if (to.isEmpty() || to == from || reached.contains(to))
                continue; // within a group: drawn inside it, not between
            reached.insert(to);
            ++m_flows[std::min(from, to)][std::max(from, to)];
        }
    }
    m_countedRows = row;
}

qint64 GroupOverview::flowBetween(const QString &groupKey, const QString &otherKey) const
{
    return m_flows.value(std::min(groupKey, otherKey)).value(std::max(groupKey, otherKey));
}

void GroupOverview::findBusiestFlows()
{
    m_busiest.clear();
    for (auto a = m_flows.cbegin(); a != m_flows.cend(); ++a) {
        const int from = m_groupOfKey.value(a.key(), -1);
        if (from < 0)
            continue;
        for (auto b = a->cbegin(); b != a->cend(); ++b)
            if (const int to = m_groupOfKey.value(b.key(), -1); to >= 0)
                m_busiest.push_back({from, to, b.value()});
    }
    const auto busier = [](const Flow &x, const Flow &y) {
        return x.messages != y.messages ? x.messages > y.messages : std::pair(x.from, x.to) < std::pair(y.from, y.to);
    };
    const size_t keep = std::min(m_busiest.size(), size_t(kMostEdges));
    std::partial_sort(m_busiest.begin(), m_busiest.begin() + std::ptrdiff_t(keep), m_busiest.end(), busier);
    m_busiest.resize(keep);
}

void GroupOverview::layoutGroups()
{
    const size_t count = std::min<size_t>(m_groups.size(), kMostGroups);
    if (count == 0)
        return;
    const QRectF area = QRectF(rect()).adjusted(kMargin, kMargin, -kMargin, -kMargin - 20); // 20: the status line
    // A grid as square as the view allows; each cell holds a node, two lines of text and a bar.
    const double aspect = std::max(0.2, area.width() / std::max(1.0, area.height()));
    const int columns = std::max(1, int(std::ceil(std::sqrt(double(count) * aspect))));
    const int rows = int((count + size_t(columns) - 1) / size_t(columns));
    const double cellW = area.width() / columns, cellH = area.height() / rows;
    m_cellWidth = cellW - 6;
    const double textH = 2 * (kLabelPixels + 4) + 10;
    const double maxRadius = std::max(4.0, std::min(cellW * 0.4, (cellH - textH) * 0.45));
    QFont titleFont = font();
    titleFont.setPixelSize(kLabelPixels);
    QFont countFont = titleFont;
    titleFont.setBold(true);
    const QFontMetricsF titleMetrics(titleFont), countMetrics(countFont);
    size_t largest = 1;
    for (size_t i = 0; i < count; ++i)
        largest = std::max(largest, size_t(m_groups[i].agents.size()));
    for (size_t i = 0; i < count; ++i) {
        Group &g = m_groups[i];
        const int column = int(i % size_t(columns)), row = int(i / size_t(columns));
        // Area, not radius, follows the count: a team of 1,200 looks ten times one of 120.
        g.radius = std::max(4.0, maxRadius * std::sqrt(double(g.agents.size()) / double(largest)));
        g.centre = QPointF(area.left() + (column + 0.5) * cellW, area.top() + row * cellH + maxRadius + 4);
        // Cut on the left: "…/ingest" tells groups apart where "team/…" would not.
        g.shownTitle = titleMetrics.elidedText(g.title, Qt::ElideLeft, m_cellWidth);
        g.shownCount = countMetrics.elidedText(tr("%1 agents").arg(QLocale().toString(g.agents.size())), Qt::ElideLeft, m_cellWidth);
    }
    for (size_t i = count; i < m_groups.size(); ++i)
        m_groups[i].radius = 0; // not shown
}

int GroupOverview::groupAt(QPointF point) const
{
    for (size_t i = 0; i < m_groups.size(); ++i) {
        const Group &g = m_groups[i];
        if (g.radius <= 0)
            continue;
        const QPointF d = point - g.centre;
        if (d.x() * d.x() + d.y() * d.y() <= (g.radius + 3) * (g.radius + 3))
            return int(i);
    }
    return -1;
}

QString GroupOverview::tooltipOf(const Group &g) const
{
    const QLocale locale;
    QStringList lines{QStringLiteral("<b>%1</b> — %2").arg(g.title.toHtmlEscaped(), tr("%1 agents").arg(locale.toString(g.agents.size())))};
    for (const Health h : healthsWorstFirst())
        if (g.health[size_t(h)] > 0)
            lines << QStringLiteral("%1 %2").arg(locale.toString(g.health[size_t(h)]), healthName(h));
    if (g.alerted > 0)
        lines << tr("%1 with an open alert").arg(locale.toString(g.alerted));
    lines << tr("Double-click to open the group");
    return lines.join(QStringLiteral("<br>"));
}

void GroupOverview::paintEvent(QPaintEvent *)
{
    // Drawn into an image on a pool thread, as the agent graph is: its wide antialiased edges and
    // discs are fills that Qt 6.4 hands to that pool (common/PoolThreadPaint.h says why).
    const TopologyColors colors(palette());
    paintFrameOnPoolThread(this, m_frame, [this, &colors](QPainter &painter) { renderTo(painter, colors); });
}

void GroupOverview::renderTo(QPainter &painter, const TopologyColors &colors)
{
    painter.setRenderHint(QPainter::Antialiasing, true);
    m_labelsDrawn = 0;
    m_smallestLabel = 0;
    QFont label = font();
    label.setPixelSize(kLabelPixels);
    QFont bold = label;
    bold.setBold(true);
    // Texts come elided from the layout (eliding shapes the text: too slow for every paint).
    const auto text = [&](const QRectF &box, const QString &s, const QFont &f, const QColor &c, Qt::Alignment align = Qt::AlignHCenter | Qt::AlignTop) {
        painter.setFont(f);
        painter.setPen(c);
        painter.drawText(box, int(align), s);
        ++m_labelsDrawn;
        m_smallestLabel = m_smallestLabel == 0 ? f.pixelSize() : std::min(m_smallestLabel, f.pixelSize());
    };

    // The background and the busiest flows between groups, under the nodes, from a layer drawn
    // again only when an edge's place or width changed: long wide antialiased lines cost about
    // 0.2 ms each (60 of them: 11 ms a frame, measured), while the layer is one copy.
    if (m_edgeLayer.size() != m_frame.size() || m_edgeLayer.devicePixelRatio() != m_frame.devicePixelRatio() || m_edgesDirty
        || m_edgesDark != colors.dark) {
        m_edgeLayer = QImage(m_frame.size(), QImage::Format_ARGB32_Premultiplied);
        m_edgeLayer.setDevicePixelRatio(m_frame.devicePixelRatio());
        QPainter edges(&m_edgeLayer);
        edges.setRenderHint(QPainter::Antialiasing, true);
        edges.fillRect(rect(), colors.background);
        for (const EdgeShape &e : m_edgeShapes) {
            QColor c = colors.messageEdge;
            c.setAlpha(90);
            edges.setPen(QPen(c, e.width, Qt::SolidLine, Qt::RoundCap));
            edges.drawLine(e.from, e.to);
        }
        m_edgesDirty = false;
        m_edgesDark = colors.dark;
    }
    painter.drawImage(0, 0, m_edgeLayer);

    const QLocale locale;
    for (size_t i = 0; i < m_groups.size(); ++i) {
        const Group &g = m_groups[i];
        if (g.radius <= 0)
            continue;
        // The ring in the colour of the worst health in it; the disc the share of trouble.
        Health worst = Health::Healthy;
        for (const Health h : healthsWorstFirst())
            if (g.health[size_t(h)] > 0) {
                worst = h;
                break;
            }
        QColor fill = healthColor(worst);
        fill.setAlpha(45);
        painter.setBrush(fill);
        painter.setPen(QPen(healthColor(worst), g.key == m_hovered ? 4 : 2.5));
        painter.drawEllipse(g.centre, g.radius, g.radius);
        const int troubled = g.health[size_t(Health::Failed)] + g.health[size_t(Health::Unresponsive)];
        if (troubled > 0) { // a pie of the failed and unresponsive share, seen at any size
            double start = 90 * 16;
            for (const Health h : {Health::Failed, Health::Unresponsive}) {
                const double span = -360.0 * 16 * g.health[size_t(h)] / double(g.agents.size());
                painter.setPen(Qt::NoPen);
                painter.setBrush(healthColor(h));
                painter.drawPie(QRectF(g.centre.x() - g.radius, g.centre.y() - g.radius, 2 * g.radius, 2 * g.radius), int(start), int(span));
                start += span;
            }
        }
        // Open alerts: a badge with their number, at the top left.
        if (g.alerted > 0) {
            const QString n = locale.toString(g.alerted);
            QFont badge = bold;
            const double w = QFontMetricsF(badge).horizontalAdvance(n) + 10;
            const QRectF pill(g.centre.x() - g.radius * 0.7 - w / 2, g.centre.y() - g.radius * 0.7 - 9, w, 18);
            painter.setPen(QPen(colors.background, 1.5));
            painter.setBrush(alertSeverityColor(std::max(0, g.worstAlert)));
            painter.drawRoundedRect(pill, 9, 9);
            text(pill, n, badge, Qt::white, Qt::AlignCenter);
        }
        // Its name and count below, then its health bar.
        const double cellW = m_cellWidth;
        const double top = g.centre.y() + g.radius + 4;
        const QRectF name(g.centre.x() - cellW / 2, top, cellW, kLabelPixels + 4);
        text(name, g.shownTitle, bold, colors.text);
        // The count in the colour of its worst health when some are failed or unresponsive (the
        // pie above says how many; the tooltip says each health's number).
        text(name.translated(0, kLabelPixels + 4), g.shownCount, label, troubled > 0 ? healthColor(worst) : colors.mutedText);
        const QRectF bar(g.centre.x() - cellW * 0.4, top + 2 * (kLabelPixels + 4) + 2, cellW * 0.8, 6);
        double x = bar.left();
        for (const Health h : healthsWorstFirst()) {
            const double w = bar.width() * g.health[size_t(h)] / double(g.agents.size());
            if (w <= 0)
                continue;
            painter.fillRect(QRectF(x, bar.top(), w, bar.height()), healthColor(h));
            x += w;
        }
    }
    // The status line: what is drawn, and how to open it.
    const size_t shown = std::min<size_t>(m_groups.size(), kMostGroups);
    int agents = 0;
    for (const Group &g : m_groups)
        agents += int(g.agents.size());
    QString status = tr("%1 agents in %2 groups by %3 · double-click a group to open it")
                         .arg(locale.toString(agents), locale.toString(m_groups.size()), groupByName(m_groupBy));
    if (shown < m_groups.size())
        status += tr(" · %1 smallest groups not drawn").arg(locale.toString(m_groups.size() - shown));
    text(QRectF(kMargin, height() - 20, width() - 2 * kMargin, 18), status, label, colors.mutedText, Qt::AlignRight | Qt::AlignVCenter);
}

void GroupOverview::resizeEvent(QResizeEvent *event)
{
    QWidget::resizeEvent(event);
    layoutGroups();
    shapeEdges();
}

void GroupOverview::shapeEdges()
{
    // Widths by the log of the messages, in half pixels: a flow that grows redraws the layer
    // only when its line would look wider.
    std::vector<EdgeShape> shapes;
    const double most = m_busiest.empty() ? 1 : std::log1p(double(m_busiest.front().messages));
    for (const Flow &f : m_busiest) {
        const Group &a = m_groups[size_t(f.from)], &b = m_groups[size_t(f.to)];
        if (a.radius <= 0 || b.radius <= 0)
            continue;
        shapes.push_back({a.centre, b.centre, std::round(2 * (1 + 5 * std::log1p(double(f.messages)) / most)) / 2});
    }
    if (shapes != m_edgeShapes) {
        m_edgeShapes = std::move(shapes);
        m_edgesDirty = true;
    }
}

void GroupOverview::showEvent(QShowEvent *event)
{
    QWidget::showEvent(event);
    // The first frame shows the groups as they are now; the flows counted since are counted at
    // the next turn (and drawn at the frame after): each step well under a frame.
    refreshGroups(false);
    QTimer::singleShot(0, this, [this] {
        if (isVisible())
            refresh();
    });
}

int GroupOverview::hoveredGroup() const
{
    return m_hovered.isEmpty() ? -1 : m_groupOfKey.value(m_hovered, -1);
}

void GroupOverview::mouseMoveEvent(QMouseEvent *event)
{
    const int at = groupAt(event->position());
    const QString hovered = at >= 0 ? m_groups[size_t(at)].key : QString();
    if (hovered != m_hovered) {
        m_hovered = hovered;
        setCursor(at >= 0 ? Qt::PointingHandCursor : Qt::ArrowCursor);
        update();
    }
}

void GroupOverview::leaveEvent(QEvent *event)
{
    QWidget::leaveEvent(event);
    if (!m_hovered.isEmpty()) {
        m_hovered.clear();
        update();
    }
}

void GroupOverview::mouseDoubleClickEvent(QMouseEvent *event)
{
    const int at = groupAt(event->position());
    if (at >= 0)
        Q_EMIT groupActivated(m_groups[size_t(at)].agents, m_groups[size_t(at)].title);
}

void GroupOverview::keyPressEvent(QKeyEvent *event)
{
    const int hovered = hoveredGroup();
    if ((event->key() == Qt::Key_Return || event->key() == Qt::Key_Enter) && hovered >= 0) {
        Q_EMIT groupActivated(m_groups[size_t(hovered)].agents, m_groups[size_t(hovered)].title);
        return;
    }
    QWidget::keyPressEvent(event);
}

bool GroupOverview::event(QEvent *event)
{
    if (event->type() == QEvent::ToolTip) {
        auto *help = static_cast<QHelpEvent *>(event);
        const int at = groupAt(help->pos());
        if (at >= 0)
            QToolTip::showText(help->globalPos(), tooltipOf(m_groups[size_t(at)]), this);
        else
            QToolTip::hideText();
        return true;
    }
    return QWidget::event(event);
}

} // namespace mapi::ui
