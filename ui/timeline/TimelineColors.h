// Colours of the timeline's marks, readable on the light and the dark palette. Health-related
// marks use healthColor() so a failed agent is the same red here as in the tables and the graph.
#pragma once

#include "map/PayloadConventions.h"
#include "model/ModelTypes.h"

#include <QColor>
#include <QPalette>

namespace mapi::ui {

// Arrows by payload convention: task traffic blue, failures and error reports red,
// steering violet, status teal, help amber, anything else the text colour, softened.
QColor messageColor(ConventionKind kind, const QPalette &palette);
// The lane's state strip: failed red, suspended blue, stopped grey, idle pale green, any
// other (working) state green.
QColor agentStateColor(const QString &state);
// Operator actions: pending amber, confirmed green, failed / timed out / unsupported red.
QColor actionStatusColor(ActionStatus status);
// Gaps: red when data is missing for good, amber when it was replayed from the server.
QColor gapColor(bool recovered);

} // namespace mapi::ui
