// Process output panel: the standard error of a MAP system the console launched (stdio:), as the
// session keeps it (InspectorSession::processOutput(): the newest 2,000 lines, redacted), with the
// command above it and a line saying how many older lines went. New lines are shown at most ten
// times a second, in one append (a child that floods its stderr must not stall the window).
// availabilityChanged() says whether the source has a process (a launched system) to show.
// Thread: GUI thread.
#pragma once

#include <QStringList>
#include <QTimer>
#include <QWidget>

class QLabel;
class QPlainTextEdit;

namespace mapi {
class InspectorSession;
} // namespace mapi

namespace mapi::ui {

class ProcessOutputPanel : public QWidget
{
    Q_OBJECT
public:
    static constexpr int kFlushMs = 100;

    explicit ProcessOutputPanel(InspectorSession *session, QWidget *parent = nullptr);

    QString text() const; // what the panel shows (tests)

Q_SIGNALS:
    void availabilityChanged(bool available);

private:
    void reload();
    void flush();

    InspectorSession *m_session;
    QLabel *m_header;
    QPlainTextEdit *m_text;
    QStringList m_pending;
    QTimer m_flush;
    bool m_available = false;
};

} // namespace mapi::ui
