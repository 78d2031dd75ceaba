// The broker under a Type=notify systemd unit: it sends READY=1 on $NOTIFY_SOCKET only once it
// serves clients, STOPPING=1 on SIGTERM, works with path and abstract socket addresses the way
// systemd hands them out, and still starts when the socket is unusable.

#include <cerrno>
#include <cstddef>
#include <cstring>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <QTemporaryDir>
#include <QtTest>

#include "brokerprocess.h"
#include "testclient.h"

using cmq::test::BrokerProcess;
using cmq::test::TestClient;

namespace {

// The service manager's end: a bound unix datagram socket.
class NotifySocket
{
public:
    // `address` is what goes into NOTIFY_SOCKET: a path, or "@name" for the abstract namespace.
    explicit NotifySocket(const QByteArray &address) : m_address(address)
    {
        m_fd = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        sockaddr_un addr = {};
        addr.sun_family = AF_UNIX;
        std::memcpy(addr.sun_path, address.constData(), size_t(address.size()));
        socklen_t length = socklen_t(offsetof(sockaddr_un, sun_path) + size_t(address.size()));
        if (address.startsWith('@'))
            addr.sun_path[0] = '\0';
        else
            length += 1;
        m_bound = m_fd >= 0 && ::bind(m_fd, reinterpret_cast<sockaddr *>(&addr), length) == 0;
    }
    ~NotifySocket()
    {
        if (m_fd >= 0)
            ::close(m_fd);
    }
    NotifySocket(const NotifySocket &) = delete;
    NotifySocket &operator=(const NotifySocket &) = delete;

    bool isBound() const { return m_bound; }
    QByteArray address() const { return m_address; }

    // The next datagram, or a null QByteArray when none arrives in time.
    QByteArray receive(int timeoutMs)
    {
        pollfd p = {m_fd, POLLIN, 0};
        if (::poll(&p, 1, timeoutMs) != 1)
            return {};
        char buffer[4096];
        const ssize_t size = ::recv(m_fd, buffer, sizeof buffer, 0);
        return size < 0 ? QByteArray() : QByteArray(buffer, size);
    }

private:
    QByteArray m_address;
    int m_fd = -1;
    bool m_bound = false;
};

// Sets NOTIFY_SOCKET for the broker process started in its scope (QProcess inherits the
// environment at start()).
class ScopedNotifyEnv
{
public:
    explicit ScopedNotifyEnv(const QByteArray &value) { qputenv("NOTIFY_SOCKET", value); }
    ~ScopedNotifyEnv() { qunsetenv("NOTIFY_SOCKET"); }
    ScopedNotifyEnv(const ScopedNotifyEnv &) = delete;
    ScopedNotifyEnv &operator=(const ScopedNotifyEnv &) = delete;
};

} // namespace

class tst_SdNotify : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void readyThenStopping_data();
    void readyThenStopping();
    void unusableSocketDoesNotStopStartup();
};

void tst_SdNotify::readyThenStopping_data()
{
    QTest::addColumn<bool>("abstract");
    QTest::newRow("socket path") << false;
    QTest::newRow("abstract socket") << true;
}

void tst_SdNotify::readyThenStopping()
{
    QFETCH(bool, abstract);
    QTemporaryDir dir;
    const QByteArray address = abstract ? "@ciphermq-test-notify-" + QByteArray::number(::getpid())
                                        : QFile::encodeName(dir.filePath(QStringLiteral("notify")));
    NotifySocket socket(address);
    QVERIFY(socket.isBound());

    BrokerProcess broker;
    {
        ScopedNotifyEnv env(address);
        QVERIFY2(broker.start(), broker.output().constData());
    }
    const QByteArray ready = socket.receive(15000);
    QVERIFY2(ready.split('\n').contains("READY=1"), ready.constData());
    const QByteArray status = "STATUS=Ready on 127.0.0.1:" + QByteArray::number(broker.port());
    QVERIFY2(ready.split('\n').contains(status), ready.constData());
    // Only once: a second READY would tell systemd about a reload that never happened.
    QVERIFY(socket.receive(300).isNull());

    // READY meant it: a client is served right away.
    TestClient client("sender_1");
    QVERIFY2(client.connectTo(broker.port()), qPrintable(client.errorString()));
    QCOMPARE(client.request("get_public_key nobody"), "Public key not found");
    client.disconnect();

    QVERIFY(broker.terminate());
    QCOMPARE(broker.exitCode(), 0);
    const QByteArray stopping = socket.receive(5000);
    QVERIFY2(stopping.split('\n').contains("STOPPING=1"), stopping.constData());
}

void tst_SdNotify::unusableSocketDoesNotStopStartup()
{
    QTemporaryDir dir;
    BrokerProcess broker;
    {
        ScopedNotifyEnv env(QFile::encodeName(dir.filePath(QStringLiteral("nobody-listens"))));
        QVERIFY2(broker.start(), broker.output().constData());
    }
    QTRY_VERIFY2_WITH_TIMEOUT(broker.output().contains("warning: cannot notify systemd"),
                              broker.output().constData(), 5000);
    TestClient client("sender_1");
    QVERIFY2(client.connectTo(broker.port()), qPrintable(client.errorString()));
    QCOMPARE(client.request("get_public_key nobody"), "Public key not found");
    QVERIFY(broker.terminate());
    QCOMPARE(broker.exitCode(), 0);
}

QTEST_GUILESS_MAIN(tst_SdNotify)
#include "tst_31_sdnotify.moc"
