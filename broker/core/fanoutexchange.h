#pragma once
// `fanout`: a message goes to every queue bound to the exchange, whatever the keys.

#include "core/exchangetype.h"

namespace cmq {

class FanoutExchange final : public ExchangeType
{
public:
    QString name() const override { return QStringLiteral("fanout"); }
    std::unique_ptr<BindingIndex> newIndex() const override;
};

} // namespace cmq
