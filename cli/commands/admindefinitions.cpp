#include "admindefinitions.h"

#include <cstdio>

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>

#include "admin/adminclient.h"
#include "command.h"

namespace cmq::cli {

namespace {

const char ImportCommand[] = "definitions_import ";
const char *const Sections[] = {"exchanges", "queues", "bindings"};

QByteArray requestLine(const QJsonObject &chunk)
{
    return ImportCommand + QJsonDocument(chunk).toJson(QJsonDocument::Compact);
}

} // namespace

QList<QByteArray> definitionsImportLines(const QJsonObject &document, qsizetype maxLineBytes)
{
    const QJsonObject empty{{QStringLiteral("ciphermq_definitions"),
                             document.value(QStringLiteral("ciphermq_definitions"))}};
    QList<QByteArray> lines;
    QJsonObject chunk = empty;
    bool chunkHasItems = false;
    for (const char *section : Sections) {
        const QString name = QString::fromLatin1(section);
        for (const QJsonValue &item : document.value(name).toArray()) {
            QJsonObject grown = chunk;
            QJsonArray list = grown.value(name).toArray();
            list.append(item);
            grown.insert(name, list);
            if (chunkHasItems && requestLine(grown).size() > maxLineBytes) {
                lines << requestLine(chunk);
                grown = empty;
                grown.insert(name, QJsonArray{item});
            }
            chunk = grown;
            chunkHasItems = true;
        }
    }
    if (chunkHasItems || lines.isEmpty())
        lines << requestLine(chunk);
    return lines;
}

int importDefinitions(admin::AdminClient &client, const QString &path, int timeoutMs)
{
    QFile file(path);
    const bool opened = path == QLatin1String("-") ? file.open(stdin, QIODevice::ReadOnly)
                                                   : file.open(QIODevice::ReadOnly);
    if (!opened) {
        std::fprintf(stderr, "cmq admin: cannot read %s: %s\n", qPrintable(path),
                     qPrintable(file.errorString()));
        return ExitUsage;
    }
    QJsonParseError error;
    const QJsonDocument doc = QJsonDocument::fromJson(file.readAll(), &error);
    if (!doc.isObject()) {
        std::fprintf(stderr, "cmq admin: %s is not a definitions document (%s)\n", qPrintable(path),
                     qPrintable(error.errorString()));
        return ExitUsage;
    }
    qint64 exchanges = 0, queues = 0, bindings = 0;
    QJsonArray errors;
    const QList<QByteArray> lines = definitionsImportLines(doc.object(), 4000);
    for (const QByteArray &line : lines) {
        const Result<admin::AdminReply> reply = client.request(QString::fromUtf8(line), timeoutMs);
        if (!reply || !reply->ok) {
            std::fprintf(stderr, "Error: %s\n", qPrintable(!reply ? reply.error() : reply->error));
            return reply ? ExitFailure : ExitUnreachable;
        }
        const QJsonObject o = reply->json().object();
        exchanges += o.value("exchanges").toInteger();
        queues += o.value("queues").toInteger();
        bindings += o.value("bindings").toInteger();
        for (const QJsonValue &e : o.value("errors").toArray())
            errors.append(e);
    }
    const QJsonObject summary{
        {QStringLiteral("ok"), errors.isEmpty()}, {QStringLiteral("requests"), lines.size()},
        {QStringLiteral("exchanges"), exchanges}, {QStringLiteral("queues"), queues},
        {QStringLiteral("bindings"), bindings},   {QStringLiteral("errors"), errors}};
    const QByteArray text = QJsonDocument(summary).toJson(QJsonDocument::Indented);
    std::fwrite(text.constData(), 1, size_t(text.size()), stdout);
    return errors.isEmpty() ? ExitOk : ExitFailure;
}

} // namespace cmq::cli
