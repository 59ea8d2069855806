#include "trace/PartRetention.h"

#include "trace/Trace.h"

#include <QFile>
#include <QFileInfo>

#include <algorithm>
#include <cstddef>

namespace mapi {

std::vector<RecordingPart> partsToDelete(const std::vector<RecordingPart> &parts, const RetentionPolicy &policy)
{
    std::vector<RecordingPart> sorted = parts;
    std::sort(sorted.begin(), sorted.end(), [](const RecordingPart &a, const RecordingPart &b) { return a.index < b.index; });
    std::vector<RecordingPart> out;
    if (!policy.any() || sorted.size() < 2)
        return out;
    const size_t candidates = sorted.size() - 1; // the newest, being written, is never one
    // How many of the oldest go: the larger of what each limit asks for.
    size_t drop = 0;
    if (policy.keepParts > 0 && sorted.size() > size_t(policy.keepParts))
        drop = sorted.size() - size_t(policy.keepParts);
    if (policy.keepBytes > 0) {
        qint64 total = 0;
        for (const RecordingPart &part : sorted)
            total += std::max<qint64>(0, part.bytes);
        size_t byBytes = 0;
        while (total > policy.keepBytes && byBytes < candidates)
            total -= std::max<qint64>(0, sorted[byBytes++].bytes);
        drop = std::max(drop, byBytes);
    }
    drop = std::min(drop, candidates);
    out.assign(sorted.begin(), sorted.begin() + std::ptrdiff_t(drop));
    return out;
}

PartRetention::PartRetention(const QString &basePath, const RetentionPolicy &policy)
    : m_base(basePath)
    , m_policy(policy)
{
}

bool PartRetention::partStarted(const QString &path)
{
    for (int n = m_nextIndex; n <= m_nextIndex + kMaxSkippedParts; ++n) {
        if (TraceWriter::partPath(m_base, n) != path)
            continue;
        m_parts.push_back({path, 0, n});
        m_nextIndex = n + 1;
        return true;
    }
    return false;
}

std::vector<PartRetention::Outcome> PartRetention::apply()
{
    std::vector<Outcome> outcomes;
    if (!m_policy.any() || m_parts.empty())
        return outcomes;
    std::vector<RecordingPart> present;
    for (size_t i = 0; i < m_parts.size(); ++i) {
        RecordingPart part = m_parts[i];
        const QFileInfo info(part.path);
        const bool newest = i + 1 == m_parts.size();
        if (!info.exists() && !newest)
            continue; // gone by someone else's hand: forgotten
        part.bytes = info.exists() ? info.size() : 0;
        present.push_back(part);
    }
    m_parts = present;
    const std::vector<RecordingPart> doomed = partsToDelete(m_parts, m_policy);
    for (const RecordingPart &part : doomed) {
        QFile file(part.path);
        Outcome outcome{part.path, part.bytes, {}};
        if (file.remove())
            m_deleted << part.path;
        else
            outcome.error = file.errorString();
        outcomes.push_back(outcome);
        // Deleted or not, it is told once and then forgotten (see apply()'s contract).
        m_parts.erase(std::remove_if(m_parts.begin(), m_parts.end(), [&](const RecordingPart &p) { return p.index == part.index; }),
                      m_parts.end());
    }
    return outcomes;
}

} // namespace mapi
