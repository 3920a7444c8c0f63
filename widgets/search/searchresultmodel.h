// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "model/fleetsearch.h"

#include <QAbstractListModel>

namespace fleetscope {

// The results of one FleetSearch query as a list, for the SearchBox's completer popup: each row shows the match
// and where it is; the edit role is the match alone, what the line edit takes when a row is chosen.
class SearchResultModel : public QAbstractListModel
{
    Q_OBJECT

public:
    enum Role {
        ResultRole = Qt::UserRole + 1, // the SearchResult
        KindRole, // SearchResult::Kind as int
        IdRole, // qulonglong
        DetailRole,
    };

    explicit SearchResultModel(QObject *parent = nullptr);

    // Runs the current query again on the new index.
    void setSearch(FleetSearch search);
    const FleetSearch &search() const { return m_search; }
    void setQuery(const QString &text);
    QString query() const { return m_query; }
    void setLimit(int limit);
    int limit() const { return m_limit; }

    const std::vector<SearchResult> &results() const { return m_results; }

    int rowCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QHash<int, QByteArray> roleNames() const override;

private:
    void refresh();

    FleetSearch m_search;
    QString m_query;
    int m_limit = 12;
    std::vector<SearchResult> m_results;
};

} // namespace fleetscope
