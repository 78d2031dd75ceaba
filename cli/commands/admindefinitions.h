#pragma once
// cmq admin definitions import: a definitions document (docs/ADMIN-PROTOCOL.md) sent as
// `definitions_import` requests that each fit the admin protocol's request line.

#include <QByteArray>
#include <QJsonObject>
#include <QList>

namespace cmq::admin {
class AdminClient;
}

namespace cmq::cli {

// The document cut into whole `definitions_import <json>` lines of at most `maxLineBytes`,
// in order: every exchange, then every queue, then every binding.
QList<QByteArray> definitionsImportLines(const QJsonObject &document, qsizetype maxLineBytes);

// Reads `path` ("-" = stdin), sends its requests one after another and prints the sum of the
// replies. Returns the exit code.
int importDefinitions(admin::AdminClient &client, const QString &path, int timeoutMs);

} // namespace cmq::cli
