// What the operator has selected, shared by every panel (GUI thread).
//
// Two notions: the agent selection (what control actions apply to; several agents) and the
// focused item (what the inspector shows: one agent, scope, message, event, task or action).
// Beside them, the causal chain of the focused item (message rows, in causal order: what caused
// it, it, what it led to), which the inspector computes and the timeline and topology light up.
#pragma once

#include <QObject>
#include <QStringList>

#include <algorithm>
#include <vector>

namespace mapi::ui {

class SelectionHub : public QObject
{
    Q_OBJECT
public:
    enum class Kind { None, Agent, Scope, Message, Event, Task, Action, Problem };
    Q_ENUM(Kind)

    using QObject::QObject;

    QStringList selectedAgents() const { return m_agents; }
    Kind focusKind() const { return m_kind; }
    // Agent/scope/task/action: the id. Message/event/problem: the row index as a string.
    QString focusKey() const { return m_key; }
    // The focused item's causal chain: message rows in causal order (empty: none shown).
    const std::vector<int> &chain() const { return m_chain; }
    bool inChain(int messageRow) const { return std::binary_search(m_sortedChain.begin(), m_sortedChain.end(), messageRow); }

public Q_SLOTS:
    void selectAgents(const QStringList &ids, QObject *origin = nullptr)
    {
        if (ids == m_agents)
            return;
        m_agents = ids;
        Q_EMIT agentSelectionChanged(ids, origin);
        if (ids.size() == 1)
            focus(Kind::Agent, ids.first(), origin);
    }
    void focus(mapi::ui::SelectionHub::Kind kind, const QString &key, QObject *origin = nullptr)
    {
        if (kind == m_kind && key == m_key)
            return;
        m_kind = kind;
        m_key = key;
        Q_EMIT focusChanged(kind, key, origin);
    }

    // Nothing selected, nothing focused, no chain: another source took the session's place.
    void clear()
    {
        selectAgents({});
        focus(Kind::None, QString());
        setChain({});
    }

    void setChain(const std::vector<int> &rows)
    {
        if (rows == m_chain)
            return;
        m_chain = rows;
        m_sortedChain = rows;
        std::sort(m_sortedChain.begin(), m_sortedChain.end());
        Q_EMIT chainChanged();
    }

Q_SIGNALS:
    void chainChanged();
    // `origin` is the panel that made the change, so it can ignore its own echo.
    void agentSelectionChanged(const QStringList &ids, QObject *origin);
    void focusChanged(mapi::ui::SelectionHub::Kind kind, const QString &key, QObject *origin);

private:
    QStringList m_agents;
    Kind m_kind = Kind::None;
    QString m_key;
    std::vector<int> m_chain;
    std::vector<int> m_sortedChain;
};

} // namespace mapi::ui
