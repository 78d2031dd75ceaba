#pragma once
// Typed, validating reads from a parsed TOML document for loadConfig(). Each read names the key
// in its error, keeps the caller's default when the key is absent and remembers which keys were
// consumed, so that everything left over can be reported as unknown.

#include <initializer_list>
#include <optional>

#include <QDir>
#include <QSet>
#include <QString>
#include <QStringList>

#include <toml++/toml.h>

#include "config.h"

namespace cmq {

class TomlReader final
{
public:
    // fileName is what messages start with; relative paths are resolved against baseDir.
    TomlReader(const toml::table &root, QString fileName, QDir baseDir);

    // Makes `name` the section the read* calls below refer to. Returns false when the section
    // is absent (or is not a table, which is an error); reads then keep their defaults.
    bool enterSection(const char *name);

    void readString(const char *key, QString &out);
    void readBool(const char *key, bool &out);
    // The value must lie in [min, max]; otherwise the error states the range.
    void readInt(const char *key, qint64 &out, qint64 min, qint64 max);
    void readInt(const char *key, int &out, int min, int max);
    void readInt(const char *key, quint16 &out, quint16 min, quint16 max);
    // Must be finite and > 0. TOML integers are accepted too: "global_rps = 100" is natural.
    void readPositiveDouble(const char *key, double &out);
    // The value must be one of `allowed`.
    void readChoice(const char *key, QString &out, std::initializer_list<const char *> allowed);
    // "a.b.c.d:port", "[v6]:port" or "localhost:port"; port 1..65535. No DNS at load time.
    void readAddress(const char *key, HostPort &out);
    // A path; relative ones are made absolute against the config file's directory.
    void readPath(const char *key, QString &out);
    void readStringList(const char *key, QStringList &out);
    // One non-empty string or an array of them (the single form stays valid where a list was
    // added later).
    void readStringOrList(const char *key, QStringList &out);
    // One port or an array of them, each 1..65535.
    void readPortOrList(const char *key, QList<quint16> &out);
    // An array of arrays of non-empty strings: [["a", "b"], ["c"]].
    void readStringGroups(const char *key, QList<QStringList> &out);

    // For checks that span keys. Only the first error is kept: it is the one worth fixing
    // first, and later ones are often its consequences.
    void fail(const QString &key, const QString &what);
    void warn(const QString &key, const QString &what);

    // Warnings for every section and key that no read consumed.
    void reportUnknown();

    bool ok() const { return m_error.isEmpty(); }
    const QString &error() const { return m_error; }
    const QStringList &warnings() const { return m_warnings; }
    const QString &fileName() const { return m_fileName; }

    // "section.key" for the current section.
    QString qualified(const char *key) const;

private:
    // The node for `key` in the current section, marked consumed; null when absent.
    const toml::node *take(const char *key);
    // Error "must be <what> (got <type>)" for a node of the wrong type.
    void failType(const char *key, const char *what, const toml::node &node);
    std::optional<qint64> takeInt(const char *key, qint64 min, qint64 max);

    const toml::table &m_root;
    const toml::table *m_section = nullptr;
    QString m_sectionName;
    QString m_fileName;
    QDir m_baseDir;
    QSet<QString> m_knownSections;
    QSet<QString> m_consumed;
    QString m_error;
    QStringList m_warnings;
};

// Parses "host:port" as readAddress() does; std::nullopt with a reason in `why` otherwise.
std::optional<HostPort> parseHostPort(const QString &text, QString *why);

} // namespace cmq
