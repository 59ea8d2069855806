#!/usr/bin/env bash
# Installs, builds (with clang, line tables only, and no unit tests: scripts/build.sh --line-tables
# --no-unit-tests --clang) and runs every other test (ctest's summary), then the unit tests under
# AddressSanitizer + UndefinedBehaviorSanitizer (scripts/asan-unit.sh: built and run once, there
# only), then each libFuzzer harness for 20 s (scripts/fuzz.sh: a finding fails the run).
# Each step's wall time is printed as "[test.sh] STEP: N s" so that CI's log shows where the time went.
set -euo pipefail
cd "$(dirname "$0")/.."
step() {
    local name=$1 start=$SECONDS
    shift
    "$@"
    echo "[test.sh] $name: $((SECONDS - start)) s (run so far: ${SECONDS} s)"
}
step install-deps scripts/install-deps.sh
# --clang: clang compiles our units about a fifth faster than GCC, and a tree it built with -Werror
# is the clang portability check itself (scripts/check-portability.sh leaves out what it built);
# GCC's front end still reads every unit, with its warnings as errors, in the MinGW-w64 pass.
step build scripts/build.sh --line-tables --no-unit-tests --clang
# Tests in parallel, two per core: most integration and GUI tests wait on servers and timers (at
# two at once they used 41 % of one core); the portability passes, which would use every core, run
# beside them at nice 19 (tests/CMakeLists.txt; docs/benchmarks.md, "CI time, seventh session").
# MAPI_PORTABILITY_SKIP_ASAN_TREE: the clang portability pass leaves to scripts/asan-unit.sh (below)
# the units it compiles with clang -Werror anyway (scripts/check-portability.sh): with the build's
# own units, that is all of them.
# MAPI_PORTABILITY_MINGW_ROTATION=3: the MinGW pass, the longest test (its CPU is a third of this
# step's), checks every unit that a change of the session can reach and every unit that names a
# platform, but only a third of the others: each of those is checked every few runs
# (scripts/portability_units.py; docs/benchmarks.md, "CI time, 2026-12-02, third session").
MAPI_PORTABILITY_MINGW_ROTATION=3 MAPI_PORTABILITY_SKIP_ASAN_TREE=1 step ctest ctest --test-dir build --output-on-failure --timeout 300 --parallel "$((2 * $(nproc)))" "$@"
step asan-unit scripts/asan-unit.sh
step fuzz scripts/fuzz.sh 20
