// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "model/fleetmodel.h"
#include "model/problems.h"
#include "widgets/wall/wallheader.h"

#include <QColor>
#include <QWidget>

#include <array>
#include <vector>

class QButtonGroup;
class QLabel;
class QToolButton;

namespace fleetscope {

// The desk's health strip: "GPUs:" and how many GPUs of the frame shown are critical, warning, offline, throttled, and
// anomalous (open anomalies from the backend's detector); named GPUs, so that they are never read as counts of
// problems (the Problems dock says both: its problems and, counted here, the GPUs critical now). Clicking a count
// outlines those GPUs on the map; clicking it again, or another, clears or replaces the outline.
class HealthStrip : public QWidget
{
    Q_OBJECT
public:
    enum Group { Critical, Warning, Offline, Throttled, Anomalous, GroupCount };
    using Counts = std::array<uint32_t, GroupCount>;

    explicit HealthStrip(QWidget *parent = nullptr);

    void setFrame(FramePtr frame);
    void setAnomalousGpus(std::vector<uint32_t> gpus);
    Counts counts() const { return m_counts; }
    // The GPUs of a group in the frame shown (ascending).
    std::vector<uint32_t> gpusOf(Group group) const;

    // The counts of a frame's health bytes (anomalous left 0: they come from events).
    static Counts count(const Frame &frame);
    static bool inGroup(uint8_t healthByte, Group group);
    // For people, and the wall's header: "critical", its colour.
    static QString groupName(Group group);
    static QColor groupColour(Group group);
    // The problems page's tally as the wall's header counts it, before the GPUs' counts: incidents (none: left out),
    // then the other problems.
    static std::vector<WallHeader::HealthCount> wallCounts(const ProblemTally &tally);

Q_SIGNALS:
    // A count was clicked: outline these GPUs (none: clear the outline); what says which, for people.
    void gpusChosen(const std::vector<uint32_t> &gpus, const QString &what);

private:
    void update();
    void onClicked(int group);

    FramePtr m_frame;
    std::vector<uint32_t> m_anomalous;
    Counts m_counts {};
    QLabel *m_unit = nullptr;
    std::array<QToolButton *, GroupCount> m_buttons {};
    std::array<int, GroupCount> m_sizedDigits {}; // each button is sized for a count of this many digits
    int m_chosen = -1;
};

} // namespace fleetscope
