// AclManager: roles from the configured CN lists (union for a CN in several), the command matrix
// for every command and role (docs/ACL.md), and the receivers' queue and routing-key namespace.

#include <QTest>

#include "acl/aclmanager.h"
#include "refusaltext.h"

using cmq::AclManager;
using cmq::Role;
using cmq::Roles;
using cmq::protocol::Command;

Q_DECLARE_METATYPE(Command)

namespace {

constexpr Roles None;
constexpr Roles Sender = Role::Sender;
constexpr Roles Receiver = Role::Receiver;
constexpr Roles Admin = Role::Admin;
constexpr Roles SenderReceiver = Roles(Role::Sender) | Role::Receiver;

// Roles travel through the data tables as int (Roles::Int is unsigned for a quint8 enum).
int bits(Roles roles)
{
    return int(roles.toInt());
}

Roles fromBits(int roles)
{
    return Roles::fromInt(Roles::Int(roles));
}

// The matrix as docs/ACL.md states it, written out rather than derived from the code under test.
struct MatrixRow
{
    Command command;
    bool sender;
    bool receiver;
};

constexpr MatrixRow matrix[] = {
    {Command::DeclareQueue, false, true}, {Command::DeclareExchange, false, true},
    {Command::Bind, false, true},         {Command::Publish, true, false},
    {Command::PublishBatch, true, false}, {Command::Consume, false, true},
    {Command::Fetch, false, true},        {Command::Ack, true, true},
    {Command::Resend, true, true},        {Command::RegisterPublicKey, false, true},
    {Command::GetPublicKey, true, false}, {Command::Heartbeat, true, true},
    {Command::Pong, true, true},          {Command::Qos, false, true},
    {Command::Nack, false, true},         {Command::QueuePolicy, false, true},
    // Who may see whom is acl.presence_groups, checked by the handler (tst_33_presence).
    {Command::Presence, true, true},
};

cmq::Config::Acl testAcl()
{
    cmq::Config::Acl acl;
    acl.senderCns = {"sender_1", "both-svc", "everything"};
    acl.receiverCns = {"receiver_1", "receiver_10", "both-svc", "watcher", "everything"};
    acl.adminCns = {"ops-admin", "watcher", "everything"};
    return acl;
}

QString queueDenied(const QString &queue, const QString &cn)
{
    return QStringLiteral("Permission denied: queue '%1' is outside the namespace of %2 "
                          "(receivers use queues named '%2_...')")
        .arg(queue, cn);
}

QString keyDenied(const QString &key, const QString &cn)
{
    return QStringLiteral("Permission denied: routing key '%1' must be %2 or start with %2_")
        .arg(key, cn);
}

} // namespace

class tst_AclManager : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void rolesFor_data();
    void rolesFor();
    void emptyAclKnowsNobody();
    void rolesToString_data();
    void rolesToString();
    void matrixCoversEveryCommand();
    void mayRun_data();
    void mayRun();
    void commandDenied_data();
    void commandDenied();
    void mayUseQueue_data();
    void mayUseQueue();
    void mayBindRoutingKey_data();
    void mayBindRoutingKey();
    void mayUseOwnedQueue_data();
    void mayUseOwnedQueue();
    void mayBindToExchange_data();
    void mayBindToExchange();
};

void tst_AclManager::rolesFor_data()
{
    QTest::addColumn<QString>("cn");
    QTest::addColumn<int>("roles");
    QTest::newRow("sender list") << "sender_1" << bits(Sender);
    QTest::newRow("receiver list") << "receiver_1" << bits(Receiver);
    QTest::newRow("admin list") << "ops-admin" << bits(Admin);
    QTest::newRow("sender+receiver union") << "both-svc" << bits(SenderReceiver);
    QTest::newRow("receiver+admin union") << "watcher" << bits(Receiver | Role::Admin);
    QTest::newRow("all three lists") << "everything" << bits(SenderReceiver | Role::Admin);
    QTest::newRow("unknown") << "stranger" << bits(None);
    QTest::newRow("empty cn") << "" << bits(None);
    QTest::newRow("case differs") << "Sender_1" << bits(None);
    QTest::newRow("prefix of a listed cn") << "sender_" << bits(None);
    QTest::newRow("listed cn plus suffix") << "sender_1x" << bits(None);
    QTest::newRow("trailing space") << "sender_1 " << bits(None);
}

