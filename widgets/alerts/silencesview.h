// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "model/alerts.h"

#include <QWidget>

#include <vector>

class QAbstractButton;
class QLabel;
class QTreeWidget;

namespace fleetscope {

// The silences of now, active and pending, one row each: what it matches (amtool's words: Hostname="r01-k03-n02"),
// who made it, until when (a pending one from when), and why; an Expire button on each, greyed out with the reason
// where this console may not (setRefusal). It ends nothing itself: expireRequested is for the caller to ask the
// backend.
class SilencesView : public QWidget
{
    Q_OBJECT
public:
    explicit SilencesView(QWidget *parent = nullptr);

    // The backend's silences (expired ones are left out), as of nowMs.
    void setSilences(const std::vector<FleetSilence> &silences, int64_t nowMs);
    // Why this console may not expire a silence ("you are a viewer (noc-wall): …"); empty: it may.
    void setRefusal(const QString &whyNot);
    // A line over the list: the alerts' freshness when they are old ("Alertmanager unreachable …"), else empty.
    void setNote(const QString &note);

    int count() const;
    // Each row as read: "Hostname="r01-k03-n02", gpu="5" · alice · until 16:00 · swapping the PSU".
    QStringList rowTexts() const;
    QAbstractButton *expireButton(int row) const;
    QString silenceId(int row) const;

Q_SIGNALS:
    void expireRequested(const QString &id);

private:
    void applyRefusal();

    QLabel *m_heading;
    QLabel *m_note;
    QTreeWidget *m_list;
    QString m_refusal;
};

} // namespace fleetscope
