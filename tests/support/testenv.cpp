#include "testenv.h"

#include <QDir>
#include <QTcpServer>

namespace cmq::test {

QString certFile(const QString &fileName)
{
    const QByteArray dir = qgetenv("CMQ_TEST_CERTS");
    if (dir.isEmpty())
        qFatal("CMQ_TEST_CERTS is not set: run the tests through ctest");
    return QDir(QString::fromLocal8Bit(dir)).absoluteFilePath(fileName);
}

quint16 freePort()
{
    QTcpServer server;
    if (!server.listen(QHostAddress::LocalHost, 0))
        qFatal("no free port: %s", qPrintable(server.errorString()));
    return server.serverPort();
}

} // namespace cmq::test
