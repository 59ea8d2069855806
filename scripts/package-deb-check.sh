#!/usr/bin/env bash
# Builds the .deb and proves it installs and runs on a clean Debian 12:
#   1. configures (if needed) and builds BUILD_DIR, then `cpack -G DEB`;
#   2. makes a minimal Debian 12 root with debootstrap from the Debian mirror this machine's apt
#      already uses (read from /etc/apt at run time; MIRROR=... overrides), cached as a tarball
#      under BUILD_DIR/deb-check so reruns skip debootstrap;
#   3. in a chroot of a fresh copy: apt-get install ./the.deb (Depends only, no Recommends),
#      then checks the installed files, that no library is missing, `--version` of both
#      programs, and that `map-inspector` starts offscreen on the bundled sample trace, stays up
#      3 s and ends cleanly on SIGTERM, without platform-plugin or library errors;
#   4. the collector (docs/fleet.md): the unit, wrapper, example configuration and system user are
#      there and nothing is enabled; then, against the demo MAP system started here on the host's
#      loopback (the chroot shares the host's network; it needs node and tools/demo-system's
#      node_modules: scripts/install-deps.sh), with a credential, the installed wrapper runs as the
#      unit would (its user, state folder, umask, the configuration as the environment) for ~10 s,
#      gets SIGTERM, and must exit 0 with rotated parts kept by --keep-parts, each readable by
#      `map-inspector-cli stats --trace`, and no credential on its command line.
# Needs root (debootstrap, chroot, mount). Not part of ctest; run by hand or in CI:
#   sudo scripts/package-deb-check.sh            # BUILD_DIR defaults to build-pkg
# Environment: BUILD_DIR, JOBS (default 2), MIRROR, SUITE (default bookworm), KEEP_ROOT=1.
set -euo pipefail
cd "$(dirname "$0")/.."
src=$PWD
build=$(realpath -m "${BUILD_DIR:-build-pkg}")
suite=${SUITE:-bookworm}
work=$build/deb-check
root=$work/root
tarball=$work/$suite-minbase.tar
archives=$work/apt-archives # downloaded .debs, kept between runs

say() { printf '\n== %s\n' "$*"; }
fail() { printf 'package-deb-check: FAIL: %s\n' "$*" >&2; exit 1; }

[[ $(id -u) -eq 0 ]] || fail "needs root (debootstrap, chroot, mount): sudo $0"
for tool in cmake cpack debootstrap chroot dpkg-deb dpkg-shlibdeps; do
  command -v "$tool" >/dev/null || fail "$tool not found (apt-get install cmake debootstrap dpkg-dev)"
done

