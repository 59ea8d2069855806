// Trace files: JSON Lines, a header line and one record per frame (docs/trace-format.md).
//
//   {"format":"map-inspector-trace","version":1,"app":"0.1.0","startedAt":<ms>,"url":"ws://…"}
//   {"t":<ms>,"dir":"send"|"recv"|"open"|"close"|"action","conn":<n>,"raw":"<frame text>",...}
//
// The reader also accepts the raw capture format of shared/captures (seq/dir/t/raw), so real
// recordings replay through the same pipeline.
#pragma once

#include "client/MapClient.h"
#include "model/SystemStore.h"

#include <QFile>
#include <QObject>
#include <QString>
#include <QTimer>

#include <functional>

namespace mapi {

constexpr int kTraceFormatVersion = 1;

// Replaces the values of credential-bearing keys (credential, token, resumeToken, apiKey,
// password, secret, accessToken, refreshToken, authorization) anywhere in a JSON frame.
// Returns the frame unchanged when it carries none. Never throws.
QByteArray redactSecrets(const QByteArray &frame);

struct TraceRecord
{
    qint64 timeMs = 0;
    QString dir;          // send | recv | open | close | action | note
    int connection = 1;
    QByteArray raw;       // frame text (send/recv), url (open), reason (close)
    bool binary = false;
    Json extra;           // action records: the ActionUpdate as JSON
};

// Records a MapClient's traffic. Thread: the client's thread.
class TraceWriter : public QObject
{
    Q_OBJECT
public:
    explicit TraceWriter(QObject *parent = nullptr);
    ~TraceWriter() override;

    bool open(const QString &path, const QString &url, QString *error);
    void attach(MapClient *client);
    void write(const TraceRecord &record);
    void close();
    qint64 recordsWritten() const { return m_records; }

private:
    QFile m_file;
    QTimer m_flushTimer; // flushed every second: a crash loses at most the last second
    int m_connection = 0;
    qint64 m_records = 0;
};

struct TraceReadStats
{
    qint64 lines = 0;
    qint64 records = 0;
    QList<qint64> badLines; // 1-based line numbers that could not be read
    QString format;         // "map-inspector-trace" or "capture"
};

// Streams a trace file line by line. `sink` returns false to stop early.
bool readTrace(const QString &path, const std::function<bool(const TraceRecord &)> &sink, TraceReadStats &stats,
               QString *error);

// Replays a trace into a store through ProtocolPipeline: the same path as live traffic.
class TraceReplayer
{
public:
    explicit TraceReplayer(SystemStore *store, CodecLimits limits = {});
    void feed(const TraceRecord &record);
    // Reads and replays a whole file, then advances the store's clock to the last record.
    bool replayFile(const QString &path, TraceReadStats &stats, QString *error);

private:
    SystemStore *m_store;
    CodecLimits m_limits;
    QHash<int, ProtocolPipeline *> m_pipelines;
    std::vector<std::unique_ptr<ProtocolPipeline>> m_owned;
    qint64 m_lastTimeMs = 0;
};

Json actionUpdateToJson(const ActionUpdate &update);
ActionUpdate actionUpdateFromJson(const Json &json);

} // namespace mapi
