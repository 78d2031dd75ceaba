#pragma once
// `topic`: binding keys are patterns of dot-separated words, `*` standing for exactly one word
// and `#` for zero or more, as in AMQP 0-9-1 ("orders.*.eu", "orders.#"). The patterns are
// kept in a trie of words, so routing costs the words of the key, not the number of bindings.
// A receiver's pattern starts with the literal words of its CN (mayBind), so it matches keys
// inside the receiver's namespace only.

#include "core/exchangetype.h"

namespace cmq {

class TopicExchange final : public ExchangeType
{
public:
    QString name() const override { return QStringLiteral("topic"); }
    std::unique_ptr<BindingIndex> newIndex() const override;
    Verdict mayBind(const QString &cn, const QString &exchange, const QString &creator,
                    const QString &bindingKey) const override;
};

} // namespace cmq
