// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "jobs/worker.h"

#include <QObject>
#include <QString>

#include <functional>
#include <utility>

class QMenu;
class QWidget;

namespace fleetscope {

class ConsoleSession;
class MapPage;
class SummaryView;

// File > Export: the map as PNG, the values of the current place as CSV, the time series of the selection from the
// flight recorder as CSV, the summary's offender lists as CSV. The files are written on a worker thread (a million
// rows, or hundreds of frames decoded from the recorder, take seconds); the result comes back as finished(), which the
// desk shows in its status bar. The exports run one at a time, in the order asked, on a Worker of their own; the desk
// closing waits for those asked before it to be written. Each file is written whole or not
// at all (model/savefile.h): an export that fails half way, on a full disk say, says why and leaves a file of the same
// name as it was.
class DeskExports : public QObject
{
    Q_OBJECT
public:
    DeskExports(ConsoleSession *session, MapPage *map, QWidget *dialogParent);
    // Waits until every export asked has been written (they may read the session's recorder).
    ~DeskExports() override;

    void addActionsTo(QMenu *menu);
    // The summary page's lists as CSV: the offenders by failures and the repeat offenders (lasting score). At most
    // 1000 rows each, written on the GUI thread.
    void addSummaryActionsTo(QMenu *menu, SummaryView *summary);
    // Without a dialog (tests, scripts): write to a file chosen beforehand.
    void exportValuesTo(const QString &file);
    void exportTimeSeriesTo(const QString &file);
    // The summary's lists (addSummaryActionsTo first).
    void exportOffendersTo(const QString &file);
    void exportRepeatOffendersTo(const QString &file);
    // The jobs' goodput (day and week) and where it went (the week's losses by cause).
    void exportGoodputTo(const QString &file);
    void exportGoodputLossesTo(const QString &file);
    bool isBusy() const { return m_running > 0; }

Q_SIGNALS:
    // error empty on success; summary says what was written, for the status bar.
    void finished(const QString &file, const QString &error, const QString &summary);

private:
    void exportMap();
    // Runs work (returning the error, empty on success, and what was written) on the worker; finished() follows.
    void run(const QString &file, std::function<std::pair<QString, QString>()> work);
    QString askFile(const QString &title, const QString &name, const QString &filter);

    ConsoleSession *m_session;
    MapPage *m_map;
    QWidget *m_dialogParent;
    SummaryView *m_summary = nullptr;
    int m_running = 0;
    Worker m_worker; // last: the export under way ends before the rest goes
};

} // namespace fleetscope
