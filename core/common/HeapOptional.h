// HeapOptional<T>: the part of std::optional's interface that MapEvent's users need, with the value on the
// heap. For a large member that is absent most of the time: the owner stays one pointer larger
// instead of sizeof(T) larger, so moving, copying and destroying it costs a pointer when empty.
// Why: MapEvent carried its agent, scope and message inline (1,224 bytes an event, moved three
// times between decoding and applying); most events carry at most one of them.
// Copies are deep (value semantics, as std::optional), so it fits in implicitly shared lists.
// Not thread-safe beyond what T is; a moved-from HeapOptional is empty.
#pragma once

#include <memory>
#include <utility>

namespace mapi {

template<typename T>
class HeapOptional
{
public:
    HeapOptional() = default;
    HeapOptional(const T &value) : m_value(std::make_unique<T>(value)) {}
    HeapOptional(T &&value) : m_value(std::make_unique<T>(std::move(value))) {}
    HeapOptional(const HeapOptional &other) : m_value(other.m_value ? std::make_unique<T>(*other.m_value) : nullptr) {}
    HeapOptional(HeapOptional &&other) noexcept = default;
    HeapOptional &operator=(const HeapOptional &other)
    {
        if (this != &other)
            m_value = other.m_value ? std::make_unique<T>(*other.m_value) : nullptr;
        return *this;
    }
    HeapOptional &operator=(HeapOptional &&other) noexcept = default;
    HeapOptional &operator=(const T &value) { return assign(value); }
    HeapOptional &operator=(T &&value) { return assign(std::move(value)); }

    bool has_value() const { return m_value != nullptr; }
    explicit operator bool() const { return has_value(); }
    // Like std::optional's: undefined when empty (callers check first).
    T &operator*() { return *m_value; }
    const T &operator*() const { return *m_value; }
    T *operator->() { return m_value.get(); }
    const T *operator->() const { return m_value.get(); }

private:
    template<typename U>
    HeapOptional &assign(U &&value)
    {
        if (m_value)
            *m_value = std::forward<U>(value); // reuses the allocation
        else
            m_value = std::make_unique<T>(std::forward<U>(value));
        return *this;
    }

    std::unique_ptr<T> m_value;
};

} // namespace mapi
