#pragma once
// A value or a human-readable error: how fallible calls report failure without exceptions.

#include <optional>
#include <utility>

#include <QString>

namespace cmq {

template <typename T>
class [[nodiscard]] Result
{
public:
    Result(T value) : m_value(std::move(value)) {}
    static Result failure(QString error)
    {
        Result r;
        r.m_error = std::move(error);
        return r;
    }

    bool ok() const { return m_value.has_value(); }
    explicit operator bool() const { return ok(); }
    const T &value() const & { return *m_value; }
    T &value() & { return *m_value; }
    T &&value() && { return std::move(*m_value); }
    const T *operator->() const { return &*m_value; }
    T *operator->() { return &*m_value; }
    const QString &error() const { return m_error; }

private:
    Result() = default;
    std::optional<T> m_value;
    QString m_error;
};

// For calls that return nothing on success.
struct Ok {};
using Status = Result<Ok>;
inline Status success() { return Ok{}; }
inline Status failure(QString error) { return Status::failure(std::move(error)); }

} // namespace cmq
