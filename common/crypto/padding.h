#pragma once
// Size padding inside the encryption: the plaintext is padded to a size bucket before it is
// sealed, so the broker and the network see only the bucket, not the message's size. Buckets are
// the powers of two from 256 bytes to 64 KiB, then whole multiples of 64 KiB: a message costs at
// most twice its size up to 64 KiB and at most 64 KiB more above (so padding takes little from
// the largest message a broker's line limit allows). The padding is ISO/IEC 7816-4 (libsodium's
// sodium_pad): a 0x80 byte, then zeros, at least one byte, so every length pads unambiguously.
// docs/PROTOCOL.md, "Envelope": the `padding` field says an envelope's body is padded.

#include <QByteArray>
#include <QByteArrayView>

#include "util/result.h"

namespace cmq::crypto {

inline constexpr qsizetype SmallestBucket = 256;
inline constexpr qsizetype LargeBucketStep = qsizetype(64) << 10;

// The padded size of a plaintext of `plaintextSize` bytes: the smallest bucket larger than it.
qsizetype paddedSize(qsizetype plaintextSize);
// True when `size` is a bucket a padded plaintext can have.
bool isBucketSize(qsizetype size);

QByteArray pad(QByteArrayView plaintext);
// The plaintext back; fails when `padded` is not a bucket's size or holds no valid padding.
Result<QByteArray> unpad(QByteArrayView padded);

} // namespace cmq::crypto
