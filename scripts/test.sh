#!/usr/bin/env bash
# Installs, builds (line tables only, and no unit tests: scripts/build.sh --line-tables
# --no-unit-tests) and runs every other test (ctest's summary) while the unit tests' AddressSanitizer
# + UndefinedBehaviorSanitizer tree builds beside it, then those unit tests (scripts/asan-unit.sh:
# built and run once, there only), then each libFuzzer harness for 20 s (scripts/fuzz.sh: a finding fails the run).
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
step build scripts/build.sh --line-tables --no-unit-tests
# Tests in parallel, two per core: most integration and GUI tests wait on servers and timers (at
# two at once they used 41 % of one core); the portability passes, which would use every core, run
# beside them at nice 19 (tests/CMakeLists.txt; docs/benchmarks.md, "CI time, seventh session").
# MAPI_PORTABILITY_SKIP_ASAN_TREE: the clang portability pass leaves to scripts/asan-unit.sh (below)
# the units it compiles with clang -Werror anyway (scripts/check-portability.sh).
#
# The ASan tree's build runs beside the ctest step too, at nice 19, like the syntax passes: that step
# left most of two cores idle (its tests wait; the passes used about 520 s of CPU in 800 s of wall
# time), and the build is pure CPU. Its output goes to a file, printed if it fails; setsid makes it
# a process group of its own, ended with the script however the script ends.
asan_build_log=$(mktemp)
setsid nice -n 19 scripts/asan-unit.sh --build-only >"$asan_build_log" 2>&1 &
asan_build=$!
trap 'kill -- "-$asan_build" 2>/dev/null || true; rm -f "$asan_build_log"' EXIT
MAPI_PORTABILITY_SKIP_ASAN_TREE=1 step ctest ctest --test-dir build --output-on-failure --timeout 300 --parallel "$((2 * $(nproc)))" "$@"
asan_build_ended() {
  wait "$asan_build" && return 0
  echo "[test.sh] the ASan tree's build failed:" >&2
  tail -n 200 "$asan_build_log" >&2
  return 1
}
step asan-build-after-ctest asan_build_ended
step asan-unit scripts/asan-unit.sh
step fuzz scripts/fuzz.sh 20
