#!/usr/bin/env bash
# Configures and builds into ./build (RelWithDebInfo, Ninja), warnings as errors: the build that
# CI runs must stay free of warnings.
#
#   scripts/build.sh [--line-tables] [--no-unit-tests] [--clang]
#
# --line-tables (scripts/test.sh, CI): -O2 -g1 instead of RelWithDebInfo's -O2 -g. Line tables are
# all a failing test's backtrace needs, and they compile the libraries about a quarter faster
# (docs/benchmarks.md, "CI time").
# --no-unit-tests (scripts/test.sh, CI): the unit tests are configured but not built
# (MAPI_UNIT_TESTS=OFF, tests/CMakeLists.txt); CI builds and runs them in the ASan tree.
# --clang (CI): compiled by clang instead of the platform's default compiler (GCC here). Clang
# compiles our units about a fifth faster, and a tree it built with -Werror is itself the clang
# check that scripts/check-portability.sh would otherwise run as a second pass over every unit
# (docs/benchmarks.md, "CI time, 2026-12-02, second session"). GCC still reads every unit in CI:
# the MinGW-w64 pass is GCC's front end, with the build's warnings as errors.
# Each option is set anew on every run, so that what one run chose does not stay in the cache; a
# change of compiler starts the tree's cache afresh (CMake cannot change it in place).
set -euo pipefail
cd "$(dirname "$0")/.."
flags="-O2 -g -DNDEBUG" # CMake's own RelWithDebInfo flags
unit_tests=ON
clang=0
for arg; do
  case $arg in
    --line-tables) flags="-O2 -g1 -DNDEBUG" ;;
    --no-unit-tests) unit_tests=OFF ;;
    --clang) clang=1 ;;
    *) echo "usage: scripts/build.sh [--line-tables] [--no-unit-tests] [--clang]" >&2; exit 2 ;;
  esac
done
compiler=()
((clang)) && compiler=(-DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++)
cached=$(sed -n 's/^CMAKE_CXX_COMPILER:[A-Z]*=//p' build/CMakeCache.txt 2>/dev/null || true)
if [[ -n $cached && $clang != $([[ $(basename "$cached") == clang++* ]] && echo 1 || echo 0) ]]; then
  echo "build.sh: the tree was configured with $cached; configuring it afresh"
  rm -rf build/CMakeCache.txt build/CMakeFiles
fi
cmake -S . -B build -G Ninja ${compiler[@]+"${compiler[@]}"} -DCMAKE_BUILD_TYPE=RelWithDebInfo -DMAPI_WARNINGS_AS_ERRORS=ON \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="$flags" -DMAPI_UNIT_TESTS=$unit_tests >/dev/null
cmake --build build --parallel "$(nproc)"
if [[ $unit_tests == OFF ]]; then
  # Still moc's output for the unit tests' files (each ends with #include "tst_x.moc"): the
  # portability passes compile them from the compile database. Their autogen targets are not in
  # "all"; building them runs moc only.
  mapfile -t autogen < <(ninja -C build -t targets all | sed -n 's/^\(tst_[A-Za-z0-9_]*_autogen\): .*/\1/p' | sort -u)
  ((${#autogen[@]})) || { echo "build.sh: no tst_*_autogen target found" >&2; exit 1; }
  cmake --build build --parallel "$(nproc)" --target "${autogen[@]}"
fi
