// The exchange types' binding indexes as pure logic: the topic trie against a table of AMQP
// patterns and keys, fanout's one copy per queue, direct's exact keys, and removal.

#include <QtTest>

#include "core/exchangetype.h"

using namespace cmq;

class tst_ExchangeTypes : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void registry();
    void topicMatches_data();
    void topicMatches();
    void topicRoutesEachQueueOnce();
    void topicRemovePrunes();
    void topicManyHashesStaysCheap();
    void fanoutCopiesToEveryQueueOnce();
    void directMatchesExactKeyOnly();
};

void tst_ExchangeTypes::registry()
{
    QCOMPARE(defaultExchangeType().name(), QStringLiteral("direct"));
    for (const char *name : {"direct", "fanout", "topic"}) {
        const ExchangeType *type = findExchangeType(QString::fromLatin1(name));
        QVERIFY(type);
        QCOMPARE(type->name(), QString::fromLatin1(name));
    }
    QVERIFY(!findExchangeType(u"headers"));
}

void tst_ExchangeTypes::topicMatches_data()
{
    QTest::addColumn<QString>("pattern");
    QTest::addColumn<QString>("key");
    QTest::addColumn<bool>("matches");
    const auto row = [](const char *pattern, const char *key, bool matches) {
        QTest::addRow("%s ~ %s", pattern, key)
            << QString::fromUtf8(pattern) << QString::fromUtf8(key) << matches;
    };
    // Literal words.
    row("a.b.c", "a.b.c", true);
    row("a.b.c", "a.b", false);
    row("a.b", "a.b.c", false);
    row("a.b.c", "a.B.c", false);
    row("svc_b_orders", "svc_b_orders", true);
    // `*`: exactly one word.
    row("svc_b_orders.*.eu", "svc_b_orders.new.eu", true);
    row("svc_b_orders.*.eu", "svc_b_orders.eu", false);
    row("svc_b_orders.*.eu", "svc_b_orders.new.big.eu", false);
    row("a.*", "a.b", true);
    row("a.*", "a", false);
    row("a.*", "a.b.c", false);
    row("*", "a", true);
    row("*", "a.b", false);
    row("*.*", "a.b", true);
    row("a.*", "a.", true); // an empty word is a word
    // `#`: zero or more words.
    row("#", "a", true);
    row("#", "a.b.c", true);
    row("a.#", "a", true);
    row("a.#", "a.b", true);
    row("a.#", "a.b.c.d", true);
    row("a.#", "b.a", false);
    row("#.c", "c", true);
    row("#.c", "a.b.c", true);
    row("#.c", "a.b.c.d", false);
    row("a.#.c", "a.c", true);
    row("a.#.c", "a.b.c", true);
    row("a.#.c", "a.b.x.c", true);
    row("a.#.c", "a.b.x.d", false);
    row("a.#.b.#", "a.b", true);
    row("a.#.b.#", "a.x.b.y.z", true);
    row("a.#.b.#", "a.x.y", false);
    row("#.#", "a", true);
    row("a.#.#.b", "a.b", true);
    row("a.*.#", "a", false);
    row("a.*.#", "a.b", true);
    row("a.*.#", "a.b.c.d", true);
    row("a.#.*", "a", false);
    row("a.#.*", "a.b", true);
    row("a.#.*", "a.b.c", true);
    // Wildcards only as whole words.
    row("a*", "ab", false);
    row("a*", "a*", true);
    row("a#", "a.b", false);
    row("a.b#", "a.b#", true);
}

void tst_ExchangeTypes::topicMatches()
{
    QFETCH(QString, pattern);
    QFETCH(QString, key);
    QFETCH(bool, matches);
    const std::unique_ptr<BindingIndex> index = findExchangeType(u"topic")->newIndex();
    index->add(pattern, QStringLiteral("q"));
    // Unrelated patterns beside it must change nothing.
    index->add(QStringLiteral("zz.*"), QStringLiteral("other"));
    index->add(QStringLiteral("zz.#.yy"), QStringLiteral("other"));
    const QStringList routed = index->route(key);
    QCOMPARE(routed.contains(QStringLiteral("q")), matches);
}

