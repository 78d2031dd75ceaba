#pragma once
// The test certificates of tests/certs/gen.sh as the TlsFiles the TLS tests load.

#include "testenv.h"
#include "tls/tlsidentity.h"

namespace cmq::test {

inline tls::TlsFiles identityFiles(const QString &cert, const QString &key,
                                   const QString &ca = QStringLiteral("ca.crt"))
{
    return {certFile(cert), certFile(key), certFile(ca)};
}

inline tls::TlsFiles clientFiles(const QString &name)
{
    return identityFiles(name + QStringLiteral(".crt"), name + QStringLiteral(".key"));
}

} // namespace cmq::test
