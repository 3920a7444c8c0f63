// SPDX-License-Identifier: Apache-2.0
#include "widgets/navigation/breadcrumbmodel.h"

#include <algorithm>

namespace fleetscope {

BreadcrumbModel::BreadcrumbModel(Navigation *navigation, QObject *parent)
    : QAbstractListModel(parent)
    , m_navigation(navigation)
{
    Q_ASSERT(navigation);
    m_crumbs = crumbsFor(navigation->current());
    connect(navigation, &Navigation::placeChanged, this, &BreadcrumbModel::followPlace);
    connect(navigation, &Navigation::topologyChanged, this, &BreadcrumbModel::reset);
}

std::vector<BreadcrumbModel::Crumb> BreadcrumbModel::crumbsFor(Place place) const
{
    const TopologyPtr topology = m_navigation ? m_navigation->topology() : nullptr;
    if (!topology) {
        return { { Place::fleet(), QStringLiteral("fleet"), QStringLiteral("fleet") } };
    }
    std::vector<Crumb> crumbs;
    for (const Place &p : pathTo(*topology, place)) {
        const GpuRange gpus = p.gpuRange(*topology);
        const QString toolTip = levelName(p.level) % QLatin1Char(' ') % p.name(*topology)
            % (p.level == Place::Level::Gpu ? QString() : QStringLiteral(": %1 GPUs").arg(gpus.count))
            % (p.isNvlinkDomain(*topology) ? QStringLiteral(", one NVLink domain") : QString());
        crumbs.push_back({ p, p.crumbText(*topology), toolTip });
    }
    return crumbs;
}

void BreadcrumbModel::followPlace(Place place)
{
    std::vector<Crumb> crumbs = crumbsFor(place);
    const auto shared
        = static_cast<int>(std::mismatch(m_crumbs.begin(), m_crumbs.end(), crumbs.begin(), crumbs.end(),
                               [](const Crumb &a, const Crumb &b) { return a.place == b.place && a.text == b.text; })
                               .first
            - m_crumbs.begin());
    const auto oldCount = static_cast<int>(m_crumbs.size());
    const auto newCount = static_cast<int>(crumbs.size());
    if (shared < oldCount) {
        beginRemoveRows({}, shared, oldCount - 1);
        m_crumbs.resize(static_cast<std::size_t>(shared));
        endRemoveRows();
    }
    if (shared < newCount) {
        beginInsertRows({}, shared, newCount - 1);
        m_crumbs = std::move(crumbs);
        endInsertRows();
    }
}

void BreadcrumbModel::reset()
{
    beginResetModel();
    m_crumbs = crumbsFor(m_navigation ? m_navigation->current() : Place::fleet());
    endResetModel();
}

int BreadcrumbModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : static_cast<int>(m_crumbs.size());
}

QVariant BreadcrumbModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) {
        return {};
    }
    const Crumb &crumb = m_crumbs[static_cast<std::size_t>(index.row())];
    switch (role) {
    case Qt::DisplayRole:
    case Qt::AccessibleTextRole:
        return crumb.text;
    case Qt::ToolTipRole:
        return crumb.toolTip;
    case PlaceRole:
        return QVariant::fromValue(crumb.place);
    case PlaceTextRole:
        return crumb.place.toText();
    default:
        return {};
    }
}

QHash<int, QByteArray> BreadcrumbModel::roleNames() const
{
    QHash<int, QByteArray> names = QAbstractListModel::roleNames();
    names.insert(PlaceRole, QByteArrayLiteral("place"));
    names.insert(PlaceTextRole, QByteArrayLiteral("placeText"));
    return names;
}

} // namespace fleetscope
