// The ACP sessions an agent took part in (ACP tunnelled through MAP messages; core's
// AcpLedger): one row per stream with its ACP session, its requests each paired with its
// response (method, the prompt's text, the answer, how long it took), the updates it sent
// (message chunks, tool calls with their status) under it, and below the selected stream's
// transcript (the agent's message chunks, joined) and its tool calls.
// A row opens its message in the inspector (double click). Rebuilt from the ledger when it
// changes (ChangeSet::acpChanged) or when the agent does: at most AcpLedger's bounds of rows.
// Thread: GUI thread.
#pragma once

#include <QString>
#include <QWidget>

class QLabel;
class QPlainTextEdit;
class QTreeWidget;

namespace mapi {
class InspectorSession;
struct ChangeSet;
}

namespace mapi::ui {

class SelectionHub;

class AcpView : public QWidget
{
    Q_OBJECT
public:
    AcpView(InspectorSession *session, SelectionHub *selection, QWidget *parent = nullptr);

    // The agent whose streams are shown (empty: every stream).
    void setAgentId(const QString &agentId);
    int streamCount() const;

private:
    void rebuild();
    void showTranscript();

    InspectorSession *m_session;
    SelectionHub *m_selection;
    QString m_agentId;
    QLabel *m_summary;            // "2 ACP sessions · 1 request waiting"
    QTreeWidget *m_tree;          // streams → requests and updates
    QPlainTextEdit *m_transcript; // the selected stream's transcript and tool calls
};

} // namespace mapi::ui
