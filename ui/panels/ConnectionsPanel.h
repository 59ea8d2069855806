// Connections panel: a tap trace's participants (map-inspector-cli tap, core/tap), one lane per
// connection — when it connected and left (a band), what it sent (bars above the middle line) and
// received (below), the server's error answers (red), how it left (a mark at its end: grey for
// 1000/1001, red otherwise) — and a table of the same: who (map/connect's name), its address,
// opened, closed, by whom and with which code, frames each way, requests, errors, events, notes.
//
// availabilityChanged() says whether the trace shown is a tap's (its header's "tap"): the panel
// has nothing to show otherwise. The trace is read again for it in a thread of its own
// (TapConnections, bounded), after the load; the times are the tap's, on the recording
// computer's clock. A tap the window runs (TapController) is followed live instead: followLive(),
// refreshed every second, until the system's source changes. Thread: GUI thread.
#pragma once

#include "tap/TapConnections.h"

#include <QThread>
#include <QTimer>
#include <QWidget>

#include <atomic>
#include <functional>
#include <memory>

class QLabel;
class QScrollArea;
class QSplitter;
class QTableWidget;

namespace mapi {
class InspectorSession;
} // namespace mapi

namespace mapi::ui {

class ConnectionLanes;

class ConnectionsPanel : public QWidget
{
    Q_OBJECT
public:
    explicit ConnectionsPanel(InspectorSession *session, QWidget *parent = nullptr);
    ~ConnectionsPanel() override;

    const TapConnections &connections() const { return m_connections; } // tests
    QTableWidget *table() const { return m_table; }
    QWidget *lanes() const;
    // A running tap's participants as they come and go: `snapshot` (any thread's copy) every
    // kLiveRefreshMs, until the system's source changes.
    static constexpr int kLiveRefreshMs = 1000;
    // `snapshot` gives null once the tap has stopped: the last picture stays.
    void followLive(std::function<std::shared_ptr<const TapConnections>()> snapshot, const QString &listen, const QString &upstream);

Q_SIGNALS:
    void availabilityChanged(bool available);
    void connectionsRead(); // the tap trace was read (tests)

private:
    void traceLoaded(bool ok);
    void stopReading();
    void showConnections(TapConnections connections, const QString &error);
    void clearShown();
    void setAvailable(bool available);
    void fitLanes(); // once: the lanes get the room they need (the splitter is the operator's after)
    void resizeEvent(QResizeEvent *event) override;

    InspectorSession *m_session;
    QLabel *m_header;
    ConnectionLanes *m_lanes;
    QScrollArea *m_lanesArea;
    QSplitter *m_split = nullptr;
    bool m_splitSized = false; // the lanes were given their room once (then the operator's)
    QTableWidget *m_table;
    TapConnections m_connections;
    QThread *m_reader = nullptr;
    std::shared_ptr<std::atomic<bool>> m_cancel;
    bool m_available = false;
    QString m_listen, m_upstream;           // the tap's addresses (its trace's header, or the running tap)
    std::function<std::shared_ptr<const TapConnections>()> m_live; // set while following a running tap
    std::shared_ptr<const TapConnections> m_lastLive;             // the picture shown last
    QTimer m_liveTimer;
};

} // namespace mapi::ui
