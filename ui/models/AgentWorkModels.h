// Item models of the Agent work panel: one agent's trajectory checkpoints (from the store), the
// files of its workspace as the server listed them (workspace/list, workspace/search answers),
// and the readable text of a checkpoint's content artifacts.
//
// Thread: GUI thread. The checkpoint model follows SystemStore::changed (ChangeSet::
// checkpointsChanged, ≤ 30 Hz) and resets between aboutToReset() and wasReset(); the file model
// holds what the panel gives it.
#pragma once

#include "model/SystemStore.h"

#include <QAbstractTableModel>
#include <QByteArrayView>

#include <vector>

namespace mapi::ui {

// A JSON string's text from at most `maxBytes` of its UTF-8 (cut at a character boundary), so
// that a huge string is never converted whole; `cut` says whether anything was left out. Empty
// for anything but a string.
QString boundedText(const Json &string, qsizetype maxBytes, bool *cut = nullptr);
// The same for UTF-8 bytes (a streamed artifact).
QString boundedUtf8Text(QByteArrayView utf8, qsizetype maxBytes, bool *cut = nullptr);

// The text of a trajectory/content answer's `artifacts` that reads as text: an artifact that is
// a string, or an array of strings and of {role, text} objects (a transcript, prompts), each
// under its name. Other artifacts are left to the JSON tree. At most `maxChars` characters:
// past them the text is cut and `cut` says so.
struct ReadableText
{
    QString text;
    bool cut = false;
    int artifacts = 0;  // how many artifacts read as text
};
ReadableText readableArtifacts(const Json &artifacts, qsizetype maxChars);

// What both tables share: their rows are copies held in a vector (no pointer into the store or
// into an answer is kept), and every cell is asked of rowData() once the index is checked.
template<typename Row>
class RowVectorModel : public QAbstractTableModel
{
public:
    int rowCount(const QModelIndex &parent = {}) const override { return parent.isValid() ? 0 : int(m_rows.size()); }
    int columnCount(const QModelIndex &parent = {}) const override { return parent.isValid() ? 0 : m_columns; }
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const final
    {
        if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
            return {};
        return rowData(m_rows[size_t(index.row())], index.column(), role);
    }

protected:
    RowVectorModel(int columns, QObject *parent)
        : QAbstractTableModel(parent)
        , m_columns(columns)
    {
    }
    // What `column` of `row` shows for `role`.
    virtual QVariant rowData(const Row &row, int column, int role) const = 0;

    std::vector<Row> m_rows;

private:
    const int m_columns;
};

// The checkpoints of one agent (TrajectoryLedger::of), oldest first. Copies: the ledger's deque
// moves its entries when one is inserted by time, so no pointer into it is kept.
class CheckpointModel : public RowVectorModel<Checkpoint>
{
    Q_OBJECT
public:
    enum Column { TimeColumn, LabelColumn, WorkSessionColumn, MetadataColumn, ColumnCount };
    enum Role {
        CheckpointIdRole = Qt::UserRole + 1,
        EventRowRole,            // int: the trajectory.checkpoint event's row, -1: known from a list
    };
    // Metadata cells show this many characters (the whole, up to the ledger's bound, in the tooltip).
    static constexpr int kMetadataCellChars = 200;

    explicit CheckpointModel(const SystemStore *store, QObject *parent = nullptr);

    void setAgentId(const QString &agentId);
    QString agentId() const { return m_agentId; }
    int rowOfCheckpoint(const QString &checkpointId) const;

    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    QVariant rowData(const Checkpoint &c, int column, int role) const override;
    std::vector<Checkpoint> checkpointsOfAgent() const;
    void refresh(); // new checkpoints appended become inserts; anything else a reset

    const SystemStore *m_store;
    QString m_agentId;
};

// A file or directory of an agent's workspace, as the server's file service described it.
struct WorkspaceFile
{
    QString path;
    bool isDirectory = false;
    qint64 size = -1;       // -1: not said (directories)
    QString mime;
};

// The entries of one listing or search, as the panel gives them (setFiles).
class WorkspaceFileModel : public RowVectorModel<WorkspaceFile>
{
    Q_OBJECT
public:
    enum Column { PathColumn, KindColumn, SizeColumn, ColumnCount };
    enum Role {
        PathRole = Qt::UserRole + 1, // QString: the path workspace/read and workspace/list take
        IsDirectoryRole,     // bool
        SizeRole,            // qint64, -1 when not said
    };
    // A listing holds at most this many entries (a server may answer a search with a whole
    // tree): the rest is counted, not shown.
    static constexpr int kMaxFiles = 10000;

    explicit WorkspaceFileModel(QObject *parent = nullptr);

    // The `files` of a workspace/list or workspace/search result: directories first, then in
    // the natural order of their paths. Returns how many were left out past kMaxFiles.
    int setFiles(const Json &result);
    void clear();
    const WorkspaceFile *file(int row) const;

    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    QVariant rowData(const WorkspaceFile &f, int column, int role) const override;
};

} // namespace mapi::ui
