#include "controllers/TapController.h"

#include <QCoreApplication>
#include <QElapsedTimer>
#include <QMetaObject>

namespace mapi::ui {

RunningTap::~RunningTap()
{
    if (m_tap)
        QMetaObject::invokeMethod(m_tap, [this] {
            m_tap->stop();
            // The close frames just sent leave their sockets before the sockets go (a deleted
            // socket drops what it holds): a moment of this thread's loop, not the window's.
            QElapsedTimer grace;
            grace.start();
            while (grace.elapsed() < kStopGraceMs)
                QCoreApplication::processEvents(QEventLoop::AllEvents, 20);
            delete m_tap;
        }, Qt::BlockingQueuedConnection);
    m_thread.quit();
    m_thread.wait();
}

TapController::~TapController()
{
    m_taps.clear();
}

RunningTap *TapController::start(const TapOptions &options, QString *error)
{
    auto running = std::make_unique<RunningTap>();
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
        return nullptr; // `running` goes, and the tap and its thread with it
    }
    running->m_listen = listen;
    running->m_upstream = options.upstream;
    running->m_trace = options.tracePath;
    m_taps.push_back(std::move(running));
    return m_taps.back().get();
}

void TapController::stop(RunningTap *tap)
{
    for (auto it = m_taps.begin(); it != m_taps.end(); ++it)
        if (it->get() == tap) {
            m_taps.erase(it);
            return;
        }
}

} // namespace mapi::ui
