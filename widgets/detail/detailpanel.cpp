// SPDX-License-Identifier: Apache-2.0
#include "widgets/detail/detailpanel.h"

#include "model/place.h"
#include "widgets/detail/detailjobs.h"
#include "widgets/detail/eventtable.h"
#include "widgets/detail/gpucharts.h"
#include "widgets/style/fontscale.h"

#include <QComboBox>
#include <QDateTime>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QProgressBar>
#include <QScrollArea>
#include <QTableView>
#include <QTableWidget>
#include <QThread>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>

namespace fleetscope {

namespace {
constexpr qint64 minute = 60 * 1000;
constexpr qint64 eventLookbackMs = 24 * 60 * minute;
const char *const identityFields[][2] = { { "hostname", "Hostname" }, { "rack", "Rack" }, { "nvlink", "NVLink domain" },
    { "domains", "Domains" }, { "gpu", "GPU" }, { "serial", "Serial" }, { "uuid", "UUID" }, { "model", "Model" },
    { "driver", "Driver" }, { "firmware", "Firmware" } };

qint64 nowMs()
{
    return QDateTime::currentMSecsSinceEpoch();
}

QString formatValue(float v, const MetricInfo *info)
{
    if (std::isnan(v)) {
        return QStringLiteral("—");
    }
    const int decimals = std::abs(v) >= 100 || (info && info->rangeMax >= 1000) ? 0 : 1;
    return QString::number(static_cast<double>(v), 'f', decimals);
}
} // namespace

const QStringList &DetailPanel::chartMetrics()
{
    static const QStringList ids = { QStringLiteral("gpu_temp"), QStringLiteral("power"), QStringLiteral("gpu_util"),
        QStringLiteral("fb_used"), QStringLiteral("sm_clock") };
    return ids;
}

const std::vector<qint64> &DetailPanel::windows()
{
    static const std::vector<qint64> w = { 15 * minute, 60 * minute, 6 * 60 * minute, 24 * 60 * minute };
    return w;
}

DetailPanel::DetailPanel(HistorySource *history, QWidget *parent)
    : QWidget(parent)
    , m_title(new QLabel(this))
    , m_valuesTable(new QTableWidget(this))
    , m_window(new QComboBox(this))
    , m_busy(new QProgressBar(this))
    , m_status(new QLabel(this))
    , m_eventModel(new EventTableModel(this))
    , m_eventView(new QTableView(this))
    , m_jobs(new DetailJobs(this))
{
    auto *content = new QWidget;
    auto *layout = new QVBoxLayout(content);

    QFont titleFont = scaledFont(m_title->font(), 1.3);
    titleFont.setBold(true);
    m_title->setFont(titleFont);
    m_title->setObjectName(QStringLiteral("title"));
    m_title->setTextInteractionFlags(Qt::TextSelectableByMouse);
    layout->addWidget(m_title);

    auto *identityBox = new QGroupBox(QStringLiteral("Identity"), content);
    auto *form = new QFormLayout(identityBox);
    m_identityForm = form;
    for (const auto &[key, label] : identityFields) {
        auto *value = new QLabel(identityBox);
        value->setObjectName(QStringLiteral("identity.%1").arg(QLatin1String(key)));
        value->setTextInteractionFlags(Qt::TextSelectableByMouse);
        form->addRow(QLatin1String(label) + QLatin1Char(':'), value);
        m_identity[QLatin1String(key)] = value;
    }
    form->setRowVisible(m_identity[QStringLiteral("nvlink")], false);
    // Names from the wire: never taken for markup.
    m_identity[QStringLiteral("domains")]->setTextFormat(Qt::PlainText);
    form->setRowVisible(m_identity[QStringLiteral("domains")], false);
    layout->addWidget(identityBox);

    auto *valuesBox = new QGroupBox(QStringLiteral("Now"), content);
    auto *valuesLayout = new QVBoxLayout(valuesBox);
    m_valuesTable->setParent(valuesBox);
    m_valuesTable->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_valuesTable->verticalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    m_valuesTable->horizontalHeader()->setSectionResizeMode(QHeaderView::Stretch);
    m_valuesTable->setMinimumHeight(80);
    m_valuesTable->setSizeAdjustPolicy(QAbstractScrollArea::AdjustToContents);
    m_valuesTable->setVerticalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    valuesLayout->addWidget(m_valuesTable);
    layout->addWidget(valuesBox);

    auto *historyBox = new QGroupBox(QStringLiteral("History against rack peers"), content);
    m_historyBox = historyBox;
    auto *historyLayout = new QVBoxLayout(historyBox);
    auto *controls = new QHBoxLayout;
    controls->addWidget(new QLabel(QStringLiteral("Window:"), historyBox));
    for (const auto &text : { "15 min", "1 h", "6 h", "24 h" }) {
        m_window->addItem(QLatin1String(text));
    }
    m_window->setParent(historyBox);
    controls->addWidget(m_window);
    m_busy->setParent(historyBox);
    m_busy->setRange(0, 0); // busy mode
    m_busy->setTextVisible(false);
    m_busy->setMaximumWidth(120);
    m_busy->setVisible(false);
    controls->addWidget(m_busy);
    m_status->setParent(historyBox);
    m_status->setWordWrap(true);
    controls->addWidget(m_status, 1);
    historyLayout->addLayout(controls);
    for (const auto &id : chartMetrics()) {
        auto *chart = new MetricChart(historyBox);
        chart->setObjectName(QStringLiteral("chart.%1").arg(id));
        chart->setTitle(id, {});
        historyLayout->addWidget(chart);
        m_charts[id] = chart;
    }
    layout->addWidget(historyBox);

    auto *eventsBox = new QGroupBox(QStringLiteral("Events (last 24 h)"), content);
    auto *eventsLayout = new QVBoxLayout(eventsBox);
    m_eventView->setParent(eventsBox);
    m_eventView->setModel(m_eventModel);
    m_eventView->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_eventView->verticalHeader()->hide();
    m_eventView->setWordWrap(false);
    m_eventView->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    m_eventView->horizontalHeader()->setSectionResizeMode(EventTableModel::TextColumn, QHeaderView::Stretch);
    m_eventView->setMinimumHeight(160);
    eventsLayout->addWidget(m_eventView);
    layout->addWidget(eventsBox);

    m_jobs->setParent(content);
    connect(m_jobs, &DetailJobs::jobPageRequested, this, &DetailPanel::jobPageRequested);
    layout->addWidget(m_jobs);
    layout->addStretch(1);

    auto *scroll = new QScrollArea(this);
    scroll->setWidget(content);
    scroll->setWidgetResizable(true);
    scroll->setFrameShape(QFrame::NoFrame);
    auto *outer = new QVBoxLayout(this);
    outer->setContentsMargins(0, 0, 0, 0);
    outer->addWidget(scroll);

    connect(m_window, &QComboBox::currentIndexChanged, this, [this] { requery(true); });
    connect(&m_refresh, &QTimer::timeout, this, [this] {
        if (m_rangeRequest == 0) { // never pile up: the previous refresh is still on its way
            requery(false);
        }
    });
    setHistorySource(history);
    select(-1, -1);
}

DetailPanel::~DetailPanel()
{
    cancelRequests();
}

void DetailPanel::setHistorySource(HistorySource *history)
{
    cancelRequests();
    for (const auto &c : std::as_const(m_historyConnections)) {
        disconnect(c);
    }
    m_historyConnections.clear();
    m_history = history;
    if (history) {
        m_historyConnections << connect(history, &HistorySource::rangeReady, this, &DetailPanel::onRange)
                             << connect(history, &HistorySource::eventsReady, this, &DetailPanel::onEvents)
                             << connect(history, &HistorySource::requestFailed, this, &DetailPanel::onFailed)
                             << connect(history, &HistorySource::reset, this, [this] {
                                    // Another connection: what was asked is gone with the old one; ask again.
                                    m_rangeRequest = 0;
                                    m_eventsRequest = 0;
                                    select(m_gpu, m_node);
                                });
    }
    select(m_gpu, m_node);
}

void DetailPanel::cancelRequests()
{
    if (m_history) {
        for (const quint64 id : { m_rangeRequest, m_eventsRequest }) {
            if (id != 0) {
                m_history->cancel(id);
            }
        }
    }
    m_rangeRequest = 0;
    m_eventsRequest = 0;
}

void DetailPanel::setTopology(const TopologyPtr &topology)
{
    const bool changed = !m_topology || !topology || topology->generation != m_topology->generation;
    m_topology = topology;
    m_eventModel->setTopology(topology);
    if (changed) {
        select(-1, -1); // indices of another layout mean other GPUs
    }
}

void DetailPanel::setMetrics(const std::vector<MetricInfo> &metrics)
{
    m_metrics = metrics;
    updateTitles();
    updateValues();
}

void DetailPanel::setFrame(const FramePtr &frame)
{
    m_frame = frame;
    updateValues();
}

void DetailPanel::setJobs(const JobsPtr &jobs)
{
    m_jobList = jobs;
    updateJobs();
}

void DetailPanel::setGpu(int gpu)
{
    select(gpu, -1);
}

void DetailPanel::setNode(int node)
{
    select(-1, node);
}

void DetailPanel::setWindow(int index)
{
    m_window->setCurrentIndex(index);
}

int DetailPanel::windowIndex() const
{
    return m_window->currentIndex();
}

void DetailPanel::setRefreshInterval(int ms)
{
    m_refreshMs = ms;
    requery(false);
}

MetricChart *DetailPanel::chart(const QString &metricId) const
{
    const auto it = m_charts.find(metricId);
    return it == m_charts.end() ? nullptr : it->second;
}

QString DetailPanel::subjectName() const
{
    if (!m_topology) {
        return {};
    }
    if (m_gpu >= 0) {
        const auto &node = m_topology->nodeOf(static_cast<uint32_t>(m_gpu));
        return QStringLiteral("%1 GPU %2").arg(node.hostname).arg(static_cast<uint32_t>(m_gpu) - node.firstGpu);
    }
    if (m_node >= 0) {
        return m_topology->nodes[static_cast<size_t>(m_node)].hostname;
    }
    return {};
}

void DetailPanel::select(int gpu, int node)
{
    Q_ASSERT(QThread::currentThread() == thread());
    cancelRequests();
    m_gpu = -1;
    m_node = -1;
    m_subject.clear();
    m_peers.clear();
    m_shownRange = {};
    m_lastError.clear();
    m_status->clear();
    m_eventModel->clear();
    for (const auto &[id, chart] : m_charts) {
        chart->clearData();
    }
    if (m_topology && gpu >= 0 && static_cast<uint32_t>(gpu) < m_topology->gpuCount) {
        m_gpu = gpu;
        m_subject = { static_cast<uint32_t>(gpu) };
        node = static_cast<int>(m_topology->nodeOfGpu[static_cast<size_t>(gpu)]);
    } else if (m_topology && node >= 0 && static_cast<size_t>(node) < m_topology->nodes.size()) {
        m_node = node;
        const auto &n = m_topology->nodes[static_cast<size_t>(node)];
        for (uint32_t g = n.firstGpu; g < n.firstGpu + n.gpuCount; ++g) {
            m_subject.push_back(g);
        }
    } else {
        node = -1;
    }
    if (node >= 0) {
        // Peers: the rest of the rack.
        const auto &rack = m_topology->racks[m_topology->nodes[static_cast<size_t>(node)].rack];
        for (uint32_t k = rack.firstNode; k < rack.firstNode + rack.nodeCount; ++k) {
            const auto &n = m_topology->nodes[k];
            for (uint32_t g = n.firstGpu; g < n.firstGpu + n.gpuCount; ++g) {
                if (!std::binary_search(m_subject.begin(), m_subject.end(), g)) {
                    m_peers.push_back(g);
                }
            }
        }
    }
    updateIdentity();
    updateTitles();
    updateValues();
    updateJobs();
    // Empty charts say nothing: they show once there is a GPU or node to chart.
    m_historyBox->setVisible(!m_subject.empty());
    if (m_subject.empty()) {
        m_title->setText(QStringLiteral("Nothing selected — click a GPU on the map"));
        m_refresh.stop();
        setLoading(false);
        return;
    }
    if (m_history) {
        m_eventsRequest = m_history->streamEvents({ m_gpu, node }, nowMs() - eventLookbackMs);
    }
    requery(true);
}

void DetailPanel::requery(bool showBusy)
{
    if (m_subject.empty() || !m_history) {
        return;
    }
    if (m_rangeRequest != 0) {
        m_history->cancel(m_rangeRequest); // superseded
    }
    const qint64 window = windows()[static_cast<size_t>(std::max(0, m_window->currentIndex()))];
    RangeRequest request;
    request.metricIds = chartMetrics();
    request.gpus = m_subject;
    request.gpus.insert(request.gpus.end(), m_peers.begin(), m_peers.end());
    std::sort(request.gpus.begin(), request.gpus.end());
    request.toMs = nowMs();
    request.fromMs = request.toMs - window;
    request.stepMs = window / pointsPerWindow;
    m_rangeRequest = m_history->queryRange(request);
    if (m_rangeRequest == 0) {
        return; // not connected: nothing will answer
    }
    const int interval
        = m_refreshMs >= 0 ? m_refreshMs : static_cast<int>(std::clamp<qint64>(request.stepMs, 2000, 30000));
    if (interval > 0) {
        m_refresh.start(interval);
    } else {
        m_refresh.stop();
    }
    if (showBusy) {
        setLoading(true);
    }
}

void DetailPanel::onRange(const RangeResultPtr &result)
{
    if (result->requestId != m_rangeRequest) {
        return; // superseded, or another user's request on a shared source
    }
    m_rangeRequest = 0;
    m_shownRange = result->request;
    for (const auto &[id, chart] : m_charts) {
        if (const RangeSeries *series = result->find(id)) {
            chart->setData(summarise(*series, m_subject, m_peers), result->request.fromMs, result->request.toMs);
        } else {
            chart->clearData();
        }
    }
    m_lastError = result->problems.join(QStringLiteral("; "));
    m_status->setText(m_lastError);
    setLoading(false);
    Q_EMIT historyShown();
}

void DetailPanel::onEvents(const EventBatchPtr &batch)
{
    if (batch->requestId == m_eventsRequest) {
        m_eventModel->append(batch->events);
    }
}

void DetailPanel::onFailed(quint64 requestId, const QString &message)
{
    if (requestId == m_rangeRequest) {
        m_rangeRequest = 0;
        m_lastError = QStringLiteral("history: %1").arg(message);
        setLoading(false);
    } else if (requestId == m_eventsRequest) {
        m_eventsRequest = 0;
        m_lastError = QStringLiteral("events: %1").arg(message);
    } else {
        return;
    }
    m_status->setText(m_lastError);
}

void DetailPanel::setLoading(bool loading)
{
    m_busy->setVisible(loading);
    if (loading != m_loading) {
        m_loading = loading;
        Q_EMIT loadingChanged(loading);
    }
}

void DetailPanel::updateIdentity()
{
    auto set = [this](const char *key, const QString &text) {
        m_identity[QLatin1String(key)]->setText(text.isEmpty() ? QStringLiteral("—") : text);
    };
    if (m_subject.empty()) {
        for (const auto &[key, label] : m_identity) {
            label->setText(QStringLiteral("—"));
        }
        m_identityForm->setRowVisible(m_identity[QStringLiteral("nvlink")], false);
        m_identityForm->setRowVisible(m_identity[QStringLiteral("domains")], false);
        return;
    }
    const uint32_t first = m_subject.front();
    const auto &node = m_topology->nodeOf(first);
    set("hostname", node.hostname);
    set("rack", m_topology->racks[node.rack].name);
    // Only where the rack is one NVLink domain (NVL72); on an HGX node NVLink ends at the node, which says enough.
    const auto domain = nvlinkDomainOf(*m_topology, first);
    set("nvlink",
        domain ? QStringLiteral("%1 (%L2 GPUs)").arg(domain->name(*m_topology)).arg(domain->gpuRange(*m_topology).count)
               : QString());
    m_identityForm->setRowVisible(m_identity[QStringLiteral("nvlink")], domain.has_value());
    // A GPU's: its rack's power and cooling, its leaf and port; a node's: its rack's and its own (its scalable unit),
    // not its GPUs' leaves (one a rail). Hidden where the backend knows none. One line a cause (power, cooling,
    // network), each no longer than a UUID: they fit a dock that the UUID fits, where one long line would be cut or
    // break inside a name ("su01-", then "l6").
    auto names
        = m_gpu >= 0 ? m_topology->domainNames(first) : m_topology->nodeDomainNames(m_topology->nodeOfGpu[first]);
    if (domain) { // said in its own row, with its GPUs
        names.erase(std::remove_if(names.begin(), names.end(),
                        [](const Topology::DomainName &name) { return name.kind == DomainKind::NvlinkDomain; }),
            names.end());
    }
    const QString domains = Topology::linesByCause(names).join(QLatin1Char('\n'));
    set("domains", domains);
    m_identityForm->setRowVisible(m_identity[QStringLiteral("domains")], !domains.isEmpty());
    set("model", node.model);
    set("driver", node.driverVersion);
    set("firmware", node.firmwareVersion);
    if (m_gpu >= 0) {
        m_title->setText(QStringLiteral("GPU %1 · %2").arg(m_gpu).arg(subjectName()));
        set("gpu",
            QStringLiteral("%1 of %2 (dense index %3)").arg(first - node.firstGpu).arg(node.gpuCount).arg(first));
        set("serial", QString::fromStdString(m_topology->gpuSerials[first]));
        set("uuid", m_topology->uuidText(first));
    } else {
        m_title->setText(QStringLiteral("Node %1").arg(node.hostname));
        set("gpu",
            QStringLiteral("%1 GPUs (dense %2–%3)")
                .arg(node.gpuCount)
                .arg(node.firstGpu)
                .arg(node.firstGpu + node.gpuCount - 1));
        set("serial", QString());
        set("uuid", QString());
    }
}

void DetailPanel::updateTitles()
{
    for (const auto &[id, chart] : m_charts) {
        const auto it
            = std::find_if(m_metrics.begin(), m_metrics.end(), [&](const MetricInfo &m) { return m.id == id; });
        if (it != m_metrics.end()) {
            chart->setTitle(it->name, it->unit);
        }
        chart->setSubjectName(m_gpu >= 0 ? QStringLiteral("GPU %1").arg(m_gpu) : QStringLiteral("node median"));
    }
}

void DetailPanel::updateValues()
{
    if (!m_frame || m_subject.empty() || !m_topology || m_frame->topologyGeneration != m_topology->generation) {
        m_valuesTable->setRowCount(0);
        m_valuesTable->setColumnCount(0);
        return;
    }
    const auto columns = static_cast<int>(m_subject.size());
    const auto rows = static_cast<int>(m_frame->planes.size());
    if (m_valuesTable->columnCount() != columns || m_valuesTable->rowCount() != rows) {
        m_valuesTable->setColumnCount(columns);
        m_valuesTable->setRowCount(rows);
    }
    // The headers name the subject's GPUs, which change with the selection even when their number does not.
    QStringList headers;
    for (const uint32_t g : m_subject) {
        headers << QStringLiteral("GPU %1").arg(g - m_topology->nodeOf(g).firstGpu);
    }
    for (int c = 0; c < columns; ++c) {
        if (auto *item = m_valuesTable->horizontalHeaderItem(c); !item || item->text() != headers[c]) {
            m_valuesTable->setHorizontalHeaderItem(c, new QTableWidgetItem(headers[c]));
        }
    }
    for (int r = 0; r < rows; ++r) {
        const MetricPlane &plane = m_frame->planes[static_cast<size_t>(r)];
        const auto info = std::find_if(
            m_metrics.begin(), m_metrics.end(), [&](const MetricInfo &m) { return m.id == plane.metricId; });
        const MetricInfo *metric = info == m_metrics.end() ? nullptr : &*info;
        const QString header = metric ? QStringLiteral("%1 (%2)").arg(metric->name, metric->unit) : plane.metricId;
        if (auto *item = m_valuesTable->verticalHeaderItem(r); !item || item->text() != header) {
            m_valuesTable->setVerticalHeaderItem(r, new QTableWidgetItem(header));
        }
        for (int c = 0; c < columns; ++c) {
            const uint32_t g = m_subject[static_cast<size_t>(c)];
            const float v = g < plane.values.size() ? plane.values[g] : std::numeric_limits<float>::quiet_NaN();
            auto *item = m_valuesTable->item(r, c);
            if (!item) {
                item = new QTableWidgetItem;
                item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
                m_valuesTable->setItem(r, c, item);
            }
            item->setText(formatValue(v, metric));
        }
    }
}

void DetailPanel::updateJobs()
{
    m_jobs->setSubject(m_jobList, m_topology, m_subject);
}

QTableWidget *DetailPanel::jobsTable() const
{
    return m_jobs->table();
}

} // namespace fleetscope
