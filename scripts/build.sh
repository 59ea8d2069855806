#!/usr/bin/env bash
# Configures and builds into ./build (RelWithDebInfo, Ninja), warnings as errors: the build that
# CI runs must stay free of warnings.
#
#   scripts/build.sh [--line-tables]
#
# --line-tables (scripts/test.sh, CI): -O2 -g1 instead of RelWithDebInfo's -O2 -g. Line tables are
# all a failing test's backtrace needs, and they compile the libraries about a quarter faster
# (docs/benchmarks.md, "CI time").
set -euo pipefail
cd "$(dirname "$0")/.."
extra=()
case ${1:-} in
  --line-tables) extra=(-DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG") ;;
  "") extra=(-DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g -DNDEBUG") ;; # CMake's own, in case --line-tables set it before
  *) echo "usage: scripts/build.sh [--line-tables]" >&2; exit 2 ;;
esac
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DMAPI_WARNINGS_AS_ERRORS=ON "${extra[@]}" >/dev/null
cmake --build build --parallel "$(nproc)"
