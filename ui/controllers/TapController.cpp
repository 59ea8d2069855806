#include "controllers/TapController.h"

#include <QEventLoop>
#include <QMetaObject>
#include <QTimer>

namespace mapi::ui {

RunningTap::~RunningTap()
{
    if (m_tap)
        QMetaObject::invokeMethod(m_tap, [this] {
            m_tap->stop();
            // The close frames just sent leave their sockets before the sockets go (a deleted
            // socket drops what it holds): this thread's loop turns a moment, without spinning.
            QEventLoop grace;
            QTimer::singleShot(kStopGraceMs, &grace, &QEventLoop::quit);
            grace.exec();
            m_tap->deleteLater(); // after this call returns, in this thread
        }, Qt::BlockingQueuedConnection);
    m_thread.quit(); // the deferred delete runs as the thread's loop ends
    m_thread.wait();
}

TapController::~TapController()
{
    m_taps.clear();
}

std::weak_ptr<RunningTap> TapController::start(const TapOptions &options, QString *error)
{
    auto running = std::make_shared<RunningTap>();
    running->m_thread.setObjectName(QStringLiteral("tap"));
    running->m_thread.start();
    bool started = false;
    QString why;
    QUrl listen;
    auto *tap = new WebSocketTap;
    tap->setFollowConnections(true);
    tap->moveToThread(&running->m_thread);
    // Started in its thread: its sockets and timers belong there.
    QMetaObject::invokeMethod(tap, [&] {
        started = tap->start(options, &why);
        listen = tap->listenUrl();
    }, Qt::BlockingQueuedConnection);
    running->m_tap = tap; // stopped and deleted in its thread by ~RunningTap, also when it failed
    if (!started) {
        if (error)
            *error = why;
        return {}; // `running` goes, and the tap and its thread with it
    }
    running->m_listen = listen;
    running->m_upstream = options.upstream;
    running->m_trace = options.tracePath;
    m_taps.push_back(running);
    return running;
}

void TapController::stop(const std::weak_ptr<RunningTap> &tap)
{
    const std::shared_ptr<RunningTap> held = tap.lock();
    if (!held)
        return;
    for (auto it = m_taps.begin(); it != m_taps.end(); ++it)
        if (*it == held) {
            m_taps.erase(it);
            return;
        }
}

} // namespace mapi::ui
