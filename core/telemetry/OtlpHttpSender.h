// Delivers OpenTelemetry OTLP/HTTP requests, JSON encoding (POST, Content-Type: application/json),
// to a receiver such as an OpenTelemetry Collector's otlp receiver (port 4318). The bodies are
// complete ExportTraceServiceRequest objects built elsewhere (trace/Otlp.h); this class only
// queues and sends them.
//
// Endpoint: read as OTEL_EXPORTER_OTLP_ENDPOINT is, a base URL to which "v1/traces" is appended,
// unless its path already ends with "/v1/traces" (tracesUrl()). http or https with a host and no
// user info; with headers (they carry credentials: an API key) plain http only to this machine
// (AlertWebhook::isLoopbackHost). An unusable endpoint, or a header name or value with a line
// break, leaves the sender off: it never sends, and enqueue() drops and counts.
//
// Secrets: header values, and the endpoint's path and query. Nothing reported (lastError, the
// delivered() detail, target()) holds more of the address than AlertWebhook::describe() gives,
// nor any header value. Redirects are not followed (ManualRedirectPolicy): a header must not
// travel to another host; a 3xx counts as a failure.
//
// Queue: one request in flight at a time, in order; the head of the queue is the request in
// flight or waiting for its retry, and stays there until it is settled. A new request that would
// pass maxQueuedRequests or maxQueuedBytes (head included) is dropped and counted, what is queued
// keeping its order (as the SDK's batch processor and the Collector's sending queue do); so is a
// body alone larger than maxQueuedBytes.
// Outcomes of a POST:
//  - 2xx: sent. A partialSuccess in the answer with rejectedSpans > 0 (a string or a number:
//    int64 in OTLP JSON) adds them to spansRejected, and its errorMessage, redacted and cut to 200
//    characters, becomes lastError. At most 64 KiB of the answer is kept, the rest read and dropped.
//  - 429, 502, 503, 504, and connection refused / timed out / closed by the remote / host not
//    found / temporary network failure: retried (the OTLP spec's retryable set) after a backoff,
//    initialBackoffMs doubled per consecutive failure, ±20 % jitter (clients must not retry in
//    step), never past maxBackoffMs; a Retry-After (seconds or an HTTP date) replaces it, kept
//    within [initialBackoffMs / 2, maxBackoffMs]. New requests keep queuing meanwhile.
//  - anything else (other 4xx and 5xx, 3xx, TLS errors): the request is dropped, counted in
//    requestsFailed and spansDropped (sending it again would fail again).
//
// drain(withinMs): the owner stops. What is queued keeps going for at most withinMs, and no
// backoff that would end past the deadline is waited for: the request waiting when drain() is
// called is tried at once, and a failure during the drain with such a backoff ends the drain.
// Then drained() is emitted once, what is left counted as dropped (the one in flight is aborted:
// whether it arrived is unknown).
// An idle sender emits drained() on the next event-loop turn. After drain(), enqueue() drops.
//
// Memory: at most maxQueuedBytes of bodies (the head included), plus what Qt's network stack
// holds of the one in flight, plus 64 KiB of its answer.
// Thread: the thread it lives in (the main thread in the CLI, the GUI thread in the window); it
// has its own QNetworkAccessManager.
#pragma once

#include <QByteArray>
#include <QElapsedTimer>
#include <QObject>
#include <QString>
#include <QUrl>

#include <deque>
#include <utility>
#include <vector>

class QNetworkAccessManager;
class QNetworkReply;
class QTimer;

