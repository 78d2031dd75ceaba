// libFuzzer target for the broker's configuration loader (TOML parse and validation). Each
// input is written to a config.toml in a private temporary directory that also holds the
// certificate files the [tls] section must name, then loaded. Besides crashes and sanitizer
// reports (toml++ throws on bad syntax: nothing may escape loadConfig) it traps when an
// accepted configuration breaks a documented range or a refusal does not name the file.

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <limits>

#include <QByteArray>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QString>

#include "config/config.h"
#include "fuzzcheck.h"

using namespace cmq;

namespace {

// Created once per process and removed at exit; relative paths in the inputs resolve into it.
class Workspace
{
public:
    Workspace()
    {
        QByteArray base = qgetenv("TMPDIR");
        if (base.isEmpty())
            base = "/tmp";
        QByteArray pattern = base + "/cmq-fuzz-config-XXXXXX";
        CHECK(mkdtemp(pattern.data()) != nullptr);
        m_dir = QString::fromLocal8Bit(pattern);
        for (const char *name : {"cert.pem", "key.pem", "ca.pem", "crl.pem"}) {
            QFile file(m_dir + QLatin1Char('/') + QLatin1String(name));
            CHECK(file.open(QIODevice::WriteOnly));
        }
        m_path = m_dir + QStringLiteral("/config.toml");
    }
    ~Workspace() { QDir(m_dir).removeRecursively(); }

    const QString &configPath() const { return m_path; }

private:
    QString m_dir;
    QString m_path;
};

void checkAccepted(const Config &c)
{
    CHECK(QFileInfo(c.sourcePath).isAbsolute());
    CHECK(c.server.connectionType == QLatin1String("tls"));
    CHECK(c.server.address.port >= 1);
    CHECK(c.server.maxLineBytes >= 1024 && c.server.maxLineBytes <= 64 * 1024 * 1024);
    CHECK(c.server.outputBufferBytes >= 64 * 1024 &&
          c.server.outputBufferBytes <= 1024 * 1024 * 1024);
    CHECK(c.server.handshakeTimeoutMs >= 1 && c.server.maxConnections >= 1 &&
          c.server.maxHandshakes >= 1 && c.server.maxHandshakesPerIp >= 1);
    for (const QString *path : {&c.tls.certPath, &c.tls.keyPath, &c.tls.caCertPath})
        CHECK(!path->isEmpty() && QFileInfo(*path).isAbsolute());
    CHECK(c.tls.crlPath.isEmpty() || QFileInfo(c.tls.crlPath).isAbsolute());
    CHECK(!c.logging.infoFilePath.isEmpty() && !c.logging.debugFilePath.isEmpty() &&
          !c.logging.errorFilePath.isEmpty());
    CHECK(c.logging.maxSizeMb >= 1 && c.logging.maxFiles >= 0);
    CHECK(c.database.driver == QLatin1String("sqlite") ||
          c.database.driver == QLatin1String("postgresql"));
    if (c.database.driver == QLatin1String("sqlite"))
        CHECK(!c.database.path.isEmpty());
    else
        CHECK(!c.database.hosts.isEmpty() && !c.database.hosts.first().isEmpty() &&
              !c.database.user.isEmpty() && !c.database.dbname.isEmpty());
    CHECK(!c.database.ports.isEmpty() && c.database.ports.first() >= 1 &&
          c.database.connectAttempts >= 1 && c.database.connectRetryDelayMs >= 0);
    CHECK(c.encryption.aesKey.size() == 32);
    const int maxSeconds = std::numeric_limits<int>::max() / 1000;
    for (const int seconds :
         {c.performance.heartbeatTimeout, c.performance.cleanupInterval,
          c.performance.consumerCleanupInterval, c.performance.idleTimeoutSec,
          c.performance.ackTimeoutSec})
        CHECK(seconds >= 1 && seconds <= maxSeconds);
    CHECK(c.performance.maxQueueSize >= 1);
    CHECK(c.performance.defaultPrefetch >= 0 && c.performance.defaultPrefetch <= 65535);
    CHECK(c.performance.overflowPolicy == QLatin1String("drop-head") ||
          c.performance.overflowPolicy == QLatin1String("reject-publish"));
    if (c.admin.metricsHttpAddress.port != 0 && !c.admin.metricsHttpTls)
        CHECK(c.admin.metricsHttpAddress.host.isLoopback());
    for (const double rate :
         {c.rateLimit.globalRps, c.rateLimit.globalBurst, c.rateLimit.publishRps,
          c.rateLimit.publishBurst, c.rateLimit.ipGlobalRps, c.rateLimit.ipGlobalBurst,
          c.rateLimit.ipPublishRps, c.rateLimit.ipPublishBurst})
        CHECK(std::isfinite(rate) && rate > 0);
    CHECK(c.rateLimit.maxConnectionsPerIp >= 1 && c.rateLimit.maxConnectionsPerCn >= 1);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const Workspace workspace;
    {
        QFile file(workspace.configPath());
        CHECK(file.open(QIODevice::WriteOnly | QIODevice::Truncate));
        CHECK(file.write(reinterpret_cast<const char *>(data), qint64(size)) == qint64(size));
    }
    const Result<LoadedConfig> loaded = loadConfig(workspace.configPath());
    if (!loaded) {
        CHECK(loaded.error().startsWith(workspace.configPath()));
        return 0;
    }
    checkAccepted(loaded->config);
    for (const QString &warning : loaded->warnings)
        CHECK(warning.startsWith(workspace.configPath()));
    return 0;
}
