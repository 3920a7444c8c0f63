// SPDX-License-Identifier: Apache-2.0
#include "widgets/search/searchbox.h"

#include "widgets/search/searchresultmodel.h"

#include <QAbstractItemView>
#include <QCompleter>
#include <QKeyEvent>

#include <utility>

namespace fleetscope {

SearchBox::SearchBox(QWidget *parent)
    : QLineEdit(parent)
    , m_model(new SearchResultModel(this))
{
    setPlaceholderText(tr("Find host, serial, UUID, job, rack, row"));
    setClearButtonEnabled(true);
    auto *completer = new QCompleter(m_model, this);
    // The model already holds only what matches, ranked; the completer must neither filter nor re-sort it.
    completer->setCompletionMode(QCompleter::UnfilteredPopupCompletion);
    completer->setCaseSensitivity(Qt::CaseInsensitive);
    completer->setMaxVisibleItems(12);
    setCompleter(completer);
    // textEdited comes before the line edit asks the completer to show the popup, so the popup lists the new
    // results; setText (a completion taken) does not emit it and does not search again.
    connect(this, &QLineEdit::textEdited, m_model, &SearchResultModel::setQuery);
    connect(this, &QLineEdit::textEdited, this, [this] { m_movedInPopup = false; });
    // The popup takes the keys while it is shown: Enter picks the row the user moved to with the arrows, and
    // otherwise the best match (QCompleter may leave a row of an earlier list current).
    completer->popup()->installEventFilter(this);
    connect(completer, qOverload<const QModelIndex &>(&QCompleter::activated), this, [this](const QModelIndex &index) {
        const QVariant result = index.data(SearchResultModel::ResultRole);
        if (result.canConvert<SearchResult>()) {
            Q_EMIT resultChosen(result.value<SearchResult>());
        }
    });
}

void SearchBox::setSearch(FleetSearch search)
{
    m_model->setSearch(std::move(search));
}

bool SearchBox::eventFilter(QObject *watched, QEvent *event)
{
    if (event->type() == QEvent::KeyPress && watched == completer()->popup()) {
        const int key = static_cast<QKeyEvent *>(event)->key();
        if (key == Qt::Key_Up || key == Qt::Key_Down || key == Qt::Key_PageUp || key == Qt::Key_PageDown) {
            m_movedInPopup = true;
        } else if ((key == Qt::Key_Return || key == Qt::Key_Enter) && !m_movedInPopup) {
            completer()->popup()->hide();
            chooseBest();
            return true;
        }
    }
    return QLineEdit::eventFilter(watched, event);
}

void SearchBox::chooseBest()
{
    m_model->setQuery(text());
    if (!m_model->results().empty()) {
        Q_EMIT resultChosen(m_model->results().front());
    }
}

void SearchBox::keyPressEvent(QKeyEvent *event)
{
    const QAbstractItemView *popup = completer() != nullptr ? completer()->popup() : nullptr;
    const bool popupShown = popup != nullptr && popup->isVisible();
    switch (event->key()) {
    case Qt::Key_Return:
    case Qt::Key_Enter:
        // A row the user moved to with the arrows is taken as it is (the line edit ignores the key); otherwise the
        // best match, whatever row of an earlier list the popup may still have current.
        if (popupShown && m_movedInPopup && popup->currentIndex().isValid()) {
            break;
        }
        if (popupShown) {
            completer()->popup()->hide();
        }
        chooseBest();
        event->accept();
        return;
    case Qt::Key_Escape:
        if (popupShown) {
            break; // the completer closes its popup
        }
        clear();
        m_model->setQuery({});
        event->accept();
        return;
    default:
        break;
    }
    QLineEdit::keyPressEvent(event);
}

} // namespace fleetscope
