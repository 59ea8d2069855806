// The window's link to a MAP system: one SystemStore (GUI thread, the single source of truth
// for every view) fed either by a live MapClient running in a worker thread (decode and
// normalisation off the GUI thread) or by a trace replayed through the same pipeline.
#pragma once

#include "client/MapClient.h"
#include "model/SystemStore.h"

#include <QHash>
#include <QObject>
#include <QPointer>
#include <QThread>
#include <QTimer>

namespace mapi::ui {

class LiveSession : public QObject
{
    Q_OBJECT
public:
    explicit LiveSession(QObject *parent = nullptr);
    ~LiveSession() override;

    SystemStore *store() { return &m_store; }
    const SystemStore *store() const { return &m_store; }

    // Live: resets the store and connects. `options.auth.credential` is held in memory only.
    void connectTo(const ClientOptions &options, bool observerOnly);
    void disconnectFromServer();
    // Replays a trace into a fresh store (live connection closed first).
    bool openTrace(const QString &path, QString *error);

    enum class Source { None, Live, Trace };
    Source source() const { return m_source; }
    QString sourceLabel() const;         // URL (redacted) or trace file name
    ClientState clientState() const { return m_state; }
    QString lastError() const { return m_lastError; }

    bool observerOnly() const { return m_observerOnly; }
    void setObserverOnly(bool on);

    // Whether an action can be sent, and if not, why (observer mode, not live, trace,
    // unsupported without fallback). Empty string = allowed.
    QString actionBlockedReason() const;
    Support support(const QString &method) const { return m_support.value(method, Support::Unknown); }

    // Control actions for each agent id; each is tracked in the store's actions.
    void inject(const QStringList &agentIds, const Json &content, MapClient::Delivery delivery);
    void stop(const QStringList &agentIds, const QString &reason);
    void suspend(const QStringList &agentIds, const QString &reason);
    void resume(const QStringList &agentIds);

    // Events applied per second over the last second (status bar).
    double eventRate() const { return m_eventRate; }

Q_SIGNALS:
    void sourceChanged();
    void stateChanged(mapi::ClientState state);
    void fatalError(const QString &message);
    void supportChanged();
    void observerOnlyChanged(bool on);
    void rateUpdated(double eventsPerSecond);

private:
    void shutdownClient();
    template<typename F> void onClient(F &&f);

    SystemStore m_store;
    QThread m_worker;
    QObject *m_workerContext = nullptr;  // lives in m_worker: runs code there
    MapClient *m_client = nullptr;       // lives in m_worker
    Source m_source = Source::None;
    QString m_label;
    ClientState m_state = ClientState::Idle;
    QString m_lastError;
    bool m_observerOnly = false;
    QHash<QString, Support> m_support;
    QTimer m_clock;                      // 1 Hz: health and action timeouts follow wall time
    qint64 m_lastEventCount = 0;
    double m_eventRate = 0;
};

} // namespace mapi::ui
