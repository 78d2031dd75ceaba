#include "models/snapshotexport.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QSaveFile>

#include "admin/adminclient.h"

namespace cmq::admingui {

namespace {

QByteArray csvField(const QJsonValue &value)
{
    QByteArray text;
    if (value.isDouble())
        text = QByteArray::number(value.toDouble(), 'g', 15);
    else if (value.isBool())
        text = value.toBool() ? "true" : "false";
    else
        text = value.toString().toUtf8();
    if (text.contains(',') || text.contains('"') || text.contains('\n'))
        text = '"' + text.replace("\"", "\"\"") + '"';
    return text;
}

} // namespace

Result<ExportFormat> parseExportFormat(const QString &text)
{
    const QString t = text.toLower();
    if (t == "prom" || t == "prometheus")
        return ExportFormat::Prometheus;
    if (t == "json")
        return ExportFormat::Json;
    if (t == "csv")
        return ExportFormat::Csv;
    return Result<ExportFormat>::failure(
        QStringLiteral("Unknown export format '%1': expected prom, json or csv").arg(text));
}

ExportFormat formatForFileName(const QString &fileName)
{
    if (fileName.endsWith(".prom") || fileName.endsWith(".txt"))
        return ExportFormat::Prometheus;
    if (fileName.endsWith(".csv"))
        return ExportFormat::Csv;
    return ExportFormat::Json;
}

QByteArray snapshotToJson(const QJsonObject &snapshot)
{
    return QJsonDocument(snapshot).toJson(QJsonDocument::Indented);
}

QByteArray snapshotToCsv(const QJsonObject &snapshot)
{
    QByteArray out = "kind,name,owner,ready,unacked,consumers,published,delivered,evicted,cn,"
                     "address,messages_in,messages_out,bytes_in,bytes_out,cert_not_after\n";
    for (const QJsonValue &value : snapshot.value("queues").toArray()) {
        const QJsonObject q = value.toObject();
        QByteArrayList row{"queue"};
        for (const char *field : {"name", "owner", "ready", "unacked", "consumers", "published",
                                  "delivered", "evicted"})
            row.append(csvField(q.value(QLatin1String(field))));
        row.append(QByteArrayList(7, QByteArray()));
        out += row.join(',') + '\n';
    }
    for (const QJsonValue &value : snapshot.value("connections").toArray()) {
        const QJsonObject c = value.toObject();
        QByteArrayList row{"connection", csvField(c.value("id"))};
        row.append(QByteArrayList(7, QByteArray()));
        row.append(csvField(c.value("cn")));
        row.append(csvField(QStringLiteral("%1:%2")
                                .arg(c.value("address").toString())
                                .arg(c.value("port").toInt())));
        for (const char *field : {"messages_in", "messages_out", "bytes_in", "bytes_out"})
            row.append(csvField(c.value(QLatin1String(field))));
        row.append(csvField(c.value("certificate").toObject().value("not_after")));
        out += row.join(',') + '\n';
    }
    return out;
}

Status exportSnapshot(admin::AdminClient &client, const QString &path, ExportFormat format,
                      int timeoutMs, const QString &queue)
{
    const auto reply =
        client.request(format == ExportFormat::Prometheus ? "metrics" : "json", timeoutMs);
    if (!reply)
        return failure(reply.error());
    if (!reply->ok)
        return failure(reply->error);
    QByteArray bytes;
    switch (format) {
    case ExportFormat::Prometheus:
        bytes = reply->body;
        break;
    case ExportFormat::Json: {
        QJsonObject snapshot = reply->json().object();
        // The audit trail too, all the broker holds; a broker without one answers with an
        // error, and the export is the snapshot alone.
        const auto audit =
            client.request(QStringLiteral("audit %1").arg(admin::MaxAuditEntries), timeoutMs);
        if (audit && audit->ok)
            snapshot.insert(QStringLiteral("audit_entries"), audit->json().array());
        if (!queue.isEmpty()) {
            const auto page = client.request(
                QStringLiteral("queue_messages %1 0 %2").arg(queue).arg(admin::MaxMessagePageRows),
                timeoutMs);
            if (!page)
                return failure(page.error());
            if (!page->ok)
                return failure(page->error);
            snapshot.insert(QStringLiteral("queue_messages"), page->json().object());
        }
        bytes = snapshotToJson(snapshot);
        break;
    }
    case ExportFormat::Csv:
        bytes = snapshotToCsv(reply->json().object());
        break;
    }
    QSaveFile file(path);
    if (!file.open(QIODevice::WriteOnly))
        return failure(QStringLiteral("Cannot write %1: %2").arg(path, file.errorString()));
    file.write(bytes);
    if (!file.commit())
        return failure(QStringLiteral("Cannot write %1: %2").arg(path, file.errorString()));
    return success();
}

} // namespace cmq::admingui
