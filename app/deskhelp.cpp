// SPDX-License-Identifier: Apache-2.0
#include "app/deskhelp.h"

#include "app/consolesession.h"

#include <QAction>
#include <QCoreApplication>
#include <QMenu>
#include <QMenuBar>
#include <QMessageBox>

#include <utility>

namespace fleetscope {

namespace {
QString tr(const char *text)
{
    return QCoreApplication::translate("DeskHelp", text);
}
} // namespace

void showKeyboardShortcuts(QWidget *parent, QMenuBar *menus)
{
    QString rows;
    auto row = [&rows](const QString &keys, const QString &what) {
        rows
            += QStringLiteral("<tr><td><b>%1</b></td><td>%2</td></tr>").arg(keys.toHtmlEscaped(), what.toHtmlEscaped());
    };
    for (QAction *menu : menus->actions()) {
        for (QAction *action : menu->menu()->actions()) {
            if (!action->shortcut().isEmpty()) {
                row(action->shortcut().toString(QKeySequence::NativeText), action->text().remove(QLatin1Char('&')));
            }
        }
    }
    const std::pair<const char *, const char *> mapKeys[] = {
        { QT_TRANSLATE_NOOP("DeskHelp", "Click, Enter"),
            QT_TRANSLATE_NOOP("DeskHelp", "Go one level down towards a GPU") },
        { QT_TRANSLATE_NOOP("DeskHelp", "Esc, Backspace"), QT_TRANSLATE_NOOP("DeskHelp", "Up a level") },
        { QT_TRANSLATE_NOOP("DeskHelp", "Wheel, +, -"), QT_TRANSLATE_NOOP("DeskHelp", "Zoom at the cursor") },
        { QT_TRANSLATE_NOOP("DeskHelp", "Drag, arrow keys"), QT_TRANSLATE_NOOP("DeskHelp", "Pan") },
        { QT_TRANSLATE_NOOP("DeskHelp", "0, Home"), QT_TRANSLATE_NOOP("DeskHelp", "Fit the whole fleet") },
        { QT_TRANSLATE_NOOP("DeskHelp", "J; by job, double-click"),
            QT_TRANSLATE_NOOP("DeskHelp", "Open the job page of the GPU under the cursor") },
    };
    for (const auto &[keys, what] : mapKeys) {
        row(tr(keys), tr(what));
    }
    QMessageBox::information(
        parent, tr("Keyboard shortcuts"), QStringLiteral("<table cellspacing=6>%1</table>").arg(rows));
}

void showAbout(QWidget *parent, const ConsoleSession &session)
{
    const TopologyPtr topology = session.topology();
    const QString backend = topology && !topology->backendVersion.isEmpty() ? topology->backendVersion : tr("unknown");
    QMessageBox::about(parent, tr("About Fleetscope"),
        tr("<p><b>Fleetscope %1</b>: a console for GPU fleets.</p><p>Backend %2, version %3.</p><p>Qt %4.</p>")
            .arg(QStringLiteral(FLEETSCOPE_VERSION), session.address().toHtmlEscaped(), backend.toHtmlEscaped(),
                QString::fromLatin1(qVersion())));
}

} // namespace fleetscope
