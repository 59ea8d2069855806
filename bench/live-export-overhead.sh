#!/usr/bin/env bash
# The live OTLP export's cost to the client (issue 45: ≤ 15 % of the client's CPU on a flood of
# 100,000 events/s): map-inspector-cli watch on tools/flood-server (1,000 agents, 90 % of the events
# message.sent) for S seconds, without and then with --otlp-endpoint to a receiver that discards
# what it gets (tools/otel-check receive --discard). Prints, per run, the events the client applied,
# its CPU seconds (user + system, /proc of the process), wall seconds, and what the flood server
# sent (it sends no faster than the client reads: a client that falls behind is seen there).
#
#   bench/live-export-overhead.sh [SECONDS=20] [RATE=100000] [RUNS=2]
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/client-cpu.sh
seconds=${1:-20}
rate=${2:-100000}
runs=${3:-2}
cli=build/app/map-inspector-cli
flood=build/tools/flood-server/mapi-flood-server
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT

node tools/otel-check/otel-check.mjs receive "$work/none" --discard >"$work/receiver.out" &
for _ in $(seq 50); do grep -q port "$work/receiver.out" 2>/dev/null && break; sleep 0.1; done
port=$(sed -n 's/.*"port":\([0-9]*\).*/\1/p' "$work/receiver.out" | head -1)

run() { # $1: label, rest: extra arguments
  local label=$1; shift
  "$flood" --agents 1000 --rate "$rate" --messages 90 --seconds $((seconds + 10)) >"$work/flood.out" &
  local fpid=$!
  for _ in $(seq 50); do grep -q listening "$work/flood.out" 2>/dev/null && break; sleep 0.1; done
  local url; url=$(sed -n 's/^listening //p' "$work/flood.out")
  local start; start=$(date +%s.%N)
  "$cli" watch --url "$url" --duration "$seconds" "$@" >"$work/watch.out" 2>"$work/watch.err" &
  client_cpu_until_exit $!
  local end; end=$(date +%s.%N)
  kill "$fpid" 2>/dev/null || true; wait "$fpid" 2>/dev/null || true
  local sent; sent=$(awk '$1 == "sent" || $1 == "done" {n = $2} END {print n + 0}' "$work/flood.out")
  local otlp; otlp=$(grep -o 'OpenTelemetry: .*' "$work/watch.err" | head -1 || true)
  printf '%-10s client cpu %6.2f s  wall %5.1f s  flood sent %d (%.0f/s)  %s\n' "$label" \
    "$client_cpu" "$(echo "$end - $start" | bc -l)" "$sent" \
    "$(echo "$sent / $seconds" | bc -l)" "${otlp:-}"
}
for i in $(seq "$runs"); do
  run "without" 
  run "with OTLP" --otlp-endpoint "http://127.0.0.1:$port"
done
