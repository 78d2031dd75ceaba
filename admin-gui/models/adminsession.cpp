#include "models/adminsession.h"

#include <utility>

namespace cmq::admingui {

AdminSession::AdminSession(QObject *parent) : QObject(parent)
{
    m_reconnectTimer.setSingleShot(true);
    m_reconnectTimer.setInterval(2000);
    connect(&m_reconnectTimer, &QTimer::timeout, this, &AdminSession::connectNow);
    connect(&m_client, &admin::AdminClient::connected, this, [this] {
        // The broker may still refuse us right after the handshake, so "connected" waits for
        // the watch reply.
        m_client.send(watchLine());
    });
    connect(&m_client, &admin::AdminClient::replyReceived, this,
            [this](quint64 id, const admin::AdminReply &reply) {
                if (reply.command == admin::AdminCommand::Watch) {
                    // A refusal line arrives as the reply to our first request.
                    // A new page or a refresh answers again: already connected, nothing to say.
                    if (!reply.ok)
                        m_lastRawError = reply.error;
                    else if (m_state != State::Connected)
                        setState(State::Connected, tr("Connected to %1").arg(m_options.label()));
                    return;
                }
                if (reply.command == admin::AdminCommand::Audit) {
                    if (reply.ok)
                        Q_EMIT auditReceived(reply.json().array());
                    return;
                }
                if (reply.command == admin::AdminCommand::QueueMessages) {
                    Q_EMIT queueMessagesReceived(reply.ok ? reply.json().object() : QJsonObject(),
                                                 reply.ok ? QString() : reply.error);
                    return;
                }
                if (reply.command == admin::AdminCommand::DeadLetters) {
                    const QString line = m_pendingDeadLetters.take(id);
                    Q_EMIT deadLettersReceived(line,
                                               reply.ok ? reply.json().array() : QJsonArray(),
                                               reply.ok ? QString() : reply.error);
                    return;
                }
                const QString line = m_pendingActions.take(id);
                if (!line.isEmpty())
                    Q_EMIT actionFinished(line, reply.ok,
                                          reply.ok ? QString::fromUtf8(reply.body) : reply.error);
            });
    connect(&m_client, &admin::AdminClient::snapshotReceived, this,
            [this](const QJsonObject &snapshot) {
                m_lastSnapshot = snapshot;
                Q_EMIT snapshotReceived(snapshot);
            });
    connect(&m_client, &admin::AdminClient::errorOccurred, this, [this](const QString &raw) {
        // The refusal line is the cause; the close that follows it is only a consequence.
        if (m_lastRawError.isEmpty() || raw.startsWith("Unauthorized"))
            m_lastRawError = raw;
        // A connect that fails before TCP is up (refused, unknown host) emits no disconnected.
        QTimer::singleShot(0, this, [this] {
            if (m_attemptActive && !m_client.isConnected())
                onDisconnected();
        });
    });
    connect(&m_client, &admin::AdminClient::noticeReceived, this,
            [this](const QString &text) { m_lastRawError = text; });
    connect(&m_client, &admin::AdminClient::disconnected, this, &AdminSession::onDisconnected);
}

bool AdminSession::open(const ConnectionOptions &options)
{
    close();
    m_options = options;
    const auto tls = options.sslConfiguration();
    if (!tls) {
        m_errorText = tls.error();
        setState(State::Refused, m_errorText);
        return false;
    }
    m_client.setSslConfiguration(tls.value());
    m_wanted = true;
    connectNow();
    return true;
}

void AdminSession::close()
{
    m_wanted = false;
    m_reconnectTimer.stop();
    m_pendingActions.clear();
    m_pendingDeadLetters.clear();
    if (m_state != State::Disconnected) {
        m_client.disconnectFromBroker();
        setState(State::Disconnected, tr("Disconnected"));
    }
}

void AdminSession::connectNow()
{
    if (!m_wanted)
        return;
    m_lastRawError.clear();
    m_attemptActive = true;
    if (m_state != State::Reconnecting)
        setState(State::Connecting, tr("Connecting to %1…").arg(m_options.label()));
    m_client.connectToBroker(m_options.host, m_options.port);
    // A handshake that never completes (a firewall dropping packets) must not hang forever.
    QTimer::singleShot(15000, this, [this] {
        if ((m_state == State::Connecting || m_state == State::Reconnecting) && m_wanted &&
            !m_client.isConnected()) {
            m_lastRawError = QStringLiteral("Socket operation timed out");
            m_client.disconnectFromBroker();
            onDisconnected();
        }
    });
}

void AdminSession::onDisconnected()
{
    // Both the close and an error can end one attempt; only the first one counts.
    if (!m_wanted || !m_attemptActive)
        return;
    m_attemptActive = false;
    const QString raw =
        m_lastRawError.isEmpty() ? QStringLiteral("Connection closed") : m_lastRawError;
    m_errorText = describeError(raw, m_options);
    if (!isRetryable(raw)) {
        m_wanted = false;
        setState(State::Refused, m_errorText);
        return;
    }
    setState(
        State::Reconnecting,
        tr("%1 — retrying every %2 s").arg(m_errorText).arg(m_reconnectTimer.interval() / 1000.0));
    m_reconnectTimer.start();
}

void AdminSession::setPaging(const admin::SnapshotPaging &paging)
{
    if (paging == m_paging)
        return;
    const QString before = watchLine();
    m_paging = paging;
    // A new page of a list the watch leaves out changes nothing on the wire yet.
    if (m_state == State::Connected && watchLine() != before)
        m_client.send(watchLine());
}

void AdminSession::setSections(admin::Sections sections)
{
    if (sections == m_sections)
        return;
    m_sections = sections;
    if (m_state == State::Connected)
        m_client.send(watchLine());
}

QString AdminSession::watchLine() const
{
    QString line = QStringLiteral("watch %1").arg(m_watchIntervalMs);
    if (m_sections != admin::AllSections)
        line += u' ' + admin::sectionNames(m_sections).join(u',');
    // The broker refuses page options for a list the watch leaves out: the buckets' page
    // waits while their tab is hidden.
    admin::SnapshotPaging paging = m_paging;
    using admin::Section;
    for (auto [section, page] : {std::pair{Section::Queues, &paging.queues},
                                 std::pair{Section::Connections, &paging.connections},
                                 std::pair{Section::RateLimits, &paging.ratelimits},
                                 std::pair{Section::Talkers, &paging.talkers}}) {
        if (!(m_sections & section))
            *page = admin::ListPage();
    }
    return paging.isPaged() ? line + u' ' + admin::pagingArguments(paging) : line;
}

void AdminSession::refresh()
{
    if (m_state == State::Connected) {
        m_client.send(watchLine());
    } else if (m_state == State::Reconnecting && !m_attemptActive) {
        m_reconnectTimer.stop();
        connectNow();
    }
}

void AdminSession::runAction(const QString &line)
{
    const quint64 id = m_client.send(line);
    if (id == 0) {
        Q_EMIT actionFinished(line, false, tr("Not connected to the broker"));
        return;
    }
    m_pendingActions.insert(id, line);
}

void AdminSession::fetchAudit(int count)
{
    m_client.send(QStringLiteral("audit %1").arg(count));
}

void AdminSession::fetchQueueMessages(const QString &line)
{
    if (m_client.send(line) == 0)
        Q_EMIT queueMessagesReceived({}, tr("Not connected to the broker"));
}

void AdminSession::fetchDeadLetters(const QString &line)
{
    const quint64 id = m_client.send(line);
    if (id == 0) {
        Q_EMIT deadLettersReceived(line, {}, tr("Not connected to the broker"));
        return;
    }
    m_pendingDeadLetters.insert(id, line);
}

bool AdminSession::isReadOnly() const
{
    return m_lastSnapshot.value(u"session").toObject().value(u"read_only").toBool();
}

void AdminSession::setState(State state, const QString &message)
{
    m_state = state;
    Q_EMIT stateChanged(state, message);
}

bool AdminSession::isRetryable(const QString &raw)
{
    if (raw.startsWith("Unauthorized") || raw.contains("certificate", Qt::CaseInsensitive) ||
        raw.contains("handshake", Qt::CaseInsensitive) || raw.contains("SSL"))
        return false;
    return true;
}

QString AdminSession::describeError(const QString &raw, const ConnectionOptions &options)
{
    const QString where = QStringLiteral("%1:%2").arg(options.host).arg(options.port);
    if (raw.startsWith("Unauthorized"))
        return tr("The broker refused this certificate: %1. Use a certificate whose CN is in "
                  "acl.admin_cns.")
            .arg(raw.mid(QStringLiteral("Unauthorized: ").size()));
    if (raw.contains("refused", Qt::CaseInsensitive))
        return tr("The broker is unreachable at %1 (connection refused): is it running, with "
                  "admin.enabled = true?")
            .arg(where);
    if (raw.contains("not found", Qt::CaseInsensitive) && raw.contains("host", Qt::CaseInsensitive))
        return tr("Unknown host %1.").arg(options.host);
    if (raw.contains("timed out", Qt::CaseInsensitive))
        return tr("No answer from %1 (timed out).").arg(where);
    if (raw.contains("issuer", Qt::CaseInsensitive) ||
        raw.contains("self signed", Qt::CaseInsensitive) ||
        raw.contains("self-signed", Qt::CaseInsensitive) ||
        raw.contains("could not be verified", Qt::CaseInsensitive))
        return tr("The broker's certificate is not signed by the selected CA (%1): wrong CA "
                  "file? (%2)")
            .arg(options.caPath, raw);
    if (raw.contains("expired", Qt::CaseInsensitive))
        return tr("A certificate has expired: %1").arg(raw);
    if (raw.contains("certificate", Qt::CaseInsensitive) || raw.contains("SSL") ||
        raw.contains("handshake", Qt::CaseInsensitive))
        return tr("The TLS handshake with %1 failed: %2").arg(where, raw);
    if (raw.startsWith("Server shutting down") || raw.contains("closed", Qt::CaseInsensitive))
        return tr("The broker at %1 closed the connection (%2).").arg(where, raw);
    return tr("Connection to %1 failed: %2").arg(where, raw);
}

} // namespace cmq::admingui
