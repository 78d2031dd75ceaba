#pragma once
// A real ciphermq-broker process for integration tests: its own config file (built from
// defaults that point at the test certificates, plus per-test overrides), its own data
// directory and a free port. Waits for the "ready" line; kills the process on destruction.

#include <QMap>
#include <QProcess>
#include <QString>
#include <QTemporaryDir>

namespace cmq::test {

class TestDatabase;

class BrokerProcess
{
public:
    BrokerProcess();
    ~BrokerProcess();

    // Override one config value: set("performance.max_queue_size", "5"),
    // set("acl.sender_cns", R"(["a", "b"])"). The value is TOML text.
    void set(const QString &dottedKey, const QString &tomlValue);
    // Use a PostgreSQL database (a fresh one is created per call) instead of SQLite.
    void usePostgres(const QString &databaseName);
    // Use a database on a given server (e.g. a test's private one).
    void usePostgres(const QString &host, quint16 port, const QString &user,
                     const QString &databaseName);
    void usePostgres(const TestDatabase &database);
    // An environment variable for the broker, on top of the inherited environment (e.g. extra
    // ASAN_OPTIONS for one test); takes effect at the next start().
    void setEnvironmentVariable(const QString &name, const QString &value);

    // Runs the broker inside the network namespace `name` (made by `ip netns add`; joined with
    // nsenter, which execs it: pid() stays the broker's); takes effect at the next start().
    void runInNetworkNamespace(const QString &name) { m_namespace = name; }

    QString configText() const;
    QString writeConfig() const; // returns its path

    static QString brokerBinary();
    bool start(int timeoutMs = 60000);
    bool terminate(int timeoutMs = 30000); // SIGTERM, waits for exit
    void kill();                           // SIGKILL, waits for exit
    bool isRunning() const;

    quint16 port() const { return m_port; }
    qint64 pid() const { return m_process.processId(); } // 0 when not running
    QString dataDir() const { return m_dir.path(); }
    QByteArray output(); // everything it printed so far (stdout and stderr)
    int exitCode() const { return m_process.exitCode(); }
    QProcess::ExitStatus exitStatus() const { return m_process.exitStatus(); }

private:
    QString outputPath() const; // the broker's stdout and stderr, this run's

    QTemporaryDir m_dir;
    quint16 m_port = 0;
    QMap<QString, QMap<QString, QString>> m_settings; // section → key → TOML value
    QMap<QString, QString> m_environment;             // set on top of the inherited one
    QString m_namespace;
    QProcess m_process;
    QByteArray m_output;
};

} // namespace cmq::test