void tst_AclManager::rolesFor()
{
    QFETCH(QString, cn);
    QFETCH(int, roles);
    const AclManager acl(testAcl());
    QCOMPARE(bits(acl.rolesFor(cn)), roles);
}

void tst_AclManager::emptyAclKnowsNobody()
{
    const AclManager acl;
    QCOMPARE(bits(acl.rolesFor("sender_1")), 0);
    QCOMPARE(bits(acl.rolesFor("ops-admin")), 0);
}

void tst_AclManager::rolesToString_data()
{
    QTest::addColumn<int>("roles");
    QTest::addColumn<QString>("text");
    QTest::newRow("none") << bits(None) << "unknown";
    QTest::newRow("sender") << bits(Sender) << "sender";
    QTest::newRow("receiver") << bits(Receiver) << "receiver";
    QTest::newRow("admin") << bits(Admin) << "admin";
    QTest::newRow("sender+receiver") << bits(SenderReceiver) << "sender,receiver";
    QTest::newRow("all") << bits(SenderReceiver | Role::Admin) << "sender,receiver,admin";
}

void tst_AclManager::rolesToString()
{
    QFETCH(int, roles);
    QFETCH(QString, text);
    QCOMPARE(cmq::rolesToString(fromBits(roles)), text);
}

void tst_AclManager::matrixCoversEveryCommand()
{
    // A command added to the protocol must get a row here (and in docs/ACL.md).
    QCOMPARE(std::size(matrix), size_t(Command::Unknown));
    for (size_t i = 0; i < std::size(matrix); ++i)
        QCOMPARE(int(matrix[i].command), int(i));
}

void tst_AclManager::mayRun_data()
{
    QTest::addColumn<Command>("command");
    QTest::addColumn<int>("roles");
    QTest::addColumn<bool>("allowed");
    for (const MatrixRow &row : matrix) {
        const char *name = cmq::protocol::commandName(row.command);
        QTest::addRow("%s/unknown", name) << row.command << bits(None) << false;
        QTest::addRow("%s/sender", name) << row.command << bits(Sender) << row.sender;
        QTest::addRow("%s/receiver", name) << row.command << bits(Receiver) << row.receiver;
        QTest::addRow("%s/admin", name) << row.command << bits(Admin) << true;
        QTest::addRow("%s/sender+receiver", name)
            << row.command << bits(SenderReceiver) << (row.sender || row.receiver);
    }
    // Unknown commands pass the ACL for everyone: the dispatcher answers "Unknown command".
    for (const Roles roles : {None, Sender, Receiver, Admin, SenderReceiver}) {
        QTest::addRow("unknown-command/%s", qPrintable(cmq::rolesToString(roles)))
            << Command::Unknown << bits(roles) << true;
    }
}

void tst_AclManager::mayRun()
{
    QFETCH(Command, command);
    QFETCH(int, roles);
    QFETCH(bool, allowed);
    QCOMPARE(AclManager::mayRun(fromBits(roles), command), allowed);
}

void tst_AclManager::commandDenied_data()
{
    QTest::addColumn<Command>("command");
    QTest::addColumn<int>("roles");
    QTest::addColumn<QString>("text");
    QTest::newRow("publish/receiver")
        << Command::Publish << bits(Receiver)
        << "Permission denied: 'publish' is not allowed for role receiver";
    QTest::newRow("declare_queue/sender")
        << Command::DeclareQueue << bits(Sender)
        << "Permission denied: 'declare_queue' is not allowed for role sender";
    QTest::newRow("get_public_key/unknown")
        << Command::GetPublicKey << bits(None)
        << "Permission denied: 'get_public_key' is not allowed for role unknown";
    QTest::newRow("register_public_key/sender")
        << Command::RegisterPublicKey << bits(Sender)
        << "Permission denied: 'register_public_key' is not allowed for role sender";
}

