// Internal: a small blocking queue between the threads of trace loading and seeking.
#pragma once

#include <condition_variable>
#include <deque>
#include <mutex>

namespace mapi {

template <typename T>
class BoundedQueue
{
public:
    explicit BoundedQueue(size_t capacity)
        : m_capacity(capacity)
    {
    }

    // Blocks while full. Returns false (dropping `item`) once the queue is closed.
    bool push(T &&item)
    {
        std::unique_lock<std::mutex> lock(m_mutex);
        m_notFull.wait(lock, [this] { return m_closed || m_items.size() < m_capacity; });
        if (m_closed)
            return false;
        m_items.push_back(std::move(item));
        m_notEmpty.notify_one();
        return true;
    }

    // Blocks while empty. Returns false when closed and drained.
    bool pop(T &item)
    {
        std::unique_lock<std::mutex> lock(m_mutex);
        m_notEmpty.wait(lock, [this] { return m_closed || !m_items.empty(); });
        return takeFront(item);
    }

    // Non-blocking pop.
    bool tryPop(T &item)
    {
        std::lock_guard<std::mutex> lock(m_mutex);
        return takeFront(item);
    }

    // No more pushes: the producer is done (pop drains what is left) or the consumer gave up.
    void close()
    {
        std::lock_guard<std::mutex> lock(m_mutex);
        m_closed = true;
        m_notEmpty.notify_all();
        m_notFull.notify_all();
    }

    // Closes and drops everything queued (the consumer gave up).
    void abandon()
    {
        std::lock_guard<std::mutex> lock(m_mutex);
        m_closed = true;
        m_items.clear();
        m_notEmpty.notify_all();
        m_notFull.notify_all();
    }

    bool closedAndEmpty()
    {
        std::lock_guard<std::mutex> lock(m_mutex);
        return m_closed && m_items.empty();
    }

private:
    // With m_mutex held.
    bool takeFront(T &item)
    {
        if (m_items.empty())
            return false;
        item = std::move(m_items.front());
        m_items.pop_front();
        m_notFull.notify_one();
        return true;
    }

    std::mutex m_mutex;
    std::condition_variable m_notEmpty;
    std::condition_variable m_notFull;
    std::deque<T> m_items;
    size_t m_capacity;
    bool m_closed = false;
};

} // namespace mapi
