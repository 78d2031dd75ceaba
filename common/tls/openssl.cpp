#include "tls/openssl.h"

#include <openssl/crypto.h>
#include <openssl/err.h>

namespace cmq::tls {

QString takeOpenSslError()
{
    unsigned long last = 0;
    while (const unsigned long code = ERR_get_error())
        last = code;
    if (last == 0)
        return QStringLiteral("no detail from OpenSSL");
    char buffer[256];
    ERR_error_string_n(last, buffer, sizeof buffer);
    return QString::fromLatin1(buffer);
}

BioPtr memoryBio(const QByteArray &data)
{
    return BioPtr(BIO_new_mem_buf(data.constData(), int(data.size())));
}

BioPtr writableMemoryBio()
{
    return BioPtr(BIO_new(BIO_s_mem()));
}

QByteArray takeBioContents(BIO *bio)
{
    char *data = nullptr;
    const long size = BIO_get_mem_data(bio, &data);
    QByteArray bytes(data, size);
    OPENSSL_cleanse(data, size_t(size));
    return bytes;
}

} // namespace cmq::tls
