#include "panels/ActionsPanel.h"

#include "session/LiveSession.h"
#include "session/SelectionHub.h"

#include <QLabel>
#include <QVBoxLayout>

namespace mapi::ui {

ActionsPanel::ActionsPanel(LiveSession *session, SelectionHub *selection, QWidget *parent)
    : QWidget(parent)
    , m_session(session)
    , m_selection(selection)
{
    auto *layout = new QVBoxLayout(this);
    layout->addWidget(new QLabel(tr("Actions"), this));
}

} // namespace mapi::ui
