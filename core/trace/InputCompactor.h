// Internal: trims the model inputs of a loaded trace before they reach the store: drops each
// event's raw frame (TraceTimeline::frameForEvent gives it back on demand). Repeating strings
// (types, agent ids) are already shared by the decoder (Dialect.cpp).
// The inputs mean exactly the same afterwards. Thread: one instance per thread.
#pragma once

#include "model/ModelTypes.h"

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
        if (!m_drop)
            return;
        for (ModelInput &input : inputs)
            if (auto *in = std::get_if<EventInput>(&input))
                in->event.rawFrame = QByteArray();
    }

private:
    bool m_drop;
};

} // namespace mapi
