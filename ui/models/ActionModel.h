// The operator action audit log (SystemStore::actions()) as a table, one row per action, in the
// store's order (oldest first: row == store row).
//
// Thread: GUI thread. Follows SystemStore::changed(): new actions arrive as one row insert per
// batch, changed actions as dataChanged over merged row ranges (one whole-table signal when more
// than half the rows changed); aboutToReset()/wasReset() reset the model.
#pragma once

#include <functional>

#include "common/LogTableModel.h"

#include <QColor>

namespace mapi::ui {

class ActionModel : public LogTableModel
{
    Q_OBJECT
public:
    enum Column {
        SentColumn,     // local time the request went out
        KindColumn,     // inject / stop / suspend / resume / send
        TargetColumn,   // the agent's name (its id when unnamed)
        MethodColumn,   // the method actually used
        FallbackColumn, // "fallback" when a documented fallback replaced the method; the note as tooltip
        StatusColumn,   // sent → accepted → confirmed | failed | timed-out | unsupported, coloured
        DetailColumn,
        AnswerColumn,   // server answer, relative to the send time
        SettledColumn,  // confirmation (or failure/time-out), relative to the send time
        ColumnCount
    };
    enum Role {
        ActionIdRole = Qt::UserRole + 1, // QString
        StatusRole,                      // int(ActionStatus)
    };

    explicit ActionModel(const SystemStore *store, QObject *parent = nullptr);

    // Green for confirmed, red for failed, orange for timed out, grey for unsupported; invalid
    // (the palette's text colour) while still in flight.
    static QColor statusColor(ActionStatus status);
    // "123 ms" / "1.4 s"; "—" when the step has not happened (stepMs == 0).
    static QString latencyText(qint64 sentMs, qint64 stepMs);

    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;
    // Who took an action when it was not the operator's hand (InspectorSession::actionOrigin);
    // shown first in its detail: "automatic (rule stalled) · state → suspended".
    void setOriginLookup(std::function<QString(const QString &actionId)> lookup) { m_origin = std::move(lookup); }

private:
    std::function<QString(const QString &)> m_origin;
    QVariant entryData(size_t row, int column, int role) const override;
    void applyChanges(const ChangeSet &changes);
};

} // namespace mapi::ui
