// "Sessions that did not close": the journals a crashed or killed window left behind
// (SessionJournal::abandonedSessions), with their server, time span and size. Open reads the
// chosen one as a trace (its parts joined into one file first, off the GUI thread, when there
// are several); Delete removes its folder. Shown at start when there are any, and from
// File → Recover sessions.
#pragma once

#include "session/SessionJournal.h"

#include <QDialog>

class QListWidget;
class QPushButton;

namespace mapi::ui {

class RecoverDialog : public QDialog
{
    Q_OBJECT
public:
    explicit RecoverDialog(const QString &sessionsRoot, QWidget *parent = nullptr);
    int sessionCount() const;
    // The folder of the entry shown at `row` (tests).
    QString folderAt(int row) const;
    static QString describe(const JournalInfo &info); // "ws://h:1 — 25 Nov 14:30 to 16:02 — 120.0 MB"

Q_SIGNALS:
    // The journal's parts, in order: one trace when joined.
    void openRequested(const QStringList &parts);

private:
    void refresh();
    QString m_root;
    QList<JournalInfo> m_sessions;
    QListWidget *m_list = nullptr;
    QPushButton *m_open = nullptr;
    QPushButton *m_delete = nullptr;
};

} // namespace mapi::ui
