// SPDX-License-Identifier: Apache-2.0
#include "widgets/alerts/silencedialog.h"

#include "model/alertproblems.h"

#include <QComboBox>
#include <QDateTime>
#include <QDialogButtonBox>
#include <QFormLayout>
#include <QGridLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSpinBox>
#include <QToolButton>
#include <QVBoxLayout>

#include <algorithm>
#include <set>

namespace fleetscope {

namespace {
constexpr int64_t minuteMs = 60 * 1000;

// The operators in the order the box lists them: (isRegex, isEqual).
constexpr std::pair<bool, bool> operators[] = { { false, true }, { false, false }, { true, true }, { true, false } };

QString durationText(int64_t ms)
{
    const int64_t minutes = ms / minuteMs;
    const int64_t days = minutes / (24 * 60);
    const int64_t hours = minutes / 60 % 24;
    QStringList parts;
    if (days > 0) {
        parts << (days == 1 ? SilenceDialog::tr("1 day") : SilenceDialog::tr("%1 days").arg(days));
    }
    if (hours > 0) {
        parts << SilenceDialog::tr("%1 h").arg(hours);
    }
    if (minutes % 60 > 0 || parts.isEmpty()) {
        parts << SilenceDialog::tr("%1 min").arg(minutes % 60);
    }
    return parts.join(QLatin1Char(' '));
}

QString alertsText(size_t n)
{
    return n == 1 ? SilenceDialog::tr("1 alert") : SilenceDialog::tr("%L1 alerts").arg(n);
}

// "Hostname is "r01-k03-n02"", "gpu matches /[0-3]/".
QString matcherWords(const SilenceMatcher &m)
{
    if (m.isRegex) {
        return m.isEqual ? SilenceDialog::tr("%1 matches /%2/").arg(m.name, m.value)
                         : SilenceDialog::tr("%1 does not match /%2/").arg(m.name, m.value);
    }
    return m.isEqual ? SilenceDialog::tr("%1 is \"%2\"").arg(m.name, m.value)
                     : SilenceDialog::tr("%1 is not \"%2\"").arg(m.name, m.value);
}
} // namespace

SilenceDialog::SilenceDialog(QWidget *parent)
    : QDialog(parent)
    , m_clock([] { return QDateTime::currentMSecsSinceEpoch(); })
{
    setWindowTitle(tr("Silence"));
    m_subject = new QLabel(this);
    m_subject->setWordWrap(true);
    QFont bold = m_subject->font();
    bold.setBold(true);
    m_subject->setFont(bold);

    auto *matchers = new QGroupBox(tr("Alerts it silences: all of these hold"), this);
    auto *matchersLayout = new QVBoxLayout(matchers);
    m_matcherGrid = new QGridLayout;
    m_matcherGrid->setColumnStretch(0, 2);
    m_matcherGrid->setColumnStretch(2, 3);
    matchersLayout->addLayout(m_matcherGrid);
    auto *add = new QPushButton(tr("Add matcher"), matchers);
    add->setObjectName(QStringLiteral("addMatcher"));
    add->setAutoDefault(false);
    connect(add, &QPushButton::clicked, this, [this] { addMatcher(); });
    auto *addRow = new QHBoxLayout;
    addRow->addWidget(add);
    addRow->addStretch(1);
    matchersLayout->addLayout(addRow);

    m_duration = new QComboBox(this);
    m_duration->setObjectName(QStringLiteral("duration"));
    for (int64_t ms : presetDurationsMs()) {
        m_duration->addItem(durationText(ms), QVariant::fromValue<qint64>(ms));
    }
    m_duration->addItem(tr("Custom…"), QVariant::fromValue<qint64>(0));
    m_customMinutes = new QSpinBox(this);
    m_customMinutes->setObjectName(QStringLiteral("customMinutes"));
    m_customMinutes->setRange(1, 30 * 24 * 60); // Alertmanager takes longer; a month is what a NOC means by "long"
    m_customMinutes->setSingleStep(15);
    m_customMinutes->setValue(180);
    m_customMinutes->setSuffix(tr(" min"));
    m_until = new QLabel(this);
    auto *durationRow = new QHBoxLayout;
    durationRow->addWidget(m_duration);
    durationRow->addWidget(m_customMinutes);
    durationRow->addWidget(m_until, 1);

    m_comment = new QLineEdit(this);
    m_comment->setObjectName(QStringLiteral("comment"));
    m_comment->setPlaceholderText(tr("Why, and who is on it (required)"));
    m_comment->setMaxLength(1000);
    m_creator = new QLabel(this);

    auto *form = new QFormLayout;
    form->addRow(tr("For:"), durationRow);
    form->addRow(tr("Comment:"), m_comment);
    form->addRow(tr("Made as:"), m_creator);

    m_summary = new QLabel(this);
    m_summary->setObjectName(QStringLiteral("summary"));
    m_summary->setWordWrap(true);
    m_summary->setTextFormat(Qt::PlainText);
    m_problem = new QLabel(this);
    m_problem->setObjectName(QStringLiteral("problem"));
    m_problem->setWordWrap(true);
    m_problem->setTextFormat(Qt::PlainText);
    QPalette warn = m_problem->palette();
    warn.setColor(QPalette::WindowText, QColor(0xc0, 0x39, 0x2b));
    m_problem->setPalette(warn);

    m_buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, this);
    m_buttons->button(QDialogButtonBox::Ok)->setText(tr("Silence"));
    connect(m_buttons, &QDialogButtonBox::accepted, this, [this] {
        if (isValid()) {
            accept();
        }
    });
    connect(m_buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);

