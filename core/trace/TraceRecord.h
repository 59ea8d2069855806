// One trace record, its JSON Lines encoding (docs/trace-format.md, secrets redacted), and a
// fast record-line parser (simdjson) shared by every reader.
//
//   {"format":"map-inspector-trace","version":2,"app":"0.1.0","startedAt":<ms>,"url":"ws://…"}
//   {"t":<ms>,"dir":"send"|"recv","conn":<n>,"frame":<the frame's JSON, byte for byte>}
//   {"t":<ms>,"dir":"send"|"recv"|"open"|"close"|"action","conn":<n>,"raw":"<frame text>"}
//
// The parser also reads the raw capture format of shared/captures ({seq,dir,t,raw,...}).
#pragma once

#include "common/Redaction.h"
#include "model/ModelTypes.h"
#include "pipeline/FrameSink.h"
#include "protocol/JsonRpc.h"

#include <QByteArray>
#include <QString>

#include <memory>

namespace mapi {

// 2: send/recv frames that are one line of valid JSON are written as they are ("frame"), not
// as a JSON string ("raw", version 1; still written for other frames, and read).
constexpr int kTraceFormatVersion = 2;


struct TraceRecord
{
    qint64 timeMs = 0;
    QString dir;          // send | recv | open | close | action | note (captures: also ping, pong)
    int connection = 1;
    QByteArray raw;       // frame text (send/recv), url (open), reason (close)
    bool binary = false;
    Json extra;           // action records: the ActionUpdate as JSON
    // Set by readers that leave the check of a "frame" to the decoder (RecordLineParser::
    // setFramesCheckedLater): `raw` was taken from the line unparsed and may be damaged.
    bool frameUnchecked = false;
    qint64 line = 0;      // 1-based line in the file it was read from (0: not read from a file)
    // Where `raw`'s bytes are in the decompressed content of that file when they are a verbatim
    // piece of it (a "frame" line read by TraceFileReader); -1: they are not (base64, "raw").
    qint64 contentOffset = -1;
    // > 0: `raw` is not a verbatim piece of the file, but parsing its line again gives it back
    // (RecordLineParser, as a capture's "raw" string): the line is at contentOffset, this long.
    qint64 contentLineSize = 0;
};

// Skip: an incident bundle's "skip" record (event numbers left out on purpose, trace/IncidentBundle.h).
enum class RecordDir : quint8 { Send, Recv, Open, Close, Action, Skip, Other };
RecordDir recordDir(const QString &dir);
// Shared QStrings for the known directions (no allocation per record).
QString recordDirName(RecordDir dir);

// The JSON line of a record, with its newline. Every record is redacted (common/Redaction.h):
// frames, binary frames, action records, close reasons, URLs and notes. A frame that is
// valid JSON without line breaks is written as it is ("frame"), other text frames as a JSON
// string ("raw"). Binary frames, and text frames that are not valid UTF-8, are stored in base64
// ("encoding":"base64") so that they replay byte for byte.
QByteArray encodeRecordLine(const TraceRecord &record);
// The header line, with its newline. `extra` members (e.g. "part", "server") are added.
QByteArray encodeHeaderLine(const QString &url, qint64 startedAtMs, const Json &extra = Json::object());

// Appends `text` as a JSON string literal (quotes included; UTF-8 kept, controls escaped).
void appendJsonString(QByteArray &out, const char *text, qsizetype size);

Json actionUpdateToJson(const ActionUpdate &update);
ActionUpdate actionUpdateFromJson(const Json &json);

// Parses record lines with simdjson. One instance per thread.
class RecordLineParser
{
public:
    enum class Result { Record, Header, Empty, Bad };

    RecordLineParser();
    ~RecordLineParser();
    Q_DISABLE_COPY(RecordLineParser)

    // `paddedCapacity`: bytes readable from `data` (at least size + 64 lets the parser skip a
    // copy). A header line ({"format":...}) gives Header and is kept in header().
    Result parse(const char *data, qsizetype size, qsizetype paddedCapacity, TraceRecord &out);
    // true: a record line of the shape our writer gives ({"t","dir","conn","frame"} in that
    // order) is taken apart without parsing; its frame is checked when it is decoded (one
    // parse instead of two) and the record says so (TraceRecord::frameUnchecked). The line is
    // valid JSON exactly when its frame is. false (default): every line is parsed whole.
    void setFramesCheckedLater(bool later) { m_framesCheckedLater = later; }
    const Json &header() const { return m_header; }
    QString lastError() const { return m_error; } // why the last line was Bad

private:
    struct Impl;
    std::unique_ptr<Impl> d;
    // Binary frames without "encoding": base64 in map-inspector traces (files written before
    // the field existed), plain text in captures. Set from the header.
    bool m_base64 = false;
    bool m_framesCheckedLater = false;
    Json m_header;
    QString m_error;
};

// A frame sink that keeps a connection's traffic as trace records (the session journal, a trace
// recording): every call becomes one record of the current connection (counted from 1 at each
// socket opened); the subclass writes it, and for a received frame says where it is kept.
// Thread: the client's thread.
class TraceRecordSink : public FrameSink
{
public:
    void socketOpened(const QString &redactedUrl, qint64 timeMs) override
    {
        ++m_connection;
        writeRecord({timeMs, QStringLiteral("open"), m_connection, redactedUrl.toUtf8(), false, Json()});
    }
    void socketClosed(const QString &reason, qint64 timeMs) override
    {
        writeRecord({timeMs, QStringLiteral("close"), m_connection, reason.toUtf8(), false, Json()});
    }
    void frameSent(const QByteArray &frame, qint64 timeMs) override
    {
        writeRecord({timeMs, QStringLiteral("send"), m_connection, frame, false, Json()});
    }
    FrameRef frameReceived(const QByteArray &frame, qint64 timeMs, bool binary) override
    {
        return writeRecord({timeMs, QStringLiteral("recv"), m_connection, frame, binary, Json()});
    }
    void actionRecorded(const ActionUpdate &update) override
    {
        writeRecord({update.timeMs, QStringLiteral("action"), m_connection, QByteArray(), false, actionUpdateToJson(update)});
    }

    // The records that follow belong to connection `connection` (a sink that joins a running
    // connection after writing its earlier records itself: InspectorSession::startRecording).
    void continueConnection(int connection) { m_connection = connection; }

protected:
    // Where the record is kept for reading back (invalid: it is not).
    virtual FrameRef writeRecord(const TraceRecord &record) = 0;

private:
    int m_connection = 0;
};

} // namespace mapi
