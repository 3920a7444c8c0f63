// SPDX-License-Identifier: Apache-2.0
// For the suites that check what the console's writes do on a full disk (model/savefile.h): the error comes back, and
// a file that was there is left as it was.
#pragma once

#include <QByteArray>
#include <QDir>
#include <QFile>
#include <QString>
#include <QStringList>
#include <QTemporaryDir>

#include <sys/mount.h>
#include <sys/resource.h>

#include <cerrno>
#include <csignal>
#include <cstring>

#include <fcntl.h>
#include <unistd.h>

namespace fleetscope::fulldisktesting {

// A directory on a file system with no space left. Where this process may mount (root with CAP_SYS_ADMIN, as here
// and in CI), a tmpfs of 64 KiB mounted on a temporary directory and filled to the last page: a write that needs a
// new page fails with ENOSPC, as on a full disk. /dev/full will not do: a file written whole or not at all is written
// beside its target first, and /dev takes no new file. Elsewhere (a developer's own account), the process's file size
// limit is set to 0 while the disk is "full" (RLIMIT_FSIZE, SIGXFSZ ignored): a write that grows any file fails, with
// EFBIG; the limit is the whole process's, so the threads of the suite are held to it too until fill's undo.
//
// Files that must survive go in with keep() before fill(); the writes under test then come after fill().
class FullDisk
{
public:
    FullDisk()
    {
        if (!m_dir.isValid()) {
            m_problem = QStringLiteral("no temporary directory");
            return;
        }
        const QByteArray path = QFile::encodeName(m_dir.path());
        m_mounted
            = ::mount("tmpfs", path.constData(), "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, "size=64k,mode=0700") == 0;
    }
    ~FullDisk()
    {
        undo();
        if (m_mounted) {
            // Lazily: a file the code under test left open must not keep the mount (and the directory) for good.
            ::umount2(QFile::encodeName(m_dir.path()).constData(), MNT_DETACH);
        }
    }
    FullDisk(const FullDisk &) = delete;
    FullDisk &operator=(const FullDisk &) = delete;

    QString path(const QString &name) const { return QDir(m_dir.path()).filePath(name); }
    // Why the disk could not be made full; empty when it is.
    QString problem() const { return m_problem; }
    bool isTmpfs() const { return m_mounted; }
    // What a write to it fails with, as Qt says it (strerror).
    QString expectedError() const { return QString::fromLocal8Bit(std::strerror(m_mounted ? ENOSPC : EFBIG)); }

    // A file there before the disk fills.
    bool keep(const QString &name, const QByteArray &contents)
    {
        QFile file(path(name));
        return file.open(QIODevice::WriteOnly) && file.write(contents) == contents.size() && file.flush();
    }

    // No space left from here on (until undo).
    bool fill()
    {
        if (!m_mounted) {
            m_oldHandler = std::signal(SIGXFSZ, SIG_IGN);
            ::getrlimit(RLIMIT_FSIZE, &m_oldLimit);
            const rlimit none { 0, m_oldLimit.rlim_max };
            m_limited = ::setrlimit(RLIMIT_FSIZE, &none) == 0;
            if (!m_limited) {
                m_problem = QStringLiteral("neither a tmpfs nor a file size limit: %1")
                                .arg(QString::fromLocal8Bit(std::strerror(errno)));
            }
            return m_limited;
        }
        const QByteArray filler = QFile::encodeName(path(QStringLiteral(".filler")));
        const int fd = ::open(filler.constData(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
        if (fd < 0) {
            m_problem
                = QStringLiteral("cannot create the filler: %1").arg(QString::fromLocal8Bit(std::strerror(errno)));
            return false;
        }
        // Pages first, then bytes, until the file system refuses even one.
        static const char block[4096] = {};
        for (size_t size : { sizeof block, size_t { 1 } }) {
            while (::write(fd, block, size) > 0) { }
        }
        const int error = errno;
        ::close(fd);
        if (error != ENOSPC) {
            m_problem = QStringLiteral("the filler stopped with %1").arg(QString::fromLocal8Bit(std::strerror(error)));
            return false;
        }
        return true;
    }

    // Space again (the file size limit as it was); the tmpfs stays full until it goes.
    void undo()
    {
        if (m_limited) {
            ::setrlimit(RLIMIT_FSIZE, &m_oldLimit);
            std::signal(SIGXFSZ, m_oldHandler);
            m_limited = false;
        }
    }

    // What the file holds now (empty when it is not there).
    QByteArray contents(const QString &name) const
    {
        QFile file(path(name));
        return file.open(QIODevice::ReadOnly) ? file.readAll() : QByteArray();
    }
    // The names in the directory but the filler: a write that failed must leave no temporary file behind.
    QStringList names() const
    {
        QStringList all = QDir(m_dir.path()).entryList(QDir::Files | QDir::Hidden | QDir::NoDotAndDotDot);
        all.removeAll(QStringLiteral(".filler"));
        return all;
    }

private:
    QTemporaryDir m_dir;
    bool m_mounted = false;
    bool m_limited = false;
    rlimit m_oldLimit {};
    void (*m_oldHandler)(int) = SIG_DFL;
    QString m_problem;
};

} // namespace fleetscope::fulldisktesting
