#pragma once
// Runs a command-line program to completion and keeps what it printed, for tests of the
// binaries as scripts and operators use them (cmq, ciphermq-broker).

#include <QByteArray>
#include <QList>
#include <QProcessEnvironment>
#include <QString>
#include <QStringList>

namespace cmq::test {

struct ProcessRun
{
    int exitCode = -1; // -1: did not start or finish in time, -2: crashed
    QByteArray out;
    QByteArray err;
    QList<QByteArray> errLines() const;
};

// Writes `input` to the program's stdin and closes it; kills the program after timeoutMs.
ProcessRun runProcess(const QString &program, const QStringList &args,
                      const QProcessEnvironment &environment =
                          QProcessEnvironment(QProcessEnvironment::InheritFromParent),
                      const QByteArray &input = {}, int timeoutMs = 120000);

} // namespace cmq::test
