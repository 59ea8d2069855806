// The first-run page in the centre of the window: connect, open a trace, open the sample trace,
// and the recent servers and traces. It asks; MainWindow does (through the signals). GUI thread.
#pragma once

#include <QWidget>

namespace mapi::ui {

class WelcomePage : public QWidget
{
    Q_OBJECT
public:
    explicit WelcomePage(QWidget *parent = nullptr);
    // Rebuilds the recent servers and traces (ConnectionProfiles) after one was added.
    void refreshRecent();

Q_SIGNALS:
    void connectRequested(const QString &url); // empty: no server chosen yet
    void openTraceRequested(const QString &path); // empty: let the operator choose
    void openSampleRequested();

private:
    QWidget *m_recentBox = nullptr;
};

} // namespace mapi::ui
