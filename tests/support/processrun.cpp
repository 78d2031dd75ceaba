#include "processrun.h"

#include <QProcess>

namespace cmq::test {

QList<QByteArray> ProcessRun::errLines() const
{
    QList<QByteArray> lines = err.split('\n');
    if (!lines.isEmpty() && lines.last().isEmpty())
        lines.removeLast();
    return lines;
}

ProcessRun runProcess(const QString &program, const QStringList &args,
                      const QProcessEnvironment &environment, const QByteArray &input,
                      int timeoutMs)
{
    QProcess process;
    process.setProcessEnvironment(environment);
    process.start(program, args);
    ProcessRun run;
    if (!process.waitForStarted(timeoutMs)) {
        run.err = program.toUtf8() + " did not start: " + process.errorString().toUtf8();
        return run;
    }
    process.write(input);
    process.closeWriteChannel();
    if (!process.waitForFinished(timeoutMs)) {
        process.kill();
        process.waitForFinished();
        run.err = program.toUtf8() + " did not finish in time\n" + process.readAllStandardError();
        run.out = process.readAllStandardOutput();
        return run;
    }
    run.exitCode = process.exitStatus() == QProcess::NormalExit ? process.exitCode() : -2;
    run.out = process.readAllStandardOutput();
    run.err = process.readAllStandardError();
    return run;
}

} // namespace cmq::test
