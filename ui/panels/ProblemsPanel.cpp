#include "panels/ProblemsPanel.h"

#include "session/LiveSession.h"
#include "session/SelectionHub.h"

#include <QLabel>
#include <QVBoxLayout>

namespace mapi::ui {

ProblemsPanel::ProblemsPanel(LiveSession *session, SelectionHub *selection, QWidget *parent)
    : QWidget(parent)
    , m_session(session)
    , m_selection(selection)
{
    auto *layout = new QVBoxLayout(this);
    layout->addWidget(new QLabel(tr("Problems"), this));
}

} // namespace mapi::ui
