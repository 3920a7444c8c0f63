// SPDX-License-Identifier: Apache-2.0
#include "app/deskmenus.h"

#include "app/consolesession.h"
#include "app/deskexports.h"
#include "app/deskhelp.h"
#include "app/mainwindow.h"
#include "model/navigation.h"
#include "model/replaycontroller.h"
#include "widgets/navigation/breadcrumbbar.h"
#include "widgets/search/searchbox.h"

#include <QAction>
#include <QApplication>
#include <QClipboard>
#include <QMenuBar>
#include <QStatusBar>

namespace fleetscope {

void addDeskMenus(MainWindow *window, BreadcrumbBar *breadcrumbs, const QList<QAction *> &dockToggles)
{
    QMenu *file = window->menuBar()->addMenu(MainWindow::tr("&File"));
    file->addAction(MainWindow::tr("&Connect to backend…"), window, &MainWindow::openConnectionDialog);
    file->addSeparator();
    window->exports()->addActionsTo(file);
    window->exports()->addSummaryActionsTo(file, window->summary());
    file->addSeparator();
    file->addAction(MainWindow::tr("&Quit"), window, &QWidget::close)->setShortcut(QKeySequence::Quit);

    QMenu *view = window->menuBar()->addMenu(MainWindow::tr("&View"));
    view->addAction(MainWindow::tr("&Copy view"), window,
            [window] {
                const QString text = window->currentView().toString();
                QApplication::clipboard()->setText(text);
                window->statusBar()->showMessage(
                    MainWindow::tr("Copied %1 — open it with fleetscope --view '%1'").arg(text), 10000);
            })
        ->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_C));
    view->addSeparator();
    view->addAction(MainWindow::tr("&Map"), window, [window] { window->showSummary(false); })
        ->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_1));
    QAction *summary = view->addAction(
        MainWindow::tr("&Executive summary"), window, [window] { window->showSummary(!window->isSummaryShown()); });
    summary->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_S));
    view->addSeparator();
    view->addActions(dockToggles);

    QMenu *go = window->menuBar()->addMenu(MainWindow::tr("&Go"));
    QAction *up = go->addAction(MainWindow::tr("&Up a level"), window->navigation(), &Navigation::up);
    up->setShortcut(QKeySequence(Qt::ALT | Qt::Key_Up));
    breadcrumbs->backAction()->setShortcuts(QKeySequence::Back);
    breadcrumbs->forwardAction()->setShortcuts(QKeySequence::Forward);
    go->addAction(breadcrumbs->backAction());
    go->addAction(breadcrumbs->forwardAction());
    go->addAction(MainWindow::tr("&Whole fleet"), window, [window] {
          window->navigation()->goTo(Place::fleet());
      })->setShortcut(QKeySequence(Qt::ALT | Qt::Key_Home));
    go->addSeparator();
    go->addAction(MainWindow::tr("&Find…"), window, [window] {
          window->showSummary(false);
          window->searchBox()->setFocus();
          window->searchBox()->selectAll();
      })->setShortcut(QKeySequence::Find);
    go->addAction(MainWindow::tr("&Live"), window->replay(), &ReplayController::goLive)
        ->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_L));

    QMenu *help = window->menuBar()->addMenu(MainWindow::tr("&Help"));
    help->addAction(MainWindow::tr("&Keyboard shortcuts"), window,
            [window] { showKeyboardShortcuts(window, window->menuBar()); })
        ->setShortcut(QKeySequence::HelpContents);
    help->addAction(MainWindow::tr("&About Fleetscope"), window, [window] { showAbout(window, *window->session()); });
}

} // namespace fleetscope
