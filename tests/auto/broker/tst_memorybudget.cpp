// MemoryBudget: when the alarm goes on and off, what a refusal counts, and that no budget
// means no alarm.

#include <QtTest>

#include "limits/memorybudget.h"

using cmq::limits::MemoryBudget;

Q_DECLARE_METATYPE(MemoryBudget::Admission)

class tst_MemoryBudget : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void admission_data();
    void admission();
    void alarmClearsAtNinetyPercent();
    void connectionBytesCount();
    void automaticBudgetIsAShareOfMemory();
};

void tst_MemoryBudget::admission_data()
{
    using A = MemoryBudget::Admission;
    QTest::addColumn<qint64>("budget");
    QTest::addColumn<qint64>("held");
    QTest::addColumn<qint64>("incoming");
    QTest::addColumn<MemoryBudget::Admission>("admission");
    QTest::newRow("no budget") << qint64(0) << qint64(1) << (qint64(1) << 40) << A::Admitted;
    QTest::newRow("room") << qint64(1000) << qint64(100) << qint64(100) << A::Admitted;
    QTest::newRow("exactly full") << qint64(1000) << qint64(900) << qint64(100) << A::Admitted;
    // At 90% the broker is not "nearly full": the message just does not fit.
    QTest::newRow("over, at 90%") << qint64(1000) << qint64(900) << qint64(101) << A::DoesNotFit;
    QTest::newRow("over, above 90%") << qint64(1000) << qint64(901) << qint64(100) << A::Alarm;
    QTest::newRow("already over") << qint64(1000) << qint64(2000) << qint64(0) << A::Alarm;
    QTest::newRow("larger than the budget, empty")
        << qint64(1000) << qint64(0) << qint64(1001) << A::DoesNotFit;
}

void tst_MemoryBudget::admission()
{
    QFETCH(qint64, budget);
    QFETCH(qint64, held);
    QFETCH(qint64, incoming);
    QFETCH(MemoryBudget::Admission, admission);
    using A = MemoryBudget::Admission;
    MemoryBudget memory(budget);
    memory.addMessageBytes(held);
    QList<bool> changes;
    memory.onAlarmChanged = [&](bool on) { changes.append(on); };
    QCOMPARE(memory.admit(incoming), admission);
    QCOMPARE(memory.alarm(), admission == A::Alarm);
    QCOMPARE(memory.refusals(), quint64(admission == A::Admitted ? 0 : 1));
    QCOMPARE(changes, admission == A::Alarm ? QList<bool>{true} : QList<bool>{});
}

void tst_MemoryBudget::alarmClearsAtNinetyPercent()
{
    MemoryBudget memory(1000);
    QList<bool> changes;
    memory.onAlarmChanged = [&](bool on) { changes.append(on); };
    memory.addMessageBytes(950);
    using A = MemoryBudget::Admission;
    QCOMPARE(memory.admit(100), A::Alarm);
    QVERIFY(memory.alarm());
    // Below the budget but above 90%: still on, even for a message that would fit.
    memory.addMessageBytes(-40); // 910
    QVERIFY(memory.alarm());
    QCOMPARE(memory.admit(10), A::Alarm);
    QCOMPARE(memory.refusals(), quint64(2));
    memory.addMessageBytes(-10); // 900 = 90%
    QVERIFY(!memory.alarm());
    QCOMPARE(memory.admit(100), A::Admitted);
    memory.addMessageBytes(100); // the accepted message is held: 1000
    QCOMPARE(changes, (QList<bool>{true, false}));
    QCOMPARE(memory.alarmsRaised(), quint64(1));
    // Raising the budget clears it at once; removing it does too.
    QCOMPARE(memory.admit(1000), A::Alarm);
    memory.setBudget(10000);
    QVERIFY(!memory.alarm());
    QCOMPARE(memory.admit(20000), A::DoesNotFit);
    memory.setBudget(0);
    QVERIFY(!memory.alarm());
    QCOMPARE(memory.admit(20000), A::Admitted);
}

void tst_MemoryBudget::connectionBytesCount()
{
    MemoryBudget memory(1000);
    memory.addMessageBytes(500);
    memory.setConnectionBytes(450);
    QCOMPARE(memory.used(), qint64(950));
    QCOMPARE(memory.admit(100), MemoryBudget::Admission::Alarm);
    memory.setConnectionBytes(0); // the consumers read their output
    QVERIFY(!memory.alarm());
    QCOMPARE(memory.admit(100), MemoryBudget::Admission::Admitted);
}

void tst_MemoryBudget::automaticBudgetIsAShareOfMemory()
{
    const qint64 budget = cmq::limits::automaticMemoryBudget();
    QVERIFY(budget > 0); // this machine has /proc/meminfo
    QFile meminfo(QStringLiteral("/proc/meminfo"));
    QVERIFY(meminfo.open(QIODevice::ReadOnly));
    const QByteArray first = meminfo.readLine(); // "MemTotal:       24563544 kB"
    const qint64 total = first.mid(9).trimmed().split(' ').value(0).toLongLong() * 1024;
    QVERIFY(budget <= total / 100 * 40);
}

QTEST_GUILESS_MAIN(tst_MemoryBudget)
#include "tst_memorybudget.moc"