void tst_ExchangeTypes::topicRoutesEachQueueOnce()
{
    const std::unique_ptr<BindingIndex> index = findExchangeType(u"topic")->newIndex();
    index->add(QStringLiteral("a.#"), QStringLiteral("q1"));
    index->add(QStringLiteral("a.*"), QStringLiteral("q1"));
    index->add(QStringLiteral("#"), QStringLiteral("q2"));
    index->add(QStringLiteral("a.b"), QStringLiteral("q3"));
    index->add(QStringLiteral("a.b"), QStringLiteral("q3")); // twice: still one binding
    QStringList routed = index->route(QStringLiteral("a.b"));
    routed.sort();
    QCOMPARE(routed, (QStringList{"q1", "q2", "q3"}));
    QCOMPARE(index->route(QStringLiteral("b")), QStringList{"q2"});
}

void tst_ExchangeTypes::topicRemovePrunes()
{
    const std::unique_ptr<BindingIndex> index = findExchangeType(u"topic")->newIndex();
    index->add(QStringLiteral("a.*.c"), QStringLiteral("q1"));
    index->add(QStringLiteral("a.#"), QStringLiteral("q2"));
    index->remove(QStringLiteral("a.*.c"), QStringLiteral("q1"));
    QCOMPARE(index->route(QStringLiteral("a.b.c")), QStringList{"q2"});
    index->remove(QStringLiteral("a.#"), QStringLiteral("q2"));
    QVERIFY(index->route(QStringLiteral("a.b.c")).isEmpty());
    index->remove(QStringLiteral("never.bound"), QStringLiteral("q2")); // a no-op
    index->add(QStringLiteral("a.*.c"), QStringLiteral("q1"));
    QCOMPARE(index->route(QStringLiteral("a.b.c")), QStringList{"q1"});
}

void tst_ExchangeTypes::topicManyHashesStaysCheap()
{
    // Without memoising the `#` states this pattern against this key takes exponential time.
    const std::unique_ptr<BindingIndex> index = findExchangeType(u"topic")->newIndex();
    QStringList pattern, key;
    for (int i = 0; i < 40; ++i) {
        pattern << QStringLiteral("#") << QStringLiteral("a");
        key << QStringLiteral("a");
    }
    pattern << QStringLiteral("b");
    index->add(pattern.join(u'.'), QStringLiteral("q"));
    QVERIFY(index->route(key.join(u'.')).isEmpty());
    key << QStringLiteral("b");
    QCOMPARE(index->route(key.join(u'.')), QStringList{"q"});
}

void tst_ExchangeTypes::fanoutCopiesToEveryQueueOnce()
{
    const std::unique_ptr<BindingIndex> index = findExchangeType(u"fanout")->newIndex();
    index->add(QStringLiteral("k1"), QStringLiteral("q1"));
    index->add(QStringLiteral("k2"), QStringLiteral("q2"));
    index->add(QStringLiteral("k3"), QStringLiteral("q1")); // a second key, still one copy
    index->add(QStringLiteral("k1"), QStringLiteral("q3"));
    QCOMPARE(index->route(QStringLiteral("anything")), (QStringList{"q1", "q2", "q3"}));
    index->remove(QStringLiteral("k1"), QStringLiteral("q1"));
    QCOMPARE(index->route(QStringLiteral("x")), (QStringList{"q1", "q2", "q3"}));
    index->remove(QStringLiteral("k3"), QStringLiteral("q1"));
    QCOMPARE(index->route(QStringLiteral("x")), (QStringList{"q2", "q3"}));
}

void tst_ExchangeTypes::directMatchesExactKeyOnly()
{
    const std::unique_ptr<BindingIndex> index = defaultExchangeType().newIndex();
    index->add(QStringLiteral("a.*"), QStringLiteral("q1"));
    index->add(QStringLiteral("a.b"), QStringLiteral("q2"));
    QCOMPARE(index->route(QStringLiteral("a.b")), QStringList{"q2"});
    QCOMPARE(index->route(QStringLiteral("a.*")), QStringList{"q1"});
    index->remove(QStringLiteral("a.b"), QStringLiteral("q2"));
    QVERIFY(index->route(QStringLiteral("a.b")).isEmpty());
}

QTEST_GUILESS_MAIN(tst_ExchangeTypes)
#include "tst_exchangetypes.moc"
