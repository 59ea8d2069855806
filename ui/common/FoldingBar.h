// A panel's row of controls that folds what does not fit into a » menu: a QToolBar used outside
// a main window. Panels stay usable when narrow (a laptop, a docked column) instead of holding the
// window wide or drawing buttons over one another. GUI thread.
#pragma once

class QString;
class QToolBar;
class QWidget;

namespace mapi::ui {

QToolBar *foldingBar(QWidget *parent, const QString &objectName);
// An empty widget that takes the free width: what is added after it sits at the right end.
void addStretch(QToolBar *bar);

} // namespace mapi::ui
