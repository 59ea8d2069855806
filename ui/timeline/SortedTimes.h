// A sorted list of millisecond times in 4 bytes a time (the timeline's per-lane endpoint times:
// a million-event trace has about a million of them, 8 MB as qint64 in vectors grown by doubling).
//
// Each time is kept as a 32-bit offset from the base of its span of entries: entries
// [span.first, next span's first) all lie in [span.base, span.base + 2^32 ms), 49.7 days. A lane
// has one span unless its times stretch over weeks; a time that fits no neighbouring span starts
// one (16 bytes), so the spans never outnumber the entries.
// Thread: whoever owns it (the timeline's index: the GUI thread).
#pragma once

#include <QtGlobal>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <vector>

namespace mapi::ui {

class SortedTimes
{
public:
    size_t size() const { return m_offsets.size(); }
    bool empty() const { return m_offsets.empty(); }
    qint64 at(size_t i) const { return baseOf(i) + qint64(m_offsets[i]); }
    qint64 back() const { return at(size() - 1); }
    size_t spanCount() const { return m_spans.size(); }
    size_t memoryBytes() const { return m_offsets.capacity() * sizeof(quint32) + m_spans.capacity() * sizeof(Span); }

    // Adds `timeMs` after every entry at or before it. Returns false when it went before the
    // end (an entry arriving out of time order).
    bool insert(qint64 timeMs)
    {
        const size_t at = empty() || back() <= timeMs ? size() : upperBound(timeMs);
        const bool appended = at == size();
        // The span of the entry before (its times are at or below timeMs), else the span of the
        // entry after: both hold timeMs when it lies within 2^32 ms of their base.
        size_t span = m_spans.size();
        if (at > 0 && fits(m_spans[spanOf(at - 1)].base, timeMs))
            span = spanOf(at - 1);
        else if (at < size() && fits(m_spans[spanOf(at)].base, timeMs))
            span = spanOf(at);
        if (span == m_spans.size()) { // a span of its own, after the entry before's
            span = at == 0 ? 0 : spanOf(at - 1) + 1;
            m_spans.insert(m_spans.begin() + qsizetype(span), Span{at, timeMs});
        }
        m_offsets.insert(m_offsets.begin() + qsizetype(at), quint32(timeMs - m_spans[span].base));
        for (size_t s = span + 1; s < m_spans.size(); ++s)
            ++m_spans[s].first;
        return appended;
    }

    // Drops the first `count` entries.
    void eraseFront(size_t count)
    {
        count = std::min(count, size());
        if (count == 0)
            return;
        m_offsets.erase(m_offsets.begin(), m_offsets.begin() + qsizetype(count));
        const size_t keptFrom = m_offsets.empty() ? m_spans.size() : spanOf(count); // by `first` as it stands
        m_spans.erase(m_spans.begin(), m_spans.begin() + qsizetype(keptFrom));
        for (Span &s : m_spans)
            s.first = s.first > count ? s.first - count : 0;
    }

    // The first entry at or after `timeMs` (a time on the view's axis), searching from `from`
    // (an index at or before the answer); size() if none.
    size_t lowerBound(double timeMs, size_t from = 0) const
    {
        from = std::min(from, size());
        if (m_spans.size() == 1) { // the usual case: compare offsets
            const double offset = timeMs - double(m_spans.front().base);
            return size_t(std::lower_bound(m_offsets.begin() + qsizetype(from), m_offsets.end(), offset,
                                           [](quint32 entry, double t) { return double(entry) < t; })
                          - m_offsets.begin());
        }
        size_t low = from, high = size();
        while (low < high) {
            const size_t mid = low + (high - low) / 2;
            if (double(at(mid)) < timeMs)
                low = mid + 1;
            else
                high = mid;
        }
        return low;
    }
    // The first entry after `timeMs`.
    size_t upperBound(qint64 timeMs) const
    {
        size_t low = 0, high = size();
        while (low < high) {
            const size_t mid = low + (high - low) / 2;
            if (at(mid) <= timeMs)
                low = mid + 1;
            else
                high = mid;
        }
        return low;
    }

    std::vector<qint64> toVector() const
    {
        std::vector<qint64> times;
        times.reserve(size());
        for (size_t i = 0; i < size(); ++i)
            times.push_back(at(i));
        return times;
    }
    friend bool operator==(const SortedTimes &a, const SortedTimes &b) { return a.toVector() == b.toVector(); }

private:
    struct Span
    {
        size_t first = 0; // index of its first entry
        qint64 base = 0;  // every entry of the span is in [base, base + 2^32)
    };
    static bool fits(qint64 base, qint64 timeMs)
    {
        return timeMs >= base && quint64(timeMs - base) <= std::numeric_limits<quint32>::max();
    }
    // The span holding entry `index` by the spans' `first` as they stand.
    size_t spanOf(size_t index) const
    {
        if (m_spans.size() == 1)
            return 0;
        const auto it = std::upper_bound(m_spans.begin(), m_spans.end(), index,
                                         [](size_t i, const Span &s) { return i < s.first; });
        return size_t(it - m_spans.begin()) - 1;
    }
    qint64 baseOf(size_t index) const { return m_spans[spanOf(index)].base; }

    std::vector<quint32> m_offsets;
    std::vector<Span> m_spans; // ascending by first; the first one's first is 0
};

} // namespace mapi::ui
