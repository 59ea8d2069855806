// Systems → Start a tap…: where the tap goes (the MAP server's WebSocket address, refused when it
// would carry credentials over plain ws:// to another machine), the port it listens on here, and
// the trace it writes. The window then observes the system through it (TapController).
#pragma once

#include "tap/WebSocketTap.h"

#include <QDialog>

class QLabel;
class QLineEdit;
class QSpinBox;

namespace mapi::ui {

class TapDialog : public QDialog
{
    Q_OBJECT
public:
    // `upstream`: filled in (the system in front's address, when it is a WebSocket one).
    explicit TapDialog(const QString &upstream, QWidget *parent = nullptr);

    TapOptions options() const; // valid after accept()
    void accept() override;

    // Where a tap's trace goes unless the operator says otherwise: the application's data
    // folder, taps/tap-<date>-<time>.jsonl.zst.
    static QString defaultTracePath();

private:
    QLineEdit *m_upstream;
    QSpinBox *m_port;
    QLineEdit *m_trace;
    QLabel *m_message;
};

} // namespace mapi::ui
