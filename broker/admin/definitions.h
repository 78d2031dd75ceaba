#pragma once
// Definitions: a broker's topology as one JSON document (docs/ADMIN-PROTOCOL.md,
// "definitions"): exchanges with their types, queues with their policies, bindings. Never a
// message, an envelope or a key. The export of one broker imports into another.

#include <QByteArray>
#include <QJsonObject>
#include <QList>

#include "storage/storage.h"
#include "util/result.h"

namespace cmq {

class Router;

struct Definitions
{
    QList<storage::ExchangeRecord> exchanges;
    QList<storage::QueueRecord> queues; // max_length as the source broker applied it
    QList<storage::BindingRecord> bindings;
};

// The document's format number; an import refuses another.
inline constexpr int DefinitionsFormat = 1;

QJsonObject definitionsToJson(const Router &router);
// Parses and checks a document (any of its three lists may be missing or empty). Pure.
Result<Definitions> parseDefinitions(const QByteArray &json);

} // namespace cmq
