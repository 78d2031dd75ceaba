#pragma once
// Who is on the other end of a connection, as established by the mTLS handshake.

#include <QDateTime>
#include <QHostAddress>
#include <QSslCertificate>
#include <QString>

#include "acl/aclmanager.h"

namespace cmq {

struct ClientIdentity
{
    quint64 connectionId = 0;
    QString cn; // the certificate's Common Name: the client id everywhere
    Roles roles;
    QHostAddress address;
    quint16 port = 0;
    QSslCertificate certificate;
    QDateTime connectedAt;
};

} // namespace cmq
