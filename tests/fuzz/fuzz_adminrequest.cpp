// libFuzzer target for the admin listener's request parser: the bytes are framed into lines the
// way an admin session frames its socket buffer, and each line is parsed. Besides crashes and
// sanitizer reports it traps on broken invariants: every error is one "Error: " line, every
// accepted request carries what its command needs, and writing an accepted request back out in
// its canonical form parses to the same request.

#include <cstddef>
#include <cstdint>
#include <cstring>

#include <QByteArray>
#include <QByteArrayView>
#include <QString>
#include <QStringList>

#include "admin/adminrequest.h"
#include "fuzzcheck.h"
#include "protocol/lineframer.h"
#include "protocol/request.h"

using namespace cmq;
using namespace cmq::admin;

namespace {

bool sameRequest(const AdminRequest &a, const AdminRequest &b)
{
    return a.command == b.command && a.queue == b.queue && a.connectionId == b.connectionId &&
           a.intervalMs == b.intervalMs && a.sections == b.sections && a.count == b.count &&
           a.afterId == b.afterId && a.filter == b.filter && a.definitions == b.definitions;
}

QByteArray canonicalLine(const AdminRequest &request)
{
    QByteArray line = adminCommandName(request.command);
    switch (request.command) {
    case AdminCommand::Purge:
    case AdminCommand::DeleteQueue:
        return line + ' ' + request.queue.toUtf8();
    case AdminCommand::Disconnect:
        return line + ' ' + QByteArray::number(request.connectionId);
    case AdminCommand::Audit:
        return line + ' ' + QByteArray::number(request.count);
    case AdminCommand::Requeue: // count 0: all, the form without a count
        return line + ' ' + request.queue.toUtf8() +
               (request.count > 0 ? ' ' + QByteArray::number(request.count) : QByteArray());
    case AdminCommand::DeadLetters:
        return line + ' ' + request.queue.toUtf8() + ' ' + QByteArray::number(request.count);
    case AdminCommand::QueueMessages:
        line += ' ' + request.queue.toUtf8() + ' ' + QByteArray::number(request.afterId) + ' ' +
                QByteArray::number(request.count);
        return request.filter.isEmpty() ? line : line + ' ' + request.filter.toUtf8();
    case AdminCommand::DefinitionsImport:
        return line + ' ' + request.definitions;
    case AdminCommand::Watch:
        line += ' ' + QByteArray::number(request.intervalMs);
        if (request.sections != AllSections)
            line += ' ' + sectionNames(request.sections).join(QLatin1Char(',')).toUtf8();
        return line;
    default:
        return line;
    }
}

void checkLine(QByteArrayView line)
{
    const AdminParseResult result = parseAdminRequest(line);
    if (!result.ok) {
        CHECK(result.errorReply.startsWith("Error: "));
        CHECK(result.errorReply.size() > 7);
        CHECK(!result.errorReply.contains('\n'));
        // Echoed input is cut at a character, so the reply stays valid UTF-8.
        CHECK(protocol::isValidUtf8(result.errorReply));
        return;
    }
    const AdminRequest &request = result.request;
    CHECK(request.command != AdminCommand::Unknown);
    CHECK(adminCommandNames().contains(QString::fromLatin1(adminCommandName(request.command))));
    switch (request.command) {
    case AdminCommand::Purge:
    case AdminCommand::DeleteQueue:
        CHECK(protocol::isValidName(request.queue.toUtf8()));
        break;
    case AdminCommand::Disconnect:
        CHECK(request.connectionId != 0);
        break;
    case AdminCommand::Audit:
        CHECK(request.count >= 1 && request.count <= MaxAuditEntries);
        break;
    case AdminCommand::Requeue:
        CHECK(protocol::isValidName(request.queue.toUtf8()));
        CHECK(request.count >= 0 && request.count <= MaxRequeueMessages);
        break;
    case AdminCommand::DeadLetters:
        CHECK(protocol::isValidName(request.queue.toUtf8()));
        CHECK(request.count >= 1 && request.count <= MaxDeadLetterEntries);
        break;
    case AdminCommand::QueueMessages:
        CHECK(protocol::isValidName(request.queue.toUtf8()));
        CHECK(request.count >= 1 && request.count <= MaxMessagePageRows);
        break;
    case AdminCommand::DefinitionsImport:
        CHECK(!request.definitions.isEmpty());
        break;
    case AdminCommand::Watch:
        CHECK(request.intervalMs >= MinWatchIntervalMs && request.intervalMs <= MaxWatchIntervalMs);
        CHECK(request.sections != Sections());
        CHECK((request.sections & ~AllSections) == Sections());
        break;
    default:
        break;
    }
    const AdminParseResult again = parseAdminRequest(canonicalLine(request));
    CHECK(again.ok);
    CHECK(sameRequest(again.request, request));
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    QByteArrayView buffer(reinterpret_cast<const char *>(data), qsizetype(size));
    for (;;) {
        const protocol::Frame frame = protocol::takeLine(buffer, MaxRequestLineBytes);
        if (frame.status != protocol::FrameStatus::Ok &&
            frame.status != protocol::FrameStatus::InvalidUtf8)
            break;
        if (frame.status == protocol::FrameStatus::Ok)
            checkLine(frame.line);
        buffer = buffer.sliced(frame.consumed);
    }
    return 0;
}
