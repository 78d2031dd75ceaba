#pragma once
// `fanout`: a message goes to every queue bound to the exchange, whatever the keys. Only the
// exchange's creator binds to it (and admins): the creator chooses which queues get its copies.

#include "core/exchangetype.h"

namespace cmq {

class FanoutExchange final : public ExchangeType
{
public:
    QString name() const override { return QStringLiteral("fanout"); }
    std::unique_ptr<BindingIndex> newIndex() const override;
    Verdict mayBind(const QString &cn, const QString &exchange, const QString &creator,
                    const QString &) const override
    {
        if (creator != cn)
            return Refusal::of(Refusal::Kind::FanoutCreatorOnly, exchange, creator);
        return accepted();
    }
};

} // namespace cmq
