// The topology of a large system at a glance (issue 44 item 2): its agents aggregated into
// groups — by scope, by subtree (a lead and everyone below it) or by role, as the operator picks
// — each drawn as one node sized by its agents, with its name and count in legible text, a bar of
// its agents' health, and its trouble (failed, unresponsive, open alerts) in colour and numbers;
// the busiest message flows between groups as edges. Double-click (or Enter on the hovered group)
// opens a group: the agent graph takes over, zoomed to its agents (TopologyPanel).
//
// Groups are laid out on a grid that fits the view, the most troubled first: no zoom is needed
// to see where the trouble is, and no text is ever drawn below kLabelPixels.
//
// Work: the groups are counted again once a second while shown and the store changed (one pass
// over the agents, a few milliseconds at 10,000); the message flows are counted incrementally
// from the message log, kFlowBudgetMs a refresh (a 335,000-message trace is counted in a few
// seconds, never in one stall). A message counts once for each other group it reached, for the
// groups its agents were in when it was counted, once it is kFlowSettleMs old (its recipients
// arrive in later events). The paint draws what the refresh prepared: no sorting, no eliding.
// Memory: one entry per group and per pair of groups that exchanged messages. GUI thread.
#pragma once

#include "model/ModelTypes.h"
#include "models/HealthModel.h"

#include <QHash>
#include <QImage>
#include <QPointF>
#include <QPointer>
#include <QStringList>
#include <QTimer>
#include <QWidget>

#include <array>
#include <vector>

namespace mapi {
class SystemStore;
}

namespace mapi::ui {

struct TopologyColors;

class GroupOverview : public QWidget
{
    Q_OBJECT
public:
    enum class GroupBy { Scope, Subtree, Role };
    static constexpr int kLabelPixels = 11;           // every text it draws: legible at any size
    static constexpr int kFlowBudgetMs = 3;
    static constexpr qint64 kFlowSettleMs = 5000;
    static constexpr int kMostEdges = 60;              // the busiest flows; the rest would be noise

    explicit GroupOverview(const SystemStore *store, QWidget *parent = nullptr);

    void setGroupBy(GroupBy groupBy);
    GroupBy groupBy() const { return m_groupBy; }
    static QString groupByName(GroupBy groupBy); // "scope", "subtree", "role"
    // Open alerts by agent id → the worst severity (0 info, 1 warning, 2 critical).
    void setAlertBadges(const QHash<QString, int> &severityByAgent);

    struct Group
    {
        QString key;
        QString title;            // "team/ingest", "under ingest-lead", "role worker"
        QStringList agents;       // ids
        std::array<int, kHealthCount> health{};
        int alerted = 0;          // agents with an open alert
        int worstAlert = -1;      // their worst severity (-1: none)
        QPointF centre;           // view coordinates (the last layout)
        double radius = 0;
        QString shownTitle;       // elided to its cell (the last layout)
        QString shownCount;
        int trouble() const;      // failed and unresponsive agents, and alerted ones
    };
    const std::vector<Group> &groups() const { return m_groups; }
    // A flow between two groups (indexes into groups()), in messages counted so far.
    struct Flow
    {
        int from = 0, to = 0;
        qint64 messages = 0;
    };
    std::vector<Flow> busiestFlows() const { return m_busiest; }
    // Rows of the message log counted so far (tests).
    size_t countedMessageRows() const { return m_countedRows; }
    // Messages counted between two groups so far, by their keys (either order).
    qint64 flowBetween(const QString &groupKey, const QString &otherKey) const;
    // The group under a view point (-1: none).
    int groupAt(QPointF point) const;
    // Counts again now (and lays out).
    void refresh();

    // What the last paint drew, for tests: the text items and the smallest font (pixels).
    int labelsDrawn() const { return m_labelsDrawn; }
    int smallestLabelPixels() const { return m_smallestLabel; }

Q_SIGNALS:
    // The operator opened a group: its agents' ids and its title.
    void groupActivated(const QStringList &agentIds, const QString &title);

protected:
    void paintEvent(QPaintEvent *event) override;
    void resizeEvent(QResizeEvent *event) override;
    void showEvent(QShowEvent *event) override;
    // The hovered group (a ring, the tooltip), opened by a double-click or Enter.
    bool event(QEvent *event) override;
    void mouseMoveEvent(QMouseEvent *event) override;
    void leaveEvent(QEvent *event) override;
    void mouseDoubleClickEvent(QMouseEvent *event) override;
    void keyPressEvent(QKeyEvent *event) override;

private:
    void refreshGroups(bool countFlows);
    void renderTo(QPainter &painter, const TopologyColors &colors); // any thread: into m_frame only
    QString groupKeyOf(const Agent &agent, const QSet<QString> &scopeParents, QString *title) const;
    void countMessages();
    void findBusiestFlows();
    void layoutGroups();
    void shapeEdges(); // the edges the layer draws, from the busiest flows and the layout
    int hoveredGroup() const; // -1: none
    QString tooltipOf(const Group &group) const;

    QPointer<const SystemStore> m_store;
    GroupBy m_groupBy = GroupBy::Scope;
    QHash<QString, int> m_alertBadges;
    std::vector<Group> m_groups;
    QHash<QString, int> m_groupOfKey;     // group key → index in m_groups
    QHash<QString, QString> m_keyOfAgent; // agent id → its group's key (this refresh)
    // Message flows: by the message log's name rows (see MessageLog::fromAgentNameRow).
    size_t m_countedRows = 0;             // rows of the log counted
    std::vector<QString> m_groupKeyOfNameRow; // name row → group key (null: not looked up this refresh)
    QHash<QString, QHash<QString, qint64>> m_flows; // group key → group key → messages (from ≤ to)
    std::vector<Flow> m_busiest;          // busiest flows, found at each refresh
    QString m_hovered;                    // the key of the group under the mouse
    double m_cellWidth = 80;              // of the grid's cells (the last layout), for the text
    // What the last refresh saw: nothing changed, nothing to count again.
    qint64 m_seenNowMs = -1;
    size_t m_seenAgents = 0, m_seenMessages = 0;
    bool m_badgesChanged = false;
    QTimer m_tick;
    QImage m_frame;                       // the last frame (painted on a pool thread)
    struct EdgeShape
    {
        QPointF from, to;
        double width = 1;
        bool operator==(const EdgeShape &o) const { return from == o.from && to == o.to && width == o.width; }
        bool operator!=(const EdgeShape &o) const { return !(*this == o); }
    };
    std::vector<EdgeShape> m_edgeShapes;
    QImage m_edgeLayer;                   // the background and the edges, drawn again when they change
    bool m_edgesDirty = true;
    bool m_edgesDark = false;
    int m_labelsDrawn = 0;
    int m_smallestLabel = 0;
};

} // namespace mapi::ui
