// The timeline's rows: one lane per agent, grouped by scope or by subtree, groups collapsible.
//
// Scope grouping: a group per live scope, nested as the scopes are; each agent sits in exactly
// one group, its deepest scope (ties: the scope name first in natural order), so every message
// has one lane to start from and one to end on. Agents in no scope form a last group.
// Subtree grouping: agents nested under their parent; an agent with children is a group whose
// header is the agent's own lane.
// A collapsed group is one aggregated lane that stands for every agent below it.
//
// Rows are laid out top to bottom in content pixels. Thread: GUI thread.
#pragma once

#include <QSet>
#include <QString>
#include <QStringList>

#include <vector>

namespace mapi {
class SystemStore;
}

namespace mapi::ui {

enum class LaneGrouping { Scope, Subtree };

struct LaneRow
{
    enum class Kind { Group, Agent };
    Kind kind = Kind::Agent;
    QString key;             // collapse key: "scope:<id>", "noscope" or "agent:<id>"
    QString id;              // scope id (Group, empty for the no-scope group) or agent id
    QString label;
    int agentRow = -1;       // SystemStore::agents() row (Agent rows)
    int depth = 0;           // nesting level, for indentation
    bool expandable = false; // has rows below it
    bool collapsed = false;  // aggregated: stands for `members`
    std::vector<int> members;// agent rows this row stands for: itself, plus everything below when collapsed
    int top = 0;             // content y of the row's top edge
    int height = 0;
    int centerY() const { return top + height / 2; }
};

class TimelineLanes
{
public:
    static constexpr int kLaneHeight = 22;
    static constexpr int kGroupHeaderHeight = 20;

    // Lays the rows out again from the store. `collapsedKeys` holds LaneRow::key values.
    void rebuild(const SystemStore &store, LaneGrouping grouping, const QSet<QString> &collapsedKeys);
    void clear();

    const std::vector<LaneRow> &rows() const { return m_rows; }
    int contentHeight() const { return m_contentHeight; }
    // The row that stands for an agent: its own lane, or the collapsed group it is folded into.
    int rowOfAgent(int agentRow) const;
    // The row at content y, -1 outside every row.
    int rowAt(int contentY) const;
    // Index of the first row whose bottom edge is below `contentY`.
    int firstRowEndingAfter(int contentY) const;
    int rowWithKey(const QString &key) const;
    // Ids of every agent below (and including) row `index`, expanded or not.
    QStringList agentIdsUnder(const SystemStore &store, int index) const;
    int groupCount() const;

    // What the layout depends on, per agent and per scope: the view rebuilds when one changes.
    static QString agentShape(const SystemStore &store, int agentRow);
    static QString scopeShape(const SystemStore &store, int scopeRow);

private:
    void buildByScope(const SystemStore &store, const QSet<QString> &collapsedKeys);
    void buildBySubtree(const SystemStore &store, const QSet<QString> &collapsedKeys);
    // Appends a row; `subtree` is every agent row it covers. Collapsed rows stand for all of them.
    void addRow(LaneRow row, std::vector<int> subtree);

    std::vector<LaneRow> m_rows;
    std::vector<int> m_rowOfAgent;              // per agent row
    std::vector<std::vector<int>> m_subtrees;   // per row: every agent row below it, expanded or not
    int m_contentHeight = 0;
};


} // namespace mapi::ui