    auto *layout = new QVBoxLayout(this);
    layout->addWidget(m_subject);
    layout->addWidget(matchers);
    layout->addLayout(form);
    layout->addWidget(m_summary);
    layout->addWidget(m_problem);
    layout->addStretch(1);
    layout->addWidget(m_buttons);

    connect(m_duration, &QComboBox::currentIndexChanged, this, &SilenceDialog::refreshText);
    connect(m_customMinutes, &QSpinBox::valueChanged, this, &SilenceDialog::refreshText);
    connect(m_comment, &QLineEdit::textChanged, this, &SilenceDialog::refreshText);
    setDurationMs(SilenceDraft {}.durationMs);
    setMinimumWidth(560);
    refreshText();
}

std::vector<int64_t> SilenceDialog::presetDurationsMs()
{
    return { 30 * minuteMs, 60 * minuteMs, 120 * minuteMs, 240 * minuteMs, 24 * 60 * minuteMs };
}

void SilenceDialog::setSubject(const QString &subject)
{
    m_subject->setText(tr("Silence %1").arg(subject));
}

void SilenceDialog::setMatchers(const std::vector<SilenceMatcher> &matchers)
{
    while (!m_rows.empty()) {
        removeMatcher(static_cast<int>(m_rows.size()) - 1);
    }
    for (const auto &m : matchers) {
        addMatcher(m);
    }
    refreshText();
}

void SilenceDialog::setAlerts(std::vector<FleetAlert> alerts)
{
    m_alerts = std::move(alerts);
    refreshText();
}

void SilenceDialog::setCreator(const QString &name)
{
    m_creator->setText(name.isEmpty() ? tr("(the backend names this console's credential)") : name);
}

void SilenceDialog::setClock(std::function<int64_t()> clock)
{
    m_clock = std::move(clock);
    refreshText();
}

void SilenceDialog::addMatcher(const SilenceMatcher &matcher)
{
    Row row {};
    row.name = new QLineEdit(matcher.name, this);
    row.name->setPlaceholderText(tr("label"));
    row.op = new QComboBox(this);
    for (const auto &[regex, equal] : operators) {
        row.op->addItem(matcherOperator(SilenceMatcher { {}, {}, regex, equal }));
    }
    row.op->setToolTip(tr("= equals · != differs · =~ matches the regular expression · !~ does not match it"));
    const auto chosen = std::find(
        std::begin(operators), std::end(operators), std::pair<bool, bool> { matcher.isRegex, matcher.isEqual });
    row.op->setCurrentIndex(static_cast<int>(chosen - std::begin(operators)));
    row.value = new QLineEdit(matcher.value, this);
    row.value->setPlaceholderText(tr("value"));
    auto *remove = new QToolButton(this);
    remove->setText(tr("Remove"));
    remove->setToolTip(tr("Remove this matcher"));
    row.remove = remove;
    connect(row.name, &QLineEdit::textChanged, this, &SilenceDialog::refreshText);
    connect(row.value, &QLineEdit::textChanged, this, &SilenceDialog::refreshText);
    connect(row.op, &QComboBox::currentIndexChanged, this, &SilenceDialog::refreshText);
    connect(remove, &QToolButton::clicked, this, [this, remove] {
        const auto at
            = std::find_if(m_rows.begin(), m_rows.end(), [remove](const Row &r) { return r.remove == remove; });
        if (at != m_rows.end()) {
            removeMatcher(static_cast<int>(at - m_rows.begin()));
        }
    });
    m_rows.push_back(row);
    relayRows();
    refreshText();
}

void SilenceDialog::removeMatcher(int index)
{
    if (index < 0 || index >= matcherCount()) {
        return;
    }
    const Row row = m_rows[static_cast<size_t>(index)];
    m_rows.erase(m_rows.begin() + index);
    for (QWidget *w : { static_cast<QWidget *>(row.name), static_cast<QWidget *>(row.op),
             static_cast<QWidget *>(row.value), row.remove }) {
        m_matcherGrid->removeWidget(w);
        // Later: the row's Remove button may be the one whose click is running. Gone from sight and name now.
        w->hide();
        w->setObjectName(QString());
        w->deleteLater();
    }
    relayRows();
    refreshText();
}

