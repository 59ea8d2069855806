#include "model/ObservationNotes.h"

#include <algorithm>

namespace mapi {

bool ObservationNotes::note(const ProtocolProblem &problem)
{
    switch (problem.kind) {
    case ProblemKind::MethodFailed: {
        ProtocolProblem kept = problem;
        kept.frame.clear(); // the Problems list has the frame; this is the sentence
        for (ProtocolProblem &p : m_failed) {
            if (p.method == problem.method) {
                p = std::move(kept);
                return true;
            }
        }
        if (int(m_failed.size()) < kMaxMethods)
            m_failed.push_back(std::move(kept));
        return true;
    }
    case ProblemKind::MethodFallback: // the other spelling worked: nothing is missing after all
        m_failed.erase(std::remove_if(m_failed.begin(), m_failed.end(),
                                      [&](const ProtocolProblem &p) { return p.method == problem.method; }),
                       m_failed.end());
        return true;
    case ProblemKind::NotAnswering:
        ++m_notAnswering;
        m_lastNotAnswering = problem;
        m_lastNotAnswering.frame.clear();
        return true;
    case ProblemKind::Drift:
        ++m_drifts;
        m_lastDrift = problem;
        m_lastDrift.frame.clear();
        return true;
    default:
        return false;
    }
}

bool ObservationNotes::countUnknown(const QString &type)
{
    if (const auto it = m_unknownRow.constFind(type); it != m_unknownRow.cend()) {
        ++m_unknown[size_t(*it)].count;
        return false;
    }
    return true;
}

bool ObservationNotes::addUnknownType(const QString &type, qint64 timeMs, const QByteArray &sample)
{
    if (int(m_unknown.size()) >= kMaxUnknownTypes) {
        ++m_unknownOther;
        return false;
    }
    m_unknownRow.insert(type, int(m_unknown.size()));
    m_unknown.push_back({type, 1, timeMs, sample.left(kMaxSampleBytes)});
    return true;
}

void ObservationNotes::clear()
{
    *this = ObservationNotes();
}

QStringList ObservationNotes::missing() const
{
    QStringList out;
    for (const ProtocolProblem &p : m_failed)
        out << p.detail;
    if (m_notAnswering > 0)
        out << m_lastNotAnswering.detail;
    if (m_drifts > 0)
        out << m_lastDrift.detail;
    return out;
}

} // namespace mapi
