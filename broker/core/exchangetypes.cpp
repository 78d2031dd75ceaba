// The registry of exchange types: add a type here and in its own file.

#include "core/directexchange.h"
#include "core/exchangetype.h"

namespace cmq {

namespace {

const DirectExchange direct;

const ExchangeType *const registered[] = {&direct};

} // namespace

const ExchangeType *findExchangeType(QStringView name)
{
    for (const ExchangeType *type : registered) {
        if (type->name() == name)
            return type;
    }
    return nullptr;
}

const ExchangeType &defaultExchangeType()
{
    return direct;
}

} // namespace cmq
