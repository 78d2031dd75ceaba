#pragma once
// Top talkers: what each client identity (certificate CN) did on the data listener, so an
// operator sees who floods the broker. Totals per CN are what its closed connections did (held
// here) plus what its open connections did so far (read live from their sessions).

#include <QHash>
#include <QList>
#include <QSet>
#include <QString>

namespace cmq::metrics {

// What one identity, or one connection of it, did.
struct TalkerFigures
{
    quint64 publishes = 0; // messages stored (answered "ACK <id>")
    quint64 deliveries = 0;
    quint64 requests = 0;
    quint64 bytesIn = 0;
    quint64 bytesOut = 0;

    TalkerFigures &operator+=(const TalkerFigures &other);
};

// One open data connection, as the talker totals see it.
struct OpenTalker
{
    QString cn;
    TalkerFigures figures;
};

// An identity's recent rates, per second (TalkerRateWindow).
struct TalkerRates
{
    double publishes = 0;
    double deliveries = 0;
    double bytesIn = 0;
    double bytesOut = 0;
    bool operator==(const TalkerRates &) const = default;
};

struct TalkerView
{
    QString cn;
    int connections = 0;
    TalkerFigures figures;
    double idleSeconds = 0; // since its last connection closed; 0 while it has one
    TalkerRates rates;      // over the last seconds, as of the last sample (BrokerMetrics)
};

class TalkerTotals final
{
public:
    // An identity without a connection is kept this long after its last one closed...
    static constexpr qint64 DefaultRetentionMs = 5 * 60 * 1000;
    // ...and at most this many of them (the longest idle go first): a client churning through
    // many certificates cannot grow the table without bound.
    static constexpr int DefaultMaxIdle = 10000;

    explicit TalkerTotals(qint64 retentionMs = DefaultRetentionMs,
                          int maxIdle = DefaultMaxIdle);

    void connectionClosed(const QString &cn, const TalkerFigures &final, qint64 nowMs);
    // Forgets identities idle past the retention, then the longest idle beyond the cap.
    // `connected`: the CNs with an open connection now (never forgotten).
    void expire(qint64 nowMs, const QSet<QString> &connected);
    // Every identity with an open connection or still retained, sorted by CN.
    QList<TalkerView> view(const QList<OpenTalker> &open, qint64 nowMs) const;
    qsizetype retained() const { return m_closed.size(); }

private:
    struct Closed
    {
        TalkerFigures figures;
        qint64 lastClosedMs = 0;
    };

    qint64 m_retentionMs;
    int m_maxIdle;
    QHash<QString, Closed> m_closed;
};

} // namespace cmq::metrics
