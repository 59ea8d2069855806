#!/usr/bin/env bash
# ctest packaging.collector-start: the collector's wrapper (collector-start --print) turns a
# configuration into the recorder's arguments as packaging/linux/collector.conf.example says:
# empty values leave their option out, %i becomes the instance, the credential only ever as
# --token-file, --token in MAPI_EXTRA_ARGS refused, MAPI_URL required. Runs it under /bin/sh
# (dash on Debian), as systemd does.
#   check-collector-start.sh WRAPPER CONF_EXAMPLE
set -euo pipefail
wrapper=$(realpath "$1")
example=$2
fails=0
passes=0
ok() { passes=$((passes + 1)); echo "ok    $*"; }
bad() { fails=$((fails + 1)); echo "FAIL  $*"; }

# Runs the wrapper with only the given variables set; prints its argument lines (after the
# program's path) as one space-joined line.
run() {
  local name=$1; shift
  env -i PATH=/usr/bin:/bin "$@" /bin/sh "$wrapper" --print "$name" | tail -n +2 | paste -sd' '
}
expect() { # DESCRIPTION ACTUAL EXTENDED-REGEX
  if [[ $2 =~ $3 ]]; then ok "$1"; else bad "$1: got '$2', expected /$3/"; fi
}

# The example, as systemd would read it (NAME=VALUE lines, comments skipped), with a URL: its
# values must come through as documented.
mapfile -t conf < <(grep -E '^MAPI_[A-Z_]+=' "$example")
if ((${#conf[@]} == 8)); then ok "the example sets the 8 documented variables"; else bad "the example sets ${#conf[@]} variables, not 8"; fi
vars=()
for line in "${conf[@]}"; do
  [[ $line == MAPI_URL=* ]] && line=MAPI_URL=ws://127.0.0.1:4000
  vars+=("$line")
done
args=$(run prod "${vars[@]}")
expect "example: record, the URL, a new file in the instance's folder" "$args" \
  '^record --url ws://127\.0\.0\.1:4000 --out /var/lib/map-inspector/prod/prod-[0-9]{8}T[0-9]{6}Z\.jsonl\.zst '
expect "example: rotation, retention, metrics" "$args" '--rotate-mb 256 --keep-mb 10240 --metrics 127\.0\.0\.1:9464$'
if [[ $args != *--otlp-endpoint* && $args != *--token* ]]; then ok "example: empty OTLP endpoint and token file left out"
else bad "example: an empty value made an option: $args"; fi

args=$(run prod MAPI_URL=wss://map.example:443 STATE_DIRECTORY=/var/lib/map-inspector/prod)
expect "only MAPI_URL: out in STATE_DIRECTORY, nothing else" "$args" \
  '^record --url wss://map\.example:443 --out /var/lib/map-inspector/prod/prod-[0-9TZ]+\.jsonl\.zst$'

args=$(run edge MAPI_URL=unix:/run/map.sock MAPI_OUT_DIR=/srv/traces/%i MAPI_TOKEN_FILE=/etc/map-inspector/edge.token \
           MAPI_OTLP_ENDPOINT=http://127.0.0.1:4318 MAPI_METRICS= MAPI_EXTRA_ARGS='--observer  --keep-parts 50')
expect "everything: %i replaced, token as a file, extra arguments split" "$args" \
  '^record --url unix:/run/map\.sock --out /srv/traces/edge/edge-[0-9TZ]+\.jsonl\.zst --otlp-endpoint http://127\.0\.0\.1:4318 --token-file /etc/map-inspector/edge\.token --observer --keep-parts 50$'

for extra in '--token s3cret' '--observer --token=s3cret'; do
  if out=$(run prod MAPI_URL=ws://127.0.0.1:1 "MAPI_EXTRA_ARGS=$extra" 2>&1); then
    bad "MAPI_EXTRA_ARGS='$extra' was accepted: $out"
  elif [[ $out == *s3cret* ]]; then
    bad "the refusal of MAPI_EXTRA_ARGS repeats the credential: $out"
  else
    ok "MAPI_EXTRA_ARGS holding --token refused, the value not repeated"
  fi
done
if out=$(run prod MAPI_OUT_DIR=/x 2>&1); then bad "no MAPI_URL accepted: $out"; else ok "MAPI_URL required"; fi
if out=$(run prod MAPI_URL=ws://127.0.0.1:1 MAPI_OUT_DIR=relative 2>&1); then bad "relative MAPI_OUT_DIR accepted"; else ok "MAPI_OUT_DIR absolute"; fi
if out=$(run ../etc MAPI_URL=ws://127.0.0.1:1 2>&1); then bad "instance '../etc' accepted"; else ok "an instance name with a slash refused"; fi
# The program: PREFIX/bin/map-inspector-cli beside PREFIX/lib/map-inspector/collector-start.
program=$(env -i PATH=/usr/bin:/bin MAPI_URL=ws://127.0.0.1:1 /bin/sh "$wrapper" --print prod | head -1)
if [[ $program == "$(realpath -m "$(dirname "$wrapper")/../../bin/map-inspector-cli")" ]]; then
  ok "the program is PREFIX/bin/map-inspector-cli"
else
  bad "the program is $program"
fi

echo "$passes passed, $fails failed"
((fails == 0))
