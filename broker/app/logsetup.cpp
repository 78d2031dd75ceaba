#include "app/logsetup.h"

#include <QLoggingCategory>

#include "logging/jsonlogsink.h"

namespace cmq {

void setUpLogging(const Config::Logging &logging)
{
    qSetMessagePattern(QStringLiteral(
        "%{time yyyy-MM-ddThh:mm:ss.zzz} "
        "%{if-debug}DEBUG%{endif}%{if-info}INFO %{endif}%{if-warning}WARN %{endif}"
        "%{if-critical}ERROR%{endif}%{if-fatal}FATAL%{endif} %{category}: %{message}"));
    if (qEnvironmentVariableIsSet("QT_LOGGING_RULES"))
        return; // the operator's explicit rules win
    QString rules = QStringLiteral("ciphermq.*.debug=false\n");
    const QString &level = logging.level;
    if (level == QLatin1String("trace") || level == QLatin1String("debug"))
        rules = QStringLiteral("ciphermq.*.debug=true\n");
    else if (level == QLatin1String("warn"))
        rules += QStringLiteral("ciphermq.*.info=false\n");
    else if (level == QLatin1String("error"))
        rules += QStringLiteral("ciphermq.*.info=false\nciphermq.*.warning=false\n");
    // The audit trail of admin actions is logged at every level (docs/ADMIN-PROTOCOL.md).
    rules += QStringLiteral("ciphermq.audit.info=true\nciphermq.audit.warning=true\n");
    QLoggingCategory::setFilterRules(rules);
}

Status setUpLogFiles(const Config::Logging &logging)
{
    return logging::JsonLogSink::install(logging);
}

} // namespace cmq
