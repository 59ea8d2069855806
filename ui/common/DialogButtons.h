// The buttons at the foot of the dialogs, in one place.
#pragma once

#include <QString>

class QDialog;
class QDialogButtonBox;

namespace mapi::ui {

// OK and Cancel for `dialog`, wired to its (virtual) accept() and reject(). `okText` (when not
// empty) names what OK does ("Connect", "Inject"). `cancelIsDefault`: Enter cancels, for
// dialogs that act on agents (no surprise actions on Enter).
QDialogButtonBox *okCancelButtons(QDialog *dialog, const QString &okText = {}, bool cancelIsDefault = false);

} // namespace mapi::ui
