// The optional webhook: each alert raised (at or above a severity) and its clearing, POSTed as
// one JSON object (the line `map-inspector-cli watch` prints, docs/alerts.md) to an address the
// operator sets. Off until an address is set.
//
// Secrets: the address itself often is one (chat services put the key in its path), and an
// optional bearer token goes in the Authorization header; the caller keeps both in the OS
// keychain and hands them here. Nothing this class reports (errors, the described target) holds
// more of the address than its scheme, host and port. Redirects are not followed: a token must
// not travel to another host.
//
// Delivery: best effort, in order, one request at a time, each given kTimeoutMs. Changes wait in
// a queue of at most kMaxQueued (past it the oldest is dropped and counted); a failed POST is
// counted and not retried (the alert stays in the window's inbox either way). The answer's body
// is read and dropped (memory stays bounded whatever the receiver sends).
// Thread: the thread it lives in (the GUI thread in the window).
#pragma once

#include "alerts/AlertEngine.h"
#include "alerts/AlertGroups.h"

#include <QObject>
#include <QUrl>

#include <deque>
#include <map>

class QNetworkAccessManager;
class QNetworkReply;

namespace mapi {

class AlertWebhook : public QObject
{
    Q_OBJECT
public:
    static constexpr int kMaxQueued = 100;
    // The queue's bytes, at most: an alert's reason can quote an agent's error text of any size.
    // Past it the oldest go (counted in dropped()); a body alone larger than kMaxBodyBytes is
    // not sent (counted too): a receiver is told of alerts, not sent an agent's output.
    static constexpr qsizetype kMaxQueuedBytes = 4 * 1024 * 1024;
    static constexpr qsizetype kMaxBodyBytes = 256 * 1024;
    static constexpr int kTimeoutMs = 10000;

    explicit AlertWebhook(QObject *parent = nullptr);

    // Why `url` cannot be a webhook address (empty: it can): http or https with a host, and no
    // user name or password in it (a token goes in the token field, so it stays out of the address);
    // with a token, https unless the host is this machine (isLoopbackHost(): a token must not cross
    // a network in clear).
    static QString checkUrl(const QUrl &url, const QString &bearerToken = {});
    // Whether `host` (as QUrl::host() gives it, or bracketed: "[::1]") is this machine: "localhost"
    // (any case), an address in 127.0.0.0/8, or ::1 (QHostAddress::isLoopback()). Other names
    // are not, whatever they resolve to: checkUrl() decides before any lookup.
    static bool isLoopbackHost(const QString &host);
    // The address without what may be secret: "https://hooks.example.com:443".
    static QString describe(const QUrl &url);

    // An empty or invalid url turns the webhook off (and empties the queue).
    void setTarget(const QUrl &url, const QString &bearerToken, AlertSeverity minSeverity);
    bool isOn() const { return m_url.isValid() && !m_url.isEmpty(); }
    // The system the alerts are about (the window's source label, URL redacted): sent as
    // "system" in every body from now on, so that one receiver can tell several systems apart.
    // Empty: no "system" member.
    void setSystem(const QString &system) { m_system = system; }
    QString target() const { return describe(m_url); }

    // Queues what is to be sent of one evaluation's changes: raised alerts at or above the
    // severity (once: an alert raised again while its raising was sent, after new rules or a
    // reconnect, is not sent again), and the clearing of those (only of alerts whose raising was sent).
    void offer(const std::vector<AlertChange> &changes);
    // The group notices of an evaluation (AlertGroups::due), at or above the severity: one call
    // per group and change (AlertGroups::noticeToJson, with "system"), at model time `atMs`. The
    // alerts of a grouped group are not offered singly (the owner leaves them out of offer()).
    // A group sent as new is not sent as new again (new rules, a reconnect or a view of the past
    // made it form again); "resolved" goes only for a group sent before.
    void offerGroups(const std::vector<AlertGroups::Notice> &notices, qint64 atMs);
    // After an evaluation of the live model: "resolved" for every group sent that is no longer
    // one (its end was not seen: new rules, a view of the past meanwhile).
    void reconcileGroups(const AlertGroups &groups, qint64 atMs);
    // After an evaluation of the live model: the clearing of every alert sent as raised that is
    // no longer open (its clearing was not seen: new rules, or a view of the past meanwhile).
    void reconcile(const std::map<QString, Alert> &openAlerts, qint64 nowMs);
    // Queues a test object ({"alert": "test", ...}) so the operator can check the receiver.
    void sendTest();

    qint64 sent() const { return m_sent; }
    qint64 failed() const { return m_failed; }
    qint64 dropped() const { return m_dropped; }
    QString lastError() const { return m_lastError; }
    int queued() const { return int(m_queue.size()); }
    bool isIdle() const { return m_queue.empty() && !m_inFlight; } // nothing waiting nor on its way
    qsizetype queuedBytes() const { return m_queuedBytes; }

Q_SIGNALS:
    // One POST ended: `ok` with a 2xx answer; `detail` says what happened, without secrets.
    void delivered(bool ok, const QString &detail);

private:
    void enqueue(QByteArray body);
    void sendNext();

    QNetworkAccessManager *m_network;
    QUrl m_url;
    QString m_token;
    QString m_system;
    AlertSeverity m_minSeverity = AlertSeverity::Warning;
    std::deque<QByteArray> m_queue;
    qsizetype m_queuedBytes = 0; // of m_queue
    QNetworkReply *m_inFlight = nullptr;
    std::map<QString, Alert> m_sentAlerts; // alerts whose raising was sent and not yet their clearing (≤ open alerts)
    std::map<QString, AlertGroups::Notice> m_sentGroups; // groups sent, not yet resolved (≤ open groups)
    qint64 m_sent = 0;
    qint64 m_failed = 0;
    qint64 m_dropped = 0;
    QString m_lastError;
};

} // namespace mapi