void SilenceDialog::relayRows()
{
    for (size_t i = 0; i < m_rows.size(); ++i) {
        const Row &r = m_rows[i];
        const int at = static_cast<int>(i);
        m_matcherGrid->addWidget(r.name, at, 0);
        m_matcherGrid->addWidget(r.op, at, 1);
        m_matcherGrid->addWidget(r.value, at, 2);
        m_matcherGrid->addWidget(r.remove, at, 3);
        // Found by tests as a person finds them: by row.
        r.name->setObjectName(QStringLiteral("matcherName%1").arg(i));
        r.op->setObjectName(QStringLiteral("matcherOperator%1").arg(i));
        r.value->setObjectName(QStringLiteral("matcherValue%1").arg(i));
        r.remove->setObjectName(QStringLiteral("removeMatcher%1").arg(i));
    }
}

void SilenceDialog::setDurationMs(int64_t ms)
{
    const int preset = m_duration->findData(QVariant::fromValue<qint64>(ms));
    if (preset >= 0 && ms > 0) {
        m_duration->setCurrentIndex(preset);
    } else {
        m_customMinutes->setValue(static_cast<int>(
            std::clamp<int64_t>(ms / minuteMs, m_customMinutes->minimum(), m_customMinutes->maximum())));
        m_duration->setCurrentIndex(m_duration->count() - 1);
    }
    refreshText();
}

void SilenceDialog::setComment(const QString &comment)
{
    m_comment->setText(comment);
}

int64_t SilenceDialog::durationMs() const
{
    const qint64 preset = m_duration->currentData().value<qint64>();
    return preset > 0 ? preset : int64_t { m_customMinutes->value() } * minuteMs;
}

SilenceDraft SilenceDialog::draft() const
{
    SilenceDraft d;
    for (const Row &r : m_rows) {
        const auto [regex, equal] = operators[std::clamp(r.op->currentIndex(), 0, 3)];
        d.matchers.push_back(SilenceMatcher { r.name->text().trimmed(), r.value->text(), regex, equal });
    }
    d.durationMs = durationMs();
    d.comment = m_comment->text().trimmed();
    return d;
}

QString SilenceDialog::problem() const
{
    const SilenceDraft d = draft();
    if (QString matchers = matchersProblem(d.matchers); !matchers.isEmpty()) {
        return matchers;
    }
    if (d.comment.isEmpty()) {
        return tr("a comment is required: why, and who is on it");
    }
    return {};
}

QString SilenceDialog::summaryText() const
{
    const SilenceDraft d = draft();
    const int64_t now = m_clock();
    QStringList conditions;
    for (const auto &m : d.matchers) {
        if (!m.name.isEmpty()) {
            conditions << matcherWords(m);
        }
    }
    QString text = conditions.isEmpty()
        ? tr("Silences nothing yet: add a matcher")
        : tr("Silences every alert where %1, for %2 (until %3).")
              .arg(conditions.join(tr(" and ")), durationText(d.durationMs), untilText(now + d.durationMs, now));
    if (conditions.isEmpty() || !matchersProblem(d.matchers).isEmpty()) {
        return text;
    }
    std::set<QString> names;
    size_t matched = 0;
    for (const auto &a : m_alerts) {
        if (silenceMatches(d.matchers, a)) {
            ++matched;
            names.insert(a.name().isEmpty() ? tr("(no name)") : a.name());
        }
    }
    if (matched == 0) {
        text += tr(" It matches none of the %1 shown now; alerts that match will be silenced as they fire.")
                    .arg(alertsText(m_alerts.size()));
    } else {
        QStringList shown;
        for (const QString &name : names) {
            if (shown.size() == 5) {
                shown << tr("…");
                break;
            }
            shown << name;
        }
        text += tr(" It matches %1 of the %2 shown now: %3.")
                    .arg(matched)
                    .arg(alertsText(m_alerts.size()), shown.join(QStringLiteral(", ")));
    }
    return text;
}

void SilenceDialog::refreshText()
{
    const bool custom = m_duration->currentData().value<qint64>() == 0;
    m_customMinutes->setVisible(custom);
    const int64_t now = m_clock();
    m_until->setText(tr("until %1").arg(untilText(now + durationMs(), now)));
    m_summary->setText(summaryText());
    const QString why = problem();
    m_problem->setText(why.isEmpty() ? QString() : tr("Cannot silence yet: %1").arg(why));
    m_problem->setVisible(!why.isEmpty());
    QPushButton *ok = m_buttons->button(QDialogButtonBox::Ok);
    ok->setEnabled(why.isEmpty());
    ok->setToolTip(why);
}

} // namespace fleetscope
