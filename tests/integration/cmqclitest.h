#pragma once
// Shared by the cmq command-line tests (tst_24_cmq_cli, tst_71_cmq_cli_features): a broker for
// the test identities (svc-a, svc-b and svc-c in one presence group), X25519 keys made with
// `cmq keygen` for svc-a, svc-b, svc-c and receiver_2, an environment without the user's config
// or CMQ_* settings, and running cmq against that broker. A test class derives from QObject and
// from CmqCliTest and calls setUpCmqCli() from its initTestCase().

#include <QProcessEnvironment>
#include <QTemporaryDir>
#include <QtTest>

#include "brokerprocess.h"
#include "clienttest.h"
#include "processrun.h"

namespace cmq::test {

class CmqCliTest
{
protected:
    static constexpr int Patience = 60000;
    using Run = ProcessRun;

    void setUpCmqCli()
    {
        m_broker.set("acl.presence_groups", R"([["svc-a", "svc-b", "svc-c"]])");
        m_broker.set("acl.presence_debounce_ms", "200");
        QVERIFY2(m_broker.start(), m_broker.output().constData());
        // No user config, no CMQ_* settings from the environment of whoever runs the tests.
        m_env = QProcessEnvironment::systemEnvironment();
        for (const QString &key : m_env.keys())
            if (key.startsWith("CMQ_"))
                m_env.remove(key);
        m_env.insert("HOME", m_dir.filePath("home"));
        for (const QString name : {"svc-a", "svc-b", "svc-c", "receiver_2"})
            QCOMPARE(cmq({"keygen", "--identity", identity(name)}).exitCode, 0);
    }

    Run cmq(const QStringList &args, const QByteArray &input = {}, int timeoutMs = Patience)
    {
        return runProcess(QStringLiteral(CMQ_CLI_BIN), args, m_env, input, timeoutMs);
    }

    void startCmq(LineProcess &process, const QStringList &args)
    {
        process.process.setProcessEnvironment(m_env);
        process.start(QStringLiteral(CMQ_CLI_BIN), args);
    }

    // The connection options of an identity against the broker, with its key from keygen.
    QStringList as(const QString &name) const
    {
        return cmqConnection(name, {m_broker.port()}) +
               QStringList{"--identity", identity(name), "--connect-timeout", "20"};
    }

    QString identity(const QString &name) const { return m_dir.filePath("id-" + name); }

    QTemporaryDir m_dir;
    BrokerProcess m_broker;
    QProcessEnvironment m_env;
};

} // namespace cmq::test
