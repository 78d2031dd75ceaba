#pragma once
// An outbox on disk (Mail Pigeon's FilesBox): one file per message, written to a temporary name,
// fsync'd and renamed into place, so a crash of the sending process never leaves a half-written
// entry and every saved message is resent when the process starts again.
//
// The directory is private (0700, files 0600: an entry may hold plaintext until its receiver's key
// is known) and locked, so two processes never resend the same outbox.

#include <memory>

#include <QLockFile>
#include <QString>

#include "client/outboxstore.h"

namespace cmq::client {

class FileOutbox final : public OutboxStore
{
public:
    // Creates the directory when needed and takes its lock; fails when another live process holds
    // it. Leftover temporary files of an interrupted save are removed.
    static Result<std::unique_ptr<FileOutbox>> open(const QString &directory);
    ~FileOutbox() override;
    FileOutbox(const FileOutbox &) = delete;
    FileOutbox &operator=(const FileOutbox &) = delete;

    Status save(const OutboxEntry &entry) override;
    // Unreadable files are renamed to *.corrupt (kept for inspection) and skipped with a warning.
    Result<QList<OutboxEntry>> readAll() override;
    Status remove(const QString &messageId) override;

    QString directory() const { return m_directory; }

private:
    FileOutbox(QString directory, std::unique_ptr<QLockFile> lock, int directoryFd);
    QString pathFor(const QString &messageId) const;

    QString m_directory;
    std::unique_ptr<QLockFile> m_lock;
    int m_directoryFd = -1;
};

} // namespace cmq::client
