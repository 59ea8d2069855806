#include "panels/AgentsPanel.h"

#include "session/LiveSession.h"
#include "session/SelectionHub.h"

#include <QLabel>
#include <QVBoxLayout>

namespace mapi::ui {

AgentsPanel::AgentsPanel(LiveSession *session, SelectionHub *selection, QWidget *parent)
    : QWidget(parent)
    , m_session(session)
    , m_selection(selection)
{
    auto *layout = new QVBoxLayout(this);
    layout->addWidget(new QLabel(tr("Agents"), this));
}

} // namespace mapi::ui

void mapi::ui::AgentsPanel::focusFilter() {}
