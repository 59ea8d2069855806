#!/usr/bin/env bash
# Installs, builds (line tables only: scripts/build.sh --line-tables) and runs every test (ctest's summary), then the unit tests again under
# AddressSanitizer + UndefinedBehaviorSanitizer (scripts/asan-unit.sh), then each libFuzzer
# harness for 20 s (scripts/fuzz.sh: a finding fails the run).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh --line-tables
# Tests in parallel, one per core: most integration tests wait on servers and timers; the
# portability builds, which use every core, run alone (RUN_SERIAL).
# MAPI_PORTABILITY_SKIP_ASAN_TREE: the clang portability pass leaves to scripts/asan-unit.sh (below)
# the units it compiles with clang -Werror anyway (scripts/check-portability.sh).
MAPI_PORTABILITY_SKIP_ASAN_TREE=1 ctest --test-dir build --output-on-failure --timeout 300 --parallel "$(nproc)" "$@"
scripts/asan-unit.sh
scripts/fuzz.sh 20
