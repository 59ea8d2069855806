#!/usr/bin/env bash
# A long live session under a flood: memory over time, events counted vs sent, GUI stalls.
#
#   bench/long-session.sh window|cli SECONDS RATE OUT_PREFIX [MEMORY_BUDGET_MB]
#
# Starts tools/flood-server (1,000 agents; RATE events/s, 0 = as fast as the socket takes them)
# and observes it for SECONDS with the window (offscreen, bench_gui stall) or with
# `map-inspector-cli state --url`. Writes OUT_PREFIX.csv (seconds, resident MB, events applied,
# journal MB; every 10 s) and OUT_PREFIX.log (the tool's own output and the server's count).
# Sessions' journals go to a temporary folder (MAPI_SESSIONS_DIR), removed at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
target=${1:?window or cli}
seconds=${2:?seconds}
rate=${3:?events per second, 0 for full rate}
out=${4:?output prefix}
budget=${5:-}
build=${BUILD_DIR:-build}

export MAPI_SESSIONS_DIR=$(mktemp -d)
trap 'rm -rf "$MAPI_SESSIONS_DIR"; kill $server 2>/dev/null || true' EXIT
serverlog=$(mktemp)
"$build/tools/flood-server/mapi-flood-server" --rate "$rate" > "$serverlog" &
server=$!
for _ in $(seq 50); do grep -q listening "$serverlog" && break; sleep 0.1; done
url=$(awk '/listening/ {print $2}' "$serverlog")

echo "seconds,rss_mb,events,journal_mb,history_mb,kept_events,trimmed_events" > "$out.csv"
if [[ $target == window ]]; then
  QT_QPA_PLATFORM=offscreen "$build/bench/bench_gui" stall --url "$url" --seconds "$seconds" \
    ${budget:+--memory-budget "$budget"} > "$out.log" 2>&1
  awk '/^sample/ {print $2 "," $4 "," $6 "," $8 "," $10 "," $12 "," $14}' "$out.log" >> "$out.csv"
else
  "$build/app/map-inspector-cli" state --url "$url" --duration "$seconds" > "$out.state.json" 2> "$out.log" &
  cli=$!
  start=$(date +%s)
  while kill -0 $cli 2>/dev/null; do
    rss=$(awk '/VmRSS/ {print $2}' /proc/$cli/status 2>/dev/null || true)
    [[ -n $rss ]] && echo "$(( $(date +%s) - start )),$(awk "BEGIN {print $rss / 1024}"),,,,," >> "$out.csv"
    for _ in $(seq 100); do kill -0 $cli 2>/dev/null || break; sleep 0.1; done
  done
  wait $cli || true
  python3 -c "import json,sys; print('events applied', json.load(open(sys.argv[1]))['counts']['events'])" "$out.state.json" >> "$out.log"
fi
kill $server 2>/dev/null || true
wait $server 2>/dev/null || true
grep -E '^(sent|closed|done)' "$serverlog" | tail -n 1 | sed 's/^/server /' >> "$out.log"
rm -f "$serverlog"
tail -n 4 "$out.log"
