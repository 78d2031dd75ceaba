// SocketWatch: a socket's readiness from the thread's epoll set, with QSocketNotifier's
// semantics (level-triggered, only while enabled). Driven with socket pairs.
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <QFile>
#include <QRegularExpression>
#include <QSignalSpy>
#include <QTemporaryFile>
#include <QTest>

#include "net/socketwatch.h"

using namespace cmq;

namespace {

constexpr int Timeout = 5000;

struct SocketPair
{
    int fd[2] = {-1, -1};
    SocketPair() { ::socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, fd); }
    ~SocketPair()
    {
        for (int f : fd) {
            if (f >= 0)
                ::close(f);
        }
    }
    void send(const char *text) const { QVERIFY(::write(fd[1], text, strlen(text)) > 0); }
    void drain() const
    {
        char buffer[256];
        while (::read(fd[0], buffer, sizeof buffer) > 0) {
        }
    }
};

// Lets the event loop run passes for a while without waiting on any condition: used only to
// show that something does NOT happen.
void runPasses(int ms)
{
    QElapsedTimer timer;
    timer.start();
    while (timer.elapsed() < ms)
        QCoreApplication::processEvents(QEventLoop::AllEvents, 10);
}

} // namespace

class tst_SocketWatch : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void readableWhileDataWaits();
    void disabledReadingHearsNothing();
    void writableOnlyWhenEnabled();
    void endOfStreamIsReadable();
    void deletedByAnEarlierHandler();
    void manyWatchesOneSet();
    void descriptorTheSetRefuses();
    void noDescriptorLeftForTheSet();
};

// Level-triggered: it fires again on the next pass while the data is not read.
void tst_SocketWatch::readableWhileDataWaits()
{
    SocketPair pair;
    SocketWatch watch(pair.fd[0]);
    QSignalSpy readable(&watch, &SocketWatch::readable);
    runPasses(50);
    QCOMPARE(readable.count(), 0);
    pair.send("x");
    QTRY_VERIFY_WITH_TIMEOUT(readable.count() >= 2, Timeout);
    pair.drain();
    readable.clear();
    runPasses(50);
    QCOMPARE(readable.count(), 0);
}

// A reader paused at its limit must not hear of data, nor of a hang-up, until it resumes.
void tst_SocketWatch::disabledReadingHearsNothing()
{
    SocketPair pair;
    SocketWatch watch(pair.fd[0]);
    QSignalSpy readable(&watch, &SocketWatch::readable);
    watch.setReadEnabled(false);
    pair.send("x");
    ::shutdown(pair.fd[1], SHUT_RDWR);
    runPasses(50);
    QCOMPARE(readable.count(), 0);
    watch.setReadEnabled(true);
    QTRY_VERIFY_WITH_TIMEOUT(readable.count() >= 1, Timeout);
}

void tst_SocketWatch::writableOnlyWhenEnabled()
{
    SocketPair pair;
    SocketWatch watch(pair.fd[0]);
    QSignalSpy writable(&watch, &SocketWatch::writable);
    runPasses(50);
    QCOMPARE(writable.count(), 0);
    QVERIFY(!watch.isWriteEnabled());
    watch.setWriteEnabled(true);
    QTRY_VERIFY_WITH_TIMEOUT(writable.count() >= 1, Timeout);
    watch.setWriteEnabled(false);
    writable.clear();
    runPasses(50);
    QCOMPARE(writable.count(), 0);
}

void tst_SocketWatch::endOfStreamIsReadable()
{
    SocketPair pair;
    SocketWatch watch(pair.fd[0]);
    QSignalSpy readable(&watch, &SocketWatch::readable);
    ::close(pair.fd[1]);
    pair.fd[1] = -1;
    QTRY_VERIFY_WITH_TIMEOUT(readable.count() >= 1, Timeout);
    char byte;
    QCOMPARE(::read(pair.fd[0], &byte, 1), ssize_t(0));
}

