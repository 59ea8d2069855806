// Retention of a recording's rotated parts (map-inspector-cli record --keep-parts N / --keep-mb N,
// an unattended collector's disk kept bounded): which parts to delete, decided by a pure
// function over the parts' paths, sizes and numbers, and a small applier that reads the sizes
// from disk and deletes.
//
// Contract: only the parts the recording itself started (told to the applier one by one, each
// one TraceWriter::partPath(base, n) of its own base path) are ever deleted: never another file,
// not even one of the same name pattern left by an earlier run. The part being written (the
// highest number) is never deleted, whatever the limits say.
#pragma once

#include <QString>
#include <QStringList>

#include <vector>

namespace mapi {

struct RetentionPolicy
{
    int keepParts = 0;    // > 0: keep the newest N parts, the one being written included
    qint64 keepBytes = 0; // > 0: the parts' total on disk at most this many bytes, oldest deleted first
    bool any() const { return keepParts > 0 || keepBytes > 0; }
};

struct RecordingPart
{
    QString path;
    qint64 bytes = 0; // on disk
    int index = 0;    // the part's number: 0 the first (the path given), n partPath(base, n)
};

// The parts to delete under `policy`, oldest (lowest index) first. `parts`: one recording's
// parts, in any order; the one with the highest index is being written and is never chosen, so
// a byte limit below one part's size leaves exactly that part. Both limits given: a part goes
// when either says so.
std::vector<RecordingPart> partsToDelete(const std::vector<RecordingPart> &parts, const RetentionPolicy &policy);

// Applies a RetentionPolicy to the parts of one recording as it goes. Main thread (any one
// thread); the files are only stat'ed and removed, never opened, so the writer's thread may be
// writing the newest part meanwhile.
class PartRetention
{
public:
    PartRetention(const QString &basePath, const RetentionPolicy &policy);

    // A part the recording started (a rotation, or the first part). False, and nothing kept, for
    // a path that is not the next parts of basePath (TraceWriter::partPath(basePath, n) for an n
    // from the next expected one on, up to kMaxSkippedParts further: a rotation told late or not
    // at all is tolerated) or that was told already.
    bool partStarted(const QString &path);

    struct Outcome
    {
        QString path;
        qint64 bytes = 0;
        QString error; // empty: deleted
    };
    // Reads every kept part's size from disk and deletes what the policy says, oldest first.
    // Each part is in the outcome at most once in the recording's life: a part deleted, or one
    // that could not be (then `error`; it is neither retried nor counted again), is forgotten.
    // A part that is no longer on disk (moved away by someone else, e.g. a shipper) is forgotten
    // silently; the newest part counts as 0 bytes then and is still never deleted.
    std::vector<Outcome> apply();

    const RetentionPolicy &policy() const { return m_policy; }
    // The parts deleted so far, in order.
    const QStringList &deleted() const { return m_deleted; }

    static constexpr int kMaxSkippedParts = 1000;

private:
    QString m_base;
    RetentionPolicy m_policy;
    std::vector<RecordingPart> m_parts; // told and not forgotten, oldest first
    int m_nextIndex = 0;
    QStringList m_deleted;
};

} // namespace mapi
