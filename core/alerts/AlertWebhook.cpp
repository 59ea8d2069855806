#include "alerts/AlertWebhook.h"

#include "common/Redaction.h"

#include <QCoreApplication>
#include <QDateTime>
#include <QHostAddress>
#include <QNetworkAccessManager>
#include <QNetworkReply>
#include <QNetworkRequest>

namespace mapi {

AlertWebhook::AlertWebhook(QObject *parent)
    : QObject(parent)
    , m_network(new QNetworkAccessManager(this))
{
}

QString AlertWebhook::checkUrl(const QUrl &url, const QString &bearerToken)
{
    if (!url.isValid())
        return tr("not a valid address");
    const QString scheme = url.scheme().toLower();
    if (scheme != QLatin1String("http") && scheme != QLatin1String("https"))
        return tr("the address must start with https:// or http://");
    if (url.host().isEmpty())
        return tr("the address has no host");
    if (!url.userName().isEmpty() || !url.password().isEmpty())
        return tr("put no user name or password in the address: use the token field");
    if (!bearerToken.isEmpty() && scheme == QLatin1String("http") && !isLoopbackHost(url.host()))
        return tr("a token is sent only over https (or to this machine)");
    return QString();
}

bool AlertWebhook::isLoopbackHost(const QString &host)
{
    QStringView h(host);
    if (h.size() > 2 && h.startsWith(u'[') && h.endsWith(u']')) // "[::1]" as written in a URL
        h = h.mid(1, h.size() - 2);
    if (h.compare(QLatin1String("localhost"), Qt::CaseInsensitive) == 0)
        return true;
    // An address, not a name: a name other than localhost may resolve anywhere.
    const QHostAddress address(h.toString());
    return !address.isNull() && address.isLoopback();
}

QString AlertWebhook::describe(const QUrl &url)
{
    if (!url.isValid() || url.host().isEmpty())
        return QString();
    const int port = url.port(url.scheme().toLower() == QLatin1String("https") ? 443 : 80);
    return QStringLiteral("%1://%2:%3").arg(url.scheme().toLower(), url.host()).arg(port);
}

void AlertWebhook::setTarget(const QUrl &url, const QString &bearerToken, AlertSeverity minSeverity)
{
    const bool usable = !url.isEmpty() && checkUrl(url, bearerToken).isEmpty();
    if (usable != isOn() || url != m_url) {
        m_queue.clear();
        m_queuedBytes = 0;
        m_sentAlerts.clear();
        m_sentGroups.clear();
    }
    m_url = usable ? url : QUrl();
    m_token = bearerToken;
    m_minSeverity = minSeverity;
}

namespace {

// What is POSTed for one change: its JSON, with the reason cut at kMaxReasonChars (it can quote an
// agent's error text of any size) and at most kMaxEvidence evidence items.
QByteArray bodyOf(AlertChange change, const QString &system)
{
    constexpr qsizetype kMaxReasonChars = 4096;
    constexpr qsizetype kMaxEvidence = 50;
    if (change.alert.reason.size() > kMaxReasonChars)
        change.alert.reason = change.alert.reason.left(kMaxReasonChars) + QChar(0x2026);
    if (change.alert.evidence.size() > kMaxEvidence)
        change.alert.evidence = change.alert.evidence.mid(0, kMaxEvidence);
    Json body = alertChangeToJson(change);
    if (!system.isEmpty())
        body["system"] = system.toStdString();
    return QByteArray::fromStdString(body.dump());
}

} // namespace

void AlertWebhook::offer(const std::vector<AlertChange> &changes)
{
    if (!isOn())
        return;
    for (const AlertChange &change : changes) {
        const QString key = change.alert.key();
        if (change.raised) {
            if (change.alert.severity < m_minSeverity || m_sentAlerts.count(key))
                continue;
            m_sentAlerts.emplace(key, change.alert);
        } else if (m_sentAlerts.erase(key) == 0) {
            continue; // its raising was not sent: its clearing means nothing to the receiver
        }
        enqueue(bodyOf(change, m_system));
    }
}

void AlertWebhook::offerGroups(const std::vector<AlertGroups::Notice> &notices, qint64 atMs)
{
    if (!isOn())
        return;
    for (const AlertGroups::Notice &notice : notices) {
        const bool sent = m_sentGroups.count(notice.groupKey) > 0;
        if (notice.resolved) {
            if (!m_sentGroups.erase(notice.groupKey))
                continue;
        } else if (notice.severity < m_minSeverity || (notice.first && sent)) {
            continue;
        } else {
            m_sentGroups[notice.groupKey] = notice;
        }
        enqueue(QByteArray::fromStdString(AlertGroups::noticeToJson(notice, atMs, m_system).dump()));
    }
}

void AlertWebhook::reconcileGroups(const AlertGroups &groups, qint64 atMs)
{
    for (auto it = m_sentGroups.begin(); it != m_sentGroups.end();) {
        const AlertGroup *group = groups.group(it->first);
        if (group && group->grownAtMs >= 0) {
            ++it;
            continue;
        }
        AlertGroups::Notice resolved = it->second;
        resolved.title = QStringLiteral("%1 %2 — all cleared").arg(alertKindName(resolved.kind), resolved.where).simplified();
        resolved.open = resolved.added = 0;
        resolved.first = false;
        resolved.resolved = true;
        enqueue(QByteArray::fromStdString(AlertGroups::noticeToJson(resolved, atMs, m_system).dump()));
        it = m_sentGroups.erase(it);
    }
}

void AlertWebhook::reconcile(const std::map<QString, Alert> &openAlerts, qint64 nowMs)
{
    for (auto it = m_sentAlerts.begin(); it != m_sentAlerts.end();) {
        if (openAlerts.count(it->first)) {
            ++it;
            continue;
        }
        enqueue(bodyOf(AlertChange{it->second, false, nowMs}, m_system));
        it = m_sentAlerts.erase(it);
    }
}

void AlertWebhook::sendTest()
{
    if (!isOn())
        return;
    const qint64 now = QDateTime::currentMSecsSinceEpoch();
    const Json test = {{"alert", "test"},   {"state", "raised"},  {"severity", "info"}, {"agents", Json::array()},
                       {"agentId", nullptr}, {"since", now},       {"at", now},
                       {"reason", "A test from MAP Inspector: the webhook works."}, {"evidence", Json::array()}};
    enqueue(QByteArray::fromStdString(test.dump()));
}

void AlertWebhook::enqueue(QByteArray body)
{
    // A way out of the program like any other: an alert's reason can quote an agent's error text
    // ("Authorization: Bearer sk-…"), so the body gets the redaction every export gets.
    body = redactSecrets(body);
    if (body.size() > kMaxBodyBytes) {
        ++m_dropped;
        return;
    }
    m_queuedBytes += body.size();
    m_queue.push_back(std::move(body));
    while (m_queue.size() > size_t(kMaxQueued) || m_queuedBytes > kMaxQueuedBytes) {
        m_queuedBytes -= m_queue.front().size();
        m_queue.pop_front();
        ++m_dropped;
    }
    sendNext();
}

void AlertWebhook::sendNext()
{
    if (m_inFlight || m_queue.empty() || !isOn())
        return;
    QNetworkRequest request(m_url);
    request.setHeader(QNetworkRequest::ContentTypeHeader, QByteArrayLiteral("application/json"));
    request.setHeader(QNetworkRequest::UserAgentHeader,
                      QStringLiteral("MAP Inspector/%1").arg(QCoreApplication::applicationVersion()).toUtf8());
    if (!m_token.isEmpty())
        request.setRawHeader(QByteArrayLiteral("Authorization"), QByteArrayLiteral("Bearer ") + m_token.toUtf8());
    request.setAttribute(QNetworkRequest::RedirectPolicyAttribute, QNetworkRequest::ManualRedirectPolicy);
    request.setTransferTimeout(kTimeoutMs);
    const QByteArray body = std::move(m_queue.front());
    m_queuedBytes -= body.size();
    m_queue.pop_front();
    const QString where = describe(m_url); // of this request, whatever the target is when it ends
    m_inFlight = m_network->post(request, body);
    // The answer's body is not used: read and dropped as it comes, so a receiver that answers
    // with a flood cannot fill memory.
    connect(m_inFlight, &QNetworkReply::readyRead, this, [reply = m_inFlight] {
        char sink[16384];
        while (reply->read(sink, sizeof sink) > 0) {
        }
    });
    connect(m_inFlight, &QNetworkReply::finished, this, [this, reply = m_inFlight, where] {
        reply->deleteLater();
        m_inFlight = nullptr;
        const int status = reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
        bool ok = false;
        QString detail;
        if (reply->error() == QNetworkReply::NoError && status >= 200 && status < 300) {
            ok = true;
            ++m_sent;
            detail = tr("%1 answered %2").arg(where).arg(status);
        } else {
            ++m_failed;
            // The reply's own error text can quote the whole address: say it in our words.
            if (status > 0)
                detail = tr("%1 answered %2").arg(where).arg(status);
            else if (reply->error() == QNetworkReply::OperationCanceledError || reply->error() == QNetworkReply::TimeoutError)
                detail = tr("%1 did not answer within %2 s").arg(where).arg(kTimeoutMs / 1000);
            else if (reply->error() == QNetworkReply::ConnectionRefusedError)
                detail = tr("%1 refused the connection").arg(where);
            else if (reply->error() == QNetworkReply::HostNotFoundError)
                detail = tr("%1: host not found").arg(where);
            else if (reply->error() >= QNetworkReply::SslHandshakeFailedError && reply->error() <= QNetworkReply::UnknownNetworkError)
                detail = tr("%1: network or TLS error (%2)").arg(where).arg(int(reply->error()));
            else
                detail = tr("%1: error %2").arg(where).arg(int(reply->error()));
            m_lastError = detail;
        }
        Q_EMIT delivered(ok, detail);
        sendNext();
    });
}

} // namespace mapi
