// SPDX-License-Identifier: Apache-2.0
#include "model/savefile.h"

#include <QSaveFile>

#ifdef Q_OS_UNIX
#include <unistd.h>

#include <cerrno>
#include <cstring>
#endif

namespace fleetscope::SaveFile {

QString write(const QString &path, const std::function<QString(QFileDevice &file)> &write)
{
    QSaveFile file(path);
    // Off by default, said here since it matters: where the directory takes no new file, QSaveFile could fall back to
    // writing the target in place, which is what this is here to prevent.
    file.setDirectWriteFallback(false);
    if (!file.open(QIODevice::WriteOnly)) {
        return QStringLiteral("cannot create %1: %2").arg(path, file.errorString());
    }
    auto failed = [&file, &path](const QString &why) {
        file.cancelWriting(); // the temporary file goes with `file`; the target is untouched
        return QStringLiteral("cannot write %1: %2").arg(path, why);
    };
    if (QString error = write(file); !error.isEmpty()) {
        file.cancelWriting();
        return error;
    }
    // Flushed and synced here, each checked, before commit(): Qt 6.4's commit() closes the file, and with it flushes
    // what the file still buffers (where a full disk shows: small writes go to a buffer first), but renames the file
    // over the target even when that flush failed, and ignores the sync's result. Seen on a full tmpfs: 100 bytes
    // written, commit() true, the target replaced by an empty file.
    if (!file.flush()) {
        return failed(file.errorString());
    }
#ifdef Q_OS_UNIX
    // Where the disk fills late (a network file system, a thin volume), the sync is where it says so.
    if (::fsync(file.handle()) != 0 && errno != EINVAL) { // EINVAL: a file that cannot be synced, such as a pipe
        return failed(QString::fromLocal8Bit(std::strerror(errno)));
    }
#endif
    // commit() still fails on a write refused earlier (and not checked by write), and on the rename.
    if (!file.commit()) {
        return QStringLiteral("cannot write %1: %2").arg(path, file.errorString());
    }
    return {};
}

QString write(const QString &path, const QByteArray &contents)
{
    return write(path, [&contents, &path](QFileDevice &file) {
        if (file.write(contents) != contents.size()) {
            return QStringLiteral("cannot write %1: %2").arg(path, file.errorString());
        }
        return QString();
    });
}

} // namespace fleetscope::SaveFile
