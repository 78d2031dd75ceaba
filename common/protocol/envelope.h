#pragma once
// Checks the ciphertext envelope JSON (EncryptedInputData) without ever re-encoding it:
// the broker is blind and forwards the publisher's exact bytes, extra fields included.

#include <QByteArray>
#include <QByteArrayView>
#include <QList>

#include "util/result.h"

namespace cmq::protocol {

struct EnvelopeInfo
{
    QByteArray messageId;        // the "message_id" field, unescaped
    QByteArray receiverClientId; // the "receiver_client_id" field, unescaped
    qint64 ttlMs = 0;            // the optional "ttl_ms" field; 0 when absent
};

// The largest "ttl_ms" accepted: a year.
inline constexpr qint64 MaxEnvelopeTtlMs = 31536000000;

// The envelope must be one JSON object whose fields message_id, receiver_client_id,
// enc_session_key, nonce and ciphertext are strings (message_id not empty). `sent_time`, when
// present, must be a string; `ttl_ms`, when present, a whole number of milliseconds from 1 to
// MaxEnvelopeTtlMs (the message expires that long after it was published). Any other fields are
// allowed and untouched. The error text is suitable after "Invalid message format: ".
Result<EnvelopeInfo> inspectEnvelope(QByteArrayView json);

// Splits a JSON array of envelopes into the exact bytes of each element (whitespace around
// elements trimmed), so each can be inspected and forwarded verbatim. Fails on anything that is
// not a well-formed JSON array; the error text is suitable after "Invalid batch format: ".
Result<QList<QByteArrayView>> splitJsonArray(QByteArrayView json);

} // namespace cmq::protocol
