// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "jobs/jobtracker.h"
#include "model/alertlayer.h"
#include "model/fleetmodel.h"
#include "model/framecomparer.h"
#include "model/problems.h"
#include "model/rateofchange.h"
#include "model/versiondrift.h"

#include <QFlags>
#include <QObject>

#include <optional>
#include <vector>

namespace fleetscope {

class FleetAlerts;
class LiveFeed;
class TimeMachine;

// What the views draw, in one piece (Display::shownChanged hands it over, ConsoleSession::shown() reads it).
struct ShownState
{
    enum Change {
        Metric = 1, // another metric, rate, colour map or a comparison: views reset their transitions
        Range = 2, // the auto range moved alone: views keep their transition and change only the range
        Frame = 4, // another frame
    };
    Q_DECLARE_FLAGS(Changes, Change)

    MetricInfo metric; // as drawn: the selected one, its rate or a comparison's difference, with the range in use
    // As drawn: live, replayed, loaded or compared, through the rate of change or a layer; always of the fleet the
    // session's topology() describes (checked once, here: views need not).
    FramePtr frame;
    FramePtr raw; // the frame as received (the detail panel shows its values); null for a comparison
    bool comparing = false; // a comparison of two recorded moments is shown
};
Q_DECLARE_OPERATORS_FOR_FLAGS(ShownState::Changes)

// The session's display: what is shown, chosen (the metric, its value or rate of change, the colour map, a fixed or
// auto range) and drawn (a frame through the rate, the version layer, a comparison's difference), and what can be
// shown (the backend's catalogue and the console's own layers, VersionDrift's computed from the topology and jobs, and
// the AlertLayer of the NOC's alerts while the backend reads an Alertmanager).
//
// Threads: the GUI thread; the drift and the alert layer are computed on JobTrackers (latest request wins).
class Display : public QObject
{
    Q_OBJECT
public:
    struct Options
    {
        QString metric; // wanted before the catalogue is known; empty = the backend's first
        int changeWindowS = 0;
        bool autoRange = false;
    };
    Display(const Options &options, LiveFeed *live, TimeMachine *time, QObject *parent = nullptr);

    const std::vector<MetricInfo> &metrics() const { return m_metrics; }
    QString metricName(const QString &id) const;
    // The metric chosen, when the catalogue has it.
    const MetricInfo *selectedMetric() const;
    const VersionDrift &versionDrift() const { return m_drift; }
    // The drift's problems, worded once per drift (unranked).
    const std::vector<Problem> &driftProblems() const { return m_driftProblems; }
    // The NOC's alerts on the map (empty until the first board is placed on the fleet shown).
    const AlertLayer &alertLayer() const { return m_alertLayer; }

    void setMetric(const QString &id);
    QString metricId() const { return m_metricId; }
    void setChangeWindow(int seconds);
    int changeWindowS() const { return m_changeWindowS; }
    void setColourMap(const QString &name);
    QString colourMap() const { return m_colourMap; }
    void setAutoRange(bool autoRange);
    bool autoRange() const { return m_autoRange; }

    const ShownState &shown() const { return m_shown; }
    // Draws a frame (live, replayed or loaded) as chosen; one of an earlier fleet layout is dropped.
    void showFrame(const FramePtr &frame);
    void showComparison(const FrameComparer::ResultPtr &result);
    // Back from a comparison to the metric itself.
    void clearComparison();

    // The backend's catalogue changed: the layers are added, and an unknown chosen metric replaced (said so).
    void onCatalogueChanged();
    // Computes the version drift from the current topology and jobs.
    void updateDrift();
    // Follows the session's alerts: the alert layer is offered while the backend reads an Alertmanager, and computed
    // again as the board changes.
    void followAlerts(const FleetAlerts *alerts);
    // Computes the alert layer from the current board and topology (and offers it, or takes it away).
    void updateAlertLayer();

Q_SIGNALS:
    void shownChanged(const fleetscope::ShownState &shown, fleetscope::ShownState::Changes changes);
    void metricsChanged();
    void driftChanged();
    void alertLayerChanged();
    // setMetric, setChangeWindow, setColourMap or setAutoRange changed what the controls should show.
    void optionsChanged();
    void message(const QString &text, int timeoutMs);

private:
    void rebuildMetrics();
    // The metric drawn from the selection, its rate and the colour map; subscribes the live feed to it.
    void applyMetric();
    template <typename T> void setOption(T &option, T value);
    void updateAutoRange();
    void publish();
    // Offers the alert layer, or takes it away, by what the backend says of its Alertmanager.
    void offerAlertLayer();
    // The layer shown is drawn again over the frame shown (its categories or GPUs changed).
    void redrawLayer();

    LiveFeed *m_live;
    TimeMachine *m_time;
    QString m_metricId;
    int m_changeWindowS = 0;
    QString m_colourMap;
    bool m_autoRange = false;
    std::optional<RateOfChange> m_rate; // set while a rate of change is shown
    ShownState m_shown;
    ShownState::Changes m_pending; // not yet published

    std::vector<MetricInfo> m_metrics;
    VersionDrift m_drift;
    std::vector<Problem> m_driftProblems; // driftProblems(m_drift), unranked
    FramePtr m_layerSource; // the live frame the layer frame below was made for
    FramePtr m_layerFrame;
    const FleetAlerts *m_alerts = nullptr;
    AlertLayer m_alertLayer;
    bool m_alertsOffered = false; // the alert layer is among metrics()
    bool m_wantsAlertLayer = false; // chosen before it was offered: shown once it is
    // Last: their jobs read nothing of this object, and no result is applied after they go.
    JobTracker m_driftJob;
    JobTracker m_alertJob;
};

} // namespace fleetscope
