#pragma once
// An admin-protocol client over mutual TLS, for the desktop console (async, signals) and for
// `cmq admin` (the blocking helpers). Sends command lines, matches replies to requests in
// order, and reports the watch stream and notices as signals.

#include <QByteArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QObject>
#include <QSslConfiguration>
#include <QSslSocket>
#include <QString>

#include "admin/adminreplyreader.h"
#include "admin/adminrequest.h"
#include "admin/snapshotparser.h"
#include "util/result.h"

namespace cmq::admin {

struct AdminReply
{
    AdminCommand command = AdminCommand::Unknown;
    bool ok = false;
    QString error;   // the text after "Error: " when !ok
    QByteArray body; // the JSON line, or the metrics text (with "# EOF")
    QJsonDocument json() const { return QJsonDocument::fromJson(body); }
};

class AdminClient final : public QObject
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(AdminClient)

public:
    explicit AdminClient(QObject *parent = nullptr);
    ~AdminClient() override;

    // Our certificate and key, and the CA the broker's certificate is verified against
    // (cmq::tls::clientConfiguration builds one).
    void setSslConfiguration(const QSslConfiguration &configuration);
    // `host` is also the name the broker's certificate must carry.
    void connectToBroker(const QString &host, quint16 port);
    void disconnectFromBroker();
    bool isConnected() const;
    // The broker's certificate and its chain, from the TLS session (for expiry warnings).
    QList<QSslCertificate> peerCertificateChain() const { return m_socket.peerCertificateChain(); }

    // Sends one request line (without "\n"); returns its id, or 0 when the line is not a valid
    // request (nothing is sent; requestFailed is not emitted) or the client is not connected.
    // The reply arrives as replyReceived(id, ...).
    quint64 send(const QString &line);
    // The parse error send() found for `line`, for callers that want to show it.
    static QString validate(const QString &line);

    // Blocking helpers for command-line tools: run a local event loop until done or timeout.
    Status waitForConnected(int timeoutMs);
    Result<AdminReply> request(const QString &line, int timeoutMs);

Q_SIGNALS:
    void connected();
    void disconnected();
    // Socket or TLS errors, and a refusal at connect ("Unauthorized: ..."), as text.
    void errorOccurred(const QString &message);
    void replyReceived(quint64 id, const cmq::admin::AdminReply &reply);
    // Parsed off this thread (SnapshotParser), so it may follow a reply sent after it; a
    // snapshot overtaken by a newer one before it was parsed is skipped.
    void snapshotReceived(const QJsonObject &snapshot);
    void noticeReceived(const QString &text);

private:
    void onReadyRead();

    SnapshotParser m_parser;
    QSslSocket m_socket;
    AdminReplyReader m_reader;
    std::deque<quint64> m_ids; // request ids in send order
    quint64 m_nextId = 1;
    QString m_lastError;
};

} // namespace cmq::admin