void tst_AclManager::commandDenied()
{
    QFETCH(Command, command);
    QFETCH(int, roles);
    QFETCH(QString, text);
    QCOMPARE(QString::fromUtf8(
                 cmq::handlers::refusalText(AclManager::commandDenied(fromBits(roles), command))),
             text);
}

void tst_AclManager::mayUseQueue_data()
{
    QTest::addColumn<int>("roles");
    QTest::addColumn<QString>("cn");
    QTest::addColumn<QString>("queue");
    QTest::addColumn<QString>("error"); // empty: allowed
    const auto r = bits(Receiver);
    QTest::newRow("own queue") << r << "receiver_1"
                               << "receiver_1_queue"
                               << "";
    QTest::newRow("own, one char after _") << r << "receiver_1"
                                           << "receiver_1_x"
                                           << "";
    QTest::newRow("own, _ inside suffix") << r << "receiver_1"
                                          << "receiver_1_a_b"
                                          << "";
    QTest::newRow("cn_ alone") << r << "receiver_1"
                               << "receiver_1_" << queueDenied("receiver_1_", "receiver_1");
    QTest::newRow("cn alone") << r << "receiver_1"
                              << "receiver_1" << queueDenied("receiver_1", "receiver_1");
    QTest::newRow("longer cn sharing the prefix")
        << r << "receiver_1"
        << "receiver_10_queue" << queueDenied("receiver_10_queue", "receiver_1");
    QTest::newRow("another receiver's queue")
        << r << "receiver_1"
        << "receiver_2_queue" << queueDenied("receiver_2_queue", "receiver_1");
    QTest::newRow("shared-looking name")
        << r << "receiver_1"
        << "CipherMQ_queue" << queueDenied("CipherMQ_queue", "receiver_1");
    QTest::newRow("case differs") << r << "receiver_1"
                                  << "Receiver_1_queue"
                                  << queueDenied("Receiver_1_queue", "receiver_1");
    QTest::newRow("cn not at the start")
        << r << "receiver_1"
        << "x_receiver_1_queue" << queueDenied("x_receiver_1_queue", "receiver_1");
    QTest::newRow("other separator")
        << r << "receiver_1"
        << "receiver_1-queue" << queueDenied("receiver_1-queue", "receiver_1");
    QTest::newRow("sender+receiver, own") << bits(SenderReceiver) << "both-svc"
                                          << "both-svc_queue"
                                          << "";
    QTest::newRow("sender+receiver, other")
        << bits(SenderReceiver) << "both-svc"
        << "receiver_1_queue" << queueDenied("receiver_1_queue", "both-svc");
    QTest::newRow("admin, another's queue") << bits(Admin) << "ops-admin"
                                            << "receiver_2_queue"
                                            << "";
    QTest::newRow("admin, any name") << bits(Admin) << "ops-admin"
                                     << "anything"
                                     << "";
    QTest::newRow("admin+receiver, any name") << bits(Receiver | Role::Admin) << "watcher"
                                              << "receiver_1_queue"
                                              << "";
    // Senders own no queues, not even ones named after them.
    QTest::newRow("sender, own-named queue")
        << bits(Sender) << "sender_1"
        << "sender_1_queue" << queueDenied("sender_1_queue", "sender_1");
    QTest::newRow("unknown") << bits(None) << "stranger"
                             << "stranger_queue" << queueDenied("stranger_queue", "stranger");
}

