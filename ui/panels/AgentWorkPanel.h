// Agent work panel: what one agent did and has. "Checkpoints": its trajectory checkpoints (from
// trajectory.checkpoint events and trajectory/list pages in the store), and the content of one,
// fetched on demand (trajectory/content). "Files": a read-only browser of its workspace
// (workspace/list, workspace/search, workspace/read) where the server advertises
// capabilities.workspace. "ACP sessions": the ACP streams it took part in (AcpView).
//
// The agent is the first of the selection (SelectionHub::selectedAgents), or the agent focused;
// an empty selection keeps the agent shown. Every request goes through
// InspectorSession::readFromServer, which sends reads only: nothing here changes anything.
// Fetching needs a live server: a loaded trace still lists its checkpoints, and says why it
// cannot fetch. Streamed content (streaming:true) is awaited through
// InspectorSession::awaitContentStream and added, as the artifact it names, to the tree and the
// text; if the stream does not come whole, the panel says so.
// Bounds: at most kMaxShownChars of text are shown (a content's readable
// artifacts, a file), files over kPartialReadBytes are read in part (lines 1 to
// kPartialReadLines), a listing holds WorkspaceFileModel::kMaxFiles entries.
// Thread: GUI thread; the replies run there too.
#pragma once

#include "protocol/JsonRpc.h"
#include "session/SelectionHub.h"

#include <QPointer>
#include <QWidget>

#include <array>
#include <functional>

class QLabel;
class QLineEdit;
class QPlainTextEdit;
class QPushButton;
class QTabWidget;
class QTableView;
class QTreeView;

namespace mapi {
class InspectorSession;
struct ChangeSet;
}

namespace mapi::ui {

class AcpView;

class CheckpointModel;
class JsonTreeModel;
class WorkspaceFileModel;
struct WorkspaceFile;

class AgentWorkPanel : public QWidget
{
    Q_OBJECT
public:
    static constexpr qsizetype kMaxShownChars = qsizetype(2) * 1024 * 1024; // 2 MiB of text
    static constexpr qint64 kPartialReadBytes = qint64(1) * 1024 * 1024;    // 1 MiB
    static constexpr int kPartialReadLines = 2000;
    // Content providers may be slow (a host assembling a transcript): longer than the client's
    // default request timeout.
    static constexpr int kContentTimeoutMs = 60000;

    AgentWorkPanel(InspectorSession *session, SelectionHub *selection, QWidget *parent = nullptr);
    ~AgentWorkPanel() override; // drops the answers still awaited

    // The store has checkpoints, the server answers trajectory/list, or it serves workspaces:
    // the dock is worth showing.
    bool hasContent() const { return m_available; }
    QString agentId() const { return m_agentId; }
    // Shows `agentId`'s work (the panel also follows the selection by itself).
    void setAgentId(const QString &agentId);

Q_SIGNALS:
    // hasContent() changed.
    void availabilityChanged(bool available);

private:
    enum ReadKind { ContentRead, ListRead, FileRead, ReadKinds };
    using ReadDone = std::function<void(bool ok, const Json &result, const QString &error)>;

    QWidget *buildCheckpointsTab();
    QWidget *buildFilesTab();
    void onStoreChanged(const ChangeSet &changes);
    void startRead(ReadKind kind, const QString &method, const Json &params, int timeoutMs, ReadDone done);
    void cancelRead(ReadKind kind);
    void cancelAllReads();
    // Why a read cannot be sent now, said after "… from a live server;": a recording, not
    // connected, looking at the past. Empty when it can.
    QString liveReadBlock() const;
    void updateTitle();
    void updateAvailability();
    // What was fetched or listed belonged to another agent or connection: cleared, and every
    // state (title, summary, fetch, files) said again.
    void showAfresh();

    // Checkpoints
    void updateCheckpointSummary();
    QString fetchBlockReason() const; // empty: content can be fetched now
    void updateFetchState();
    void fetchSelectedContent();
    void showCheckpointOfEvent(int eventRow); // a focused trajectory.checkpoint event
    void showContent(const QString &checkpointId, const Json &result);
    void awaitStream(const QString &streamId, const QString &artifact);
    void showStreamedArtifact(const QString &artifact, bool ok, const QByteArray &bytes, const QString &error);
    void cancelStream();
    void clearContent(const QString &status = {});

    // Files
    void updateFilesState();
    void listDirectory();
    void searchFiles();
    void openFileRow(int row);
    void readFile(const WorkspaceFile &file);
    void clearFiles();

    QPointer<InspectorSession> m_session; // guarded: the window may destroy the session first
    SelectionHub *m_selection;
    QString m_agentId;
    bool m_available = false;
    std::array<quint64, ReadKinds> m_reads{}; // ids of the reads awaited, 0: none
    QString m_awaitedStream;   // the content stream awaited (streaming:true), empty: none
    QString m_contentSummary;  // what the content's status says before the stream's part

    QLabel *m_title = nullptr;          // the agent's name and id, or what to select
    QTabWidget *m_tabs = nullptr;
    AcpView *m_acp = nullptr;     // the third tab: the agent's ACP sessions
    int m_filesTab = -1;                // the Files tab, disabled where the server serves no workspaces

    // Checkpoints tab: the agent's checkpoints, and the content of one fetched on demand (one
    // content read, or stream, at a time).
    CheckpointModel *m_checkpoints = nullptr;
    QLabel *m_checkpointSummary = nullptr;
    QTableView *m_checkpointTable = nullptr;
    QPushButton *m_fetch = nullptr;
    QWidget *m_fetching = nullptr;      // "Fetching… [Cancel]", shown while the answer is awaited
    QLabel *m_fetchReason = nullptr;    // why Fetch is disabled, hidden when it is not
    QLabel *m_contentStatus = nullptr;  // the artifacts counted, what is cut, the stream, or the error
    JsonTreeModel *m_contentModel = nullptr;
    QTreeView *m_contentTree = nullptr; // the artifacts whole
    QPlainTextEdit *m_contentText = nullptr; // their readable text, at most kMaxShownChars

    // Files tab: a listing (at most WorkspaceFileModel::kMaxFiles entries) and one file's text.
    WorkspaceFileModel *m_files = nullptr;
    QLabel *m_filesReason = nullptr;    // why the controls are disabled, hidden when they are not
    QLineEdit *m_path = nullptr;        // the directory listed; empty: the workspace's root
    QPushButton *m_up = nullptr;
    QPushButton *m_list = nullptr;
    QLineEdit *m_search = nullptr;
    QPushButton *m_searchButton = nullptr;
    QTableView *m_fileTable = nullptr;
    QLabel *m_fileHeader = nullptr;     // the file's path, size and type; what was left out
    QPlainTextEdit *m_fileText = nullptr; // at most kMaxShownChars; lines 1 to kPartialReadLines of a large file
    QLabel *m_filesStatus = nullptr;    // what the last listing or search found, or why it failed
};

} // namespace mapi::ui
