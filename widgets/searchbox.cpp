// SPDX-License-Identifier: Apache-2.0
#include "searchbox.h"

#include "searchresultmodel.h"

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
        // With a row current in the popup, the completer takes it (the line edit ignores the key).
        if (popupShown && popup->currentIndex().isValid()) {
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