void tst_AclManager::mayUseQueue()
{
    QFETCH(int, roles);
    QFETCH(QString, cn);
    QFETCH(QString, queue);
    QFETCH(QString, error);
    const cmq::Verdict status = AclManager::mayUseQueue(fromBits(roles), cn, queue);
    QCOMPARE(bool(status), error.isEmpty());
    if (!status)
        QCOMPARE(cmq::test::refusalText(status), error);
}

void tst_AclManager::mayBindRoutingKey_data()
{
    QTest::addColumn<int>("roles");
    QTest::addColumn<QString>("cn");
    QTest::addColumn<QString>("key");
    QTest::addColumn<QString>("error"); // empty: allowed
    const auto r = bits(Receiver);
    QTest::newRow("cn_key, as existing receivers bind") << r << "receiver_1"
                                                        << "receiver_1_key"
                                                        << "";
    QTest::newRow("exactly the cn") << r << "receiver_1"
                                    << "receiver_1"
                                    << "";
    QTest::newRow("cn_ alone") << r << "receiver_1"
                               << "receiver_1_"
                               << "";
    // receiver_10's keys are not receiver_1's: binding one would copy receiver_10's traffic.
    QTest::newRow("longer cn sharing the prefix")
        << r << "receiver_1"
        << "receiver_10_key" << keyDenied("receiver_10_key", "receiver_1");
    QTest::newRow("another receiver's key")
        << r << "receiver_1"
        << "receiver_2_key" << keyDenied("receiver_2_key", "receiver_1");
    QTest::newRow("unrelated key") << r << "receiver_1"
                                   << "orders" << keyDenied("orders", "receiver_1");
    QTest::newRow("case differs") << r << "receiver_1"
                                  << "Receiver_1_key" << keyDenied("Receiver_1_key", "receiver_1");
    QTest::newRow("cn not at the start")
        << r << "receiver_1"
        << "x_receiver_1" << keyDenied("x_receiver_1", "receiver_1");
    QTest::newRow("sender+receiver, own") << bits(SenderReceiver) << "both-svc"
                                          << "both-svc_key"
                                          << "";
    QTest::newRow("admin, any key") << bits(Admin) << "ops-admin"
                                    << "receiver_2_key"
                                    << "";
    QTest::newRow("sender") << bits(Sender) << "sender_1"
                            << "sender_1_key" << keyDenied("sender_1_key", "sender_1");
    QTest::newRow("unknown") << bits(None) << "stranger"
                             << "stranger_key" << keyDenied("stranger_key", "stranger");
}

void tst_AclManager::mayBindRoutingKey()
{
    QFETCH(int, roles);
    QFETCH(QString, cn);
    QFETCH(QString, key);
    QFETCH(QString, error);
    const cmq::Verdict status = AclManager::mayBindRoutingKey(fromBits(roles), cn, key);
    QCOMPARE(bool(status), error.isEmpty());
    if (!status)
        QCOMPARE(cmq::test::refusalText(status), error);
}

void tst_AclManager::mayUseOwnedQueue_data()
{
    // Only for a queue that exists and that the namespace rule already allowed the caller.
    QTest::addColumn<int>("roles");
    QTest::addColumn<QString>("cn");
    QTest::addColumn<QString>("queue");
    QTest::addColumn<QString>("owner");
    QTest::addColumn<QString>("error"); // empty: allowed
    const auto r = bits(Receiver);
    const QString notOwner =
        QStringLiteral("Permission denied: queue 'receiver_1_queue' belongs to receiver_1");
    QTest::newRow("the owner") << r << "receiver_1"
                               << "receiver_1_queue"
                               << "receiver_1"
                               << "";
    // "receiver" passes the namespace rule for receiver_1_queue (when an ACL change lets both
    // exist over time), but receiver_1 declared it in its own namespace.
    QTest::newRow("covering namespace, not the owner") << r << "receiver"
                                                       << "receiver_1_queue"
                                                       << "receiver_1" << notOwner;
    QTest::newRow("sender+receiver, not the owner") << bits(SenderReceiver) << "receiver"
                                                    << "receiver_1_queue"
                                                    << "receiver_1" << notOwner;
    QTest::newRow("admin, not the owner") << bits(Admin) << "ops-admin"
                                          << "receiver_1_queue"
                                          << "receiver_1"
                                          << "";
    // An admin provisioning a receiver's queue does not keep it from that receiver.
    QTest::newRow("declared by an admin") << r << "receiver_1"
                                          << "receiver_1_queue"
                                          << "ops-admin"
                                          << "";
    QTest::newRow("no recorded owner") << r << "receiver_1"
                                       << "receiver_1_queue"
                                       << ""
                                       << "";
}

