#pragma once
// Functions of a shared library that a Qt SQL plugin has already loaded (libpq for QPSQL,
// libsqlite3 for QSQLITE), looked up at run time: the broker needs neither the library's
// headers nor a link dependency of its own (storage/libpq.h, storage/sqliteapi.h).

#include <atomic>
#include <type_traits>

#include <QLibrary>
#include <QString>

namespace cmq::storage {

class LoadedLibrary
{
public:
    LoadedLibrary(const QString &name, int majorVersion) : m_library(name, majorVersion)
    {
        m_ok = m_library.load(); // already loaded: this only finds it
    }
    // Sets `function` to the library's `name`; ok() turns false if one is missing.
    template <typename Function>
    void get(Function &function, const char *name)
    {
        function = reinterpret_cast<std::remove_reference_t<Function>>(m_library.resolve(name));
        m_ok = m_ok && function != nullptr;
    }
    bool ok() const { return m_ok; }
    QString errorString() const { return m_library.errorString(); }

private:
    QLibrary m_library;
    bool m_ok = false;
};

// A library's API as `Resolve` finds it, looked up once on first use; null when a function is
// missing or while `enabled` is off (tests switch it off to run the QtSql fallbacks).
template <typename Api, Api (*Resolve)(bool *ok)>
const Api *resolvedOnce(const std::atomic<bool> &enabled)
{
    if (!enabled)
        return nullptr;
    static bool ok = false;
    static const Api resolved = Resolve(&ok);
    return ok ? &resolved : nullptr;
}

} // namespace cmq::storage
