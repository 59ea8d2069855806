#!/usr/bin/env bash
# The screenshots of a large system (issue 44) in docs/screenshots/: the realistic fleet of
# tools/fleet-trace at 1,000 and 10,000 agents (a team silent, another's dependency failed),
# opened as a trace at 1920×1080: fleet-1k-*.png and fleet-10k-*.png.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for agents in 1000 10000; do
  name=$((agents / 1000))k
  build/tools/fleet-trace/map-fleet-trace "$work/fleet-$name.jsonl.zst" --agents "$agents"
  QT_QPA_PLATFORM=offscreen build/tools/screenshots/mapi-screenshots --out docs/screenshots \
    --trace "$work/fleet-$name.jsonl.zst" --fleet "fleet-$name-"
done
