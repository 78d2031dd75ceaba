#include "admin/snapshotparser.h"

#include <QJsonDocument>

namespace cmq::admin {

SnapshotParser::SnapshotParser(QObject *parent) : QObject(parent), m_worker(new QObject)
{
    m_thread.setObjectName(QStringLiteral("snapshot-parser"));
    m_worker->moveToThread(&m_thread);
    connect(&m_thread, &QThread::finished, m_worker, &QObject::deleteLater);
    m_thread.start();
}

SnapshotParser::~SnapshotParser()
{
    m_thread.quit();
    m_thread.wait();
}

void SnapshotParser::parse(QByteArray json)
{
    const quint64 ticket = ++m_latestTicket;
    const quint64 generation = m_generation;
    QMetaObject::invokeMethod(m_worker, [this, ticket, generation, json = std::move(json)] {
        if (ticket != m_latestTicket.load())
            return; // a newer snapshot is already queued: this one is out of date
        QJsonObject snapshot = QJsonDocument::fromJson(json).object();
        QMetaObject::invokeMethod(this, [this, generation, snapshot = std::move(snapshot)] {
            if (generation == m_generation)
                Q_EMIT parsed(snapshot);
        });
    });
}

void SnapshotParser::discardPending()
{
    ++m_generation;
}

} // namespace cmq::admin
