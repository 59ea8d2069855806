#!/usr/bin/env bash
# Builds the .deb and proves it installs and runs on a clean Debian 12:
#   1. configures (if needed) and builds BUILD_DIR, then `cpack -G DEB`;
#   2. makes a minimal Debian 12 root with debootstrap from the Debian mirror this machine's apt
#      already uses (read from /etc/apt at run time; MIRROR=... overrides), cached as a tarball
#      under BUILD_DIR/deb-check so reruns skip debootstrap;
#   3. in a chroot of a fresh copy: apt-get install ./the.deb (Depends only, no Recommends),
#      then checks the installed files, that no library is missing, `--version` of both
#      programs, and that `map-inspector` starts offscreen on the bundled sample trace, stays up
#      3 s and ends cleanly on SIGTERM, without platform-plugin or library errors.
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
cleanup() {
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

say "package-deb-check: PASS ($(basename "$deb") on a clean Debian $suite root)"
