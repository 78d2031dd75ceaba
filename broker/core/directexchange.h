#pragma once
// `direct`: a message goes to the queues bound with exactly its routing key.

#include "core/exchangetype.h"

namespace cmq {

class DirectExchange final : public ExchangeType
{
public:
    QString name() const override { return QStringLiteral("direct"); }
    std::unique_ptr<BindingIndex> newIndex() const override;
};

} // namespace cmq
