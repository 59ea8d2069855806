#!/usr/bin/env bash
# The unit tests of core/ under AddressSanitizer + UndefinedBehaviorSanitizer (the "asan" preset of
# CMakePresets.json: Clang, in build-asan/, the tree scripts/fuzz.sh builds its harnesses in): a
# memory error or undefined behaviour fails the run. Leaks are not checked (detect_leaks=0): Qt's
# own allocations alive at exit would bury ours. Only the unit tests and the CLI some of them run
# are built (about 10 minutes on 2 cores).
set -euo pipefail
cd "$(dirname "$0")/.."
cmake --preset asan >/dev/null
units=$(ctest --test-dir build-asan -L unit -N | sed -n 's/^ *Test *#[0-9]*: \(tst_[a-z_]*\)$/\1/p')
[ -n "$units" ] || { echo "asan-unit: no unit tests found" >&2; exit 1; }
# shellcheck disable=SC2086
cmake --build build-asan --target $units map-inspector-cli
ASAN_OPTIONS=detect_leaks=0 UBSAN_OPTIONS=print_stacktrace=1 \
  ctest --test-dir build-asan -L unit --output-on-failure --timeout 900 --parallel "$(nproc)" "$@"
