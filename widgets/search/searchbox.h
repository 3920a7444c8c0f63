// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "model/fleetsearch.h"

#include <QLineEdit>

namespace fleetscope {

class SearchResultModel;

// A line edit that finds hosts, serials, UUIDs, jobs, racks and rows as one types: a popup lists the best matches,
// choosing one (click, or arrows and Enter) emits resultChosen; Enter without a chosen row takes the best match;
// Esc closes the popup, or else clears the box.
class SearchBox : public QLineEdit
{
    Q_OBJECT

public:
    explicit SearchBox(QWidget *parent = nullptr);

    // A new index (a new topology generation, or new jobs).
    void setSearch(FleetSearch search);
    SearchResultModel *resultModel() const { return m_model; }

Q_SIGNALS:
    void resultChosen(const fleetscope::SearchResult &result);

protected:
    void keyPressEvent(QKeyEvent *event) override;
    bool eventFilter(QObject *watched, QEvent *event) override;

private:
    void chooseBest();

    SearchResultModel *m_model = nullptr;
    bool m_movedInPopup = false; // the user chose a row of the popup with the arrow keys since the last edit
};

} // namespace fleetscope