namespace mapi {

struct OtlpSenderOptions
{
    QUrl endpoint;
    std::vector<std::pair<QByteArray, QByteArray>> headers; // name, value; values are secrets
    // Values below their floor are raised to it: 0 bytes, 1 request, 1 ms of backoff, a
    // maxBackoffMs of at least initialBackoffMs. timeoutMs 0: no transfer timeout.
    qsizetype maxQueuedBytes = qsizetype(32) * 1024 * 1024;
    int maxQueuedRequests = 512;
    int timeoutMs = 10000; // QNetworkRequest::setTransferTimeout: time without progress
    int initialBackoffMs = 1000;
    int maxBackoffMs = 60000;
};

class OtlpHttpSender : public QObject
{
    Q_OBJECT
public:
    static constexpr qsizetype kMaxAnswerBytes = 64 * 1024;
    static constexpr int kMaxErrorChars = 200;

    struct Stats
    {
        qint64 requestsSent = 0;
        qint64 spansSent = 0;
        qint64 requestsDropped = 0; // the queue was full, the sender off or drained, or drain() ran out
        qint64 spansDropped = 0; // of dropped and failed requests
        qint64 spansRejected = 0; // by the receiver, in a 2xx answer's partialSuccess
        qint64 requestsFailed = 0; // answers that are not retried (4xx, 3xx …)
        qint64 retries = 0;
        int queuedRequests = 0; // the head (in flight or waiting for its retry) included
        qsizetype queuedBytes = 0;
        QString lastError; // without secrets
        qint64 lastSuccessMs = 0; // ms since the epoch of the last 2xx; 0: none yet
    };

    explicit OtlpHttpSender(OtlpSenderOptions options, QObject *parent = nullptr);
    ~OtlpHttpSender() override;

    // Where the requests go: `endpoint` with "v1/traces" appended after one '/', or as it is
    // when its path already ends with "/v1/traces".
    static QUrl tracesUrl(const QUrl &endpoint);
    // Why `endpoint` cannot be used (empty: it can), in words for the operator.
    static QString checkEndpoint(const QUrl &endpoint, bool withHeaders);
    // A header that cannot split the request: a token-like name, a value without CR, LF or NUL.
    static bool isValidHeader(const QByteArray &name, const QByteArray &value);

    // Queues one request holding `spans` spans. False when it was dropped (counted).
    bool enqueue(QByteArray body, qint64 spans);
    // See above. Later calls do nothing.
    void drain(int withinMs);

    Stats stats() const;
    bool isIdle() const { return m_queue.empty(); } // nothing waiting nor on its way
    bool isDrained() const { return m_drainedEmitted; } // drained() was emitted
    bool isOn() const { return m_url.isValid() && !m_url.isEmpty(); }
    QString target() const; // AlertWebhook::describe() of the traces URL: "https://host:443"

Q_SIGNALS:
    // One POST ended: `ok` with a 2xx answer; `detail` says what happened, without secrets.
    void delivered(bool ok, const QString &detail);
    // drain() is over: nothing is queued any more.
    void drained();

private:
    struct Pending
    {
        QByteArray body;
        qint64 spans = 0;
    };

    void drop(qint64 spans);
    void sendNext();
    void readAnswer(QNetworkReply *reply);
    void settle(QNetworkReply *reply);
    int backoffMs(const QNetworkReply *reply) const;
    qint64 readPartialSuccess(); // of m_answer: the spans rejected (0: none)
    void abortInFlight();
    void finishDrain();

    OtlpSenderOptions m_options;
    QUrl m_url; // the traces URL; empty when off
    QNetworkAccessManager *m_network;
    QTimer *m_retryTimer;
    QTimer *m_drainTimer;
    std::deque<Pending> m_queue; // front: in flight or waiting for its retry
    QNetworkReply *m_inFlight = nullptr;
    QByteArray m_answer; // of the one in flight, ≤ kMaxAnswerBytes
    int m_failures = 0; // consecutive retryable failures of the head
    bool m_draining = false;
    bool m_drainedEmitted = false;
    QElapsedTimer m_drainClock;
    int m_drainWithinMs = 0;
    Stats m_stats; // its queuedRequests and queuedBytes are kept by stats()
    qsizetype m_queuedBytes = 0;
};

} // namespace mapi
