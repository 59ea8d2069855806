#include "telemetry/OtlpHttpSender.h"

#include "alerts/AlertWebhook.h"
#include "common/Redaction.h"

#include <QCoreApplication>
#include <QDate>
#include <QDateTime>
#include <QJsonDocument>
#include <QJsonObject>
#include <QJsonValue>
#include <QList>
#include <QNetworkAccessManager>
#include <QNetworkReply>
#include <QNetworkRequest>
#include <QPointer>
#include <QRandomGenerator>
#include <QTimer>

#include <algorithm>
#include <chrono>
#include <optional>

namespace mapi {

bool OtlpHttpSender::isValidHeader(const QByteArray &name, const QByteArray &value)
{
    if (name.isEmpty())
        return false;
    for (const char c : name)
        if (uchar(c) <= ' ' || c == ':' || uchar(c) >= 0x7f)
            return false;
    for (const char c : value)
        if (c == '\r' || c == '\n' || c == '\0')
            return false;
    return true;
}

namespace {

bool allDigits(const QByteArray &text)
{
    return !text.isEmpty() && std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// An IMF-fixdate ("Sun, 06 Nov 1994 08:49:37 GMT": how HTTP dates are sent, RFC 9110 §5.6.7) in
// ms since the epoch; the obsolete forms are not read (the exponential backoff applies instead).
std::optional<qint64> httpDateMs(const QByteArray &text)
{
    const QList<QByteArray> words = text.simplified().split(' ');
    if (words.size() != 6 || words[5] != "GMT" || words[2].size() != 3)
        return std::nullopt;
    static const QByteArray months = QByteArrayLiteral("JanFebMarAprMayJunJulAugSepOctNovDec");
    const qsizetype monthAt = months.indexOf(words[2]);
    const QList<QByteArray> hms = words[4].split(':');
    if (monthAt < 0 || monthAt % 3 != 0 || !allDigits(words[1]) || !allDigits(words[3]) || hms.size() != 3)
        return std::nullopt;
    const QDate date(words[3].toInt(), int(monthAt / 3) + 1, words[1].toInt());
    const int h = hms[0].toInt(), m = hms[1].toInt(), s = hms[2].toInt();
    if (!date.isValid() || !allDigits(hms[0] + hms[1] + hms[2]) || h > 23 || m > 59 || s > 60)
        return std::nullopt;
    const qint64 days = date.toJulianDay() - QDate(1970, 1, 1).toJulianDay();
    return days * 86400000 + ((h * 60 + m) * 60 + s) * qint64(1000);
}

// A Retry-After value (RFC 9110 §10.2.3): seconds, or an HTTP date; in ms from now (may be ≤ 0).
std::optional<qint64> retryAfterMs(const QByteArray &value)
{
    const QByteArray text = value.trimmed();
    if (allDigits(text))
        return text.size() > 9 ? qint64(999999999) * 1000 : text.toLongLong() * 1000;
    if (const std::optional<qint64> at = httpDateMs(text))
        return *at - QDateTime::currentMSecsSinceEpoch();
    return std::nullopt;
}

// The OTLP/HTTP specification's retryable answers, and the network failures that may pass.
// OperationCanceledError is the transfer timeout: we abort only after disconnecting.
bool isRetryable(int status, QNetworkReply::NetworkError error)
{
    using E = QNetworkReply::NetworkError;
    if (status > 0)
        return status == 429 || status == 502 || status == 503 || status == 504;
    return error == E::ConnectionRefusedError || error == E::RemoteHostClosedError || error == E::HostNotFoundError
        || error == E::TimeoutError || error == E::OperationCanceledError || error == E::TemporaryNetworkFailureError;
}

// In our words: the reply's own error text can quote the whole address.
QString failureText(const QString &where, int status, QNetworkReply::NetworkError error, int timeoutMs)
{
    if (status >= 300 && status < 400)
        return OtlpHttpSender::tr("%1 answered %2 (a redirect: not followed)").arg(where).arg(status);
    if (status > 0)
        return OtlpHttpSender::tr("%1 answered %2").arg(where).arg(status);
    switch (error) {
    case QNetworkReply::ConnectionRefusedError:
        return OtlpHttpSender::tr("%1 refused the connection").arg(where);
    case QNetworkReply::RemoteHostClosedError:
        return OtlpHttpSender::tr("%1 closed the connection").arg(where);
    case QNetworkReply::HostNotFoundError:
        return OtlpHttpSender::tr("%1: host not found").arg(where);
    case QNetworkReply::TimeoutError:
    case QNetworkReply::OperationCanceledError:
        return OtlpHttpSender::tr("%1 did not answer within %2 ms").arg(where).arg(timeoutMs);
    case QNetworkReply::TemporaryNetworkFailureError:
        return OtlpHttpSender::tr("%1: the network is unavailable").arg(where);
    default:
        return OtlpHttpSender::tr("%1: network or TLS error (%2)").arg(where).arg(int(error));
    }
}

} // namespace

OtlpHttpSender::OtlpHttpSender(OtlpSenderOptions options, QObject *parent)
    : QObject(parent)
    , m_options(std::move(options))
    , m_network(new QNetworkAccessManager(this))
    , m_retryTimer(new QTimer(this))
    , m_drainTimer(new QTimer(this))
{
    m_options.maxQueuedBytes = std::max<qsizetype>(0, m_options.maxQueuedBytes);
    m_options.maxQueuedRequests = std::max(1, m_options.maxQueuedRequests);
    m_options.timeoutMs = std::max(0, m_options.timeoutMs);
    m_options.initialBackoffMs = std::max(1, m_options.initialBackoffMs);
    m_options.maxBackoffMs = std::max(m_options.initialBackoffMs, m_options.maxBackoffMs);
    m_retryTimer->setSingleShot(true);
    m_retryTimer->setTimerType(Qt::PreciseTimer); // a Retry-After is a "not before"
    m_drainTimer->setSingleShot(true);
    connect(m_retryTimer, &QTimer::timeout, this, &OtlpHttpSender::sendNext);
    connect(m_drainTimer, &QTimer::timeout, this, &OtlpHttpSender::finishDrain);

    QString why = checkEndpoint(m_options.endpoint, !m_options.headers.empty());
    for (size_t i = 0; why.isEmpty() && i < m_options.headers.size(); ++i)
        if (!isValidHeader(m_options.headers[i].first, m_options.headers[i].second))
            why = tr("header %1 has an empty or invalid name, or a line break in its value").arg(qulonglong(i + 1));
    if (why.isEmpty())
        m_url = tracesUrl(m_options.endpoint);
    else
        m_stats.lastError = why;
}

OtlpHttpSender::~OtlpHttpSender()
{
    abortInFlight();
}

QUrl OtlpHttpSender::tracesUrl(const QUrl &endpoint)
{
    QString path = endpoint.path(QUrl::FullyEncoded);
    if (path.endsWith(QLatin1String("/v1/traces")))
        return endpoint;
    if (!path.endsWith(u'/'))
        path += u'/';
    path += QLatin1String("v1/traces");
    QUrl url = endpoint;
    url.setPath(path, QUrl::TolerantMode);
    return url;
}

QString OtlpHttpSender::checkEndpoint(const QUrl &endpoint, bool withHeaders)
{
    if (endpoint.isEmpty())
        return tr("no endpoint is set");
    if (!endpoint.isValid())
        return tr("not a valid address");
    const QString scheme = endpoint.scheme().toLower();
    if (scheme != QLatin1String("http") && scheme != QLatin1String("https"))
        return tr("the endpoint must start with https:// or http://");
    if (endpoint.host().isEmpty())
        return tr("the endpoint has no host");
    if (!endpoint.userName().isEmpty() || !endpoint.password().isEmpty())
        return tr("put no user name or password in the endpoint: use a header");
    if (withHeaders && scheme == QLatin1String("http") && !AlertWebhook::isLoopbackHost(endpoint.host()))
        return tr("headers (they carry credentials) are sent only over https, or to this machine");
    return QString();
}

QString OtlpHttpSender::target() const
{
    return AlertWebhook::describe(tracesUrl(m_options.endpoint));
}

OtlpHttpSender::Stats OtlpHttpSender::stats() const
{
    Stats stats = m_stats;
    stats.queuedRequests = int(m_queue.size());
    stats.queuedBytes = m_queuedBytes;
    return stats;
}

void OtlpHttpSender::drop(qint64 spans)
{
    ++m_stats.requestsDropped;
    m_stats.spansDropped += spans;
}

bool OtlpHttpSender::enqueue(QByteArray body, qint64 spans)
{
    spans = std::max<qint64>(0, spans);
    if (!isOn() || m_draining || m_queue.size() >= size_t(m_options.maxQueuedRequests)
        || body.size() > m_options.maxQueuedBytes - m_queuedBytes) {
        drop(spans);
        return false;
    }
    m_queuedBytes += body.size();
    m_queue.push_back(Pending{std::move(body), spans});
    sendNext();
    return true;
}

void OtlpHttpSender::sendNext()
{
    if (m_inFlight || m_queue.empty() || m_retryTimer->isActive() || !isOn() || m_drainedEmitted)
        return;
    QNetworkRequest request(m_url);
    request.setHeader(QNetworkRequest::ContentTypeHeader, QByteArrayLiteral("application/json"));
    QByteArray agent = QByteArrayLiteral("map-inspector/");
    agent += QCoreApplication::applicationVersion().toUtf8();
    request.setRawHeader(QByteArrayLiteral("User-Agent"), agent);
    for (const auto &[name, value] : m_options.headers)
        request.setRawHeader(name, value);
    request.setAttribute(QNetworkRequest::RedirectPolicyAttribute, QNetworkRequest::ManualRedirectPolicy);
#if QT_VERSION >= QT_VERSION_CHECK(6, 7, 0)
    request.setTransferTimeout(std::chrono::milliseconds(m_options.timeoutMs));
#else
    request.setTransferTimeout(m_options.timeoutMs);
#endif
    m_answer = QByteArray();
    QNetworkReply *reply = m_network->post(request, m_queue.front().body);
    m_inFlight = reply;
    connect(reply, &QNetworkReply::readyRead, this, [this, reply] { readAnswer(reply); });
    connect(reply, &QNetworkReply::finished, this, [this, reply] { settle(reply); });
}

void OtlpHttpSender::readAnswer(QNetworkReply *reply)
{
    // Read as it comes, kept up to kMaxAnswerBytes: an answer's flood cannot fill memory.
    char chunk[16384];
    qint64 n = 0;
    while ((n = reply->read(chunk, sizeof chunk)) > 0) {
        const qsizetype room = kMaxAnswerBytes - m_answer.size();
        if (room > 0)
            m_answer.append(chunk, std::min<qsizetype>(room, qsizetype(n)));
    }
}

void OtlpHttpSender::settle(QNetworkReply *reply)
{
    readAnswer(reply);
    reply->deleteLater();
    m_inFlight = nullptr;
    const int status = reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
    const QNetworkReply::NetworkError error = reply->error();
    const QString where = target();
    const qint64 spans = m_queue.front().spans;
    const auto popHead = [this] {
        m_queuedBytes -= m_queue.front().body.size();
        m_queue.pop_front();
    };
    bool ok = false;
    bool endDrain = false;
    QString detail;
    // A 2xx is a delivery even when the connection broke while its answer's body came.
    if (status >= 200 && status < 300) {
        ok = true;
        popHead();
        m_failures = 0;
        ++m_stats.requestsSent;
        m_stats.spansSent += spans;
        m_stats.lastSuccessMs = QDateTime::currentMSecsSinceEpoch();
        detail = tr("%1 answered %2").arg(where).arg(status);
        if (const qint64 rejected = readPartialSuccess())
            detail = tr("%1; it rejected %2 spans").arg(detail).arg(rejected);
    } else {
        detail = failureText(where, status, error, m_options.timeoutMs);
        m_stats.lastError = detail;
        if (isRetryable(status, error)) {
            ++m_failures;
            const int waitMs = backoffMs(reply);
            if (m_draining && waitMs > m_drainWithinMs - m_drainClock.elapsed()) {
                endDrain = true;
            } else {
                ++m_stats.retries;
                m_retryTimer->start(waitMs);
                detail = tr("%1; retrying in %2 ms").arg(detail).arg(waitMs);
            }
        } else {
            popHead();
            m_failures = 0;
            ++m_stats.requestsFailed;
            m_stats.spansDropped += spans;
        }
    }
    endDrain |= m_draining && m_queue.empty();
    const QPointer<OtlpHttpSender> self(this);
    Q_EMIT delivered(ok, detail);
    if (!self)
        return;
    if (endDrain)
        finishDrain();
    else
        sendNext();
}

int OtlpHttpSender::backoffMs(const QNetworkReply *reply) const
{
    if (const std::optional<qint64> ms = retryAfterMs(reply->rawHeader("Retry-After"))) {
        // The receiver's word, bounded: not past our own ceiling, and not so short that a
        // "Retry-After: 0" makes a busy loop.
        const qint64 floor = std::max(1, m_options.initialBackoffMs / 2);
        return int(std::clamp<qint64>(*ms, floor, m_options.maxBackoffMs));
    }
    qint64 base = m_options.initialBackoffMs;
    for (int i = 1; i < m_failures && base < m_options.maxBackoffMs; ++i)
        base *= 2;
    const double jitter = 0.8 + 0.4 * QRandomGenerator::global()->generateDouble();
    const qint64 waitMs = qint64(double(std::min<qint64>(base, m_options.maxBackoffMs)) * jitter);
    return int(std::clamp<qint64>(waitMs, 1, m_options.maxBackoffMs));
}

qint64 OtlpHttpSender::readPartialSuccess()
{
    const QJsonDocument answer = QJsonDocument::fromJson(m_answer);
    if (!answer.isObject())
        return 0;
    // The OTLP JSON mapping writes lowerCamelCase; receivers may also accept the proto names.
    const auto member = [](const QJsonObject &object, const char *camel, const char *snake) {
        const QJsonValue value = object.value(QLatin1String(camel));
        return value.isUndefined() ? object.value(QLatin1String(snake)) : value;
    };
    const QJsonObject partial = member(answer.object(), "partialSuccess", "partial_success").toObject();
    const QJsonValue rejectedValue = member(partial, "rejectedSpans", "rejected_spans");
    qint64 rejected = 0;
    if (rejectedValue.isString())
        rejected = rejectedValue.toString().trimmed().toLongLong();
    else if (rejectedValue.isDouble())
        rejected = rejectedValue.toInteger();
    if (rejected <= 0)
        return 0;
    m_stats.spansRejected += rejected;
    QString message = redactSecrets(member(partial, "errorMessage", "error_message").toString());
    if (message.size() > kMaxErrorChars) {
        qsizetype keep = kMaxErrorChars - 1;
        if (message.at(keep - 1).isHighSurrogate())
            --keep;
        message = message.left(keep) + QChar(0x2026);
    }
    m_stats.lastError = message.isEmpty() ? tr("%1 rejected %2 spans").arg(target()).arg(rejected) : message;
    return rejected;
}

void OtlpHttpSender::drain(int withinMs)
{
    if (m_draining)
        return;
    m_draining = true;
    if (isIdle()) {
        QTimer::singleShot(0, this, &OtlpHttpSender::finishDrain);
        return;
    }
    m_drainWithinMs = std::max(0, withinMs);
    m_drainClock.start();
    m_drainTimer->start(m_drainWithinMs);
    if (m_retryTimer->isActive() && m_retryTimer->remainingTime() > m_drainWithinMs) {
        m_retryTimer->stop();
        sendNext();
    }
}

void OtlpHttpSender::abortInFlight()
{
    if (!m_inFlight)
        return;
    QNetworkReply *reply = m_inFlight;
    m_inFlight = nullptr;
    disconnect(reply, nullptr, this, nullptr); // abort() finishes it at once: not an outcome
    reply->abort();
    reply->deleteLater();
}

void OtlpHttpSender::finishDrain()
{
    if (m_drainedEmitted)
        return;
    m_drainedEmitted = true;
    m_retryTimer->stop();
    m_drainTimer->stop();
    abortInFlight();
    for (const Pending &pending : m_queue)
        drop(pending.spans);
    m_queue.clear();
    m_queuedBytes = 0;
    m_answer = QByteArray();
    Q_EMIT drained();
}

} // namespace mapi
