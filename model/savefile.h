// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <QByteArray>
#include <QString>

#include <functional>

class QFileDevice;

namespace fleetscope {

// Every file the console writes for its user (the exports, the summary's reports, --screenshot) is written whole or
// not at all. A file written in place was truncated first, and on a full disk (or a quota, or a network share that
// went away) was left cut short, reported as written where the flush and the close were not checked: a ticket or a
// spreadsheet then carried half a fleet without anyone knowing, and the previous export of the same name was lost.
//
// The contents go to a temporary file beside the target (QSaveFile), which replaces the target, by a rename, only once
// every write, the flush and the sync to disk succeeded; on any failure the temporary file is removed and the target
// is as it was. Beside the target, not in /tmp: a rename across file systems is a copy, which could fail half way.
namespace SaveFile {

// Opens the temporary file, runs write on it (which returns an error, empty on success), flushes, syncs and commits.
// Returns the first error, said for people ("cannot write PATH: No space left on device"), empty on success. write may
// be long (a million rows of CSV): it runs on the caller's thread. write must compare what each write returns with
// what it gave: a write larger than the file's buffer that the disk takes in part returns the part, with no error set
// (Qt's file engine), and a later commit would not know. CsvExport does; the PNG and PDF reports are encoded in memory
// and go through the second form.
QString write(const QString &path, const std::function<QString(QFileDevice &file)> &write);
// The same with contents already in memory.
QString write(const QString &path, const QByteArray &contents);

} // namespace SaveFile

} // namespace fleetscope
