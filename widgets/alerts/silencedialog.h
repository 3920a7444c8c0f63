// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "model/alerts.h"

#include <QDialog>

#include <functional>
#include <vector>

class QComboBox;
class QDialogButtonBox;
class QGridLayout;
class QLabel;
class QLineEdit;
class QSpinBox;

namespace fleetscope {

// Silence…: what to silence (matchers, proposed for the problem chosen and each editable: name, value, = / != / =~
// / !~, removable, more addable), for how long (30 min to a day, or minutes of one's own) and why (a comment,
// required). Under them, in words, what it will silence and until when, and how many of the alerts firing now it
// matches; OK stays disabled until Alertmanager would take it (model/alertproblems.h matchersProblem). It makes
// nothing itself: draft() is what the caller asks the backend for.
class SilenceDialog : public QDialog
{
    Q_OBJECT
public:
    explicit SilenceDialog(QWidget *parent = nullptr);

    // What the silence is for, said at the top ("GPU 5 of r01-k03-n02").
    void setSubject(const QString &subject);
    // The matchers proposed; replaces those shown.
    void setMatchers(const std::vector<SilenceMatcher> &matchers);
    // The alerts of now, to say how many the matchers match (a copy is kept while the dialog is open).
    void setAlerts(std::vector<FleetAlert> alerts);
    // Who the silence will be made as (the backend's name for this console's credential).
    void setCreator(const QString &name);
    // The clock the "until" is read by (epoch ms); the system's by default. Tests set it.
    void setClock(std::function<int64_t()> clock);

    // The matcher rows: add one (empty by default), remove one.
    void addMatcher(const SilenceMatcher &matcher = SilenceMatcher { {}, {}, false, true });
    void removeMatcher(int row);
    int matcherCount() const { return static_cast<int>(m_rows.size()); }
    // The durations offered, in order; the last, custom, takes the minutes box.
    static std::vector<int64_t> presetDurationsMs();
    void setDurationMs(int64_t ms);
    void setComment(const QString &comment);

    // The silence as filled in now, and whether it can be made (else problem() says why).
    SilenceDraft draft() const;
    bool isValid() const { return problem().isEmpty(); }
    QString problem() const;
    // What it will silence, in words: "Silences alerts where Hostname = r01-k03-n02 and gpu = 5 for 2 h, until 18:30
    // · matches 2 of the 14 alerts firing now: GpuTooHot, XidErrors".
    QString summaryText() const;

private:
    struct Row
    {
        QLineEdit *name;
        QComboBox *op;
        QLineEdit *value;
        QWidget *remove;
    };
    void relayRows();
    void refreshText();
    int64_t durationMs() const;

    QLabel *m_subject;
    QGridLayout *m_matcherGrid;
    std::vector<Row> m_rows;
    QComboBox *m_duration;
    QSpinBox *m_customMinutes;
    QLabel *m_until;
    QLineEdit *m_comment;
    QLabel *m_creator;
    QLabel *m_summary;
    QLabel *m_problem;
    QDialogButtonBox *m_buttons;
    std::vector<FleetAlert> m_alerts;
    std::function<int64_t()> m_clock;
};

} // namespace fleetscope
