#pragma once
// Metrics snapshot export (File → Export… and `ciphermq-admin --export`): the broker's own
// Prometheus text, the full JSON snapshot with the audit trail ("audit_entries"), or one CSV
// table of queues and connections.

#include <QByteArray>
#include <QJsonObject>
#include <QString>

#include "util/result.h"

namespace cmq::admin {
class AdminClient;
}

namespace cmq::admingui {

enum class ExportFormat { Prometheus, Json, Csv };

// "prom", "json", "csv" (also "prometheus"); failure names the accepted values.
Result<ExportFormat> parseExportFormat(const QString &text);
// The format a file name suggests (".prom"/".txt", ".json", ".csv"), Json otherwise.
ExportFormat formatForFileName(const QString &fileName);

QByteArray snapshotToJson(const QJsonObject &snapshot);
// Header: kind,name,owner,ready,unacked,consumers,published,delivered,evicted,cn,address,
// messages_in,messages_out,bytes_in,bytes_out,cert_not_after — one row per queue (kind=queue)
// and per connection (kind=connection); cells that do not apply are empty.
QByteArray snapshotToCsv(const QJsonObject &snapshot);

// Asks the connected client for what the format needs (`metrics` or `json`) and writes the
// file atomically. Blocks with a local event loop for at most timeoutMs. With `queue` the JSON
// export also carries the first `queue_messages` page of that queue (metadata only) as
// "queue_messages".
Status exportSnapshot(admin::AdminClient &client, const QString &path, ExportFormat format,
                      int timeoutMs = 15000, const QString &queue = {});

} // namespace cmq::admingui
