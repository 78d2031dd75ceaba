#include "admin/adminclient.h"

#include <QEventLoop>
#include <QTimer>

namespace cmq::admin {

AdminClient::AdminClient(QObject *parent) : QObject(parent)
{
    // Small requests that must leave at once (no Nagle delay); set once the TCP connection is up.
    connect(&m_socket, &QSslSocket::connected, this,
            [this] { m_socket.setSocketOption(QAbstractSocket::LowDelayOption, 1); });
    connect(&m_parser, &SnapshotParser::parsed, this, &AdminClient::snapshotReceived);
    connect(&m_socket, &QSslSocket::encrypted, this, &AdminClient::connected);
    connect(&m_socket, &QSslSocket::readyRead, this, &AdminClient::onReadyRead);
    connect(&m_socket, &QSslSocket::disconnected, this, [this] {
        onReadyRead(); // a refusal line and the close can arrive together
        m_reader.reset();
        m_ids.clear();
        Q_EMIT disconnected();
    });
    connect(&m_socket, &QSslSocket::errorOccurred, this, [this](QAbstractSocket::SocketError e) {
        if (e == QAbstractSocket::RemoteHostClosedError && m_socket.isEncrypted())
            return; // an orderly close after the session started: disconnected() says it
        m_lastError = m_socket.errorString();
        Q_EMIT errorOccurred(m_lastError);
    });
    connect(&m_socket, &QSslSocket::sslErrors, this, [this](const QList<QSslError> &errors) {
        if (!errors.isEmpty())
            m_lastError = errors.constFirst().errorString();
    });
}

AdminClient::~AdminClient()
{
    // The socket is a member: it is destroyed after the other members and may still signal
    // (an abort emits disconnected) into handlers that use them.
    m_socket.disconnect(this);
    m_socket.abort();
}

void AdminClient::setSslConfiguration(const QSslConfiguration &configuration)
{
    m_socket.setSslConfiguration(configuration);
}

void AdminClient::connectToBroker(const QString &host, quint16 port)
{
    m_lastError.clear();
    m_reader.reset();
    m_ids.clear();
    m_parser.discardPending(); // a late snapshot of the previous connection is not this one's
    m_socket.connectToHostEncrypted(host, port);
}

void AdminClient::disconnectFromBroker()
{
    m_parser.discardPending();
    m_socket.disconnectFromHost();
}

bool AdminClient::isConnected() const
{
    return m_socket.isEncrypted() && m_socket.state() == QAbstractSocket::ConnectedState;
}

QString AdminClient::validate(const QString &line)
{
    const AdminParseResult parsed = parseAdminRequest(line.toUtf8());
    if (parsed.ok)
        return QString();
    return QString::fromUtf8(parsed.errorReply.mid(7)); // without "Error: "
}

quint64 AdminClient::send(const QString &line)
{
    const QByteArray bytes = line.toUtf8();
    const AdminParseResult parsed = parseAdminRequest(bytes);
    if (!parsed.ok || !isConnected())
        return 0;
    const quint64 id = m_nextId++;
    m_reader.expect(parsed.request.command);
    m_ids.push_back(id);
    m_socket.write(bytes + '\n');
    return id;
}

void AdminClient::onReadyRead()
{
    const QByteArray bytes = m_socket.readAll();
    if (bytes.isEmpty())
        return;
    for (const AdminMessage &message : m_reader.feed(bytes)) {
        switch (message.kind) {
        case AdminMessage::Kind::Reply: {
            AdminReply reply;
            reply.command = message.command;
            reply.ok = !message.isError;
            if (message.isError)
                reply.error = QString::fromUtf8(message.body);
            else
                reply.body = message.body;
            const quint64 id = m_ids.empty() ? 0 : m_ids.front();
            if (!m_ids.empty())
                m_ids.pop_front();
            Q_EMIT replyReceived(id, reply);
            break;
        }
        case AdminMessage::Kind::Snapshot:
            m_parser.parse(message.body); // snapshotReceived follows, from the parser

            break;
        case AdminMessage::Kind::Notice:
            Q_EMIT noticeReceived(QString::fromUtf8(message.body));
            break;
        case AdminMessage::Kind::Unsolicited:
            m_lastError = QString::fromUtf8(message.body);
            Q_EMIT errorOccurred(m_lastError);
            break;
        case AdminMessage::Kind::Malformed:
            m_lastError = QStringLiteral("protocol error: %1").arg(QString::fromUtf8(message.body));
            Q_EMIT errorOccurred(m_lastError);
            break;
        }
    }
}

Status AdminClient::waitForConnected(int timeoutMs)
{
    if (isConnected())
        return success();
    QEventLoop loop;
    QTimer timer;
    timer.setSingleShot(true);
    connect(&timer, &QTimer::timeout, &loop, &QEventLoop::quit);
    connect(this, &AdminClient::connected, &loop, &QEventLoop::quit);
    connect(this, &AdminClient::errorOccurred, &loop, &QEventLoop::quit);
    connect(this, &AdminClient::disconnected, &loop, &QEventLoop::quit);
    timer.start(timeoutMs);
    loop.exec();
    if (isConnected())
        return success();
    if (!m_lastError.isEmpty())
        return failure(m_lastError);
    return failure(QStringLiteral("no TLS connection within %1 ms").arg(timeoutMs));
}

Result<AdminReply> AdminClient::request(const QString &line, int timeoutMs)
{
    const QString invalid = validate(line);
    if (!invalid.isEmpty())
        return Result<AdminReply>::failure(invalid);
    const quint64 id = send(line);
    if (id == 0)
        return Result<AdminReply>::failure(m_lastError.isEmpty() ? QStringLiteral("not connected")
                                                                 : m_lastError);
    std::optional<AdminReply> got;
    QEventLoop loop;
    QTimer timer;
    timer.setSingleShot(true);
    connect(&timer, &QTimer::timeout, &loop, &QEventLoop::quit);
    connect(this, &AdminClient::replyReceived, &loop,
            [&](quint64 replyId, const AdminReply &reply) {
                if (replyId == id) {
                    got = reply;
                    loop.quit();
                }
            });
    connect(this, &AdminClient::disconnected, &loop, &QEventLoop::quit);
    timer.start(timeoutMs);
    if (!got)
        loop.exec();
    if (got)
        return *got;
    if (!m_lastError.isEmpty())
        return Result<AdminReply>::failure(m_lastError);
    if (!isConnected())
        return Result<AdminReply>::failure(QStringLiteral("the broker closed the connection"));
    return Result<AdminReply>::failure(QStringLiteral("no reply within %1 ms").arg(timeoutMs));
}

} // namespace cmq::admin
