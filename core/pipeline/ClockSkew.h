// How far the server's clock is from ours, estimated from the live events themselves.
//
// Each map/event notification carries the server's `timestamp`; the local time it arrived minus
// transit is the same instant on our clock. A sample is `timestamp - arrival` (server minus local,
// ms): the true offset less the transit time (small when the link is healthy). The estimate is the
// median of the last kSamples samples, taken at most once per kSampleEveryMs of arrival time so
// that a burst cannot fill the window: one event stamped wrongly (in microseconds, a day ahead)
// cannot move it, and the window covers a few seconds of traffic. Replayed events (map/replay
// results) are never sampled: their timestamps are old by design.
//
// Not thread-safe: it belongs to one ProtocolPipeline (one connection's thread).
#pragma once

#include <QtGlobal>

#include <algorithm>
#include <array>
#include <cmath>

namespace mapi {

class ClockSkewEstimator
{
public:
    static constexpr int kSamples = 31;
    static constexpr qint64 kSampleEveryMs = 100;
    static constexpr int kMinSamples = 5;          // before this, nothing is reported
    static constexpr qint64 kReportStepMs = 250;   // a change smaller than this is not reported

    // Records one event; true when the estimate to report changed (offsetMs() has it).
    bool addSample(qint64 serverMs, qint64 localMs)
    {
        if (serverMs <= 0 || localMs <= 0 || (m_count > 0 && localMs - m_lastSampleAtMs < kSampleEveryMs && localMs >= m_lastSampleAtMs))
            return false;
        m_lastSampleAtMs = localMs;
        m_samples[size_t(m_next)] = serverMs - localMs; // both positive: no overflow
        m_next = (m_next + 1) % kSamples;
        m_count = std::min(m_count + 1, kSamples);
        if (m_count < kMinSamples)
            return false;
        std::array<qint64, kSamples> sorted = m_samples;
        const auto middle = sorted.begin() + m_count / 2;
        std::nth_element(sorted.begin(), middle, sorted.begin() + m_count);
        const qint64 estimate = *middle;
        if (m_reported && std::abs(double(estimate) - double(m_offsetMs)) < double(kReportStepMs)) // no overflow
            return false;
        m_offsetMs = estimate;
        m_reported = true;
        return true;
    }

    // A new socket (perhaps another server): samples start again; the offset reported last stays
    // until new samples replace it.
    void restart()
    {
        m_count = 0;
        m_next = 0;
        m_lastSampleAtMs = 0;
    }

    qint64 offsetMs() const { return m_offsetMs; }
    int samples() const { return m_count; }

private:
    std::array<qint64, kSamples> m_samples{};
    int m_count = 0;
    int m_next = 0;
    qint64 m_lastSampleAtMs = 0;
    qint64 m_offsetMs = 0;
    bool m_reported = false;
};

} // namespace mapi
