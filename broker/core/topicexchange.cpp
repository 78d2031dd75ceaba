#include "core/topicexchange.h"

#include <unordered_map>
#include <unordered_set>
#include <utility>

#include <QSet>

namespace cmq {

namespace {

// One word position of the patterns bound so far. A pattern's queues sit on the node its last
// word leads to.
struct Node
{
    std::unordered_map<QString, std::unique_ptr<Node>> words; // literal words
    std::unique_ptr<Node> star;                               // `*`: exactly one word
    std::unique_ptr<Node> hash;                               // `#`: zero or more words
    QStringList queues;
    bool isHash = false;

    bool isEmpty() const { return words.empty() && !star && !hash && queues.isEmpty(); }
};

std::unique_ptr<Node> &childSlot(Node &node, const QString &word)
{
    if (word == u'*')
        return node.star;
    if (word == u'#')
        return node.hash;
    return node.words[word];
}

// One routing: walks the trie as the key's words allow, collecting each queue once.
class Match
{
public:
    explicit Match(const QString &routingKey) : m_words(routingKey.split(u'.')) {}

    QStringList run(const Node &root)
    {
        visit(root, 0);
        return std::move(m_queues);
    }

private:
    // `node` reached with the first `pos` words consumed.
    void visit(const Node &node, qsizetype pos)
    {
        const qsizetype count = m_words.size();
        if (node.isHash) {
            // A `#` node is reached again for every number of words it swallows; patterns like
            // "#.a.#.b" would otherwise revisit the same state exponentially often.
            if (!m_seenHashStates.insert({&node, pos}).second)
                return;
            if (pos < count)
                visit(node, pos + 1);
        }
        if (pos == count) {
            collect(node.queues);
        } else {
            const auto literal = node.words.find(m_words.at(pos));
            if (literal != node.words.end())
                visit(*literal->second, pos + 1);
            if (node.star)
                visit(*node.star, pos + 1);
        }
        if (node.hash)
            visit(*node.hash, pos); // `#` as zero words here
    }

    void collect(const QStringList &queues)
    {
        for (const QString &queue : queues) {
            if (!m_collected.contains(queue)) {
                m_collected.insert(queue);
                m_queues.append(queue);
            }
        }
    }

    struct StateHash
    {
        size_t operator()(const std::pair<const Node *, qsizetype> &s) const
        {
            return std::hash<const Node *>()(s.first) ^ (size_t(s.second) * 0x9E3779B97F4A7C15u);
        }
    };

    const QStringList m_words;
    std::unordered_set<std::pair<const Node *, qsizetype>, StateHash> m_seenHashStates;
    QSet<QString> m_collected;
    QStringList m_queues;
};

class TopicIndex final : public BindingIndex
{
public:
    void add(const QString &bindingKey, const QString &queue) override
    {
        Node *node = &m_root;
        for (const QString &word : bindingKey.split(u'.')) {
            std::unique_ptr<Node> &slot = childSlot(*node, word);
            if (!slot) {
                slot = std::make_unique<Node>();
                slot->isHash = word == u'#';
            }
            node = slot.get();
        }
        if (!node->queues.contains(queue))
            node->queues.append(queue);
    }

    void remove(const QString &bindingKey, const QString &queue) override
    {
        removeFrom(m_root, bindingKey.split(u'.'), 0, queue);
    }

    QStringList route(const QString &routingKey) const override
    {
        return Match(routingKey).run(m_root);
    }

private:
    // Removes the queue from the pattern's node and prunes the nodes left empty, so a churn of
    // bindings does not leave a growing trie behind.
    static void removeFrom(Node &node, const QStringList &words, qsizetype pos,
                           const QString &queue)
    {
        if (pos == words.size()) {
            node.queues.removeAll(queue);
            return;
        }
        const QString &word = words.at(pos);
        std::unique_ptr<Node> *slot = nullptr;
        if (word == u'*') {
            slot = &node.star;
        } else if (word == u'#') {
            slot = &node.hash;
        } else {
            const auto it = node.words.find(word);
            if (it == node.words.end())
                return;
            slot = &it->second;
        }
        if (!*slot)
            return;
        removeFrom(**slot, words, pos + 1, queue);
        if ((*slot)->isEmpty()) {
            if (word == u'*' || word == u'#')
                slot->reset();
            else
                node.words.erase(word);
        }
    }

    Node m_root;
};

} // namespace

std::unique_ptr<BindingIndex> TopicExchange::newIndex() const
{
    return std::make_unique<TopicIndex>();
}

Verdict TopicExchange::mayBind(const QString &cn, const QString &, const QString &,
                               const QString &bindingKey) const
{
    // The key starts with the CN (mayBindRoutingKey); a CN with dots spans several words, none
    // of which may be a wildcard ("a.#" binding its own CN "a.#" would match "a.b_x").
    qsizetype start = 0;
    while (start <= cn.size()) {
        qsizetype end = bindingKey.indexOf(u'.', start);
        if (end < 0)
            end = bindingKey.size();
        const QStringView word = QStringView(bindingKey).mid(start, end - start);
        if (word == u"*" || word == u"#")
            return Refusal::of(Refusal::Kind::TopicPatternWildcard, bindingKey, cn);
        start = end + 1;
    }
    return accepted();
}

} // namespace cmq