# --- the Debian mirror, from this machine's apt configuration --------------------------------
# One-line (sources.list, *.list: "deb [opts] URI SUITE COMPONENTS...") and deb822 (*.sources:
# "Types/URIs/Suites" stanzas) forms. Prints the first URI serving the given suite.
mirror_for() {
  local want=$1 f
  for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
    [[ -f $f ]] || continue
    awk -v want="$want" '
      $1 == "deb" { i = 2; if ($2 ~ /^\[/) { while (i <= NF && $i !~ /\]$/) i++; i++ }
                    if ($(i + 1) == want) { print $i; exit } }' "$f"
  done
  for f in /etc/apt/sources.list.d/*.sources; do
    [[ -f $f ]] || continue
    awk -v want="$want" '
      function flush() { if (isdeb && suites ~ (" " want " ") && uri != "") { print uri; found = 1 } isdeb = 0; uri = ""; suites = "" }
      /^[ \t]*$/ { flush(); if (found) exit; next }
      /^Types:/  { isdeb = ($0 ~ /[ \t]deb([ \t]|$)/) }
      /^URIs:/   { uri = $2 }
      /^Suites:/ { $1 = ""; suites = $0 " " }
      END { if (!found) flush() }' "$f"
  done
}
mirror=${MIRROR:-$(mirror_for "$suite" | head -1)}
[[ -n $mirror ]] || fail "no apt source for '$suite' in /etc/apt; set MIRROR=<debian mirror URL>"
security=$(mirror_for "$suite-security" | head -1)

# --- build the .deb ------------------------------------------------------------------------------
say "building the .deb in $build"
if [[ ! -f $build/CMakeCache.txt ]]; then
  cmake -S "$src" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
        -DMAPI_BUILD_TESTS=OFF -DMAPI_BUILD_BENCHMARKS=OFF >/dev/null
fi
cmake --build "$build" --parallel "${JOBS:-2}" >/dev/null
rm -f "$build"/packages/*.deb
cpack --config "$build/CPackConfig.cmake" -G DEB -B "$build/packages" >/dev/null
debs=("$build"/packages/*.deb)
[[ -f ${debs[0]} ]] || fail "cpack made no .deb"
deb=${debs[0]}
pkg=$(dpkg-deb -f "$deb" Package)
version=$(dpkg-deb -f "$deb" Version)
echo "$(basename "$deb"): $pkg $version"
echo "Depends: $(dpkg-deb -f "$deb" Depends)"

# --- a clean Debian root ---------------------------------------------------------------------------
# Unmounts everything below a directory, deepest first: nothing is removed while mounted.
unmount_below() {
  local m
  for m in $(awk -v r="$1/" 'index($2, r) == 1 { print $2 }' /proc/mounts | sort -r); do
    umount "$m" 2>/dev/null || umount -l "$m" || true
  done
}
demo=""      # the demo MAP system (step 4), on the host
collector="" # the collector in the root (step 4)
cleanup() {
  [[ -z $collector ]] || kill -KILL "$collector" 2>/dev/null || true
  [[ -z $demo ]] || kill "$demo" 2>/dev/null || true
  unmount_below "$root"
  if [[ ${KEEP_ROOT:-0} != 1 ]] && ! grep -q " $root/" /proc/mounts; then
    rm -rf --one-file-system "$root"
  fi
}
trap cleanup EXIT
cleanup
mkdir -p "$work" "$archives"

if [[ ! -f $tarball ]]; then
  say "debootstrap --variant=minbase $suite from $mirror (once; cached in $tarball)"
  tmp=$work/bootstrap
  unmount_below "$tmp"
  rm -rf --one-file-system "$tmp"
  debootstrap --variant=minbase "$suite" "$tmp" "$mirror" >"$work/debootstrap.log" 2>&1 \
    || { tail -20 "$work/debootstrap.log"; fail "debootstrap failed (log: $work/debootstrap.log)"; }
  unmount_below "$tmp"
  rm -f "$tmp"/var/cache/apt/archives/*.deb
  tar --one-file-system -C "$tmp" -cf "$tarball.part" . && mv "$tarball.part" "$tarball"
  rm -rf --one-file-system "$tmp"
fi

say "fresh root from $(basename "$tarball")"
mkdir -p "$root"
tar -C "$root" -xf "$tarball"
{
  echo "deb $mirror $suite main"
  echo "deb $mirror $suite-updates main"
  [[ -n $security ]] && echo "deb $security $suite-security main"
} >"$root/etc/apt/sources.list"
cp -L /etc/resolv.conf "$root/etc/resolv.conf"
printf '#!/bin/sh\nexit 101\n' >"$root/usr/sbin/policy-rc.d" # no services start in the chroot
chmod +x "$root/usr/sbin/policy-rc.d"
mount -t proc proc "$root/proc"
mount --bind "$archives" "$root/var/cache/apt/archives"
cp "$deb" "$root/tmp/"

mkdir -p -m 700 "$root/tmp/xdg"
in_root() { chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 \
                   XDG_RUNTIME_DIR=/tmp/xdg DEBIAN_FRONTEND=noninteractive "$@"; }

say "apt-get install ./$(basename "$deb") (Depends only)"
in_root apt-get update -qq >/dev/null
in_root apt-get install -y -qq --no-install-recommends "/tmp/$(basename "$deb")" >"$work/install.log" 2>&1 \
  || { tail -30 "$work/install.log"; fail "apt-get install failed (log: $work/install.log)"; }
in_root dpkg-query -W -f='${Status} ${Version}\n' "$pkg" | grep -q "install ok installed $version" \
  || fail "$pkg $version is not installed"
echo "installed $pkg $version and $(grep -c '^Setting up' "$work/install.log") packages in all"

# --- checks ----------------------------------------------------------------------------------------
say "installed files"
app_id=io.github.mapinspector.MapInspector
expect=(/usr/bin/map-inspector /usr/bin/map-inspector-cli
        /usr/share/applications/$app_id.desktop /usr/share/metainfo/$app_id.metainfo.xml
        /usr/share/icons/hicolor/scalable/apps/$app_id.svg)
for size in 16 24 32 48 64 128 256 512; do
  expect+=("/usr/share/icons/hicolor/${size}x$size/apps/$app_id.png")
done
for f in "${expect[@]}"; do
  [[ -e $root$f ]] || fail "missing $f"
done
echo "${#expect[@]} files present"

say "shared libraries (ldd)"
plugins=/usr/lib/x86_64-linux-gnu/qt6/plugins
[[ -d $root$plugins ]] || plugins=$(in_root sh -c 'ls -d /usr/lib/*/qt6/plugins' | head -1)
for bin in /usr/bin/map-inspector /usr/bin/map-inspector-cli \
           "$plugins/platforms/libqxcb.so" "$plugins/platforms/libqoffscreen.so" \
           "$plugins/iconengines/libqsvgicon.so" "$plugins/imageformats/libqsvg.so"; do
  [[ -e $root$bin ]] || fail "missing $bin"
  missing=$(in_root ldd "$bin" | grep 'not found' || true)
  [[ -z $missing ]] || fail "$bin: $missing"
  echo "ok  $bin"
done

say "--version"
out=$(in_root map-inspector-cli --version 2>&1) || fail "map-inspector-cli --version: $out"
echo "$out"
[[ $out == *"${version%-*}"* ]] || fail "map-inspector-cli --version does not say ${version%-*}"
out=$(in_root QT_QPA_PLATFORM=offscreen map-inspector --version 2>&1) || fail "map-inspector --version: $out"
echo "$out"
[[ $out == *"${version%-*}"* ]] || fail "map-inspector --version does not say ${version%-*}"

say "offscreen start on a trace"
trace=/usr/share/map-inspector/sample-trace.jsonl.zst
[[ -f $root$trace ]] || fail "the package has no sample trace at $trace"
in_root map-inspector-cli state --trace "$trace" >"$work/state.json" 2>&1 \
  || { cat "$work/state.json"; fail "map-inspector-cli cannot read $trace"; }
echo "map-inspector-cli state --trace $trace: ok ($(wc -c <"$work/state.json") bytes of JSON)"

set +e
# `timeout` sends SIGTERM after 3 s: exit 124 means the window was still up then and ended on the
# signal; 137 means SIGTERM was not enough; anything else means it ended (or crashed) by itself.
in_root QT_QPA_PLATFORM=offscreen timeout --kill-after=5 3 map-inspector --sample >"$work/gui.log" 2>&1
rc=$?
set -e
echo "exit status $rc after 3 s (124 = still running, ended by SIGTERM); output:"
sed 's/^/  | /' "$work/gui.log"
[[ $rc -eq 124 ]] || fail "map-inspector did not stay up for 3 s or did not end on SIGTERM (status $rc)"
bad='Cannot open|could not (load|find) the Qt platform plugin|error while loading shared libraries|cannot open shared object|Cannot load library|Failed to (load|create)|Cannot find font|Segmentation fault|Aborted|QSvgRenderer|Could not parse'
if grep -Ei "$bad" "$work/gui.log"; then
  fail "map-inspector reported a missing plugin, library or font (above)"
fi

say "the collector: installed, nothing enabled"
name=check
for f in /usr/lib/systemd/system/map-inspector-collector@.service /usr/lib/map-inspector/collector-start \
         /etc/map-inspector/collector.conf.example /usr/share/doc/map-inspector/fleet.md; do
  [[ -e $root$f ]] || fail "missing $f"
done
[[ -x $root/usr/lib/map-inspector/collector-start ]] || fail "collector-start is not executable"
in_root dpkg-query -W -f='${Conffiles}\n' "$pkg" | grep -q '^ /etc/map-inspector/collector.conf.example ' \
  || fail "/etc/map-inspector/collector.conf.example is not a conffile"
in_root getent passwd map-inspector >/dev/null || fail "the postinst made no user map-inspector"
if find "$root/etc/systemd/system" -name 'map-inspector-collector@*' 2>/dev/null | grep -q .; then
  fail "the package enabled a collector"
fi
echo "unit, wrapper, example (a conffile), guide and user map-inspector present; nothing enabled"

say "the collector against the demo MAP system, stopped by SIGTERM"
command -v node >/dev/null && [[ -d $src/tools/demo-system/node_modules/@multi-agent-protocol/sdk ]] \
  || fail "the collector check needs the demo MAP system: node and tools/demo-system/node_modules (scripts/install-deps.sh)"
# A credential made for this run only (the demo takes it on its command line; the collector
# must not).
secret=$(head -c 24 /dev/urandom | base64 | tr -dc 'A-Za-z0-9')
node "$src/tools/demo-system/demo-system.mjs" --mode extended --agents 12 --rate 20 --heartbeat-ms 2000 \
     --auth bearer --credential "$secret" >"$work/demo.out" 2>"$work/demo.log" &
demo=$!
for _ in $(seq 100); do grep -q 'ws://' "$work/demo.out" && break; sleep 0.1; done
url=$(grep -o 'ws://127\.0\.0\.1:[0-9]*' "$work/demo.out" | head -1)
[[ -n $url ]] || { tail -5 "$work/demo.log"; fail "the demo MAP system did not start"; }
echo "demo MAP system at $url (bearer credential required)"

# The operator's part (docs/fleet.md): the configuration from the example, the token file.
conf=/etc/map-inspector/collector-$name.conf
sed -e "s|^MAPI_URL=.*|MAPI_URL=$url|" -e 's|^MAPI_METRICS=.*|MAPI_METRICS=|' \
    -e "s|^MAPI_TOKEN_FILE=.*|MAPI_TOKEN_FILE=/etc/map-inspector/$name.token|" \
    -e 's|^MAPI_EXTRA_ARGS=.*|MAPI_EXTRA_ARGS=--rotate-seconds 2 --keep-parts 2|' \
    "$root/etc/map-inspector/collector.conf.example" >"$root$conf"
in_root install -m 0640 -o root -g map-inspector /dev/null "/etc/map-inspector/$name.token"
printf '%s\n' "$secret" >"$root/etc/map-inspector/$name.token"
# What the unit does before ExecStart: StateDirectory=map-inspector/%i (owned by the user, 0750),
# EnvironmentFile= (NAME=VALUE lines, taken whole: the example's values need no quotes), User=,
# Group=, UMask=0027, HOME and USER from the user's entry.
in_root install -d -o map-inspector -g map-inspector -m 0750 "/var/lib/map-inspector/$name"
mapfile -t conf_env < <(grep -E '^MAPI_[A-Z_]*=' "$root$conf")
chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 HOME=/var/lib/map-inspector \
       USER=map-inspector LOGNAME=map-inspector STATE_DIRECTORY="/var/lib/map-inspector/$name" "${conf_env[@]}" \
       setpriv --reuid=map-inspector --regid=map-inspector --init-groups \
       /bin/sh -c 'umask 0027 && exec /usr/lib/map-inspector/collector-start "$1"' sh "$name" \
       >"$work/collector.out" 2>"$work/collector.err" &
collector=$! # chroot, env, setpriv, sh and the wrapper exec in turn: this is the recorder's pid
sleep 10
if ! kill -0 "$collector" 2>/dev/null; then
  sed 's/^/  | /' "$work/collector.err"
  fail "the collector ended by itself within 10 s (above)"
fi
cmdline=$(tr '\0' ' ' <"/proc/$collector/cmdline")
echo "running: $cmdline"
[[ $cmdline == *"map-inspector-cli record --url $url --out /var/lib/map-inspector/$name/$name-"* ]] \
  || fail "the collector is not map-inspector-cli record into its state folder"
[[ $cmdline == *"--token-file /etc/map-inspector/$name.token"* ]] || fail "the credential was not given as --token-file"
[[ $cmdline != *"$secret"* ]] || fail "the credential is on the collector's command line"
kill -TERM "$collector"
for _ in $(seq 300); do kill -0 "$collector" 2>/dev/null || break; sleep 0.1; done # TimeoutStopSec=30
if kill -0 "$collector" 2>/dev/null; then
  kill -KILL "$collector"
  fail "the collector did not end within 30 s of SIGTERM"
fi
set +e
wait "$collector"
rc=$?
set -e
collector=""
echo "exit status $rc after SIGTERM; stderr:"
sed 's/^/  | /' "$work/collector.err"
[[ $rc -eq 0 ]] || fail "the collector did not exit 0 on SIGTERM (status $rc)"
grep -q 'recorded [1-9][0-9]* records' "$work/collector.err" || fail "the collector recorded nothing"
grep -q 'retention deleted the old part' "$work/collector.err" || fail "--keep-parts 2 deleted no part in 10 s of 2 s parts"
! grep -q "$secret" "$work/collector.err" "$work/collector.out" || fail "the credential appears in the collector's output"

mapfile -t parts < <(find "$root/var/lib/map-inspector/$name" -name "$name-*.jsonl.zst" | sort)
((${#parts[@]} >= 1 && ${#parts[@]} <= 2)) || fail "${#parts[@]} parts kept, not 1 or 2 (--keep-parts 2)"
for part in "${parts[@]}"; do
  inside=${part#"$root"}
  owner=$(in_root stat -c '%U:%G %a' "$inside") # the root's user names
  [[ $owner == "map-inspector:map-inspector 640" ]] || fail "$inside: owner and mode $owner, not map-inspector:map-inspector 640"
  in_root map-inspector-cli stats --trace "$inside" >"$work/stats.json" 2>&1 \
    || { cat "$work/stats.json"; fail "map-inspector-cli stats --trace $inside failed"; }
  records=$(grep -o '"records": [0-9]*' "$work/stats.json" | head -1 | grep -o '[0-9]*$')
  ((${records:-0} > 0)) || fail "$inside holds no records"
  echo "ok  $inside: $records records ($owner)"
done
kill "$demo" 2>/dev/null || true
demo=""

say "package-deb-check: PASS ($(basename "$deb") on a clean Debian $suite root)"