// Two sockets ready in the same pass; the first one's handler deletes the other's watch (a
// session closing another), and then its own: nothing is delivered to a deleted watch, and the
// thread's set, gone with its last watch, is made again by the next one.
void tst_SocketWatch::deletedByAnEarlierHandler()
{
    SocketPair a, b;
    auto *first = new SocketWatch(a.fd[0]);
    auto *second = new SocketWatch(b.fd[0]);
    int calls = 0;
    auto closeBoth = [&] {
        ++calls;
        delete first;
        first = nullptr;
        delete second;
        second = nullptr;
    };
    connect(first, &SocketWatch::readable, closeBoth);
    connect(second, &SocketWatch::readable, closeBoth);
    a.send("x");
    b.send("y");
    QTRY_COMPARE_WITH_TIMEOUT(calls, 1, Timeout);
    runPasses(50);
    QCOMPARE(calls, 1);

    SocketPair c;
    SocketWatch again(c.fd[0]);
    QSignalSpy readable(&again, &SocketWatch::readable);
    c.send("z");
    QTRY_VERIFY_WITH_TIMEOUT(readable.count() >= 1, Timeout);
}

// More ready sockets than one pass takes (256): every one is heard.
void tst_SocketWatch::manyWatchesOneSet()
{
    constexpr int Count = 300; // 600 descriptors: within the usual limit of 1,024
    std::vector<std::unique_ptr<SocketPair>> pairs;
    std::vector<std::unique_ptr<SocketWatch>> watches;
    QSet<int> heard;
    for (int i = 0; i < Count; ++i) {
        pairs.push_back(std::make_unique<SocketPair>());
        watches.push_back(std::make_unique<SocketWatch>(pairs.back()->fd[0]));
        SocketWatch *watch = watches.back().get();
        connect(watch, &SocketWatch::readable, this, [&heard, watch, i] {
            heard.insert(i);
            watch->setReadEnabled(false);
        });
        pairs.back()->send("x");
    }
    QTRY_COMPARE_WITH_TIMEOUT(heard.size(), Count, Timeout);
}

// epoll refuses a regular file (EPERM): the watch must still hear it, through a notifier of its
// own, and say so in the log. Before the fallback such a watch never fired.
void tst_SocketWatch::descriptorTheSetRefuses()
{
    QTemporaryFile file;
    QVERIFY(file.open());
    QVERIFY(file.write("data") == 4 && file.flush());
    const int fd = ::open(QFile::encodeName(file.fileName()).constData(), O_RDONLY | O_CLOEXEC);
    QVERIFY(fd >= 0);
    QTest::ignoreMessage(QtWarningMsg, QRegularExpression("cannot join the epoll set"));
    {
        SocketWatch watch(fd);
        QSignalSpy readable(&watch, &SocketWatch::readable);
        QTRY_VERIFY_WITH_TIMEOUT(readable.count() >= 1, Timeout);
        watch.setReadEnabled(false);
        readable.clear();
        runPasses(50);
        QCOMPARE(readable.count(), 0); // disabled still means nothing heard
    }
    ::close(fd);
}

// The thread's set is made with its first watch. With no descriptor left for it (the open-file
// limit reached), the watch falls back to a notifier and its socket is still served.
void tst_SocketWatch::noDescriptorLeftForTheSet()
{
    SocketPair pair;
    rlimit saved{};
    QVERIFY(::getrlimit(RLIMIT_NOFILE, &saved) == 0);
    // Every descriptor up to a lowered limit taken, so epoll_create1 meets EMFILE.
    rlimit lowered = saved;
    lowered.rlim_cur = qMin<rlim_t>(saved.rlim_cur, rlim_t(qMax(pair.fd[0], pair.fd[1]) + 64));
    QVERIFY(::setrlimit(RLIMIT_NOFILE, &lowered) == 0);
    std::vector<int> fillers;
    for (int fd; (fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC)) >= 0;)
        fillers.push_back(fd);
    QTest::ignoreMessage(QtWarningMsg, QRegularExpression("cannot join the epoll set"));
    auto watch = std::make_unique<SocketWatch>(pair.fd[0]);
    for (int fd : fillers)
        ::close(fd);
    QVERIFY(::setrlimit(RLIMIT_NOFILE, &saved) == 0);

    QSignalSpy readable(watch.get(), &SocketWatch::readable);
    pair.send("x");
    QTRY_VERIFY_WITH_TIMEOUT(readable.count() >= 1, Timeout);
    watch.reset();

    // With the descriptors back, the next watch makes a working set again.
    SocketPair other;
    SocketWatch again(other.fd[0]);
    QSignalSpy heard(&again, &SocketWatch::readable);
    other.send("y");
    QTRY_VERIFY_WITH_TIMEOUT(heard.count() >= 1, Timeout);
}

QTEST_GUILESS_MAIN(tst_SocketWatch)
#include "tst_socketwatch.moc"
