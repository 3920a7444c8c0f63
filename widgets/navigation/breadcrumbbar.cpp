// SPDX-License-Identifier: Apache-2.0
#include "widgets/navigation/breadcrumbbar.h"

#include "widgets/navigation/breadcrumbmodel.h"
#include "model/navigation.h"

#include <QAction>
#include <QEvent>
#include <QHBoxLayout>
#include <QLabel>
#include <QStyle>
#include <QToolButton>

namespace fleetscope {

BreadcrumbBar::BreadcrumbBar(Navigation *navigation, QWidget *parent)
    : QWidget(parent)
    , m_navigation(navigation)
    , m_model(new BreadcrumbModel(navigation, this))
    , m_back(new QAction(tr("Back"), this))
    , m_forward(new QAction(tr("Forward"), this))
    , m_backButton(new QToolButton(this))
    , m_forwardButton(new QToolButton(this))
    , m_crumbLayout(new QHBoxLayout)
{
    m_back->setObjectName(QStringLiteral("back"));
    m_forward->setObjectName(QStringLiteral("forward"));
    m_back->setToolTip(tr("Back to the previous place"));
    m_forward->setToolTip(tr("Forward to the next place"));
    connect(m_back, &QAction::triggered, navigation, &Navigation::back);
    connect(m_forward, &QAction::triggered, navigation, &Navigation::forward);
    m_backButton->setDefaultAction(m_back);
    m_forwardButton->setDefaultAction(m_forward);
    for (QToolButton *b : { m_backButton, m_forwardButton }) {
        b->setAutoRaise(true);
        b->setToolButtonStyle(Qt::ToolButtonIconOnly);
    }

    auto *layout = new QHBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_backButton);
    layout->addWidget(m_forwardButton);
    m_crumbLayout->setSpacing(0);
    layout->addLayout(m_crumbLayout);
    layout->addStretch(1);

    connect(navigation, &Navigation::historyChanged, this, &BreadcrumbBar::updateActions);
    // Five crumbs at most: rebuilding them all is cheaper than keeping buttons in step with row moves.
    connect(m_model, &QAbstractItemModel::rowsInserted, this, &BreadcrumbBar::rebuild);
    connect(m_model, &QAbstractItemModel::rowsRemoved, this, &BreadcrumbBar::rebuild);
    connect(m_model, &QAbstractItemModel::modelReset, this, &BreadcrumbBar::rebuild);
    connect(m_model, &QAbstractItemModel::dataChanged, this, &BreadcrumbBar::rebuild);
    updateIcons();
    updateActions();
    rebuild();
}

void BreadcrumbBar::rebuild()
{
    // Later, not now: the crumb that was clicked is still emitting clicked() when the place changes.
    while (QLayoutItem *item = m_crumbLayout->takeAt(0)) {
        if (QWidget *w = item->widget()) {
            w->hide();
            w->deleteLater();
        }
        delete item;
    }
    m_crumbs.clear();
    const int count = m_model->rowCount();
    for (int row = 0; row < count; ++row) {
        const QModelIndex index = m_model->index(row);
        if (row > 0) {
            auto *separator = new QLabel(QStringLiteral("›"), this);
            separator->setAccessibleName(QString());
            separator->setContentsMargins(2, 0, 2, 0);
            m_crumbLayout->addWidget(separator);
        }
        auto *button = new QToolButton(this);
        button->setObjectName(QStringLiteral("crumb%1").arg(row));
        button->setAutoRaise(true);
        button->setText(index.data(Qt::DisplayRole).toString());
        button->setToolTip(index.data(Qt::ToolTipRole).toString());
        if (row == count - 1) {
            // The place shown, in bold rather than greyed out (a disabled button is hard to read across a room).
            // Only the weight is set, so size and family still come from the bar.
            QFont bold;
            bold.setBold(true);
            button->setFont(bold);
            button->setAccessibleDescription(tr("current place"));
        }
        const Place place = m_model->placeAt(row);
        connect(button, &QToolButton::clicked, m_navigation, [this, place] { m_navigation->goTo(place); });
        m_crumbLayout->addWidget(button);
        m_crumbs.push_back(button);
    }
}

void BreadcrumbBar::updateActions()
{
    m_back->setEnabled(m_navigation->canGoBack());
    m_forward->setEnabled(m_navigation->canGoForward());
}

void BreadcrumbBar::updateIcons()
{
    m_back->setIcon(style()->standardIcon(QStyle::SP_ArrowBack, nullptr, this));
    m_forward->setIcon(style()->standardIcon(QStyle::SP_ArrowForward, nullptr, this));
    const int side = fontMetrics().height();
    m_backButton->setIconSize({ side, side });
    m_forwardButton->setIconSize({ side, side });
}

void BreadcrumbBar::changeEvent(QEvent *event)
{
    QWidget::changeEvent(event);
    if (event->type() == QEvent::FontChange || event->type() == QEvent::StyleChange) {
        updateIcons();
        rebuild();
    }
}

} // namespace fleetscope
