// An agent as a person names it (the CLI's --agent, a typed target): its id, or the name of
// exactly one agent that is present. Several present agents with that name: a failure that lists
// their ids to choose from. Neither: the text as given (a server whose agents the model only
// infers from events may still know it, and says so if not).
#pragma once

#include "common/ErrorOr.h"

namespace mapi {

class SystemStore;

ErrorOr<QString> resolveAgentReference(const SystemStore &store, const QString &given);

} // namespace mapi
