// The passive taps the window runs (Systems → Start a tap…, core/tap): each a WebSocketTap in a
// thread of its own (a busy window never delays a frame), recording to its trace and following
// its participants (WebSocketTap::liveConnections) for the Connections panel. A tap runs until
// stopped: the window stops it with the system that observes through it, and every tap when it
// closes. GUI thread.
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
    static constexpr int kStopGraceMs = 300;
    ~RunningTap(); // stops the tap (everyone closed with 1001, the trace written out)
    QUrl listenUrl() const { return m_listen; }
    QUrl upstream() const { return m_upstream; }
    QString tracePath() const { return m_trace; }
    TapConnections connections() const { return m_tap->liveConnections(); } // any thread

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

    // Starts a tap; nullptr (with `error`) when it cannot listen, refuses the upstream or cannot
    // write the trace. The controller owns it until stop().
    RunningTap *start(const TapOptions &options, QString *error);
    void stop(RunningTap *tap);
    int running() const { return int(m_taps.size()); }

private:
    std::vector<std::unique_ptr<RunningTap>> m_taps;
};

} // namespace mapi::ui
