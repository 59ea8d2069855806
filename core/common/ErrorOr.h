// A typed result: a value, or the reason there is none. In the style of Orbit's
// ErrorMessageOr<T>: the reason travels with the result instead of through a `QString *error`
// out-parameter beside a bool or a -1, so a caller cannot use a value that is not there, nor
// forget that there may be none.
//
//   ErrorOr<QList<Bookmark>> marks = loadBookmarks(path);
//   if (!marks)
//       return fail(marks.error());
//   use(*marks);
//
//   return Failure{QStringLiteral("cannot read %1").arg(path)};  // in a function returning ErrorOr<T>
#pragma once

#include <QString>

#include <optional>
#include <utility>

namespace mapi {

// Why there is no value: for the operator, a sentence fragment ("cannot read x: permission denied").
struct Failure
{
    QString why;
};

template<typename T>
class ErrorOr
{
public:
    ErrorOr(T value) // implicit: `return value;`
        : m_value(std::move(value))
    {
    }
    ErrorOr(Failure failure) // implicit: `return Failure{...};`
        : m_error(std::move(failure.why))
    {
    }

    bool ok() const { return m_value.has_value(); }
    explicit operator bool() const { return ok(); }

    // The value; only when ok().
    const T &value() const & { return *m_value; }
    T &value() & { return *m_value; }
    T &&value() && { return std::move(*m_value); }
    const T &operator*() const & { return *m_value; }
    T &operator*() & { return *m_value; }
    const T *operator->() const { return &*m_value; }

    // Why there is no value; empty when ok().
    const QString &error() const { return m_error; }

private:
    std::optional<T> m_value;
    QString m_error;
};

} // namespace mapi
