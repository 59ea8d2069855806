#!/usr/bin/env bash
# Regenerates docs/screenshots/ (every panel, light and dark) from a live demo system, and
# replay-light.png from the sample trace.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh
log=$(mktemp)
node tools/demo-system/demo-system.mjs --mode extended --agents 40 --rate 30 --heartbeat-ms 3000 >"$log" 2>/dev/null &
demo=$!
trap 'kill $demo 2>/dev/null || true; rm -f "$log"' EXIT
for _ in $(seq 100); do grep -q 'ws://' "$log" && break; sleep 0.1; done
url=$(grep -o 'ws://[^ ]*' "$log" | head -1)
QT_QPA_PLATFORM=offscreen build/tools/screenshots/mapi-screenshots --out docs/screenshots --connect "$url" --wait "${WAIT:-25}"
# The replay bar: the window on the embedded sample trace.
shots=$(mktemp -d)
# File → Compare with another run: the sample against its first 30 seconds.
build/app/map-inspector-cli convert --trace resources/sample/demo-system.jsonl.zst --out "$shots/first-half.jsonl.zst" --to 1795401348102
QT_QPA_PLATFORM=offscreen build/tools/screenshots/mapi-screenshots --out "$shots" --trace resources/sample/demo-system.jsonl.zst \
  --compare-with "$shots/first-half.jsonl.zst"
cp "$shots/window-light.png" docs/screenshots/replay-light.png
cp "$shots/run-diff.png" docs/screenshots/run-diff.png
# A causal chain: the inspector's Chain tab and the chain drawn on the topology.
rm -rf "$shots/chain" && mkdir "$shots/chain"
QT_QPA_PLATFORM=offscreen build/tools/screenshots/mapi-screenshots --out "$shots/chain" --trace resources/sample/demo-system.jsonl.zst --inspect-chain
cp "$shots/chain/inspector-light.png" docs/screenshots/chain-inspector.png
cp "$shots/chain/topology-light.png" docs/screenshots/chain-topology.png
# File → Export incident…: the dialog after a preview, and the bundle it wrote, opened.
rm -rf "$shots/incident" && mkdir "$shots/incident"
QT_QPA_PLATFORM=offscreen build/tools/screenshots/mapi-screenshots --out "$shots/incident" --trace resources/sample/demo-system.jsonl.zst --incident
cp "$shots/incident/incident-export.png" docs/screenshots/incident-export.png
cp "$shots/incident/incident-open.png" docs/screenshots/incident-open.png
rm -rf "$shots"
# The first hour (docs/first-hour.md): the whole window in its default layout at three sizes,
# light and dark, live on the incidents scenario (every alert kind) and replaying the sample.
first=docs/screenshots/first-hour
mkdir -p "$first"
node tools/demo-system/demo-system.mjs --mode extended --agents 40 --rate 30 --heartbeat-ms 3000 --scenario incidents >"$log" 2>/dev/null &
incidents=$!
trap 'kill $demo $incidents 2>/dev/null || true; rm -f "$log"' EXIT
for _ in $(seq 100); do grep -q 'ws://' "$log" && break; sleep 0.1; done
url=$(grep -o 'ws://[^ ]*' "$log" | head -1)
sleep 35 # the incidents come within the first half minute
sizes=1024x700,1366x768,1920x1080
QT_QPA_PLATFORM=offscreen build/tools/screenshots/mapi-screenshots --out "$first" --connect "$url" --wait 8 --sizes $sizes
QT_QPA_PLATFORM=offscreen build/tools/screenshots/mapi-screenshots --out "$first" --trace resources/sample/demo-system.jsonl.zst --sizes $sizes
