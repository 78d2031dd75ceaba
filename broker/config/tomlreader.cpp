#include "tomlreader.h"

#include <cmath>
#include <limits>

#include <QHostAddress>

namespace cmq {

namespace {

const char *typeName(const toml::node &node)
{
    switch (node.type()) {
    case toml::node_type::table:
        return "table";
    case toml::node_type::array:
        return "array";
    case toml::node_type::string:
        return "string";
    case toml::node_type::integer:
        return "integer";
    case toml::node_type::floating_point:
        return "float";
    case toml::node_type::boolean:
        return "boolean";
    case toml::node_type::date:
        return "date";
    case toml::node_type::time:
        return "time";
    case toml::node_type::date_time:
        return "date-time";
    case toml::node_type::none:
        break;
    }
    return "nothing";
}

QString fromToml(std::string_view s)
{
    return QString::fromUtf8(s.data(), qsizetype(s.size()));
}

// QHostAddress also accepts inet_aton forms ("127.1", "0x7f.0.0.1", "010.0.0.1" = 8.0.0.1),
// which in a config file are far more likely typos than intent, so IPv4 is checked here.
bool isDottedQuad(const QString &host)
{
    const QStringList parts = host.split(u'.');
    if (parts.size() != 4)
        return false;
    for (const QString &part : parts) {
        if (part.isEmpty() || part.size() > 3 || (part.size() > 1 && part.startsWith(u'0')))
            return false;
        for (QChar c : part) {
            if (c < u'0' || c > u'9')
                return false;
        }
        if (part.toInt() > 255)
            return false;
    }
    return true;
}

} // namespace

std::optional<HostPort> parseHostPort(const QString &text, QString *why)
{
    QString host, port;
    HostPort result;
    result.text = text;
    if (text.startsWith(u'[')) {
        const qsizetype close = text.indexOf(QLatin1String("]:"));
        if (close < 0) {
            *why = QStringLiteral("expected \"[IPv6]:port\"");
            return std::nullopt;
        }
        host = text.mid(1, close - 1);
        port = text.mid(close + 2);
        if (!result.host.setAddress(host) ||
            result.host.protocol() != QAbstractSocket::IPv6Protocol) {
            *why = QStringLiteral("\"%1\" is not an IPv6 address").arg(host);
            return std::nullopt;
        }
    } else {
        const qsizetype colon = text.lastIndexOf(u':');
        if (colon < 0) {
            *why = QStringLiteral("expected \"host:port\"");
            return std::nullopt;
        }
        host = text.left(colon);
        port = text.mid(colon + 1);
        if (host.contains(u':')) {
            *why = QStringLiteral("an IPv6 address must be written in brackets, \"[%1]:port\"")
                       .arg(host);
            return std::nullopt;
        }
        if (host == QLatin1String("localhost")) {
            result.host = QHostAddress(QHostAddress::LocalHost);
        } else if (isDottedQuad(host)) {
            result.host.setAddress(host);
        } else {
            *why = QStringLiteral("\"%1\" is not an IPv4 address, [IPv6] address or localhost")
                       .arg(host);
            return std::nullopt;
        }
    }
    bool numeric = !port.isEmpty() && port.size() <= 5;
    for (QChar c : port)
        numeric = numeric && c >= u'0' && c <= u'9';
    const int value = numeric ? port.toInt() : 0;
    if (value < 1 || value > 65535) {
        *why = QStringLiteral("port \"%1\" is not a number between 1 and 65535").arg(port);
        return std::nullopt;
    }
    result.port = quint16(value);
    return result;
}

TomlReader::TomlReader(const toml::table &root, QString fileName, QDir baseDir)
    : m_root(root), m_fileName(std::move(fileName)), m_baseDir(std::move(baseDir))
{
}

bool TomlReader::enterSection(const char *name)
{
    m_sectionName = QString::fromLatin1(name);
    m_knownSections.insert(m_sectionName);
    const toml::node *node = m_root.get(name);
    m_section = node ? node->as_table() : nullptr;
    if (node && !m_section)
        fail(m_sectionName, QStringLiteral("must be a table (got %1)").arg(typeName(*node)));
    return m_section != nullptr;
}

QString TomlReader::qualified(const char *key) const
{
    return m_sectionName + u'.' + QLatin1String(key);
}

const toml::node *TomlReader::take(const char *key)
{
    m_consumed.insert(qualified(key));
    return m_section ? m_section->get(key) : nullptr;
}

void TomlReader::failType(const char *key, const char *what, const toml::node &node)
{
    fail(qualified(key), QStringLiteral("must be %1 (got %2)").arg(what, typeName(node)));
}

void TomlReader::fail(const QString &key, const QString &what)
{
    if (m_error.isEmpty())
        m_error = QStringLiteral("%1: %2: %3").arg(m_fileName, key, what);
}

void TomlReader::warn(const QString &key, const QString &what)
{
    m_warnings.append(QStringLiteral("%1: %2: %3").arg(m_fileName, key, what));
}

void TomlReader::readString(const char *key, QString &out)
{
    if (const toml::node *node = take(key)) {
        if (const auto *s = node->as_string())
            out = fromToml(s->get());
        else
            failType(key, "a string", *node);
    }
}

void TomlReader::readBool(const char *key, bool &out)
{
    if (const toml::node *node = take(key)) {
        if (const auto *b = node->as_boolean())
            out = b->get();
        else
            failType(key, "true or false", *node);
    }
}

std::optional<qint64> TomlReader::takeInt(const char *key, qint64 min, qint64 max)
{
    const toml::node *node = take(key);
    if (!node)
        return std::nullopt;
    const auto *i = node->as_integer();
    if (!i) {
        failType(key, "an integer", *node);
        return std::nullopt;
    }
    const qint64 value = i->get();
    if (value < min || value > max) {
        // "between 1 and 2147483647" says nothing useful about a value that is too small.
        const QString range = value < min && max >= std::numeric_limits<int>::max()
                                  ? QStringLiteral("at least %1").arg(min)
                                  : QStringLiteral("between %1 and %2").arg(min).arg(max);
        fail(qualified(key), QStringLiteral("must be %1 (got %2)").arg(range).arg(value));
        return std::nullopt;
    }
    return value;
}

void TomlReader::readInt(const char *key, qint64 &out, qint64 min, qint64 max)
{
    if (auto v = takeInt(key, min, max))
        out = *v;
}

void TomlReader::readInt(const char *key, int &out, int min, int max)
{
    if (auto v = takeInt(key, min, max))
        out = int(*v);
}

void TomlReader::readInt(const char *key, quint16 &out, quint16 min, quint16 max)
{
    if (auto v = takeInt(key, min, max))
        out = quint16(*v);
}

void TomlReader::readPositiveDouble(const char *key, double &out)
{
    const toml::node *node = take(key);
    if (!node)
        return;
    std::optional<double> value;
    if (const auto *f = node->as_floating_point())
        value = f->get();
    else if (const auto *i = node->as_integer())
        value = double(i->get());
    if (!value)
        return failType(key, "a number", *node);
    if (!std::isfinite(*value) || *value <= 0)
        return fail(qualified(key), QStringLiteral("must be greater than 0 (got %1)").arg(*value));
    out = *value;
}

void TomlReader::readChoice(const char *key, QString &out,
                            std::initializer_list<const char *> allowed)
{
    QString value = out;
    readString(key, value);
    QStringList names;
    for (const char *a : allowed) {
        if (value == QLatin1String(a)) {
            out = value;
            return;
        }
        names.append(u'"' + QLatin1String(a) + u'"');
    }
    const QString expected =
        names.size() == 1 ? names.first() : QStringLiteral("one of ") + names.join(u", ");
    fail(qualified(key), QStringLiteral("must be %1 (got \"%2\")").arg(expected, value));
}

void TomlReader::readAddress(const char *key, HostPort &out)
{
    QString text;
    if (!take(key))
        return;
    readString(key, text);
    if (!ok())
        return;
    QString why;
    if (auto hp = parseHostPort(text, &why))
        out = *hp;
    else
        fail(qualified(key), QStringLiteral("%1 (got \"%2\")").arg(why, text));
}

void TomlReader::readPath(const char *key, QString &out)
{
    readString(key, out);
    if (!out.isEmpty())
        out = QDir::cleanPath(m_baseDir.absoluteFilePath(out));
}

void TomlReader::readStringList(const char *key, QStringList &out)
{
    const toml::node *node = take(key);
    if (!node)
        return;
    const auto *array = node->as_array();
    if (!array)
        return failType(key, "an array of strings", *node);
    QStringList values;
    for (size_t i = 0; i < array->size(); ++i) {
        const auto *s = array->get(i)->as_string();
        if (!s || s->get().empty()) {
            return fail(QStringLiteral("%1[%2]").arg(qualified(key)).arg(i),
                        QStringLiteral("must be a non-empty string"));
        }
        values.append(fromToml(s->get()));
    }
    out = values;
}

void TomlReader::readStringOrList(const char *key, QStringList &out)
{
    const toml::node *node = take(key);
    if (!node)
        return;
    if (node->as_string()) {
        QString value;
        readString(key, value);
        out = QStringList{value};
        return;
    }
    if (!node->as_array())
        return failType(key, "a string or an array of strings", *node);
    readStringList(key, out);
    if (ok() && out.isEmpty())
        fail(qualified(key), QStringLiteral("must not be an empty array"));
}

void TomlReader::readPortOrList(const char *key, QList<quint16> &out)
{
    const toml::node *node = take(key);
    if (!node)
        return;
    if (node->as_integer()) {
        quint16 port = 0;
        readInt(key, port, 1, 65535);
        if (ok())
            out = {port};
        return;
    }
    const auto *array = node->as_array();
    if (!array)
        return failType(key, "an integer or an array of integers", *node);
    if (array->empty())
        return fail(qualified(key), QStringLiteral("must not be an empty array"));
    QList<quint16> ports;
    for (size_t i = 0; i < array->size(); ++i) {
        const auto *value = array->get(i)->as_integer();
        if (!value || value->get() < 1 || value->get() > 65535)
            return fail(QStringLiteral("%1[%2]").arg(qualified(key)).arg(i),
                        QStringLiteral("must be an integer between 1 and 65535"));
        ports.append(quint16(value->get()));
    }
    out = ports;
}

void TomlReader::readStringGroups(const char *key, QList<QStringList> &out)
{
    const toml::node *node = take(key);
    if (!node)
        return;
    const auto *groups = node->as_array();
    if (!groups)
        return failType(key, "an array of arrays of strings", *node);
    QList<QStringList> values;
    for (size_t i = 0; i < groups->size(); ++i) {
        const auto *group = groups->get(i)->as_array();
        if (!group)
            return fail(QStringLiteral("%1[%2]").arg(qualified(key)).arg(i),
                        QStringLiteral("must be an array of strings"));
        QStringList members;
        for (size_t j = 0; j < group->size(); ++j) {
            const auto *s = group->get(j)->as_string();
            if (!s || s->get().empty())
                return fail(QStringLiteral("%1[%2][%3]").arg(qualified(key)).arg(i).arg(j),
                            QStringLiteral("must be a non-empty string"));
            members.append(fromToml(s->get()));
        }
        values.append(members);
    }
    out = values;
}

void TomlReader::reportUnknown()
{
    for (const auto &[sectionKey, node] : m_root) {
        const QString section = fromToml(sectionKey.str());
        if (!m_knownSections.contains(section)) {
            const char *what = node.is_table() ? "section" : "key";
            m_warnings.append(QStringLiteral("%1: unknown %2 \"%3\" (ignored)")
                                  .arg(m_fileName, QLatin1String(what), section));
            continue;
        }
        const auto *table = node.as_table();
        if (!table)
            continue;
        for (const auto &[key, value] : *table) {
            const QString name = section + u'.' + fromToml(key.str());
            if (!m_consumed.contains(name)) {
                m_warnings.append(
                    QStringLiteral("%1: unknown key \"%2\" (ignored)").arg(m_fileName, name));
            }
        }
    }
}

} // namespace cmq
