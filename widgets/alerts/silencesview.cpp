// SPDX-License-Identifier: Apache-2.0
#include "widgets/alerts/silencesview.h"

#include "model/alertproblems.h"

#include <QHeaderView>
#include <QLabel>
#include <QToolButton>
#include <QTreeWidget>
#include <QVBoxLayout>

namespace fleetscope {

namespace {
enum Column { MatchersColumn, ByColumn, UntilColumn, CommentColumn, ExpireColumn, ColumnCount };
constexpr int idRole = Qt::UserRole;
} // namespace

SilencesView::SilencesView(QWidget *parent)
    : QWidget(parent)
{
    m_heading = new QLabel(this);
    m_note = new QLabel(this);
    m_note->setWordWrap(true);
    m_note->hide();
    QPalette warn = m_note->palette();
    warn.setColor(QPalette::WindowText, QColor(0xc0, 0x7a, 0x10));
    m_note->setPalette(warn);
    m_list = new QTreeWidget(this);
    m_list->setColumnCount(ColumnCount);
    m_list->setHeaderLabels({ tr("matches"), tr("by"), tr("when"), tr("comment"), QString() });
    m_list->setRootIsDecorated(false);
    m_list->setSelectionMode(QAbstractItemView::SingleSelection);
    m_list->setWordWrap(true);
    m_list->setUniformRowHeights(false);
    QHeaderView *header = m_list->header();
    header->setStretchLastSection(false);
    header->setSectionResizeMode(MatchersColumn, QHeaderView::Stretch);
    header->setSectionResizeMode(ByColumn, QHeaderView::ResizeToContents);
    header->setSectionResizeMode(UntilColumn, QHeaderView::ResizeToContents);
    header->setSectionResizeMode(CommentColumn, QHeaderView::Stretch);
    header->setSectionResizeMode(ExpireColumn, QHeaderView::ResizeToContents);
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->addWidget(m_heading);
    layout->addWidget(m_note);
    layout->addWidget(m_list, 1);
    setSilences({}, 0);
}

void SilencesView::setSilences(const std::vector<FleetSilence> &silences, int64_t nowMs)
{
    m_list->clear();
    int shown = 0;
    for (const auto &s : silences) {
        if (s.state == FleetSilence::State::Expired) {
            continue;
        }
        QStringList matchers;
        for (const auto &m : s.matchers) {
            matchers << matcherText(m);
        }
        auto *item = new QTreeWidgetItem(m_list);
        item->setText(MatchersColumn, matchers.join(QLatin1Char('\n'))); // a line each: a narrow dock cuts none
        item->setText(ByColumn, s.createdBy.isEmpty() ? tr("(unknown)") : s.createdBy);
        item->setText(UntilColumn,
            s.state == FleetSilence::State::Pending
                ? tr("from %1 until %2").arg(untilText(s.startsAtMs, nowMs), untilText(s.endsAtMs, nowMs))
                : tr("until %1").arg(untilText(s.endsAtMs, nowMs)));
        item->setText(CommentColumn, s.comment);
        item->setToolTip(MatchersColumn, item->text(MatchersColumn));
        item->setToolTip(CommentColumn, s.comment);
        item->setData(MatchersColumn, idRole, s.id);
        auto *expire = new QToolButton(m_list);
        expire->setText(tr("Expire"));
        const QString id = s.id;
        connect(expire, &QToolButton::clicked, this, [this, id] { Q_EMIT expireRequested(id); });
        m_list->setItemWidget(item, ExpireColumn, expire);
        ++shown;
    }
    m_heading->setText(shown == 0 ? tr("No active silences")
            : shown == 1          ? tr("1 silence, active or pending")
                                  : tr("%L1 silences, active or pending").arg(shown));
    applyRefusal();
}

void SilencesView::setRefusal(const QString &whyNot)
{
    m_refusal = whyNot;
    applyRefusal();
}

void SilencesView::setNote(const QString &note)
{
    m_note->setText(note);
    m_note->setVisible(!note.isEmpty());
}

void SilencesView::applyRefusal()
{
    for (int row = 0; row < count(); ++row) {
        QAbstractButton *button = expireButton(row);
        button->setEnabled(m_refusal.isEmpty());
        button->setToolTip(m_refusal.isEmpty() ? tr("End this silence now") : m_refusal);
    }
}

int SilencesView::count() const
{
    return m_list->topLevelItemCount();
}

QStringList SilencesView::rowTexts() const
{
    QStringList rows;
    for (int row = 0; row < count(); ++row) {
        const QTreeWidgetItem *item = m_list->topLevelItem(row);
        rows << QStringLiteral("%1 · %2 · %3 · %4")
                    .arg(item->text(MatchersColumn).replace(QLatin1Char('\n'), QStringLiteral(", ")),
                        item->text(ByColumn), item->text(UntilColumn), item->text(CommentColumn));
    }
    return rows;
}

QAbstractButton *SilencesView::expireButton(int row) const
{
    QTreeWidgetItem *item = row >= 0 && row < count() ? m_list->topLevelItem(row) : nullptr;
    return item ? qobject_cast<QAbstractButton *>(m_list->itemWidget(item, ExpireColumn)) : nullptr;
}

QString SilencesView::silenceId(int row) const
{
    const QTreeWidgetItem *item = row >= 0 && row < count() ? m_list->topLevelItem(row) : nullptr;
    return item ? item->data(MatchersColumn, idRole).toString() : QString();
}

} // namespace fleetscope
