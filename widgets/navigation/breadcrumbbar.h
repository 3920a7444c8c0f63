// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <QWidget>

#include <vector>

class QAbstractButton;
class QAction;
class QHBoxLayout;
class QToolButton;

namespace fleetscope {

class BreadcrumbModel;
class Navigation;

// Back and forward buttons, then one flat button per crumb of the navigation's path with › between them; a click
// on a crumb goes there. Everything is drawn in the widget's own font, so a wall display sets one large font on the
// bar (or the window) and the crumbs, separators and arrow icons follow.
//
// The keyboard shortcuts (Alt+Left / Alt+Right, Esc / Backspace for up) belong to the main window, which owns the
// focus rules: it adds backAction() and forwardAction() to itself with QKeySequence::Back and ::Forward.
class BreadcrumbBar : public QWidget
{
    Q_OBJECT
public:
    explicit BreadcrumbBar(Navigation *navigation, QWidget *parent = nullptr);

    BreadcrumbModel *model() const { return m_model; }
    QAction *backAction() const { return m_back; }
    QAction *forwardAction() const { return m_forward; }
    // The crumb buttons, fleet first; for tests and accessibility tools.
    const std::vector<QAbstractButton *> &crumbButtons() const { return m_crumbs; }

protected:
    void changeEvent(QEvent *event) override;

private:
    void rebuild();
    void updateActions();
    void updateIcons();

    Navigation *m_navigation;
    BreadcrumbModel *m_model;
    QAction *m_back;
    QAction *m_forward;
    QToolButton *m_backButton;
    QToolButton *m_forwardButton;
    QHBoxLayout *m_crumbLayout;
    std::vector<QAbstractButton *> m_crumbs;
};

} // namespace fleetscope
