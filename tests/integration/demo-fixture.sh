#!/usr/bin/env bash
# CTest fixture for the demo MAP system (official MAPServer).
#   demo-fixture.sh start MODE STATEDIR [demo options...]  → STATEDIR/url, STATEDIR/pid
#   demo-fixture.sh stop STATEDIR
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
demo="$here/../../tools/demo-system/demo-system.mjs"
cmd=$1; shift
case "$cmd" in
  start)
    mode=$1; dir=$2; shift 2
    mkdir -p "$dir"
    # The previous run's output goes first: the background job truncates stdout only when it
    # starts, and a stale URL read meanwhile made the start fail at random.
    rm -f "$dir/url" "$dir/pid" "$dir/stdout" "$dir/stderr"
    : >"$dir/stdout"
    node "$demo" --mode "$mode" --port 0 "$@" >>"$dir/stdout" 2>"$dir/stderr" &
    echo $! >"$dir/pid"
    for _ in $(seq 300); do
      if url=$(grep -o -m1 'ws://[^ ]*' "$dir/stdout" 2>/dev/null); then
        echo "$url" >"$dir/url"
        echo "demo system ($mode) at $url"
        exit 0
      fi
      kill -0 "$(cat "$dir/pid")" 2>/dev/null || { echo "demo system exited:"; cat "$dir/stderr"; exit 1; }
      sleep 0.1
    done
    echo "demo system did not print its URL within 30 s"; cat "$dir/stderr"; exit 1 ;;
  stop)
    dir=$1
    [[ -f "$dir/pid" ]] && kill "$(cat "$dir/pid")" 2>/dev/null || true
    exit 0 ;;
  *) echo "usage: $0 start MODE DIR [options] | stop DIR"; exit 2 ;;
esac
