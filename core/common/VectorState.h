// clearUpperVectorState(): executes VZEROUPPER on x86-64 CPUs that have AVX.
//
// Why: on Intel CPUs since Skylake, while the upper halves of the AVX registers are "dirty",
// every legacy-SSE instruction (all of this project's double arithmetic, compiled for baseline
// x86-64) waits on them. Parts of Qt's GUI code (QGuiApplication's start, the raster engine's
// antialiased strokes, event handling) leave them dirty, and with AVX-512 string functions in
// the C library nothing ordinary cleans them. Measured on the benchmark machine (a Xeon with
// AVX-512): 100,000 logarithms took 11.5 ms after QGuiApplication was built and 0.33 ms after
// VZEROUPPER; the topology's ranking of 168,000 edges 18.5 ms against 1.2 ms
// (docs/benchmarks.md, "The upper halves of the vector registers").
//
// MAPI_KEEP_VECTOR_STATE=1 in the environment turns it off, to measure the difference.
// Costs about a cycle. A no-op where it cannot matter: other architectures, and code compiled
// for AVX itself (the compiler then uses VEX encodings, which do not wait, and may hold values
// in the upper halves that VZEROUPPER would destroy).
#pragma once

#if !defined(__AVX__) && (defined(__x86_64__) || defined(_M_X64))
#if defined(_MSC_VER) && !defined(__clang__)
#include <immintrin.h>
#include <intrin.h>
#endif
#endif

#include <QtGlobal>

namespace mapi {

inline void clearUpperVectorState()
{
#if !defined(__AVX__) && defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
    // CPUID and XGETBV by hand: __builtin_cpu_supports needs a runtime library Apple's
    // toolchain does not always link, and <cpuid.h>'s __cpuid macro breaks a later <intrin.h>
    // (clang-cl, older MinGW runtimes).
    static const bool hasAvx = [] {
        unsigned eax = 1, ebx = 0, ecx = 0, edx = 0;
        asm volatile("cpuid" : "+a"(eax), "=b"(ebx), "+c"(ecx), "=d"(edx));
        constexpr unsigned kOsXsave = 1u << 27, kAvx = 1u << 28;
        if (!(ecx & kOsXsave) || !(ecx & kAvx))
            return false;
        unsigned low = 0, high = 0;
        asm volatile("xgetbv" : "=a"(low), "=d"(high) : "c"(0));
        return (low & 6) == 6 // the OS saves the XMM and YMM state
               && !qEnvironmentVariableIsSet("MAPI_KEEP_VECTOR_STATE");
    }();
    if (hasAvx)
        asm volatile("vzeroupper" ::: "memory");
#elif !defined(__AVX__) && defined(_M_X64) && defined(_MSC_VER)
    static const bool hasAvx = [] {
        int registers[4] = {};
        __cpuid(registers, 1);
        const bool osSavesYmm = (registers[2] & (1 << 27)) && (_xgetbv(0) & 6) == 6; // OSXSAVE, XMM+YMM state
        return osSavesYmm && (registers[2] & (1 << 28)) != 0                       // AVX
               && !qEnvironmentVariableIsSet("MAPI_KEEP_VECTOR_STATE");
    }();
    if (hasAvx)
        _mm256_zeroupper();
#endif
}

} // namespace mapi
