#!/usr/bin/env bash
# Installs, builds, starts the demo MAP system (official server, extended mode) and shows the
# live system model through map-inspector-cli. Stops the demo system on exit.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh

log=$(mktemp)
node tools/demo-system/demo-system.mjs --mode extended --agents 20 >"$log" 2>/dev/null &
demo=$!
trap 'kill $demo 2>/dev/null || true; rm -f "$log"' EXIT
for _ in $(seq 100); do grep -q 'ws://' "$log" && break; sleep 0.1; done
url=$(grep -o 'ws://[^ ]*' "$log" | head -1)
[[ -n "$url" ]] || { echo "demo system did not start" >&2; exit 1; }
echo "demo MAP system at $url" >&2
build/app/map-inspector-cli state --url "$url" --duration "${DURATION:-5}"
