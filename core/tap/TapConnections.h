// What each participant of a tap trace did: who it was, when it connected and left, how it left,
// what it sent and received, and its activity over time (for one lane per connection).
//
// Built from the records in order (add()), in any thread; bounded whatever the trace's size: at
// most kMaxConnections connections are followed (the records of others are counted), each keeps at
// most kMaxBuckets activity buckets from its own first one (when a connection outgrows them,
// neighbours merge and the bucket width doubles: every connection shares one width, so lanes line
// up) and at most kMaxNotes notes: some 30 MB at the very worst, a few KB a connection in practice.
// Times are clamped to [kEarliestMs, kLatestMs] (a hostile trace's stamps cannot overflow).
#pragma once

#include "trace/TraceRecord.h"

#include <QHash>
#include <QString>
#include <QStringList>

#include <vector>

namespace mapi {

struct TapActivityBucket
{
    quint32 sent = 0;
    quint32 received = 0;
    quint32 errors = 0; // answers with "error", from the server
};

struct TapConnection
{
    int conn = 0;
    QString url;           // as the tap recorded it (query values that may be credentials redacted)
    QString who;           // map/connect's name, else its participantType, else the URL's path
    QString role;          // participantType of map/connect ("agent", "client"), when sent
    qint64 openedMs = -1;
    qint64 closedMs = -1;  // -1: still open when the trace ends
    QString closedBy;      // participant, server or tap
    QString closeText;     // "code 1000: bye"
    qint64 sent = 0;
    qint64 received = 0;
    qint64 requests = 0;   // sent frames with a method and an id
    qint64 errors = 0;
    qint64 notifications = 0; // received frames with a method and no id (events, messages)
    QStringList notes;     // the tap's notes about it (messages never delivered), at most kMaxNotes
    // Its activity: buckets[i] covers bucketMs() from firstMs() + (firstBucket + i) * bucketMs().
    qint64 firstBucket = -1;
    std::vector<TapActivityBucket> buckets;
};

class TapConnections
{
public:
    static constexpr int kMaxConnections = 5000;
    static constexpr int kMaxBuckets = 512;
    static constexpr int kMaxNotes = 10;
    static constexpr qsizetype kMaxNoteChars = 300;
    static constexpr qint64 kFirstBucketMs = 100;
    static constexpr qint64 kEarliestMs = 0;
    static constexpr qint64 kLatestMs = 4102444800000; // 2100-01-01

    void add(const TraceRecord &record);

    const std::vector<TapConnection> &connections() const { return m_connections; }
    qint64 recordsNotFollowed() const { return m_notFollowed; } // of connections past kMaxConnections
    qint64 firstMs() const { return m_firstMs; }
    qint64 lastMs() const { return m_lastMs; }
    qint64 bucketMs() const { return m_bucketMs; }
    QStringList notes() const { return m_notes; } // the tap's notes not about one connection

private:
    TapConnection *connection(int conn);
    TapActivityBucket *bucketAt(TapConnection &c, qint64 timeMs);
    void widen(); // doubles the bucket width: neighbours merge

    std::vector<TapConnection> m_connections;  // in the order they first appear
    QHash<int, int> m_indexOfConn;             // conn → index in m_connections (followed ones only)
    qint64 m_notFollowed = 0;
    qint64 m_firstMs = -1;
    qint64 m_lastMs = -1;
    qint64 m_bucketMs = kFirstBucketMs;
    QStringList m_notes;
};

} // namespace mapi
