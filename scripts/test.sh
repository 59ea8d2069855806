#!/usr/bin/env bash
# Installs, builds and runs every test (ctest's summary), then the unit tests again under
# AddressSanitizer + UndefinedBehaviorSanitizer (scripts/asan-unit.sh), then each libFuzzer
# harness for 20 s (scripts/fuzz.sh: a finding fails the run).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh
ctest --test-dir build --output-on-failure --timeout 300 "$@"
scripts/asan-unit.sh
scripts/fuzz.sh 20
