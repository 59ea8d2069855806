#!/usr/bin/env bash
# A live flood with a busy neighbour (issue 45 item 5): map-inspector-cli watch on tools/flood-server
# (1,000 agents, 90 % of the events message.sent, offered as fast as the client reads) for S
# seconds, alone and then beside a two-job compile at the default priority (two loops compiling
# core/model/SystemStore.cpp with the build's own command, output discarded). Prints per run the
# events the client took per second (the flood sends no faster than the client reads) and the
# client's CPU seconds (user + system, from /proc).
#
#   [CLI=path/to/map-inspector-cli] bench/busy-neighbour.sh [SECONDS=15] [RUNS=2]
# Needs a configured build/ (its compile_commands.json gives the neighbour's command).
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/client-cpu.sh
seconds=${1:-15}
runs=${2:-2}
cli=${CLI:-build/app/map-inspector-cli} # another build's, to compare
flood=build/tools/flood-server/mapi-flood-server
work=$(mktemp -d)
neighbours=()
stop_neighbour() { for pid in "${neighbours[@]}"; do kill -- -"$pid" 2>/dev/null || true; done; neighbours=(); }
trap 'stop_neighbour; kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT

compile=$(python3 - <<'EOF'
import json, shlex
for c in json.load(open('build/compile_commands.json')):
    if c['file'].endswith('core/model/SystemStore.cpp'):
        args = c.get('arguments') or shlex.split(c['command'])
        out = []
        skip = False
        for a in args:
            if skip:
                skip = False
                continue
            if a == '-o':
                skip = True
                continue
            out.append(a)
        print(shlex.join(out + ['-o', '/dev/null']))
        break
EOF
)
[ -n "$compile" ] || { echo "no compile command for SystemStore.cpp in build/compile_commands.json" >&2; exit 2; }

start_neighbour() { # two compile loops, each in its own process group (killed whole)
  for _ in 1 2; do
    setsid bash -c "cd build && while true; do $compile; done" >/dev/null 2>&1 &
    neighbours+=($!)
  done
  sleep 3 # the compilers are running
}

run() { # $1: label
  local label=$1
  # The system runs in a session of its own, as the neighbour does: with the kernel's autogroups
  # (Linux's default for desktop sessions) each session gets its share of the cores, and the
  # client's threads compete with each other only.
  local url="" fpid
  for _attempt in 1 2 3; do # under load a start is sometimes lost: try again
    setsid "$flood" --agents 1000 --rate 1000000 --messages 90 --seconds $((seconds + 10)) >"$work/flood.out" 2>&1 &
    fpid=$!
    for _ in $(seq 100); do grep -q listening "$work/flood.out" 2>/dev/null && break; sleep 0.1; done
    url=$(sed -n 's/^listening //p' "$work/flood.out")
    [ -n "$url" ] && break
    echo "the flood server did not start (exit $(kill -0 "$fpid" 2>/dev/null && echo running || (wait "$fpid"; echo $?))): $(cat "$work/flood.out")" >&2
    kill "$fpid" 2>/dev/null || true
  done
  [ -n "$url" ] || exit 1
  "$cli" watch --url "$url" --duration "$seconds" >"$work/watch.out" 2>"$work/watch.err" &
  client_cpu_until_exit $!
  kill "$fpid" 2>/dev/null || true; wait "$fpid" 2>/dev/null || true
  local sent; sent=$(awk '$1 == "sent" || $1 == "done" {n = $2} END {print n + 0}' "$work/flood.out")
  printf '%-16s events/s %7.0f  client cpu %6.2f s\n' "$label" "$(echo "$sent / $seconds" | bc -l)" \
    "$client_cpu"
}
for i in $(seq "$runs"); do
  run "alone"
  start_neighbour
  run "with neighbour"
  stop_neighbour
  sleep 1
done
