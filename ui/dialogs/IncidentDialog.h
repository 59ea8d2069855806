// File → Export incident…: an incident bundle (core/trace/IncidentBundle.h) of the run in the
// window: a time range, a note, the bookmarks, the selection, the open alerts and pictures of the
// topology, the timeline and the agents table, with the operator's redaction (key names and
// regular expressions) previewed as counts before anything is written.
//
// Work happens off the GUI thread: the preview and the bundle's records are written by a worker.
// The pictures are drawn in the GUI thread from the redacted bundle itself (loaded into a
// session of their own, never the window's), so that they show only what the bundle holds; then
// the bundle is written again with them. A live session is first saved from its journal
// (InspectorSession::saveSessionAs) into a temporary file. Thread: GUI thread.
#pragma once

#include "trace/IncidentBundle.h"

#include <QDialog>
#include <QImage>
#include <QStringList>

#include <atomic>
#include <memory>
#include <vector>

class QCheckBox;
class QDateTimeEdit;
class QLabel;
class QLineEdit;
class QPlainTextEdit;
class QPushButton;
class QTemporaryDir;
class QThread;

namespace mapi {
class InspectorSession;
}

namespace mapi::ui {

class IncidentDialog : public QDialog
{
    Q_OBJECT
public:
    struct Context
    {
        // The run, as it is when the dialog opens (the dialog closes when the window shows
        // another): its trace file, or a live session whose journal is saved to cut from.
        InspectorSession *session = nullptr;
        QString tracePath;                     // empty: live
        QList<Bookmark> bookmarks;
        QStringList selectedAgents;
        QString selectedMessage;               // MAP message id
        QString selectedTask;
        Json alerts = Json::array();           // alertChangeToJson of the open alerts
        qint64 startMs = 0, endMs = 0;          // the run's time span
        qint64 positionMs = 0;                  // where the operator is looking (range end)
    };
    // The name of the live session's copy in the dialog's private folder.
    static constexpr QLatin1String kLiveCopyName{"incident-live-session.jsonl.zst"};

    explicit IncidentDialog(const Context &context, QWidget *parent = nullptr);
    ~IncidentDialog() override;

    // For tests and tools; the dialog's fields do the same.
    void setRange(qint64 fromMs, qint64 toMs);
    void setNote(const QString &note);
    void setRedaction(const QStringList &keyNames, const QStringList &patterns);
    void setPictures(bool on);
    void preview();                        // counts what the bundle would hold
    void exportTo(const QString &path);    // writes the bundle (Export… asks for the path)
    bool isBusy() const { return m_worker != nullptr; }
    QString previewText() const;           // the counts shown
    const BundleResult &lastResult() const { return m_result; }
    const Context &context() const { return m_context; } // what the window handed over

protected:
    // Not while the pictures are drawn (a local event loop runs then, with this dialog in use).
    void reject() override;
    void closeEvent(QCloseEvent *event) override;

Q_SIGNALS:
    void previewed(bool ok);
    void exported(bool ok, const QString &pathOrError);

private:
    BundleOptions options() const;         // from the form
    void runWorker(const QString &out, bool writing);
    void saveLiveSessionThen(const QString &out, bool writing);
    void workerDone(const BundleResult &result, const QString &out, bool writing);
    void finishExport(const QString &slicePath, const QString &out);
    void showCounts(const BundleResult &result, bool writing);
    void stopWorker();
    void setBusy(bool busy, const QString &status);

    Context m_context;
    QDateTimeEdit *m_from = nullptr;
    QDateTimeEdit *m_to = nullptr;
    QPlainTextEdit *m_note = nullptr;
    QLineEdit *m_keyNames = nullptr;
    QPlainTextEdit *m_patterns = nullptr;
    QCheckBox *m_withBookmarks = nullptr;
    QCheckBox *m_withSelection = nullptr;
    QCheckBox *m_withAlerts = nullptr;
    QCheckBox *m_withPictures = nullptr;
    QLabel *m_counts = nullptr;
    QLabel *m_status = nullptr;
    QPushButton *m_preview = nullptr;
    QPushButton *m_export = nullptr;
    QThread *m_worker = nullptr;
    std::shared_ptr<std::atomic<bool>> m_cancel;
    BundleResult m_result;
    bool m_drawing = false;
    QString m_liveCopy;                    // a live session's saved journal, in m_tempDir
    std::unique_ptr<QTemporaryDir> m_tempDir; // private to this user (0700), removed with the dialog
    bool m_savingLive = false;
    BundleOptions m_runOptions;            // the form as it was when the run started
    QString m_pendingSlice;                // written by the first pass, not yet consumed
    QWidget *m_form = nullptr;
};

// What an opened bundle carries: its range, note, redaction summary, alerts and pictures. Shown
// when a bundle is opened, and by File → Incident details….
class IncidentInfoDialog : public QDialog
{
    Q_OBJECT
public:
    explicit IncidentInfoDialog(const IncidentInfo &info, QWidget *parent = nullptr);
    int pictureCount() const { return m_pictureCount; } // pictures shown (tests)
    // A picture at full size, in a window of its own that scrolls (a thumbnail's click).
    void showPicture(int index);

private:
    int m_pictureCount = 0;
    std::vector<QImage> m_pictures;
    QStringList m_pictureViews;
};

// The file name File → Export incident suggests: "incident-<what was watched>-<end of the range,
// local time>.incident.jsonl.zst", e.g. "incident-demo-20261128-0712.incident.jsonl.zst" for the
// trace demo.jsonl.zst, "incident-127.0.0.1-8080-…" live. Only letters, digits, '.', '-' and '_'.
QString suggestedIncidentFileName(const QString &tracePath, const QString &sourceLabel, qint64 endMs);

// The pictures of a bundle's views, drawn from the bundle alone at `atMs`: topology, timeline,
// agents table. Loads the bundle into a session of its own (a local event loop runs meanwhile).
std::vector<BundlePicture> drawBundlePictures(const QString &bundlePath, qint64 atMs, QString *error);

} // namespace mapi::ui
