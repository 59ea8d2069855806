// What an observation could not learn, said rather than guessed (issue 40): methods of the
// observation the server failed, event types the model does not understand, a server that
// stopped answering, an agent list that drifted from the model. Kept by the store for as long as
// its model (cleared by reset()), fed by the same inputs live and in replay.
//
// Memory: bounded by what a server can vary, not by time: failed methods by the methods the
// client calls (kMaxMethods), unknown types at kMaxUnknownTypes with a sample of at most
// kMaxSampleBytes each (past that, counted together), the last not-answering and drift notes.
#pragma once

#include "protocol/JsonRpc.h"

#include <QHash>

#include <vector>

namespace mapi {

struct UnknownEventType
{
    QString type;        // as the server spelled it
    qint64 count = 0;
    qint64 firstMs = 0;  // local time of the first one
    QByteArray sample;   // the first one's event object (type, data, source), compact, cut at kMaxSampleBytes
};

class ObservationNotes
{
public:
    static constexpr int kMaxMethods = 64;
    static constexpr int kMaxUnknownTypes = 256;
    static constexpr qsizetype kMaxSampleBytes = 2048;

    // A problem of kind MethodFailed, MethodFallback (takes its method's failure back),
    // NotAnswering or Drift; false for any other kind.
    bool note(const ProtocolProblem &problem);
    // An event the model does not understand: counted; true when its type is new (the caller
    // then makes a sample and calls addUnknownType()).
    bool countUnknown(const QString &type);
    // A new type's first event; false past kMaxUnknownTypes (then counted with the other types).
    bool addUnknownType(const QString &type, qint64 timeMs, const QByteArray &sample);
    void clear();

    // Whether the observation saw everything it needed: no failed method, no silent server, no
    // drift. (Drops and gaps are counted by the store and the caller apart.)
    bool complete() const { return m_failed.empty() && m_notAnswering == 0 && m_drifts == 0; }
    // The reasons, one sentence each, newest last (the window's "what is missing", the CLI's JSON).
    QStringList missing() const;

    const std::vector<ProtocolProblem> &failedMethods() const { return m_failed; }
    const std::vector<UnknownEventType> &unknownTypes() const { return m_unknown; }
    qint64 unknownOfOtherTypes() const { return m_unknownOther; } // past kMaxUnknownTypes
    qint64 notAnsweringCount() const { return m_notAnswering; }
    const ProtocolProblem &lastNotAnswering() const { return m_lastNotAnswering; }
    qint64 driftCount() const { return m_drifts; }
    const ProtocolProblem &lastDrift() const { return m_lastDrift; }

private:
    std::vector<ProtocolProblem> m_failed; // one per method, the latest failure
    std::vector<UnknownEventType> m_unknown;
    QHash<QString, int> m_unknownRow;
    qint64 m_unknownOther = 0;
    qint64 m_notAnswering = 0;
    ProtocolProblem m_lastNotAnswering;
    qint64 m_drifts = 0;
    ProtocolProblem m_lastDrift;
};

} // namespace mapi
