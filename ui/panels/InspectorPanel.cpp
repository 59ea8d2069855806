#include "panels/InspectorPanel.h"

#include "session/LiveSession.h"
#include "session/SelectionHub.h"

#include <QLabel>
#include <QVBoxLayout>

namespace mapi::ui {

InspectorPanel::InspectorPanel(LiveSession *session, SelectionHub *selection, QWidget *parent)
    : QWidget(parent)
    , m_session(session)
    , m_selection(selection)
{
    auto *layout = new QVBoxLayout(this);
    layout->addWidget(new QLabel(tr("Inspector"), this));
}

} // namespace mapi::ui
