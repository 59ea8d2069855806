#!/usr/bin/env bash
# Installs, builds, starts the demo MAP system (official server, extended mode) and opens the
# MAP Inspector window connected to it. Without a display it prints the live model with
# map-inspector-cli instead. Stops the demo system on exit.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh

log=$(mktemp)
node tools/demo-system/demo-system.mjs --mode extended --agents "${AGENTS:-40}" >"$log" 2>/dev/null &
demo=$!
trap 'kill $demo 2>/dev/null || true; rm -f "$log"' EXIT
for _ in $(seq 100); do grep -q 'ws://' "$log" && break; sleep 0.1; done
url=$(grep -o 'ws://[^ ]*' "$log" | head -1)
[[ -n "$url" ]] || { echo "demo system did not start" >&2; exit 1; }
echo "demo MAP system at $url" >&2
if [[ -n "${DISPLAY:-}${WAYLAND_DISPLAY:-}" || "$(uname)" == Darwin ]]; then
  build/app/map-inspector --connect "$url"
else
  echo "no display: showing the live model with map-inspector-cli instead of the window" >&2
  build/app/map-inspector-cli state --url "$url" --duration "${DURATION:-5}"
fi
