// The passive taps the window runs (Systems → Start a tap…, core/tap): each a WebSocketTap in a
// thread of its own (a busy window never delays a frame), recording to its trace and following
// its participants in the recorder's thread (WebSocketTap::liveConnections) for the Connections
// panel. A tap runs until stopped: the window stops it with the system that observes through it,
// and every tap when it closes. Those who hold a tap hold a weak_ptr: a stopped tap is gone for
// them, never another tap at the same address. GUI thread.
#pragma once

#include "tap/WebSocketTap.h"

#include <QObject>
#include <QThread>

#include <memory>
#include <vector>

namespace mapi::ui {

class RunningTap
{
public:
    // How long stopping lets the close frames leave before the sockets go (the tap thread's own
    // loop turns meanwhile; the window waits that long once per tap it stops).
    static constexpr int kStopGraceMs = 300;
    ~RunningTap(); // stops the tap (everyone closed with 1001, the trace written out)
    QUrl listenUrl() const { return m_listen; }
    QUrl upstream() const { return m_upstream; }
    QString tracePath() const { return m_trace; }
    std::shared_ptr<const TapConnections> connections() const { return m_tap->liveConnections(); } // any thread

private:
    friend class TapController;
    QThread m_thread;
    WebSocketTap *m_tap = nullptr; // lives in m_thread
    QUrl m_listen, m_upstream;
    QString m_trace;
};

class TapController : public QObject
{
    Q_OBJECT
public:
    using QObject::QObject;
    ~TapController() override;

    // Starts a tap; empty (with `error`) when it cannot listen, refuses the upstream or cannot
    // write the trace. The controller holds it until stop().
    std::weak_ptr<RunningTap> start(const TapOptions &options, QString *error);
    void stop(const std::weak_ptr<RunningTap> &tap); // nothing when it is already stopped
    int running() const { return int(m_taps.size()); }

private:
    std::vector<std::shared_ptr<RunningTap>> m_taps;
};

} // namespace mapi::ui
