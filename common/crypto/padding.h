#pragma once
// Size padding inside the encryption: the plaintext is padded to a size bucket before it is
// sealed, so the broker and the network see only the bucket, not the message's size. Buckets are
// the powers of two from 256 bytes to 1 MiB, then whole MiB: a message costs at most twice its
// size below 1 MiB and at most 1 MiB more above. The padding is ISO/IEC 7816-4 (libsodium's
// sodium_pad): a 0x80 byte, then zeros, at least one byte, so every length pads unambiguously.
// docs/PROTOCOL.md, "Envelope": the `padding` field says an envelope's body is padded.

#include <QByteArray>
#include <QByteArrayView>

#include "util/result.h"

namespace cmq::crypto {

inline constexpr qsizetype SmallestBucket = 256;
inline constexpr qsizetype LargeBucketStep = qsizetype(1) << 20;

// The padded size of a plaintext of `plaintextSize` bytes: the smallest bucket larger than it.
qsizetype paddedSize(qsizetype plaintextSize);
// True when `size` is a bucket a padded plaintext can have.
bool isBucketSize(qsizetype size);

QByteArray pad(QByteArrayView plaintext);
// The plaintext back; fails when `padded` is not a bucket's size or holds no valid padding.
Result<QByteArray> unpad(QByteArrayView padded);

} // namespace cmq::crypto
