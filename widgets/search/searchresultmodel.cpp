// SPDX-License-Identifier: Apache-2.0
#include "widgets/search/searchresultmodel.h"

#include <utility>

namespace fleetscope {

SearchResultModel::SearchResultModel(QObject *parent)
    : QAbstractListModel(parent)
{ }

void SearchResultModel::setSearch(FleetSearch search)
{
    m_search = std::move(search);
    refresh();
}

void SearchResultModel::setQuery(const QString &text)
{
    if (text == m_query) {
        return;
    }
    m_query = text;
    refresh();
}

void SearchResultModel::setLimit(int limit)
{
    if (limit == m_limit) {
        return;
    }
    m_limit = limit;
    refresh();
}

void SearchResultModel::refresh()
{
    beginResetModel();
    m_results = m_search.find(m_query, m_limit);
    endResetModel();
}

int SearchResultModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : static_cast<int>(m_results.size());
}

QVariant SearchResultModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) {
        return {};
    }
    const SearchResult &r = m_results[static_cast<size_t>(index.row())];
    switch (role) {
    case Qt::DisplayRole:
        return QString(r.text + QStringLiteral("   ") + r.detail);
    case Qt::EditRole:
        return r.text;
    case Qt::ToolTipRole:
    case DetailRole:
        return r.detail;
    case ResultRole:
        return QVariant::fromValue(r);
    case KindRole:
        return static_cast<int>(r.kind);
    case IdRole:
        return QVariant::fromValue<qulonglong>(r.id);
    default:
        return {};
    }
}

QHash<int, QByteArray> SearchResultModel::roleNames() const
{
    QHash<int, QByteArray> names = QAbstractListModel::roleNames();
    names.insert(ResultRole, QByteArrayLiteral("result"));
    names.insert(KindRole, QByteArrayLiteral("kind"));
    names.insert(IdRole, QByteArrayLiteral("id"));
    names.insert(DetailRole, QByteArrayLiteral("detail"));
    return names;
}

} // namespace fleetscope
