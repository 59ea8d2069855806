#!/usr/bin/env bash
# Configures and builds into ./build (RelWithDebInfo, Ninja), warnings as errors: the build that
# CI runs must stay free of warnings.
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DMAPI_WARNINGS_AS_ERRORS=ON >/dev/null
cmake --build build --parallel "$(nproc)"
