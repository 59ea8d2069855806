// The store's agent rows by the message log's name rows, for views that follow every message's
// sender and recipients (the topology's traffic, the timeline's lanes): an int per distinct name
// instead of hashing an id's text for each message and recipient.
// Thread: the owner's (a view's, on the GUI thread); not shared.
#pragma once

#include "model/SystemStore.h"

#include <vector>

namespace mapi {

class AgentRowsByName
{
public:
    // The agent row of `nameRow` (MessageLog::fromAgentNameRow, recipientNameRow); -1 when the
    // row names nothing or no agent has that id yet (looked up again next time). Agent rows
    // never change while the store lives.
    int row(const SystemStore &store, int nameRow)
    {
        if (nameRow <= 0)
            return -1;
        if (size_t(nameRow) >= m_rows.size())
            m_rows.resize(size_t(nameRow) + 1, -1);
        int &row = m_rows[size_t(nameRow)];
        if (row < 0)
            row = store.agentRow(store.messages().name(nameRow));
        return row;
    }
    // Call when the store resets (a reset makes a new log, with new name rows).
    void clear() { m_rows.clear(); }

private:
    std::vector<int> m_rows; // one per distinct name the log holds: its bound
};

} // namespace mapi
