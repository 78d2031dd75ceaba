#pragma once
// What the config tests share: a config document built from the minimal valid one and edited
// key by key, and a directory holding the files it names, where a test writes its config.

#include <QDir>
#include <QFile>
#include <QMap>
#include <QString>
#include <QTemporaryDir>

namespace configtest {

QString str(const QString &s)
{
    return u'"' + s + u'"';
}

QByteArray keyBytes(char fill)
{
    return QByteArray(32, fill);
}

// A config document built from the minimal valid one, edited key by key. Section "" holds
// root-level keys, which TOML requires before the first [section].
class Doc
{
public:
    Doc()
    {
        m_sections["server"];
        m_sections["tls"] = {{"cert_path", str("certs/server.crt")},
                             {"key_path", str("certs/server.key")},
                             {"ca_cert_path", str("certs/ca.crt")}};
        m_sections["encryption"] = {{"aes_key", str(keyBytes('a').toBase64())}};
    }
    Doc &set(const QString &section, const QString &key, const QString &value)
    {
        m_sections[section][key] = value;
        return *this;
    }
    Doc &remove(const QString &section, const QString &key = {})
    {
        if (key.isEmpty())
            m_sections.remove(section);
        else
            m_sections[section].remove(key);
        return *this;
    }
    QString text() const
    {
        QString out;
        for (auto s = m_sections.cbegin(); s != m_sections.cend(); ++s) {
            if (!s.key().isEmpty())
                out += QStringLiteral("[%1]\n").arg(s.key());
            for (auto k = s->cbegin(); k != s->cend(); ++k)
                out += QStringLiteral("%1 = %2\n").arg(k.key(), k.value());
        }
        return out;
    }

private:
    QMap<QString, QMap<QString, QString>> m_sections;
};

// A temporary directory with placeholder certificates under certs/ (loadConfig only checks that
// the files can be read; their content is the TLS code's job).
class ConfigDir
{
public:
    bool prepare()
    {
        if (!m_dir.isValid() || !QDir(path()).mkpath(QStringLiteral("certs")))
            return false;
        for (const char *name : {"server.crt", "server.key", "ca.crt", "crl.pem"}) {
            QFile pem(path() + QStringLiteral("/certs/") + QLatin1String(name));
            if (!pem.open(QIODevice::WriteOnly))
                return false;
            pem.write("-----BEGIN PLACEHOLDER-----\nAAAA\n-----END PLACEHOLDER-----\n");
        }
        return true;
    }

    // Writes `text` ($DIR replaced) to `name` in the directory and returns its path.
    QString write(const QString &text, const QString &name = QStringLiteral("config.toml")) const
    {
        const QString file = QDir(path()).filePath(name);
        QFile out(file);
        if (!out.open(QIODevice::WriteOnly | QIODevice::Truncate))
            qFatal("cannot write %s", qPrintable(file));
        out.write(QString(text).replace(QLatin1String("$DIR"), path()).toUtf8());
        return file;
    }

    QString path() const { return m_dir.path(); }

private:
    QTemporaryDir m_dir;
};

} // namespace configtest
