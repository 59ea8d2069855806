// The operator actions' audit trail: every inject, stop, suspend, resume and send, from the
// request to its confirmation by the server's events (or its failure, or a timeout).
//
// Part of the store (SystemStore::actions() reads it); kept apart because its rules are its own:
// which event confirms which action, and when an action has waited too long. It reads the rest
// of the model only through the Lookups it is handed. Rows are never removed.
// One clock: every time of an action (sent, answered, settled) is on the console's clock (ms since
// the epoch), where the client measured them; an event that confirms one counts from when it
// arrived, not from its server timestamp. Durations and timeouts hold whatever the server's clock
// says (a server 90 s ahead or behind); a view that draws an action among events puts it on the
// server's clock (SystemStore::serverTime).
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
    // `arrivedMs`: when the event arrived, on the console's clock.
    void confirm(const MapEvent &event, const Message *message, qint64 arrivedMs);
    // Settles as timed out the open actions sent more than `timeoutMs` before `localNowMs` (the
    // console's clock; not those whose answer was lost: they stay unknown until an event confirms them).
    void expire(qint64 localNowMs, qint64 timeoutMs);

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
