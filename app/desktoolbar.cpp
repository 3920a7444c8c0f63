// SPDX-License-Identifier: Apache-2.0
#include "app/desktoolbar.h"

#include "app/consolesession.h"
#include "model/rateofchange.h"
#include "widgets/heatmap/colormap.h"
#include "widgets/heatmap/heatmapview.h"

#include <QComboBox>
#include <QLabel>
#include <QSignalBlocker>

#include <algorithm>

namespace fleetscope {

DeskToolbar::DeskToolbar(ConsoleSession *session, HeatmapView *map, QWidget *parent)
    : QToolBar(tr("View"), parent)
    , m_session(session)
    , m_map(map)
{
    setObjectName(QStringLiteral("viewToolbar"));
    setMovable(false);
    addWidget(new QLabel(tr(" Metric: "), this));
    m_metricBox = new QComboBox(this);
    m_metricBox->setMinimumContentsLength(22);
    m_metricBox->setToolTip(tr("The metric the map shows"));
    addWidget(m_metricBox);
    m_showBox = new QComboBox(this);
    m_showBox->addItem(tr("value"), 0);
    for (const auto window : RateOfChange::windowChoices) {
        const auto seconds = std::chrono::duration_cast<std::chrono::seconds>(window).count();
        m_showBox->addItem(seconds < 60 ? tr("change per min over %1 s").arg(seconds)
                                        : tr("change per min over %1 min").arg(seconds / 60),
            static_cast<int>(seconds));
    }
    m_showBox->setToolTip(tr("Show the metric, or how fast it changes (heat fronts stand out)"));
    addWidget(m_showBox);
    addSeparator();
    addWidget(new QLabel(tr(" Colours: "), this));
    m_colourBox = new QComboBox(this);
    m_colourBox->addItem(tr("as suggested"), QString());
    for (const auto &name : ColorMap::names()) {
        // A categorical map fits only its own metric (health), which suggests it.
        if (ColorMap::byName(name).kind() != ColorMap::Kind::Categorical) {
            m_colourBox->addItem(name, name);
        }
    }
    m_colourBox->setToolTip(tr("Colour map: perceptually uniform and colour-blind safe"));
    addWidget(m_colourBox);
    m_rangeBox = new QComboBox(this);
    m_rangeBox->addItem(tr("fixed range"), QStringLiteral("fixed"));
    m_rangeBox->addItem(tr("auto range"), QStringLiteral("auto"));
    m_rangeBox->setToolTip(tr("Fixed: the metric's own range. Auto: the 1st to 99th percentile of the values shown, "
                              "so a few outliers cannot wash out the rest."));
    addWidget(m_rangeBox);
    addSeparator();
    addWidget(new QLabel(tr(" Arrange: "), this));
    m_arrangeBox = new QComboBox(this);
    m_arrangeBox->addItem(tr("floor plan"), static_cast<int>(HeatmapView::Arrangement::FloorPlan));
    m_arrangeBox->addItem(tr("compact"), static_cast<int>(HeatmapView::Arrangement::Compact));
    m_arrangeBox->addItem(tr("by job"), static_cast<int>(HeatmapView::Arrangement::ByJob));
    m_arrangeBox->addItem(tr("by fabric"), static_cast<int>(HeatmapView::Arrangement::ByFabric));
    m_arrangeBox->setToolTip(tr("Floor plan: rows and racks as on the floor. Compact: fleet order, filling the "
                                "window. By job: each job's GPUs together, idle GPUs last."));
    addWidget(m_arrangeBox);
    addSeparator();
    addWidget(new QLabel(tr(" Zoomed out, a pixel shows: "), this));
    auto *aggregation = new QComboBox(this);
    aggregation->addItem(tr("the worst GPU"));
    aggregation->addItem(tr("the mean"));
    aggregation->setToolTip(tr("When there are more GPUs than pixels"));
    addWidget(aggregation);

    connect(m_metricBox, &QComboBox::currentIndexChanged, this,
        [this] { m_session->setMetric(m_metricBox->currentData().toString()); });
    connect(m_showBox, &QComboBox::currentIndexChanged, this,
        [this] { m_session->setChangeWindow(m_showBox->currentData().toInt()); });
    connect(m_colourBox, &QComboBox::currentIndexChanged, this,
        [this] { m_session->setColourMap(m_colourBox->currentData().toString()); });
    connect(m_rangeBox, &QComboBox::currentIndexChanged, this,
        [this] { m_session->setAutoRange(m_rangeBox->currentData().toString() == QStringLiteral("auto")); });
    connect(m_arrangeBox, &QComboBox::currentIndexChanged, this,
        [this] { m_map->setArrangement(static_cast<HeatmapView::Arrangement>(m_arrangeBox->currentData().toInt())); });
    connect(aggregation, &QComboBox::currentIndexChanged, this, [this](int index) {
        m_map->setAggregation(index == 0 ? HeatmapView::Aggregation::Worst : HeatmapView::Aggregation::Mean);
    });
    connect(session, &ConsoleSession::displayOptionsChanged, this, &DeskToolbar::syncFromSession);
    connect(session, &ConsoleSession::metricsChanged, this, &DeskToolbar::syncFromSession);
    syncFromSession();
}

void DeskToolbar::syncFromSession()
{
    const QSignalBlocker blockMetric(m_metricBox);
    const QSignalBlocker blockShow(m_showBox);
    const QSignalBlocker blockColour(m_colourBox);
    const QSignalBlocker blockRange(m_rangeBox);
    const QSignalBlocker blockArrange(m_arrangeBox);
    const auto &metrics = m_session->metrics();
    if (m_metricBox->count() != static_cast<int>(metrics.size())) {
        m_metricBox->clear();
        for (const auto &m : metrics) {
            m_metricBox->addItem(m.unit.isEmpty() ? m.name : QStringLiteral("%1 (%2)").arg(m.name, m.unit), m.id);
        }
    }
    m_metricBox->setCurrentIndex(m_metricBox->findData(m_session->metricId()));
    m_showBox->setCurrentIndex(std::max(0, m_showBox->findData(m_session->changeWindowS())));
    m_colourBox->setCurrentIndex(std::max(0, m_colourBox->findData(m_session->colourMap())));
    m_rangeBox->setCurrentIndex(m_session->autoRange() ? 1 : 0);
    m_arrangeBox->setCurrentIndex(m_arrangeBox->findData(static_cast<int>(m_map->arrangement())));
}

} // namespace fleetscope
