#include "map/AgentStates.h"

#include <QHash>

namespace mapi {

StateClass classifyState(QStringView state)
{
    QString word = state.trimmed().toString().toLower();
    if (word.startsWith(QLatin1String("custom:")))
        word.remove(0, 7);
    else if (word.startsWith(QLatin1String("x-")))
        word.remove(0, 2);
    static const QHash<QString, StateClass> classes = {
        {QStringLiteral("idle"), StateClass::Idle},
        {QStringLiteral("ready"), StateClass::Idle},
        {QStringLiteral("available"), StateClass::Idle},
        {QStringLiteral("waiting"), StateClass::Idle},
        {QStringLiteral("registered"), StateClass::Idle},
        {QStringLiteral("initializing"), StateClass::Idle},
        {QStringLiteral("starting"), StateClass::Idle},
        {QStringLiteral("busy"), StateClass::Busy},
        {QStringLiteral("active"), StateClass::Busy},
        {QStringLiteral("working"), StateClass::Busy},
        {QStringLiteral("running"), StateClass::Busy},
        {QStringLiteral("thinking"), StateClass::Busy},
        {QStringLiteral("processing"), StateClass::Busy},
        {QStringLiteral("executing"), StateClass::Busy},
        {QStringLiteral("suspended"), StateClass::Suspended},
        {QStringLiteral("paused"), StateClass::Suspended},
        {QStringLiteral("maintenance"), StateClass::Suspended},
        {QStringLiteral("stopping"), StateClass::Stopping},
        {QStringLiteral("stopped"), StateClass::Stopped},
        {QStringLiteral("terminated"), StateClass::Stopped},
        {QStringLiteral("exited"), StateClass::Stopped},
        {QStringLiteral("shutdown"), StateClass::Stopped},
        {QStringLiteral("failed"), StateClass::Failed},
        {QStringLiteral("error"), StateClass::Failed},
        {QStringLiteral("crashed"), StateClass::Failed},
        {QStringLiteral("unavailable"), StateClass::Failed},
    };
    return classes.value(word, StateClass::Other);
}

QString stateClassName(StateClass stateClass)
{
    switch (stateClass) {
    case StateClass::Idle: return QStringLiteral("idle");
    case StateClass::Busy: return QStringLiteral("busy");
    case StateClass::Suspended: return QStringLiteral("suspended");
    case StateClass::Stopping: return QStringLiteral("stopping");
    case StateClass::Stopped: return QStringLiteral("stopped");
    case StateClass::Failed: return QStringLiteral("failed");
    case StateClass::Other: break;
    }
    return QStringLiteral("other");
}

} // namespace mapi
