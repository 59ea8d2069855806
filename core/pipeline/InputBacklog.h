// A bound on the model inputs between a producer thread (the client decoding frames) and the
// thread that applies them (the session's, the GUI thread in the window): the producer adds
// each batch it hands out, the consumer subtracts what it applied (or dropped), and the producer
// waits in waitForRoom() while the backlog is over its limit. The wait is what holds the socket
// back: frames stay in the kernel's buffers and TCP slows the server down.
//
// A consumer that must run code in the producer's thread and wait for it (a blocking queued
// call) sets hold(false) first, or the two threads would wait for each other.
//
// Thread: add() and waitForRoom() in the producer's thread; the rest in any thread.
#pragma once

#include <QtGlobal>

#include <algorithm>
#include <condition_variable>
#include <mutex>

namespace mapi {

class InputBacklog
{
public:
    explicit InputBacklog(qint64 limit)
        : m_limit(limit)
    {
    }

    qint64 limit() const { return m_limit; }
    qint64 size() const
    {
        std::lock_guard<std::mutex> lock(m_mutex);
        return m_size;
    }
    // Times the producer had to wait (for benchmarks and the status of a flood).
    qint64 waits() const
    {
        std::lock_guard<std::mutex> lock(m_mutex);
        return m_waits;
    }

    void add(qint64 inputs)
    {
        std::lock_guard<std::mutex> lock(m_mutex);
        m_size += inputs;
    }
    void remove(qint64 inputs)
    {
        {
            std::lock_guard<std::mutex> lock(m_mutex);
            m_size = std::max<qint64>(0, m_size - inputs);
        }
        m_roomOrRelease.notify_all();
    }
    void clear() { remove(m_limit + size()); }
    // false: the producer does not wait (and a waiting one returns) until hold(true).
    void hold(bool on)
    {
        {
            std::lock_guard<std::mutex> lock(m_mutex);
            m_held = on;
        }
        m_roomOrRelease.notify_all();
    }

    // Returns once the backlog is at most half its limit (or not held).
    void waitForRoom()
    {
        std::unique_lock<std::mutex> lock(m_mutex);
        if (m_size <= m_limit || !m_held)
            return;
        ++m_waits;
        m_roomOrRelease.wait(lock, [this] { return m_size <= m_limit / 2 || !m_held; });
    }

private:
    const qint64 m_limit;
    mutable std::mutex m_mutex;
    std::condition_variable m_roomOrRelease;
    qint64 m_size = 0;
    qint64 m_waits = 0;
    bool m_held = true;
};

} // namespace mapi
