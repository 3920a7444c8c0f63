// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "model/history.h"
#include "model/jobreport.h"

#include <QPolygonF>
#include <QRectF>
#include <QString>
#include <QWidget>

#include <cstdint>
#include <vector>

namespace fleetscope {

// Something that hit the job's GPUs at one time, a tick above its band.
struct JobMark
{
    enum class Kind : uint8_t { Xid, Ecc, NodeDown, Throttle, Anomaly, IncidentOpen, IncidentClose, Alert };
    int64_t timeMs = 0;
    Kind kind = Kind::Xid;
    EventSeverity severity = EventSeverity::Info;
    int64_t gpu = -1; // the GPU it names, -1 when none
    uint64_t incidentId = 0; // an incident's, 0 otherwise
    QString text; // its tooltip
};

// The colour a job phase is drawn in, on the desk and on the wall alike (colour-blind safe, Okabe-Ito).
QColor jobPhaseColor(JobPhase phase);
QString jobPhaseName(JobPhase phase);

// A job's life drawn left to right (its start to its end, or its report's newest frame while it runs): above, a lane
// of marks; the band of its GPUs' utilisation (p10-p90 shaded, the median a line); beneath, its phases as a strip;
// a legend and a time axis. Paints from geometry cached per report and size, so 1,440 band points and 4,096 spans cost
// a few milliseconds. A click on the band asks for that time, on a mark for its GPU or incident.
class JobTimeline : public QWidget
{
    Q_OBJECT
public:
    explicit JobTimeline(QWidget *parent = nullptr);

    void setReport(JobReportPtr report);
    void setMarks(std::vector<JobMark> marks);
    // Dark ground and larger type; clicks ignored.
    void setWallMode(bool wall);

    // The drawn geometry (tests click on it): where the band is, where the marks are, and time <-> x.
    QRectF bandRect() const;
    QRectF markLane() const;
    qreal xAt(int64_t timeMs) const;
    int64_t timeAt(qreal x) const;
    // The job's life as drawn: [from, to].
    int64_t fromMs() const { return m_fromMs; }
    int64_t toMs() const { return m_toMs; }
    const std::vector<JobMark> &marks() const { return m_marks; }

    QSize sizeHint() const override;
    QSize minimumSizeHint() const override;

Q_SIGNALS:
    void timeActivated(qint64 timeMs);
    void gpuActivated(uint32_t gpu);
    void incidentActivated(quint64 incidentId);

protected:
    void paintEvent(QPaintEvent *event) override;
    void resizeEvent(QResizeEvent *event) override;
    void changeEvent(QEvent *event) override;
    void mouseReleaseEvent(QMouseEvent *event) override;
    bool event(QEvent *event) override;

private:
    struct Layout
    {
        QRectF legend, marks, band, strip, axis;
    };
    // Cached: xAt runs for every span and mark of a paint, and measuring text costs microseconds.
    const Layout &layout() const;
    void rebuildGeometry();
    // The mark nearest x within a few pixels, or -1.
    int markNear(qreal x) const;
    QString tooltipAt(const QPointF &pos) const;
    void paintLegend(QPainter &painter, const QRectF &rect) const;
    void paintAxis(QPainter &painter, const Layout &l) const;
    void paintMarks(QPainter &painter, const QRectF &rect) const;

    JobReportPtr m_report;
    std::vector<JobMark> m_marks; // by time
    bool m_wall = false;
    int64_t m_fromMs = 0;
    int64_t m_toMs = 1;
    // Cached in widget coordinates for the current size.
    QPolygonF m_bandShape;
    QPolygonF m_median;
    bool m_geometryStale = true;
    mutable Layout m_layout;
    mutable bool m_layoutStale = true;
};

} // namespace fleetscope
