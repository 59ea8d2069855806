#!/usr/bin/env bash
# ctest packaging.collector-unit: `systemd-analyze verify` on the collector's template unit, as
# instance "test" (a template alone is not a unit systemd would run). verify insists that
# ExecStart's program exists, so the copy points at this source tree's wrapper instead of
# /usr/lib/map-inspector/collector-start; nothing else is changed. It needs no running systemd.
# An unknown key or a bad value is only a warning to verify (exit 0): any line it prints about
# the unit fails the check.
#   check-collector-unit.sh UNIT_FILE WRAPPER
# Exit 77 (ctest: skipped) without systemd-analyze (Debian package systemd; scripts/install-deps.sh).
set -euo pipefail
unit=$1
wrapper=$2
if ! command -v systemd-analyze >/dev/null; then
  echo "SKIP: systemd-analyze not found (Debian package 'systemd', installed by scripts/install-deps.sh)"
  exit 77
fi
[[ -x $wrapper ]] || { echo "FAIL: $wrapper is not executable"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
instance=$tmp/map-inspector-collector@test.service
grep -q '^ExecStart=/usr/lib/map-inspector/collector-start %i$' "$unit" \
  || { echo "FAIL: $unit: ExecStart is not '/usr/lib/map-inspector/collector-start %i'"; exit 1; }
sed "s|^ExecStart=/usr/lib/map-inspector/collector-start |ExecStart=$(realpath "$wrapper") |" "$unit" >"$instance"

set +e
out=$(cd "$tmp" && systemd-analyze verify --man=no "$instance" 2>&1)
rc=$?
set -e
systemd-analyze --version | head -1
echo "systemd-analyze verify map-inspector-collector@test.service: exit $rc"
[[ -z $out ]] || printf '%s\n' "$out" | sed 's/^/  | /'
if ((rc != 0)); then
  echo "FAIL: systemd-analyze verify failed"
  exit 1
fi
if grep -q 'map-inspector-collector' <<<"$out"; then
  echo "FAIL: systemd-analyze verify warned about the unit (above)"
  exit 1
fi
# What the unit promises (docs/fleet.md): checked as text, since verify does not judge intent.
for line in 'User=map-inspector' 'EnvironmentFile=/etc/map-inspector/collector-%i.conf' 'StateDirectory=map-inspector/%i' \
            'Restart=on-failure' 'RestartSec=5' 'KillSignal=SIGTERM' 'TimeoutStopSec=30' 'SuccessExitStatus=8' \
            'NoNewPrivileges=yes' 'ProtectSystem=strict' 'ProtectHome=yes' 'PrivateTmp=yes'; do
  grep -qx "$line" "$unit" || { echo "FAIL: $unit lacks '$line'"; exit 1; }
done
echo "PASS: map-inspector-collector@.service verifies"
