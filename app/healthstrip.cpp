// SPDX-License-Identifier: Apache-2.0
#include "app/healthstrip.h"

#include "common/health.h"
#include "widgets/style/fixedtextsize.h"

#include <QHBoxLayout>
#include <QLabel>
#include <QToolButton>

#include <algorithm>

namespace fleetscope {

namespace {
struct GroupLook
{
    const char *name;
    const char *colour;
    const char *tip;
};
constexpr GroupLook looks[HealthStrip::GroupCount] = {
    { "critical", "#d9534f", "GPUs in a critical state (over temperature, double-bit ECC, serious XID)" },
    { "warning", "#e09a20", "GPUs in a warning state" },
    { "offline", "#9e9e9e", "GPUs offline (their node down)" },
    { "throttled", "#c77dff", "GPUs throttling their clocks (thermal or power)" },
    { "anomalous", "#26a69a", "GPUs the backend's detector finds out of line with their job, rack or own past" },
};
} // namespace

HealthStrip::HealthStrip(QWidget *parent)
    : QWidget(parent)
{
    auto *layout = new QHBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(2);
    m_unit = new QLabel(tr("GPUs:"), this);
    m_unit->setToolTip(tr("The GPUs of the frame shown, by state"));
    layout->addWidget(m_unit);
    for (int g = 0; g < GroupCount; ++g) {
        auto *button = new QToolButton(this);
        button->setAutoRaise(true);
        button->setCheckable(true);
        button->setToolTip(tr("%1. Click to outline them on the map.").arg(QLatin1String(looks[g].tip)));
        button->setStyleSheet(
            QStringLiteral("QToolButton { color: %1; font-weight: bold; }").arg(QLatin1String(looks[g].colour)));
        connect(button, &QToolButton::clicked, this, [this, g] { onClicked(g); });
        layout->addWidget(button);
        m_buttons[static_cast<size_t>(g)] = button;
    }
    update();
}

QString HealthStrip::groupName(Group group)
{
    return group >= 0 && group < GroupCount ? QLatin1String(looks[group].name) : QString();
}

QColor HealthStrip::groupColour(Group group)
{
    return group >= 0 && group < GroupCount ? QColor(QLatin1String(looks[group].colour)) : QColor();
}

std::vector<WallHeader::HealthCount> HealthStrip::wallCounts(const ProblemTally &tally)
{
    auto colour = [](uint32_t critical) {
        return QColor(QLatin1String(critical > 0 ? looks[Critical].colour : looks[Warning].colour));
    };
    std::vector<WallHeader::HealthCount> counts;
    if (tally.incidents > 0) { // "0 incidents" is no news, and the header's line is wanted for the GPUs' counts
        counts.push_back({ tally.incidents == 1 ? tr("incident") : tr("incidents"), tally.incidents,
            colour(tally.criticalIncidents), QString() });
    }
    const bool one = tally.others == 1;
    counts.push_back({ tally.incidents > 0 ? (one ? tr("other problem") : tr("other problems"))
                                           : (one ? tr("problem") : tr("problems")),
        tally.others, colour(tally.criticalOthers), QString() });
    // The NOC's alerts that fire (silenced and inhibited ones are someone's already), when Alertmanager has any.
    if (const uint32_t firing = tally.alerts - std::min(tally.alerts, tally.quietAlerts); firing > 0) {
        counts.push_back({ firing == 1 ? tr("alert") : tr("alerts"), firing, colour(tally.criticalAlerts), QString() });
    }
    return counts;
}

bool HealthStrip::inGroup(uint8_t byte, Group group)
{
    switch (group) {
    case Critical:
        return health::stateOf(byte) == health::Critical;
    case Warning:
        return health::stateOf(byte) == health::Warning;
    case Offline:
        return health::stateOf(byte) == health::Offline;
    case Throttled:
        return (byte & health::throttledFlag) != 0;
    case Anomalous:
    case GroupCount:
        break;
    }
    return false;
}

HealthStrip::Counts HealthStrip::count(const Frame &frame)
{
    Counts counts {};
    for (uint8_t byte : frame.health) {
        const auto state = health::stateOf(byte);
        counts[Critical] += state == health::Critical ? 1 : 0;
        counts[Warning] += state == health::Warning ? 1 : 0;
        counts[Offline] += state == health::Offline ? 1 : 0;
        counts[Throttled] += (byte & health::throttledFlag) != 0 ? 1 : 0;
    }
    return counts;
}

void HealthStrip::setFrame(FramePtr frame)
{
    m_frame = std::move(frame);
    update();
}

void HealthStrip::setAnomalousGpus(std::vector<uint32_t> gpus)
{
    m_anomalous = std::move(gpus);
    update();
}

std::vector<uint32_t> HealthStrip::gpusOf(Group group) const
{
    if (group == Anomalous) {
        return m_anomalous;
    }
    std::vector<uint32_t> gpus;
    if (m_frame) {
        for (size_t i = 0; i < m_frame->health.size(); ++i) {
            if (inGroup(m_frame->health[i], group)) {
                gpus.push_back(static_cast<uint32_t>(i));
            }
        }
    }
    return gpus;
}

void HealthStrip::update()
{
    m_counts = m_frame ? count(*m_frame) : Counts {};
    m_counts[Anomalous] = static_cast<uint32_t>(m_anomalous.size());
    for (int g = 0; g < GroupCount; ++g) {
        QToolButton *button = m_buttons[static_cast<size_t>(g)];
        const uint32_t count = m_counts[static_cast<size_t>(g)];
        // Sized for as many digits as the largest count so far (two at least: "GPUs:" before the counts takes the
        // room of the third), so that a new count, every frame, repaints the button and does not reformat the status
        // bar (widgets/style/fixedtextsize.h).
        const int digits = std::max(2, static_cast<int>(QString::number(count).size()));
        if (digits > m_sizedDigits[static_cast<size_t>(g)]) {
            m_sizedDigits[static_cast<size_t>(g)] = digits;
            fixSizeForText(button,
                tr("%L1 %2").arg(QString(digits, QLatin1Char('8')).toULongLong()).arg(QLatin1String(looks[g].name)));
        }
        button->setText(tr("%L1 %2").arg(count).arg(QLatin1String(looks[g].name)));
        // A zero count is quiet: nothing to look at.
        button->setEnabled(m_counts[static_cast<size_t>(g)] > 0 || button->isChecked());
    }
}

void HealthStrip::onClicked(int group)
{
    if (m_chosen == group) {
        m_chosen = -1;
        m_buttons[static_cast<size_t>(group)]->setChecked(false);
        Q_EMIT gpusChosen({}, QString());
        update();
        return;
    }
    if (m_chosen >= 0) {
        m_buttons[static_cast<size_t>(m_chosen)]->setChecked(false);
    }
    m_chosen = group;
    m_buttons[static_cast<size_t>(group)]->setChecked(true);
    Q_EMIT gpusChosen(gpusOf(static_cast<Group>(group)), QLatin1String(looks[group].name));
}

} // namespace fleetscope
