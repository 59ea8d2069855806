// A warning that does not stop the program: window-modal, shown with open() rather than exec(),
// so the event loop (and the live model behind it) keeps running while it is on screen.
#pragma once

class QString;
class QWidget;

namespace mapi::ui {

// Deleted when closed. Object name "warningBox" (tests find it by that name).
void showWarning(QWidget *parent, const QString &title, const QString &text);

} // namespace mapi::ui
