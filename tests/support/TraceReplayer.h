// Tests only: replays a trace into a store in the calling thread, through the same decoder and
// ProtocolPipeline as live traffic. The application loads traces with TraceLoader (threads,
// progress, cancel); tests want the model filled before their next line.
#pragma once

#include "trace/Trace.h"

namespace mapi::test {

class TraceReplayer
{
public:
    explicit TraceReplayer(SystemStore *store, CodecLimits limits = {}, std::shared_ptr<const JsonParser> parser = {})
        : m_store(store)
        , m_decoder(limits, std::move(parser))
    {
    }

    void feed(const TraceRecord &record)
    {
        m_inputs.clear();
        if (m_decoder.decode(record, m_inputs) > 0)
            m_store->apply(m_inputs);
    }

    // Reads and replays a whole file, then advances the store's clock to the last record.
    bool replayFile(const QString &path, TraceReadStats &stats, QString *error)
    {
        const bool ok = readTrace(path, [this](const TraceRecord &record) {
            feed(record);
            return true;
        }, stats, error);
        if (ok)
            m_store->advanceTime(m_decoder.lastTimeMs());
        return ok;
    }

private:
    SystemStore *m_store;
    RecordDecoder m_decoder;
    ModelInputs m_inputs;
};

} // namespace mapi::test
