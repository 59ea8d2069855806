// Internal: trims the model inputs of a loaded trace before they reach the store.
//   - drops each event's raw frame (TraceTimeline::frameForEvent gives it back on demand);
//   - shares the strings that repeat across events (event types, agent ids) so that the
//     store's copies of them cost a pointer, not an allocation each.
// The inputs mean exactly the same afterwards. Thread: one instance per thread.
#pragma once

#include "model/ModelTypes.h"

#include <QSet>

namespace mapi {

class InputCompactor
{
public:
    explicit InputCompactor(bool dropRawFrames)
        : m_drop(dropRawFrames)
    {
    }

    void compact(ModelInputs &inputs)
    {
        for (ModelInput &input : inputs) {
            auto *in = std::get_if<EventInput>(&input);
            if (!in)
                continue;
            MapEvent &e = in->event;
            if (m_drop)
                e.rawFrame = QByteArray();
            intern(e.type);
            intern(e.rawType);
            intern(e.agentId);
            intern(e.sourceAgentId);
            intern(e.scopeId);
            if (e.message)
                intern(e.message->from);
        }
    }

private:
    static constexpr qsizetype kMaxStrings = 1 << 16; // ids beyond this many distinct ones stay as they are

    void intern(QString &s)
    {
        if (s.isEmpty())
            return;
        const auto it = m_strings.constFind(s);
        if (it != m_strings.constEnd())
            s = *it;
        else if (m_strings.size() < kMaxStrings)
            m_strings.insert(s);
    }

    QSet<QString> m_strings;
    bool m_drop;
};

} // namespace mapi
