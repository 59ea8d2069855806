// Which allocator serves malloc/free in this process (reported by `map-inspector-cli --version`).
#pragma once

#include <string>

namespace mapi {

// "mimalloc 2.0.9" when the build links mimalloc (CMake option MAPI_USE_MIMALLOC) and it has
// replaced the system's malloc for the whole process; "system" otherwise.
std::string allocatorName();

} // namespace mapi
