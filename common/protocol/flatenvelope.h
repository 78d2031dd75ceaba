#pragma once
// The common envelope read without building a JSON document: one flat object of plain ASCII
// strings, as every CipherMQ client writes it. inspectEnvelope() asks this first and falls back
// to QJsonDocument for anything else, including every error, so the reply texts stay Qt's.

#include <optional>

#include <QByteArrayView>

namespace cmq::protocol {

struct FlatEnvelope
{
    QByteArrayView messageId;        // the string's bytes, as written (no escapes in them)
    QByteArrayView receiverClientId;
    qint64 ttlMs = 0; // 0 when absent
};

// The fields when `json` is, with only JSON whitespace around and between its tokens, one object
// whose members are all strings of printable ASCII without a backslash, integers of at most 15
// digits, true, false or null; that has each of message_id, receiver_client_id,
// enc_session_key, nonce and ciphertext once, as a string; sent_time at most once, as a string;
// and ttl_ms at most once, as an integer from 1 to MaxEnvelopeTtlMs. Otherwise nullopt: the
// input may still be a valid envelope, which only QJsonDocument decides. Every input accepted
// here QJsonDocument reads to the same fields (tst_envelope compares the two).
std::optional<FlatEnvelope> scanFlatEnvelope(QByteArrayView json);

} // namespace cmq::protocol
