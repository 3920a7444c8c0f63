// SPDX-License-Identifier: Apache-2.0
#include "mainwindow.h"

#include "autorange.h"
#include "colorlegend.h"
#include "colormap.h"
#include "heatmapview.h"

#include <QComboBox>
#include <QDateTime>
#include <QLabel>
#include <QPainter>
#include <QStatusBar>
#include <QToolBar>
#include <QVBoxLayout>

#include <cstdio>

namespace fleetscope {

MainWindow::MainWindow(const ConsoleOptions &options, QWidget *parent)
    : QMainWindow(parent)
    , m_options(options)
{
    setWindowTitle(tr("Fleetscope"));
    resize(options.windowSize);

    auto *central = new QWidget(this);
    auto *layout = new QVBoxLayout(central);
    layout->setContentsMargins(6, 6, 6, 6);
    m_view = new HeatmapView(central);
    m_view->setAnimated(options.animated);
    m_view->setArrangement(options.arrangement == QStringLiteral("compact") ? HeatmapView::Arrangement::Compact
            : options.arrangement == QStringLiteral("jobs")                 ? HeatmapView::Arrangement::ByJob
                                                                            : HeatmapView::Arrangement::FloorPlan);
    m_legend = new ColorLegend(central);
    layout->addWidget(m_view, 1);
    layout->addWidget(m_legend);
    setCentralWidget(central);

    auto *toolbar = addToolBar(tr("View"));
    toolbar->setMovable(false);
    toolbar->addWidget(new QLabel(tr(" Metric: "), toolbar));
    m_metricBox = new QComboBox(toolbar);
    m_metricBox->setMinimumContentsLength(22);
    m_metricBox->setToolTip(tr("The metric the map shows"));
    toolbar->addWidget(m_metricBox);
    m_showBox = new QComboBox(toolbar);
    m_showBox->addItem(tr("value"), 0);
    for (const auto window : RateOfChange::windowChoices) {
        const auto seconds = std::chrono::duration_cast<std::chrono::seconds>(window).count();
        m_showBox->addItem(seconds < 60 ? tr("change per min over %1 s").arg(seconds)
                                        : tr("change per min over %1 min").arg(seconds / 60),
            static_cast<int>(seconds));
    }
    m_showBox->setToolTip(tr("Show the metric, or how fast it changes (heat fronts stand out)"));
    m_showBox->setCurrentIndex(std::max(0, m_showBox->findData(options.changeWindowS)));
    toolbar->addWidget(m_showBox);
    toolbar->addSeparator();
    toolbar->addWidget(new QLabel(tr(" Colours: "), toolbar));
    m_colourBox = new QComboBox(toolbar);
    m_colourBox->addItem(tr("as suggested"), QString());
    for (const auto &name : ColorMap::names()) {
        // A categorical map fits only its own metric (health), which suggests it.
        if (ColorMap::byName(name).kind() != ColorMap::Kind::Categorical) {
            m_colourBox->addItem(name, name);
        }
    }
    m_colourBox->setToolTip(tr("Colour map: perceptually uniform and colour-blind safe"));
    toolbar->addWidget(m_colourBox);
    m_rangeBox = new QComboBox(toolbar);
    m_rangeBox->addItem(tr("fixed range"), QStringLiteral("fixed"));
    m_rangeBox->addItem(tr("auto range"), QStringLiteral("auto"));
    m_rangeBox->setToolTip(tr("Fixed: the metric's own range. Auto: the 1st to 99th percentile of the values shown, "
                              "so a few outliers cannot wash out the rest."));
    m_rangeBox->setCurrentIndex(std::max(0, m_rangeBox->findData(options.range)));
    toolbar->addWidget(m_rangeBox);
    toolbar->addSeparator();
    toolbar->addWidget(new QLabel(tr(" Arrange: "), toolbar));
    m_arrangeBox = new QComboBox(toolbar);
    m_arrangeBox->addItem(tr("floor plan"), static_cast<int>(HeatmapView::Arrangement::FloorPlan));
    m_arrangeBox->addItem(tr("compact"), static_cast<int>(HeatmapView::Arrangement::Compact));
    m_arrangeBox->addItem(tr("by job"), static_cast<int>(HeatmapView::Arrangement::ByJob));
    m_arrangeBox->setCurrentIndex(m_arrangeBox->findData(static_cast<int>(m_view->arrangement())));
    m_arrangeBox->setToolTip(tr("Floor plan: rows and racks as on the floor. Compact: fleet order, filling the "
                                "window. By job: each job's GPUs together, idle GPUs last."));
    toolbar->addWidget(m_arrangeBox);
    connect(m_arrangeBox, &QComboBox::currentIndexChanged, this,
        [this] { m_view->setArrangement(static_cast<HeatmapView::Arrangement>(m_arrangeBox->currentData().toInt())); });
    toolbar->addSeparator();
    toolbar->addWidget(new QLabel(tr(" Zoomed out, a pixel shows: "), toolbar));
    auto *aggregation = new QComboBox(toolbar);
    aggregation->addItem(tr("the worst GPU"));
    aggregation->addItem(tr("the mean"));
    aggregation->setToolTip(tr("When there are more GPUs than pixels"));
    toolbar->addWidget(aggregation);
    connect(aggregation, &QComboBox::currentIndexChanged, this, [this](int index) {
        m_view->setAggregation(index == 0 ? HeatmapView::Aggregation::Worst : HeatmapView::Aggregation::Mean);
    });
    for (auto *box : { m_colourBox, m_showBox, m_rangeBox }) {
        connect(box, &QComboBox::currentIndexChanged, this, [this] { onMetricSelected(m_metricBox->currentIndex()); });
    }

    m_connectionLabel = new QLabel(this);
    m_gpuLabel = new QLabel(this);
    m_ageLabel = new QLabel(this);
    m_fpsLabel = new QLabel(this);
    m_ageLabel->setMinimumWidth(m_ageLabel->fontMetrics().horizontalAdvance(tr("data as of 00:00:00 (0000.0 s old)")));
    m_fpsLabel->setMinimumWidth(m_fpsLabel->fontMetrics().horizontalAdvance(tr("000.0 fps")));
    statusBar()->addWidget(m_connectionLabel, 1);
    statusBar()->addPermanentWidget(m_gpuLabel);
    statusBar()->addPermanentWidget(m_ageLabel);
    statusBar()->addPermanentWidget(m_fpsLabel);

    connect(&m_client, &TelemetryClient::stateChanged, this, &MainWindow::onStateChanged);
    connect(&m_client, &TelemetryClient::topologyChanged, this, &MainWindow::onTopologyChanged);
    connect(&m_client, &TelemetryClient::metricsChanged, this, &MainWindow::onMetricsChanged);
    connect(&m_client, &TelemetryClient::frameReady, this, &MainWindow::onFrame);
    connect(&m_client, &TelemetryClient::jobsChanged, this, [this] { m_view->setJobs(m_client.jobs()); });
    connect(&m_client, &TelemetryClient::errorOccurred, this,
        [this](const QString &message) { statusBar()->showMessage(message, 10000); });
    connect(m_metricBox, &QComboBox::currentIndexChanged, this, &MainWindow::onMetricSelected);
    connect(m_view, &HeatmapView::gpuSelected, this, [this](int gpu) {
        const auto topology = m_client.topology();
        if (gpu >= 0 && topology) {
            const auto &node = topology->nodeOf(static_cast<uint32_t>(gpu));
            statusBar()->showMessage(tr("Selected %1 GPU %2 (fleet index %3)")
                                         .arg(node.hostname)
                                         .arg(gpu - static_cast<int>(node.firstGpu))
                                         .arg(gpu));
        } else {
            statusBar()->clearMessage();
        }
    });

    // Once a second: on a software renderer every repaint of the window recomposites the whole GL map.
    m_statusTimer.setInterval(1000);
    connect(&m_statusTimer, &QTimer::timeout, this, &MainWindow::refreshStatus);
    m_statusTimer.start();
    m_fpsClock.start();
    onStateChanged(TelemetryClient::State::Connecting,
        options.backend.isEmpty() ? tr("starting the embedded simulator…")
                                  : tr("connecting to %1…").arg(options.backend));
}

void MainWindow::connectTo(const QString &address)
{
    m_client.start(address);
}

void MainWindow::showProblem(const QString &message)
{
    m_connectionLabel->setText(QStringLiteral("⚠ ") + message);
    m_connectionLabel->setStyleSheet(QStringLiteral("color: #e0603a; font-weight: bold;"));
}

void MainWindow::onStateChanged(TelemetryClient::State state, const QString &detail)
{
    QString colour;
    switch (state) {
    case TelemetryClient::State::Live:
        colour = QStringLiteral("#4caf50");
        break;
    case TelemetryClient::State::Reconnecting:
        colour = QStringLiteral("#e0603a");
        break;
    default:
        colour = QStringLiteral("#d6a400");
        break;
    }
    m_connectionLabel->setText(QStringLiteral("● ") + detail);
    m_connectionLabel->setStyleSheet(QStringLiteral("color: %1;").arg(colour));
}

void MainWindow::onTopologyChanged(const TopologyPtr &topology)
{
    m_view->setTopology(topology);
    m_gpuLabel->setText(tr("%L1 GPUs · %L2 nodes · %L3 racks")
                            .arg(topology->gpuCount)
                            .arg(topology->nodes.size())
                            .arg(topology->racks.size()));
}

void MainWindow::onMetricsChanged()
{
    const QString current = m_metricBox->currentData().toString();
    const QString wanted = current.isEmpty() ? m_options.metric : current;
    QSignalBlocker block(m_metricBox);
    m_metricBox->clear();
    int select = 0;
    for (const auto &m : m_client.metrics()) {
        m_metricBox->addItem(QStringLiteral("%1 (%2)").arg(m.name, m.unit), m.id);
        if (m.id == wanted) {
            select = m_metricBox->count() - 1;
        }
    }
    if (!wanted.isEmpty() && m_metricBox->itemData(select).toString() != wanted) {
        statusBar()->showMessage(
            tr("The backend has no metric '%1'; showing %2 instead.").arg(wanted, m_metricBox->itemText(select)),
            15000);
    }
    m_metricBox->setCurrentIndex(select);
    onMetricSelected(select);
}

void MainWindow::onMetricSelected(int index)
{
    const auto &metrics = m_client.metrics();
    if (index < 0 || static_cast<size_t>(index) >= metrics.size()) {
        return;
    }
    const MetricInfo &metric = metrics[static_cast<size_t>(index)];
    // The value, or its rate of change per minute over the chosen window (from the frames as they arrive).
    const int windowS = m_showBox->currentData().toInt();
    if (windowS > 0) {
        m_rate.emplace(metric.id, std::chrono::seconds(windowS));
        m_shownMetric = RateOfChange::rateMetric(metric);
        statusBar()->showMessage(
            tr("Change per minute: the map fills in once %1 s of frames have arrived.").arg(std::max(2, windowS / 4)),
            10000);
    } else {
        m_rate.reset();
        m_shownMetric = metric;
    }
    m_view->setMetric(m_shownMetric);
    // The user's colour map wins over the metric's suggestion.
    const QString chosen = m_colourBox->currentData().toString();
    if (!chosen.isEmpty()) {
        m_view->setColorMap(ColorMap::byName(chosen));
    }
    m_legend->setMetric(m_shownMetric, m_view->colorMap());
    if (const FramePtr last = m_client.latestFrame(); last && m_rate) {
        m_view->setFrame(m_rate->apply(last));
    }
    updateAutoRange(m_view->frame());
    // Subscribe to the shown metric alongside the health-relevant defaults, so a switch back is instant.
    QStringList ids { metric.id };
    for (const auto &id : { QStringLiteral("gpu_temp"), QStringLiteral("power"), QStringLiteral("gpu_util") }) {
        if (!ids.contains(id)) {
            ids << id;
        }
    }
    m_client.setMetrics(ids);
}

void MainWindow::onFrame(const FramePtr &frame)
{
    if (const FramePtr previous = m_view->frame(); previous && frame->sampleTimeMs > previous->sampleTimeMs) {
        m_intervalMs = std::clamp<qint64>(frame->sampleTimeMs - previous->sampleTimeMs, 100, 60000);
    }
    const FramePtr shown = m_rate ? m_rate->apply(frame) : frame;
    m_view->setFrame(shown);
    updateAutoRange(shown);
    refreshStatus();
    if (!m_screenshotFile.isEmpty() && frame->plane(m_view->metric().id) != nullptr) {
        // Save after this frame has been painted, not before.
        const QString file = m_screenshotFile;
        m_screenshotFile.clear();
        connect(
            m_view, &QOpenGLWidget::frameSwapped, this,
            [this, file] {
                refreshStatus();
                const bool saved = grabWithMap().save(file, "PNG");
                if (!saved) {
                    std::fprintf(stderr, "fleetscope: cannot write %s\n", qPrintable(file));
                }
                Q_EMIT screenshotDone(saved ? 0 : 1);
            },
            Qt::SingleShotConnection);
    }
}

void MainWindow::updateAutoRange(const FramePtr &shown)
{
    // Categories have no range to fit.
    if (m_rangeBox->currentData().toString() != QStringLiteral("auto")
        || m_view->colorMap().kind() == ColorMap::Kind::Categorical) {
        return;
    }
    const MetricPlane *plane = shown ? shown->plane(m_shownMetric.id) : nullptr;
    if (plane == nullptr) {
        return;
    }
    const bool diverging = m_view->colorMap().kind() == ColorMap::Kind::Diverging;
    const ValueRange range = robustRange(plane->values, 0.01, 0.99, diverging);
    if (!range.valid) {
        return;
    }
    // Move the range only when it is off by more than a tenth of its span, so the colours do not shimmer from one
    // frame to the next while the fleet is steady.
    const MetricInfo &current = m_view->metric();
    const float tolerance = (current.rangeMax - current.rangeMin) * 0.1F;
    if (std::abs(range.min - current.rangeMin) <= tolerance && std::abs(range.max - current.rangeMax) <= tolerance) {
        return;
    }
    m_view->setRange(range.min, range.max);
    m_shownMetric.rangeMin = range.min;
    m_shownMetric.rangeMax = range.max;
    m_legend->setMetric(m_shownMetric, m_view->colorMap());
}

QPixmap MainWindow::grabWithMap()
{
    // QWidget::grab renders the map's GL image over what the map's overlay painter drew (the overlay is redirected
    // into the pixmap beneath it), so the labels would be lost: draw the map's own framebuffer, text included, on
    // top.
    QPixmap shot = grab();
    QPainter painter(&shot);
    painter.drawImage(QRect(m_view->mapTo(this, QPoint(0, 0)), m_view->size()), m_view->grabFramebuffer());
    return shot;
}

void MainWindow::takeScreenshotWhenLive(const QString &file, int timeoutS)
{
    m_screenshotFile = file;
    QTimer::singleShot(timeoutS * 1000, this, [this, timeoutS] {
        if (!m_screenshotFile.isEmpty()) {
            std::fprintf(stderr, "fleetscope: no live frame arrived within %d s (%s); no screenshot taken\n", timeoutS,
                qPrintable(m_client.stateDetail()));
            Q_EMIT screenshotDone(1);
        }
    });
}

void MainWindow::refreshStatus()
{
    const qint64 elapsed = m_fpsClock.elapsed();
    if (elapsed >= 1000) {
        m_fps = static_cast<double>(m_view->paintCount() - m_fpsPaints) * 1000.0 / static_cast<double>(elapsed);
        m_fpsPaints = m_view->paintCount();
        m_fpsClock.restart();
    }
    m_fpsLabel->setText(m_fps < 0 ? tr("– fps") : tr("%1 fps").arg(m_fps, 0, 'f', 1));
    const FramePtr frame = m_view->frame();
    if (!frame) {
        m_ageLabel->setText(tr("no data yet"));
        return;
    }
    const double age = static_cast<double>(QDateTime::currentMSecsSinceEpoch() - frame->sampleTimeMs) / 1000.0;
    const QString when = QDateTime::fromMSecsSinceEpoch(frame->sampleTimeMs).toString(QStringLiteral("HH:mm:ss"));
    m_ageLabel->setText(tr("data as of %1 (%2 s old)").arg(when).arg(std::max(0.0, age), 0, 'f', 1));
    // Old data must never look fresh: past three intervals the age turns into a warning and the map is patterned.
    const bool stale = age * 1000.0 > 3.0 * static_cast<double>(m_intervalMs);
    m_ageLabel->setStyleSheet(stale ? QStringLiteral("color: #e0603a; font-weight: bold;") : QString());
    m_view->setStaleNote(stale
            ? tr("Data is %1 s old (as of %2) · %3").arg(static_cast<qint64>(age)).arg(when, m_client.stateDetail())
            : QString());
}

} // namespace fleetscope
