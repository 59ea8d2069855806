#include "timeline/TimelineColors.h"

#include "map/AgentStates.h"
#include "style/Colors.h"

namespace mapi::ui {

namespace {

bool isDark(const QPalette &palette)
{
    return palette.color(QPalette::Base).lightness() < 128;
}

// One hue in two shades: the darker one on light backgrounds, the lighter on dark ones.
QColor shade(const QPalette &palette, QRgb onLight, QRgb onDark)
{
    return QColor::fromRgb(isDark(palette) ? onDark : onLight);
}

} // namespace

QColor messageColor(ConventionKind kind, const QPalette &palette)
{
    switch (kind) {
    case ConventionKind::TaskRequest:
    case ConventionKind::TaskAccept:
    case ConventionKind::TaskHandoff:
    case ConventionKind::TaskUpdate:
    case ConventionKind::TaskComplete:
    case ConventionKind::TaskCreated:
    case ConventionKind::TaskStatus:
    case ConventionKind::TaskAssigned:
        return shade(palette, 0x1f6feb, 0x6ea8fe);
    case ConventionKind::TaskReject:
    case ConventionKind::TaskFailed:
        return healthColor(Health::Unresponsive);
    case ConventionKind::ErrorReport:
        return healthColor(Health::Failed);
    case ConventionKind::Steering:
    case ConventionKind::SteeringAck:
        return shade(palette, 0x8e44ad, 0xc792ea);
    case ConventionKind::StatusUpdate:
    case ConventionKind::StatusQuery:
    case ConventionKind::StatusResponse:
        return shade(palette, 0x0f8a7e, 0x4fd1c5);
    case ConventionKind::HelpRequest:
    case ConventionKind::HelpResponse:
        return healthColor(Health::Late);
    case ConventionKind::Heartbeat:
        return palette.color(QPalette::Disabled, QPalette::Text);
    case ConventionKind::None:
    case ConventionKind::Broadcast:
        break;
    }
    const QColor text = palette.color(QPalette::Text);
    const QColor base = palette.color(QPalette::Base);
    return QColor::fromRgbF(0.7f * text.redF() + 0.3f * base.redF(), 0.7f * text.greenF() + 0.3f * base.greenF(),
                            0.7f * text.blueF() + 0.3f * base.blueF());
}

QColor agentStateColor(const QString &state)
{
    switch (classifyState(state)) {
    case StateClass::Failed: return healthColor(Health::Failed);
    case StateClass::Suspended: return healthColor(Health::Suspended);
    case StateClass::Stopping:
    case StateClass::Stopped: return healthColor(Health::Stopped);
    case StateClass::Idle: {
        QColor resting = healthColor(Health::Healthy);
        resting.setAlpha(90);
        return resting;
    }
    case StateClass::Busy:
    case StateClass::Other: break;
    }
    QColor working = healthColor(Health::Healthy);
    if (state.isEmpty())
        working.setAlpha(90);
    return working;
}

QColor actionStatusColor(ActionStatus status)
{
    switch (status) {
    case ActionStatus::Sent:
    case ActionStatus::Accepted:
    case ActionStatus::Unknown:
        return healthColor(Health::Late);
    case ActionStatus::Confirmed:
        return healthColor(Health::Healthy);
    case ActionStatus::Failed:
    case ActionStatus::TimedOut:
    case ActionStatus::Unsupported:
        return healthColor(Health::Failed);
    }
    return healthColor(Health::Late);
}

QColor gapColor(bool recovered)
{
    return recovered ? healthColor(Health::Late) : healthColor(Health::Failed);
}

} // namespace mapi::ui
