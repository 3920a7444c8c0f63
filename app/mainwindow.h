// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "commandline.h"
#include "rateofchange.h"
#include "telemetryclient.h"

#include <QElapsedTimer>
#include <QMainWindow>
#include <QTimer>

#include <optional>

class QComboBox;
class QLabel;

namespace fleetscope {

class ColorLegend;
class HeatmapView;

class MainWindow : public QMainWindow
{
    Q_OBJECT
public:
    explicit MainWindow(const ConsoleOptions &options, QWidget *parent = nullptr);

    TelemetryClient *client() { return &m_client; }
    HeatmapView *heatmap() { return m_view; }
    // Connects the client to HOST:PORT (the embedded backend's or the user's).
    void connectTo(const QString &address);
    // Shows a problem that stops the console from working (the embedded backend failed) in the status bar.
    void showProblem(const QString &message);
    // --screenshot: once a live frame has been drawn, saves the window to file and emits screenshotDone(0); after
    // timeoutS seconds without one, emits screenshotDone(1) with a message on stderr.
    void takeScreenshotWhenLive(const QString &file, int timeoutS);

    // The window as on screen, the map's labels included.
    QPixmap grabWithMap();

Q_SIGNALS:
    void screenshotDone(int exitCode);

private:
    void onStateChanged(TelemetryClient::State state, const QString &detail);
    void onTopologyChanged(const TopologyPtr &topology);
    void onMetricsChanged();
    void onFrame(const FramePtr &frame);
    void onMetricSelected(int index);
    // The range the map and legend use for this frame: the metric's own, or the auto range of the values shown.
    void updateAutoRange(const FramePtr &shown);
    void refreshStatus();

    ConsoleOptions m_options;
    TelemetryClient m_client;
    HeatmapView *m_view = nullptr;
    ColorLegend *m_legend = nullptr;
    QComboBox *m_metricBox = nullptr;
    QComboBox *m_colourBox = nullptr;
    QComboBox *m_showBox = nullptr; // the value, or its rate of change over a window
    QComboBox *m_rangeBox = nullptr;
    QComboBox *m_arrangeBox = nullptr;
    MetricInfo m_shownMetric; // what the map shows: the selected metric or its rate, with the range in use
    std::optional<RateOfChange> m_rate; // set while the map shows a rate of change
    QLabel *m_connectionLabel = nullptr;
    QLabel *m_gpuLabel = nullptr;
    QLabel *m_ageLabel = nullptr;
    QLabel *m_fpsLabel = nullptr;
    QTimer m_statusTimer;
    QElapsedTimer m_fpsClock;
    quint64 m_fpsPaints = 0;
    double m_fps = -1; // not measured yet
    QString m_screenshotFile;
    qint64 m_intervalMs = 1000; // between the last two frames' samples
};

} // namespace fleetscope
