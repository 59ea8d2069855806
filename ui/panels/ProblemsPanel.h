// Problems panel: what the client could not use and what it missed, in two sections, under a
// banner that says what the observation lacks (ObservationNotes: a method the server failed, a
// server not answering, drift from its own list), hidden while nothing is lacking.
//   - Protocol problems (SystemStore::problems()): invalid JSON or UTF-8, oversized or too deep
//     frames, non-JSON-RPC frames, wrong types, unmatched responses, binary frames. Selecting one
//     focuses it, so the inspector shows the offending frame.
//   - Gaps (SystemStore::gaps()): events that never arrived (sequence gaps, reconnects), and
//     whether a replay recovered them.
// Both oldest first, following new rows while scrolled to the bottom. The status bar's
// "N problems" / "N gaps" buttons raise this panel.
// Thread: GUI thread.
#pragma once

#include "session/SelectionHub.h"

#include <QWidget>

class QAbstractItemModel;
class QLabel;
class QTableView;

namespace mapi {
class InspectorSession;
class SystemStore;
} // namespace mapi

namespace mapi::ui {

class GapModel;
class ProblemModel;

class ProblemsPanel : public QWidget
{
    Q_OBJECT
public:
    ProblemsPanel(InspectorSession *session, SelectionHub *selection, QWidget *parent = nullptr);

private:
    QTableView *makeTable(const QString &objectName, QAbstractItemModel *model, int stretchColumn);
    void updateTitles();
    void followFocus(SelectionHub::Kind kind, const QString &key, QObject *origin);

    SelectionHub *m_selection;
    const SystemStore *m_store;
    ProblemModel *m_problems;
    GapModel *m_gaps;
    QLabel *m_missing;
    QLabel *m_problemsTitle;
    QLabel *m_gapsTitle;
    QTableView *m_problemsTable;
    QTableView *m_gapsTable;
    bool m_syncingSelection = false; // selecting a row for a focus set elsewhere: do not echo it
};

} // namespace mapi::ui
