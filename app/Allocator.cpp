#include "Allocator.h"

#include <cstdlib>

#ifdef MAPI_HAVE_MIMALLOC
#include <mimalloc.h>
#endif

namespace mapi {

#ifdef MAPI_HAVE_MIMALLOC
namespace {

// Pages that empty are given back to the system 2 ms after, not kept: loading a trace frees
// many of them (lines, decoded batches, vectors that grew by doubling), mostly in another
// thread than the one that made them, and kept they were 6 to 9 MB of a million-event load's
// peak memory that nothing used again. Measured (docs/benchmarks.md, "Memory the allocator
// kept"): 0 ms saves more but costs the load a quarter more CPU in system calls; 2 ms costs
// nothing measurable. mimalloc 2.1 renamed the delay (purge) and gives pages back by default.
struct AllocatorTuning
{
    AllocatorTuning()
    {
#if MI_MALLOC_VERSION < 210
        mi_option_enable(mi_option_page_reset);
        mi_option_set(mi_option_decommit_delay, 2);
#else
        mi_option_set(mi_option_purge_delay, 2);
#endif
    }
};
const AllocatorTuning tuning; // before main(): every executable links this file (app/CMakeLists.txt)

} // namespace
#endif

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
#if MI_MALLOC_VERSION < 210
        const long giveBackMs = mi_option_is_enabled(mi_option_page_reset) ? mi_option_get(mi_option_decommit_delay) : -1;
#else
        const long giveBackMs = mi_option_get(mi_option_purge_delay);
#endif
        return "mimalloc " + std::to_string(v / 100) + '.' + std::to_string(v / 10 % 10) + '.' + std::to_string(v % 10)
            + (giveBackMs >= 0 ? ", empty pages given back after " + std::to_string(giveBackMs) + " ms" : std::string());
    }
#endif
    return "system";
}

} // namespace mapi
