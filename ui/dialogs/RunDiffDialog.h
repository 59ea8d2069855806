// File → Compare with another run…: the run in the window (A) against a trace (B), as
// trace/RunDiff.h compares them (the same comparison as map-inspector-cli diff A B).
//
// Loading and comparing happen on a worker thread: a trace shown in the window is read again
// from its file there; a live session's model is profiled first in the GUI thread (one pass
// over its messages). The result: a verdict line, the first divergence (with a button that
// selects its agents in the window), and a tree of the agents only in A or B, the changed ones
// field by field, the conversations that differ, and the deltas. Save JSON… writes the result.
#pragma once

#include "trace/RunDiff.h"

#include <QDialog>

#include <atomic>
#include <memory>

class QLabel;
class QLineEdit;
class QPushButton;
class QThread;
class QTreeWidget;

namespace mapi::ui {

class RunDiffDialog : public QDialog
{
    Q_OBJECT
public:
    // `store`: the window's model (run A); `tracePath`: its file, empty when live.
    RunDiffDialog(const SystemStore *store, const QString &tracePath, QWidget *parent = nullptr);
    ~RunDiffDialog() override;

    void setOtherTrace(const QString &path);
    void compare();              // starts the comparison (the button does this)
    bool isComparing() const { return m_worker != nullptr; }
    const Json &result() const { return m_result; }
    QTreeWidget *tree() const { return m_tree; } // tests

Q_SIGNALS:
    void compared(bool ok);      // the result (or the error) is shown
    // Select these agents of run A in the window (the first divergence's).
    void showAgentsRequested(const QStringList &agentIds);

private:
    void showResult(const Json &result, const QString &error);
    void stopWorker();

    const SystemStore *m_store;
    QString m_tracePath;
    QLineEdit *m_other = nullptr;
    QPushButton *m_compare = nullptr;
    QPushButton *m_showFirst = nullptr;
    QPushButton *m_save = nullptr;
    QLabel *m_verdict = nullptr;
    QLabel *m_first = nullptr;
    QTreeWidget *m_tree = nullptr;
    QThread *m_worker = nullptr;
    std::shared_ptr<std::atomic<bool>> m_cancel;
    Json m_result;
    std::map<QString, QString> m_idOfKeyA; // run A's agent keys → ids, for showAgentsRequested
};

} // namespace mapi::ui
