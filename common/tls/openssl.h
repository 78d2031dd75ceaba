#pragma once
// What the TLS code needs around OpenSSL's C API, in one place: owning pointers that free
// with the matching *_free, memory BIOs, and turning the thread's error queue into a message.

#include <memory>

#include <QByteArray>
#include <QString>

#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/x509.h>

namespace cmq::tls {

template <typename T, auto Free> struct OpenSslDeleter
{
    void operator()(T *p) const { Free(p); }
};
template <typename T, auto Free> using OpenSslPtr = std::unique_ptr<T, OpenSslDeleter<T, Free>>;

using BioPtr = OpenSslPtr<BIO, BIO_free_all>;
using PkeyPtr = OpenSslPtr<EVP_PKEY, EVP_PKEY_free>;
using X509Ptr = OpenSslPtr<X509, X509_free>;

// Empties this thread's OpenSSL error queue, so that stale entries never surface later inside
// Qt's own OpenSSL calls, and returns the most recent entry for a message.
QString takeOpenSslError();

// A read-only BIO over `data`, which must outlive it.
BioPtr memoryBio(const QByteArray &data);

// An empty BIO to write into; read it back with takeBioContents().
BioPtr writableMemoryBio();

// What was written into a memory BIO. The BIO's buffer is wiped afterwards: it may have held a
// private key.
QByteArray takeBioContents(BIO *bio);

} // namespace cmq::tls
