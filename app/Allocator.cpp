#include "Allocator.h"

#include <cstdlib>

#ifdef MAPI_HAVE_MIMALLOC
#include <mimalloc.h>
#endif

namespace mapi {

// Linked into every executable (app/CMakeLists.txt). Its reference to mimalloc also keeps the
// library among the executable's dependencies where the linker drops unused ones (--as-needed):
// loaded before the C library, it then serves malloc and free for the whole process, Qt included.
std::string allocatorName()
{
#ifdef MAPI_HAVE_MIMALLOC
    void *probe = std::calloc(1, 64); // (calloc: the probe is never read, but compilers see a const pointer)
    const bool replaced = mi_is_in_heap_region(probe);
    std::free(probe);
    if (replaced) {
        const int v = mi_version(); // e.g. 209 for 2.0.9
        return "mimalloc " + std::to_string(v / 100) + '.' + std::to_string(v / 10 % 10) + '.' + std::to_string(v % 10);
    }
#endif
    return "system";
}

} // namespace mapi
