#include "padding.h"

#include <cstring>

#include <sodium.h>

namespace cmq::crypto {

qsizetype paddedSize(qsizetype plaintextSize)
{
    // At least one byte of padding: a plaintext of exactly a bucket's size goes to the next one.
    const qsizetype needed = plaintextSize + 1;
    if (needed > LargeBucketStep)
        return (needed + LargeBucketStep - 1) / LargeBucketStep * LargeBucketStep;
    qsizetype bucket = SmallestBucket;
    while (bucket < needed)
        bucket *= 2;
    return bucket;
}

bool isBucketSize(qsizetype size)
{
    if (size > LargeBucketStep)
        return size % LargeBucketStep == 0;
    return size >= SmallestBucket && (size & (size - 1)) == 0;
}

QByteArray pad(QByteArrayView plaintext)
{
    const qsizetype bucket = paddedSize(plaintext.size());
    QByteArray padded(bucket, Qt::Uninitialized);
    if (!plaintext.isEmpty())
        memcpy(padded.data(), plaintext.data(), size_t(plaintext.size()));
    size_t paddedLength = 0;
    // The block size is the bucket itself, so the result is exactly one block.
    const int st = sodium_pad(&paddedLength, reinterpret_cast<unsigned char *>(padded.data()),
                              size_t(plaintext.size()), size_t(bucket), size_t(bucket));
    Q_ASSERT(st == 0 && paddedLength == size_t(bucket));
    Q_UNUSED(st);
    return padded;
}

Result<QByteArray> unpad(QByteArrayView padded)
{
    if (!isBucketSize(padded.size()))
        return Result<QByteArray>::failure(
            QStringLiteral("the padded body has %1 bytes, which is no padding bucket")
                .arg(padded.size()));
    size_t length = 0;
    if (sodium_unpad(&length, reinterpret_cast<const unsigned char *>(padded.data()),
                     size_t(padded.size()), size_t(padded.size())) != 0)
        return Result<QByteArray>::failure(QStringLiteral("the body's padding is not valid"));
    return padded.first(qsizetype(length)).toByteArray();
}

} // namespace cmq::crypto