void tst_AclManager::mayUseOwnedQueue()
{
    QFETCH(int, roles);
    QFETCH(QString, cn);
    QFETCH(QString, queue);
    QFETCH(QString, owner);
    QFETCH(QString, error);
    const cmq::Verdict status = AclManager::mayUseOwnedQueue(fromBits(roles), cn, queue, owner);
    QCOMPARE(bool(status), error.isEmpty());
    if (!status)
        QCOMPARE(cmq::test::refusalText(status), error);
}

void tst_AclManager::mayBindToExchange_data()
{
    QTest::addColumn<int>("roles");
    QTest::addColumn<QString>("cn");
    QTest::addColumn<QString>("type");
    QTest::addColumn<QString>("key");
    QTest::addColumn<bool>("allowed");
    const auto r = bits(Receiver);
    QTest::newRow("direct, any key mayBindRoutingKey allowed") << r << "receiver_1"
                                                               << "direct"
                                                               << "receiver_1_#" << true;
    QTest::newRow("topic, pattern after the prefix word") << r << "receiver_1"
                                                          << "topic"
                                                          << "receiver_1_orders.*.eu" << true;
    QTest::newRow("topic, # after the prefix word") << r << "receiver_1"
                                                    << "topic"
                                                    << "receiver_1_x.#" << true;
    QTest::newRow("topic, the cn alone") << r << "receiver_1"
                                         << "topic"
                                         << "receiver_1" << true;
    QTest::newRow("topic, # inside the first word is literal") << r << "receiver_1"
                                                               << "topic"
                                                               << "receiver_1_#" << true;
    // A CN with dots spans words; a wildcard among them would reach other namespaces.
    QTest::newRow("topic, wildcard word in a dotted cn") << r << "svc.*"
                                                         << "topic"
                                                         << "svc.*" << false;
    QTest::newRow("topic, # word in a dotted cn") << r << "a.#"
                                                  << "topic"
                                                  << "a.#" << false;
    QTest::newRow("topic, dotted cn, wildcard after it") << r << "svc.a"
                                                         << "topic"
                                                         << "svc.a_x.#" << true;
    QTest::newRow("topic, admin") << bits(Admin) << "ops-admin"
                                  << "topic"
                                  << "#" << true;
    QTest::newRow("fanout, creator") << r << "receiver_1"
                                     << "fanout"
                                     << "receiver_1" << true;
    QTest::newRow("fanout, not the creator") << r << "receiver_2"
                                             << "fanout"
                                             << "receiver_2" << false;
    QTest::newRow("fanout, admin") << bits(Admin) << "ops-admin"
                                   << "fanout"
                                   << "k" << true;
}

void tst_AclManager::mayBindToExchange()
{
    QFETCH(int, roles);
    QFETCH(QString, cn);
    QFETCH(QString, type);
    QFETCH(QString, key);
    QFETCH(bool, allowed);
    const cmq::Verdict status = AclManager::mayBindToExchange(fromBits(roles), cn, "ex", type,
                                                              QStringLiteral("receiver_1"), key);
    QVERIFY2(bool(status) == allowed,
             qPrintable(status ? QString("allowed") : cmq::test::refusalText(status)));
}

QTEST_APPLESS_MAIN(tst_AclManager)
#include "tst_aclmanager.moc"
