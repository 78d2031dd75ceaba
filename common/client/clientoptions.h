#pragma once
// Everything a Client needs to know: brokers, TLS identity, its X25519 key, naming conventions
// and the timing knobs of failover, heartbeat and the publish window.

#include <QList>
#include <QString>

#include "client/brokeraddress.h"
#include "tls/tlsidentity.h"

namespace cmq::client {

// How names map onto the broker's topology. The defaults are the existing clients' conventions,
// so our clients and theirs reach each other: a message for "svc-b" is published on exchange
// CipherMQ_exchange with routing key svc-b_key and lands in queue svc-b_queue.
struct Conventions
{
    QString exchange = QStringLiteral("CipherMQ_exchange");
    QString queuePattern = QStringLiteral("{name}_queue");
    QString routingKeyPattern = QStringLiteral("{name}_key");

    QString queueFor(const QString &name) const;
    QString routingKeyFor(const QString &name) const;
};

struct ClientOptions
{
    // Tried in order; after a connection is lost the next one is tried first.
    QList<BrokerAddress> brokers;
    tls::TlsFiles tls;
    // Our name on the bus; empty means the certificate's Common Name, which is what the broker
    // knows us by (ACL roles, queue ownership, the key directory).
    QString name;
    // Our X25519 private key file (crypto::saveKeyPair format). Needed to receive (listen,
    // request); sending only needs the receivers' public keys.
    QString keyPairPath;
    Conventions conventions;

    // The broker pings after this many seconds of silence from us; hearing nothing from it for
    // 2 × heartbeatSec + 2 s means it is dead (its liveness check runs once a second).
    int heartbeatSec = 4;
    int connectTimeoutMs = 10000; // TCP + TLS + first reply, per address
    int backoffInitialMs = 250;   // first pause after every address failed once
    int backoffMaxMs = 10000;
    int publishWindow = 64;     // publishes written and not yet answered
    int prefetch = 64;          // unacknowledged deliveries the broker may push to us
    int dedupeCapacity = 10000; // received message ids remembered to drop redeliveries
    int retryDelayMs = 1000;    // pause before retrying a message the broker could not take
    // Pad every payload to its size bucket inside the encryption, so that the broker and the
    // network see only the bucket (crypto/padding.h). Receivers built on this library open both
    // forms; an existing client that does not know the `padding` field refuses a padded
    // envelope (its body fails authentication), so turn this off to send to one.
    bool padPayloads = true;
    // Ask for delivery metadata (consume ... with-meta): the broker's attested sender, publish
    // time and delivery count on every message. A broker that predates it refuses the request
    // and the queue is consumed the old way on that connection (docs/CLIENT.md); replies to our
    // requests are then accepted without an attested sender.
    bool deliveryMeta = true;
};

} // namespace cmq::client
