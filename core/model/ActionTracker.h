// The operator actions' audit trail: every inject, stop, suspend, resume and send, from the
// request to its confirmation by the server's events (or its failure, or a timeout).
//
// Part of the store (SystemStore::actions() reads it); kept apart because its rules are its own:
// which event confirms which action, and when an action has waited too long. It reads the rest
// of the model only through the Lookups it is handed. Rows are never removed.
// Thread: the store's.
#pragma once

#include "model/ModelTypes.h"
#include "protocol/FastHash.h"

#include <QHash>
#include <QSet>

#include <functional>
#include <optional>
#include <vector>

namespace mapi {

class ActionTracker
{
public:
    // What the tracker reads of the rest of the model.
    struct Lookups
    {
        std::function<std::optional<QString>(const QString &messageId)> messageStatus; // nullopt: no such message
        std::function<std::optional<QString>(const QString &agentId)> agentState;      // nullopt: no such agent
    };

    const std::vector<OperatorAction> &actions() const { return m_actions; }
    const OperatorAction *find(const QString &id) const;
    bool empty() const { return m_actions.empty(); }

    // A step of an action as the client recorded it. Returns the action's row, or -1 when the
    // step is for an unknown action or repeats a creation.
    int apply(const ActionUpdate &update, const Lookups &lookups);
    // Settles the open actions that `event` (and the message it carried, if any) shows took
    // effect: a state change for stop, suspend and resume; delivery, a reply or the steering
    // acknowledgement for inject and send.
    void confirm(const MapEvent &event, const Message *message);
    // Settles as timed out the open actions sent more than `timeoutMs` before `nowMs` (not those
    // whose answer was lost: they stay unknown until an event confirms them).
    void expire(qint64 nowMs, qint64 timeoutMs);

    // The rows changed since the last call (new ones included), and the first new row (-1: none).
    QSet<int> takeChangedRows() { return std::exchange(m_changed, {}); }
    int takeFirstNewRow() { return std::exchange(m_firstNew, -1); }

    void clear();
    void swap(ActionTracker &other);

private:
    void settle(OperatorAction &action, ActionStatus status, const QString &detail, qint64 timeMs,
                const QString &eventId = {});
    void mark(const OperatorAction &action) { m_changed.insert(int(&action - m_actions.data())); }

    std::vector<OperatorAction> m_actions;
    QHash<FastString, int> m_row;
    QSet<int> m_changed;
    int m_firstNew = -1;
};

} // namespace mapi
