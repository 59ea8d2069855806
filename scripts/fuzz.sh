#!/usr/bin/env bash
# Fuzzing at scale (issue 16): the libFuzzer harnesses of core/ (tests/fuzz/README.md).
#
#   scripts/fuzz.sh [SECONDS_PER_HARNESS]        (default 20)
#
# (a) configures the "asan" preset (build-asan/: Clang, coverage, AddressSanitizer + UBSan; the
#     tree scripts/asan-unit.sh builds its tests in) and builds the harnesses; (b) makes a seed
#     corpus per harness in build-asan/fuzz/corpus/<harness>/
#     from tests/data, the sample trace and the shared captures (../shared beside the repository;
#     tests/fuzz/make_corpus.py); (c) runs each harness for SECONDS, one per core at a time, and prints a
#     line per harness with its executions. Exits 1 when a harness found something — a crash, a
#     sanitizer report, a broken invariant, a leak, a timeout, running out of memory: the input is
#     in build-asan/fuzz/crashes/<harness>/, the run's output in build-asan/fuzz/logs/<harness>.log.
#     Replay it with build-asan/tests/fuzz/<harness> build-asan/fuzz/crashes/<harness>/<file>.
#
# The corpus folders keep what libFuzzer adds to them, so each run starts where the last ended.
# Environment: MAPI_FUZZERS="fuzz_frame fuzz_import" runs only those; MAPI_SHARED_DIR is the shared
# folder (default ../shared); MAPI_FUZZ_DETECT_LEAKS=0 turns leak checks off; MAPI_FUZZ_NO_INVARIANTS=1
# and MAPI_FUZZ_VERBOSE=1 are read by the harnesses (tests/fuzz/README.md).
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=${1:-20}
if ! [[ $seconds =~ ^[1-9][0-9]*$ ]]; then
  echo "usage: scripts/fuzz.sh [SECONDS_PER_HARNESS]" >&2
  exit 1
fi
all=(fuzz_frame fuzz_frames fuzz_trace_record fuzz_import fuzz_decompress fuzz_ndjson fuzz_operator_inputs)
read -r -a harnesses <<<"${MAPI_FUZZERS:-${all[*]}}"
# Inputs no longer than this: one frame; a run of frames; record lines; a whole file; a stream;
# a link, a rules document, a bundle header or a text.
declare -A max_len=([fuzz_frame]=65536 [fuzz_frames]=262144 [fuzz_trace_record]=65536
                    [fuzz_import]=1048576 [fuzz_decompress]=1048576 [fuzz_ndjson]=65536
                    [fuzz_operator_inputs]=16384)
for h in "${harnesses[@]}"; do
  if [[ -z ${max_len[$h]:-} ]]; then
    echo "fuzz.sh: no harness '$h' (there are: ${all[*]})" >&2
    exit 1
  fi
done
for tool in clang++ python3; do
  if ! command -v "$tool" >/dev/null; then
    echo "fuzz.sh: $tool is needed (scripts/install-deps.sh installs it)" >&2
    exit 1
  fi
done

# (a) The harnesses only (every target of the tree is instrumented; the window's would take long).
cmake --preset asan >/dev/null
cmake --build build-asan --target "${harnesses[@]}"
out=build-asan/fuzz

# (b) Seeds. zstd-compressed ones only when the zstd tool is there (gzip: the tool, else Python's).
shared=${MAPI_SHARED_DIR:-../shared}
[[ -d $shared/captures ]] || echo "fuzz.sh: no $shared/captures: seeds from tests/data only" >&2
python3 tests/fuzz/make_corpus.py --out "$out/corpus" --data tests/data --shared "$shared" \
  --sample resources/sample/demo-system.jsonl.zst \
  --zstd "$(command -v zstd || true)" --gzip "$(command -v gzip || true)"

# (c) The harnesses, as many at once as there are cores: each gets SECONDS of one core, as it
# would one after the other, in a fraction of the wall time (CI's budget, issue 42).
leaks=${MAPI_FUZZ_DETECT_LEAKS:-1}
mkdir -p "$out/logs" "$out/verdicts"
run_harness() {
  local h=$1 crashes=$out/crashes/$1 log=$out/logs/$1.log
  mkdir -p "$crashes"
  findings() { find "$crashes" -type f ! -name 'slow-unit-*' | wc -l; }
  local before options rc executions found corpus what verdict
  before=$(findings)
  options=(-max_total_time="$seconds" -max_len="${max_len[$h]}" -rss_limit_mb=2048 -timeout=60
           -print_final_stats=1 -detect_leaks="$leaks" -artifact_prefix="$crashes/")
  [[ $h == fuzz_decompress ]] || options+=(-dict=tests/fuzz/json.dict)
  rc=0
  # Leaks are checked per input by libFuzzer; not at exit, where Qt's own allocations still live.
  ASAN_OPTIONS="detect_leaks=$leaks:leak_check_at_exit=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}" \
  UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}" \
    "build-asan/tests/fuzz/$h" "${options[@]}" "$out/corpus/$h" >"$log" 2>&1 || rc=$?
  executions=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
  found=$(($(findings) - before))
  corpus=$(find "$out/corpus/$h" -type f | wc -l)
  if ((rc != 0 || found > 0)); then
    what=$(grep -m 1 -E '==mapi-fuzz==|ERROR: (AddressSanitizer|LeakSanitizer|libFuzzer)|runtime error:' "$log" || true)
    verdict="FOUND ${found} (exit ${rc}): ${what:-see the log} [$log]"
  else
    verdict=ok
  fi
  printf '%-18s %10s executions in %ss, corpus %5d inputs: %s\n' "$h" "${executions:-?}" "$seconds" "$corpus" "$verdict" \
    >"$out/verdicts/$h"
}
jobs_at_once=$(nproc)
rm -f "$out"/verdicts/*
for h in "${harnesses[@]}"; do
  while (($(jobs -rp | wc -l) >= jobs_at_once)); do wait -n || true; done
  run_harness "$h" &
done
wait
# Each harness's line, in the order they were named; a missing line is a failure too.
status=0
for h in "${harnesses[@]}"; do
  if [[ -f $out/verdicts/$h ]]; then
    cat "$out/verdicts/$h"
    grep -q ': ok$' "$out/verdicts/$h" || status=1
  else
    printf '%-18s gave no verdict [%s/logs/%s.log]\n' "$h" "$out" "$h"
    status=1
  fi
done
exit "$status"
