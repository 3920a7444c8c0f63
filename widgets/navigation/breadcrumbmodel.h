// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "model/navigation.h"

#include <QAbstractListModel>
#include <QPointer>

#include <vector>

namespace fleetscope {

// The path from the fleet to the navigation's current place, one row per crumb: fleet › hall-a › r07 › r07-k12 ›
// r07-k12-n03 › GPU 5. Moving within the path inserts or removes the crumbs past the shared part, so a view keeps
// what it knows about the crumbs that stay; a new topology resets.
class BreadcrumbModel : public QAbstractListModel
{
    Q_OBJECT
public:
    enum Role {
        PlaceRole = Qt::UserRole + 1, // fleetscope::Place
        PlaceTextRole, // "rack:37"
    };

    explicit BreadcrumbModel(Navigation *navigation, QObject *parent = nullptr);

    Navigation *navigation() const { return m_navigation; }
    Place placeAt(int row) const { return m_crumbs.at(static_cast<std::size_t>(row)).place; }

    int rowCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QHash<int, QByteArray> roleNames() const override;

private:
    struct Crumb
    {
        Place place;
        QString text;
        QString toolTip;
    };
    std::vector<Crumb> crumbsFor(Place place) const;
    void followPlace(Place place);
    void reset();

    QPointer<Navigation> m_navigation;
    std::vector<Crumb> m_crumbs;
};

} // namespace fleetscope
