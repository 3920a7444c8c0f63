// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "model/fleetmodel.h"
#include "model/historysource.h"

#include <QPointer>
#include <QTimer>
#include <QWidget>

#include <map>
#include <vector>

QT_BEGIN_NAMESPACE
class QComboBox;
class QFormLayout;
class QLabel;
class QProgressBar;
class QTableView;
class QTableWidget;
QT_END_NAMESPACE

namespace fleetscope {

class DetailJobs;
class EventTableModel;
class MetricChart;

// The detail panel for one GPU or node (the main window docks it): identity, the current value of every metric,
// charts of its history against its rack peers over a chosen window, its events and the jobs it served.
//
// History comes from a HistorySource (the session's), re-queried while shown so that the charts follow the fleet live;
// a new selection or window cancels the request it supersedes. Nothing here waits on the network.
class DetailPanel : public QWidget
{
    Q_OBJECT
public:
    // The charts, in order: temperature, power, utilisation, memory used, SM clock.
    static const QStringList &chartMetrics();
    // The windows offered, in ms.
    static const std::vector<qint64> &windows();
    // Output rows per window.
    static constexpr int pointsPerWindow = 240;

    explicit DetailPanel(HistorySource *history, QWidget *parent = nullptr);
    ~DetailPanel() override;

    // Where history is asked (not owned); the panel follows its reset().
    void setHistorySource(HistorySource *history);
    void setTopology(const TopologyPtr &topology);
    void setMetrics(const std::vector<MetricInfo> &metrics);
    void setFrame(const FramePtr &frame);
    void setJobs(const JobsPtr &jobs);
    // Selects a GPU (dense index) or a node; -1 clears the selection.
    void setGpu(int gpu);
    void setNode(int node);
    // Index into windows().
    void setWindow(int index);
    int windowIndex() const;
    // How often the history is fetched again while shown (0: never); default the window's step, 2..30 s.
    void setRefreshInterval(int ms);

    int gpu() const { return m_gpu; }
    int node() const { return m_node; }
    // True while the history of a new selection or window is loading.
    bool isLoading() const { return m_loading; }
    // What the charts show now: the request their data came from (empty before the first answer).
    const RangeRequest &shownRange() const { return m_shownRange; }
    // The subject's GPUs and its peers (the rest of its rack).
    const std::vector<uint32_t> &subjectGpus() const { return m_subject; }
    const std::vector<uint32_t> &peerGpus() const { return m_peers; }
    MetricChart *chart(const QString &metricId) const;
    EventTableModel *eventModel() const { return m_eventModel; }
    QTableWidget *jobsTable() const;
    // The jobs that served the subject, and "Open job page" (jobPageRequested).
    DetailJobs *jobs() const { return m_jobs; }
    QTableWidget *valuesTable() const { return m_valuesTable; }
    // The last history error shown, or empty.
    QString lastError() const { return m_lastError; }

Q_SIGNALS:
    void loadingChanged(bool loading);
    // The charts were redrawn from a new answer.
    void historyShown();
    // "Open job page" on the subject's job, or a double-click on a job listed.
    void jobPageRequested(quint64 jobId);

private:
    void select(int gpu, int node);
    void requery(bool showBusy);
    void onRange(const RangeResultPtr &result);
    void onEvents(const EventBatchPtr &batch);
    void onFailed(quint64 requestId, const QString &message);
    void setLoading(bool loading);
    void updateIdentity();
    void updateValues();
    void updateJobs();
    void updateTitles();
    void cancelRequests();
    QString subjectName() const;

    QPointer<HistorySource> m_history;
    QList<QMetaObject::Connection> m_historyConnections;
    TopologyPtr m_topology;
    std::vector<MetricInfo> m_metrics;
    FramePtr m_frame;
    JobsPtr m_jobList;
    int m_gpu = -1;
    int m_node = -1;
    std::vector<uint32_t> m_subject;
    std::vector<uint32_t> m_peers;
    quint64 m_rangeRequest = 0;
    quint64 m_eventsRequest = 0;
    bool m_loading = false;
    RangeRequest m_shownRange;
    QString m_lastError;
    QTimer m_refresh;
    int m_refreshMs = -1; // -1: from the window

    QLabel *m_title;
    std::map<QString, QLabel *> m_identity;
    QFormLayout *m_identityForm = nullptr;
    QWidget *m_historyBox = nullptr;
    QTableWidget *m_valuesTable;
    QComboBox *m_window;
    QProgressBar *m_busy;
    QLabel *m_status;
    std::map<QString, MetricChart *> m_charts;
    EventTableModel *m_eventModel;
    QTableView *m_eventView;
    DetailJobs *m_jobs;
};

} // namespace fleetscope
