#include "logging/jsonlogsink.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include <QDateTime>
#include <QJsonDocument>
#include <QJsonObject>
#include <QMutex>

#include "logging/rotatingfile.h"

namespace cmq::logging {

namespace {

struct Output
{
    std::unique_ptr<RotatingFile> file;
    int minSeverity = 0;
};

struct SinkState
{
    QMutex mutex;
    std::vector<Output> outputs;
};

SinkState &state()
{
    static SinkState s;
    return s;
}

int severity(QtMsgType type)
{
    switch (type) {
    case QtDebugMsg:
        return 0;
    case QtInfoMsg:
        return 1;
    case QtWarningMsg:
        return 2;
    case QtCriticalMsg:
        return 3;
    case QtFatalMsg:
        return 4;
    }
    return 1;
}

void handler(QtMsgType type, const QMessageLogContext &context, const QString &message)
{
    const QString safe = JsonLogSink::redact(message);
    const QByteArray console = qFormatLogMessage(type, context, safe).toLocal8Bit() + '\n';
    const QByteArray json =
        JsonLogSink::formatJson(type, context.category, safe, QDateTime::currentDateTimeUtc());
    {
        SinkState &s = state();
        QMutexLocker lock(&s.mutex);
        std::fwrite(console.constData(), 1, size_t(console.size()), stderr);
        std::fflush(stderr);
        for (Output &output : s.outputs) {
            if (severity(type) >= output.minSeverity)
                output.file->write(json);
        }
    }
    if (type == QtFatalMsg)
        std::abort();
}

} // namespace

const char *JsonLogSink::levelName(QtMsgType type)
{
    switch (type) {
    case QtDebugMsg:
        return "debug";
    case QtInfoMsg:
        return "info";
    case QtWarningMsg:
        return "warn";
    case QtCriticalMsg:
        return "error";
    case QtFatalMsg:
        return "fatal";
    }
    return "info";
}

QString JsonLogSink::redact(const QString &message)
{
    if (message.contains(QLatin1String("PRIVATE KEY-----")))
        return QStringLiteral("[redacted: the message contained private key material]");
    if (message.contains(QLatin1String("\"ciphertext\"")) ||
        message.contains(QLatin1String("\"enc_session_key\"")))
        return QStringLiteral("[redacted: the message contained a message envelope]");
    return message;
}

QByteArray JsonLogSink::formatJson(QtMsgType type, const char *category, const QString &message,
                                   const QDateTime &utc)
{
    const QJsonObject object{
        {QStringLiteral("timestamp"), utc.toString(Qt::ISODateWithMs)},
        {QStringLiteral("level"), QString::fromLatin1(levelName(type))},
        {QStringLiteral("target"), QString::fromUtf8(category ? category : "default")},
        {QStringLiteral("message"), message},
    };
    return QJsonDocument(object).toJson(QJsonDocument::Compact) + '\n';
}

Status JsonLogSink::install(const Config::Logging &logging)
{
    const RotatingFile::Period period = RotatingFile::periodFromConfig(logging.rotation);
    const qint64 maxBytes = qint64(logging.maxSizeMb) << 20;
    // Ordered from the widest level down: when two levels share a path, one file gets the
    // wider set once, instead of two writers fighting over one file.
    const std::pair<const QString &, int> wanted[] = {
        {logging.debugFilePath, severity(QtDebugMsg)},
        {logging.infoFilePath, severity(QtInfoMsg)},
        {logging.errorFilePath, severity(QtCriticalMsg)}};
    std::vector<Output> outputs;
    for (const auto &[path, minSeverity] : wanted) {
        const bool shared = std::any_of(outputs.cbegin(), outputs.cend(),
                                        [&](const Output &o) { return o.file->path() == path; });
        if (shared)
            continue;
        auto file = std::make_unique<RotatingFile>(
            RotatingFile::Options{path, period, maxBytes, logging.maxFiles});
        if (const Status opened = file->open(); !opened)
            return opened;
        outputs.push_back(Output{std::move(file), minSeverity});
    }
    {
        SinkState &s = state();
        QMutexLocker lock(&s.mutex);
        s.outputs = std::move(outputs);
    }
    qInstallMessageHandler(handler);
    return success();
}

void JsonLogSink::uninstall()
{
    qInstallMessageHandler(nullptr);
    SinkState &s = state();
    QMutexLocker lock(&s.mutex);
    s.outputs.clear();
}

} // namespace cmq::logging
