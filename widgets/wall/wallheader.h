// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <QColor>
#include <QWidget>

#include <cstdint>
#include <vector>

namespace fleetscope {

// The strip along the top of the wall, readable across a room: the page's title, a banner for whatever is wrong,
// "data as of HH:MM:SS" and the clock, and under them the playlist's pages with the current one's time running
// out. Stale data turns the data time into a warning; problems never open a dialog, they land in the banner.
//
// Sized by its height: text is a fixed share of it, so a 4K wall gets twice the type of a 1080p one.
class WallHeader : public QWidget
{
    Q_OBJECT
public:
    enum class Tone { Info, Warning, Critical };

    explicit WallHeader(QWidget *parent = nullptr);

    void setTitle(const QString &title);
    QString title() const { return m_title; }
    // The newest sample's time, how long since it came (by this machine's monotonic clock) and whether that is past
    // three intervals; sampleMs 0: no data yet.
    void setData(qint64 sampleMs, qint64 silentMs, bool stale);
    QString dataText() const { return m_dataText; }
    bool isStale() const { return m_stale; }
    void setClock(qint64 nowMs);
    QString clockText() const { return m_clockText; }
    // The height of the header's first line (the type follows it). A second line below, across the whole width,
    // holds the banner when there is one, so that a problem is read from across the room rather than elided beside
    // the title, and a quiet status line otherwise: the header never changes height, so the map under it is never
    // resized (a GL framebuffer reallocated) because a banner came or went.
    void setLineHeight(int pixels);
    void setStatusLine(const QString &text);
    QString statusLine() const { return m_status; }
    // The banner's text, empty for none.
    void setBanner(const QString &text, Tone tone);
    QString banner() const { return m_banner; }
    Tone bannerTone() const { return m_tone; }
    void setPlaylist(int pages, int current, double progress, bool paused);
    // The health strip, at the right of the second line while there is no banner: "2 incidents  9 other problems
    // GPUs: 12 critical  40 warning …", each with its colour; a zero count is dimmed. A caption ("GPUs:") stands
    // before a count that begins another unit. Where the line is too narrow the last ones are left out, never
    // squeezed; the status line takes the rest.
    struct HealthCount
    {
        QString label;
        uint32_t count = 0;
        QColor colour;
        QString caption; // drawn dim before the count: the unit of the counts from here on
        bool operator==(const HealthCount &o) const
        {
            return label == o.label && count == o.count && colour == o.colour && caption == o.caption;
        }
    };
    void setHealth(const std::vector<HealthCount> &counts);
    const std::vector<HealthCount> &health() const { return m_health; }
    // The counts drawn at the last paint (the others did not fit).
    int healthShown() const { return m_healthShown; }

    QSize sizeHint() const override;

protected:
    void paintEvent(QPaintEvent *event) override;

private:
    QString m_title;
    QString m_dataText;
    bool m_stale = false;
    QString m_clockText;
    QString m_banner;
    Tone m_tone = Tone::Info;
    int m_pages = 0;
    int m_current = 0;
    double m_progress = 0;
    bool m_paused = false;
    int m_lineHeight = 80;
    QString m_status;
    std::vector<HealthCount> m_health;
    int m_healthShown = 0;
};

} // namespace fleetscope
