// What the operator has selected, shared by every panel (GUI thread).
//
// Two notions: the agent selection (what control actions apply to; several agents) and the
// focused item (what the inspector shows: one agent, scope, message, event, task or action).
#pragma once

#include <QObject>
#include <QStringList>

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

Q_SIGNALS:
    // `origin` is the panel that made the change, so it can ignore its own echo.
    void agentSelectionChanged(const QStringList &ids, QObject *origin);
    void focusChanged(mapi::ui::SelectionHub::Kind kind, const QString &key, QObject *origin);

private:
    QStringList m_agents;
    Kind m_kind = Kind::None;
    QString m_key;
};

} // namespace mapi::ui
