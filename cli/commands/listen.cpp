// cmq listen: receives the messages sent to us, decrypted, and prints them; each is
// acknowledged only after it has been written out.

#include <QCommandLineParser>
#include <QJsonDocument>
#include <QJsonObject>

#include "clientsettings.h"
#include "command.h"
#include "protocol/lineframer.h"

namespace cmq::cli {
namespace {

const QByteArray Usage =
    QByteArray(
        "Usage: cmq listen [options]\n\n"
        "Registers our public key, declares and binds our queue (NAME_queue, routing key "
        "NAME_key)\n"
        "and prints every message sent to us: its text and a newline, or with --json one JSON\n"
        "object per line: id, from, kind, payload (or payload_base64 when it is not UTF-8),\n"
        "redelivered, sent_time, correlation_id, and what the broker attests: sender (the\n"
        "publisher's verified certificate CN), published_at, delivery_count and, for a dead\n"
        "letter, dead_letter_reason, dead_letter_original_queue, dead_lettered_at,\n"
        "dead_letter_delivery_count.\n"
        "Messages are acknowledged after they are printed;\n"
        "the same message id is printed once even when the broker delivers it again.\n\n"
        "Options:\n"
        "  --json        one JSON object per message\n"
        "  --count N     exit after N messages\n"
        "  --timeout S   exit after S seconds (status 1 if --count messages did not all "
        "come)\n\n") +
    ConnectionFlags::help();

QString kindName(client::MessageKind kind)
{
    switch (kind) {
    case client::MessageKind::Request:
        return QStringLiteral("request");
    case client::MessageKind::Reply:
        return QStringLiteral("reply");
    case client::MessageKind::Message:
        break;
    }
    return QStringLiteral("message");
}

QByteArray asJson(const client::IncomingMessage &message)
{
    QJsonObject object{{QStringLiteral("id"), message.messageId},
                       {QStringLiteral("from"), message.from},
                       {QStringLiteral("kind"), kindName(message.kind)},
                       {QStringLiteral("redelivered"), message.redelivered()}};
    // The broker's attestation, when it gives one (docs/CLIENT.md).
    if (message.isAttested())
        object.insert(QStringLiteral("sender"), message.sender());
    if (message.publishedAt().isValid())
        object.insert(QStringLiteral("published_at"),
                      message.publishedAt().toUTC().toString(Qt::ISODateWithMs));
    if (message.deliveryCount() > 0)
        object.insert(QStringLiteral("delivery_count"), message.deliveryCount());
    if (!message.deadLetterReason().isEmpty()) {
        object.insert(QStringLiteral("dead_letter_reason"), message.deadLetterReason());
        object.insert(QStringLiteral("dead_letter_original_queue"),
                      message.deadLetterOriginalQueue());
        if (message.deadLetteredAt().isValid())
            object.insert(QStringLiteral("dead_lettered_at"),
                          message.deadLetteredAt().toUTC().toString(Qt::ISODateWithMs));
        object.insert(QStringLiteral("dead_letter_delivery_count"),
                      message.deadLetterDeliveryCount());
    }
    if (protocol::isValidUtf8(message.payload))
        object.insert(QStringLiteral("payload"), QString::fromUtf8(message.payload));
    else
        object.insert(QStringLiteral("payload_base64"),
                      QString::fromLatin1(message.payload.toBase64()));
    if (message.sentTime.isValid())
        object.insert(QStringLiteral("sent_time"),
                      message.sentTime.toUTC().toString(Qt::ISODateWithMs));
    if (!message.correlationId.isEmpty())
        object.insert(QStringLiteral("correlation_id"), message.correlationId);
    return QJsonDocument(object).toJson(QJsonDocument::Compact) + '\n';
}

int runListen(const QStringList &args)
{
    StreamCommand stream;
    if (const int code = openStreamCommand(args, "listen", Usage, true, stream); code >= 0)
        return code;
    const int maxMessages = stream.maxLines;
    const int timeoutMs = stream.timeoutMs;
    client::BlockingClient &blocking = *stream.client;

    const bool asJsonLines = stream.json;
    const auto handled = blocking.serve(
        [asJsonLines](const client::IncomingMessage &message) -> std::optional<QByteArray> {
            writeOut(asJsonLines ? asJson(message) : message.payload + '\n');
            return std::nullopt;
        },
        maxMessages, timeoutMs);
    if (!handled)
        return fail("listen", handled.error(), ExitFailure);
    if (maxMessages > 0 && handled.value() < maxMessages)
        return fail("listen",
                    QStringLiteral("%1 of %2 messages arrived in time")
                        .arg(handled.value())
                        .arg(maxMessages),
                    ExitFailure);
    return ExitOk;
}

const CommandRegistration registration({QStringLiteral("listen"),
                                        QStringLiteral("receive and print the messages sent to us"),
                                        &runListen});

} // namespace
} // namespace cmq::cli
