#!/usr/bin/env bash
# Checks, on Debian, what would break the Windows and macOS builds. Exits non-zero on any finding.
#
#   scripts/check-portability.sh [--build-dir DIR] [CHECK...]      (default: all of them)
#
# DIR is a configured and built Linux build (default ./build). The checks:
#   guards     POSIX- or Windows-only headers and calls (fork, waitpid, setrlimit, unistd.h,
#              sys/*.h, windows.h, ...) in core/ ui/ app/ tests/ bench/ tools/ sit inside a
#              platform guard (#if/#ifdef naming Q_OS_*, _WIN32, __linux__, __APPLE__, __unix__).
#   mingw      every translation unit of core/ ui/ app/ tests/ bench/ compiled with MinGW-w64
#              (-fsyntax-only) with the build's own flags, its warnings GCC's (-Wall -Wextra
#              -Wpedantic, -Werror when the build has it); Qt, nlohmann, simdjson, zstd, zlib,
#              xxhash and QtKeychain headers come from a folder of links, never the host's
#              /usr/include, so glibc's headers cannot stand in for Windows' ones.
#              MAPI_PORTABILITY_MINGW_ROTATION=N (scripts/test.sh sets 3): only the units that a
#              change of the session reaches, those that name a platform, and one share in N of
#              the rest (scripts/portability_units.py); it says how many it left out.
#   clang      every translation unit compiled by clang (-fsyntax-only) with -Werror and the
#              build's own flags (AppleClang is clang). --skip-asan-tree-units (or
#              MAPI_PORTABILITY_SKIP_ASAN_TREE=1, set by scripts/test.sh, which runs both) leaves out
#              those that scripts/asan-unit.sh compiles with clang -Werror anyway. A unit that
#              DIR's build itself compiled with clang -Werror (scripts/build.sh --clang, as CI
#              builds) is not compiled again: under scripts/test.sh the pass then has nothing left.
#   nsis       `cpack -G NSIS` from DIR: the real installer script, licence page and icon are
#              compiled by Debian's makensis; the installer carries every size of the icon.
#   resources  the .ico and .icns (icoutils, icnsutils), both .rc files (MinGW's windres) and the
#              Info.plist (plistutil), whose minimum macOS matches the vcpkg triplet and CI.
# In both syntax passes the units that share their flags share a precompiled header of the Qt and
# standard headers they use (scripts/portability_units.py lists the units and groups them).
# scripts/install-deps.sh installs every tool used here; a missing one is a finding.
set -euo pipefail
# At nice 19, with every process it starts: under ctest the syntax passes run beside the other
# tests (tests/CMakeLists.txt), whose processes then take a core from a compiler as soon as they
# want one. Alone on the machine it costs nothing.
renice -n 19 -p $$ >/dev/null 2>&1 || true
src=$(cd "$(dirname "$0")/.." && pwd)
build=$src/build
checks=()
skip_asan_tree=${MAPI_PORTABILITY_SKIP_ASAN_TREE:-0}
mingw_rotation=${MAPI_PORTABILITY_MINGW_ROTATION:-1}
while (($#)); do
  case $1 in
    --build-dir) build=$(realpath -m "$2"); shift 2 ;;
    --skip-asan-tree-units) skip_asan_tree=1; shift ;;
    guards|mingw|clang|nsis|resources) checks+=("$1"); shift ;;
    all) checks+=(guards mingw clang nsis resources); shift ;;
    *) echo "usage: $0 [--build-dir DIR] [--skip-asan-tree-units] [guards|mingw|clang|nsis|resources|all]..." >&2; exit 2 ;;
  esac
done
((${#checks[@]})) || checks=(guards mingw clang nsis resources)
[[ $skip_asan_tree == [01] ]] || { echo "MAPI_PORTABILITY_SKIP_ASAN_TREE must be 0 or 1" >&2; exit 2; }
[[ $mingw_rotation =~ ^[1-9][0-9]?$ ]] || { echo "MAPI_PORTABILITY_MINGW_ROTATION must be a number from 1 to 99" >&2; exit 2; }
work=$build/portability
cd "$src"

findings=0
finding() { echo "FINDING: $*"; findings=$((findings + 1)); }
need() {
  local tool
  for tool; do
    command -v "$tool" >/dev/null || { finding "$tool not found (scripts/install-deps.sh installs it)"; return 1; }
  done
}
need_build() {
  [[ -f $build/CMakeCache.txt && -f $build/compile_commands.json ]] ||
    { finding "no configured build in $build (scripts/build.sh)"; return 1; }
}

check_guards() {
  local file out
  while IFS= read -r file; do
    out=$(awk -v file="$file" '
      # A stack of the enclosing conditionals: 1 when the condition names a platform.
      /^[ \t]*#[ \t]*if/ {
        platform = ($0 ~ /Q_OS_|_WIN32|__linux__|__APPLE__|__unix__|_MSC_VER/) ? 1 : 0
        stack[++depth] = platform; next
      }
      /^[ \t]*#[ \t]*elif/ { stack[depth] = stack[depth] || ($0 ~ /Q_OS_|_WIN32|__linux__|__APPLE__|__unix__|_MSC_VER/); next }
      /^[ \t]*#[ \t]*endif/ { if (depth > 0) depth--; next }
      {
        guarded = 0
        for (i = 1; i <= depth; i++) if (stack[i]) guarded = 1
        if (guarded) next
        if ($0 ~ /^[ \t]*#[ \t]*include[ \t]*<(sys\/[a-z]+\.h|unistd\.h|pthread\.h|dlfcn\.h|fcntl\.h|poll\.h|termios\.h|netinet\/|arpa\/|windows\.h)>/ \
            || $0 ~ /(^|[^A-Za-z0-9_:.>])(fork|waitpid|setrlimit|getrlimit|getpriority|setpriority|usleep|sysconf|mkstemp|realpath|dup2)[ \t]*\(/) {
          # comments are no finding
          line = $0; sub(/\/\/.*/, "", line)
          if (line ~ /#[ \t]*include|\(/ && line !~ /^[ \t]*\*/) printf "%s:%d: unguarded POSIX/Windows-only use: %s\n", file, NR, $0
        }
      }' "$file")
    if [[ -n $out ]]; then
      while IFS= read -r line; do finding "$line"; done <<<"$out"
    fi
  done < <(find core ui app tests bench tools -path tools/demo-system -prune -o \( -name '*.cpp' -o -name '*.h' \) -print | sort)
}

check_mingw() {
  need x86_64-w64-mingw32-g++-posix python3 || return 0
  need_build || return 0
  local inc=$work/mingw-include pch=$work/mingw-pch qt
  qt=$(grep -m1 -o -- '-isystem [^ ]*/qt6 ' "$build/compile_commands.json" | awk 'NR == 1 {print $2}')
  [[ -d $qt ]] || { finding "Qt's include folder not found in $build/compile_commands.json"; return 0; }
  rm -rf "$inc" "$pch" && mkdir -p "$inc" "$pch"
  ln -s "$qt" "$inc/qt6"
  local h
  for h in nlohmann simdjson.h zstd.h zstd_errors.h zlib.h zconf.h xxhash.h qt6keychain mimalloc.h; do
    [[ -e /usr/include/$h ]] && ln -s "/usr/include/$h" "$inc/$h"
  done
  # One line per translation unit, the units grouped under shared precompiled headers
  # (scripts/portability_units.py says how and why).
  # With a rotation of N > 1 (scripts/test.sh), only the units a recent change can reach, those that
  # name a platform, and one share in N of the others (portability_units.py says which and why).
  python3 "$src/scripts/portability_units.py" mingw "$build/compile_commands.json" "$src" "$qt" "$inc" "$pch" \
    "$mingw_rotation" >"$work/mingw-units.txt"
  local units with_pch
  units=$(wc -l <"$work/mingw-units.txt")
  with_pch=$(grep -c -v '^- ' "$work/mingw-units.txt" || true)
  echo "mingw: $units translation units, $with_pch of them with a precompiled header ($(find "$pch" -name '*.h' | wc -l) groups)"
  if [[ -f $pch/left-out.txt ]]; then
    echo "mingw: rotation, $(sed -n '1s/^# //p' "$pch/left-out.txt"): $(grep -vc '^#' "$pch/left-out.txt" || true) units that no change of the 6 hours up to HEAD (or of its last 10 commits) reaches and that name no platform are left to the runs of the other shares (MAPI_PORTABILITY_MINGW_ROTATION=1 checks them all)"
  fi
  # -DUNICODE/-D_UNICODE/-DWIN32: what Qt's CMake defines for every Windows target.
  # GCC's warnings as CMakeLists.txt sets them for GCC, as errors when the build makes them errors:
  # the build's own -W flags are left out (they may be clang's), and under scripts/test.sh, whose
  # build is clang's, this pass is where GCC's front end reads every unit with its warnings.
  # (Warnings that need the optimiser, such as -Wmaybe-uninitialized, do not come in a syntax pass.)
  local warn=""
  grep -q '^MAPI_WARNINGS_AS_ERRORS:BOOL=ON' "$build/CMakeCache.txt" && warn="-Wall -Wextra -Wpedantic -Werror"
  # The precompiled headers first, with their group's flags. One that fails to build leaves its
  # group to compile without it: slower, the same check.
  find "$pch" -name '*.flags' | sort | xargs -r -P "$(nproc)" -I{} sh -c '
    flags=$1; inc=$2; warn=$3; h=${flags%.flags}.h
    eval "set -- $(cat "$flags")"
    x86_64-w64-mingw32-g++-posix -x c++-header -DUNICODE -D_UNICODE -DWIN32 $warn "$@" -isystem "$inc" \
      "$h" -o "$h.gch" >"${h%.h}.log" 2>&1 || rm -f "$h.gch"' _ {} "$inc" "$warn"
  for h in "$pch"/*.h; do
    [[ -e $h ]] || continue
    [[ -f $h.gch ]] ||
      { echo "mingw: $(basename "$h") could not be built ($(wc -l <"${h%.h}.units") units compile without it):"
        grep -m 5 'error:' "${h%.h}.log" || tail -5 "${h%.h}.log"; }
  done
  mkdir -p "$work/mingw-logs"
  rm -f "$work"/mingw-logs/*
  # -Winvalid-pch: GCC says so in the unit's log when it finds the PCH but cannot use it (the
  # unit is then compiled from the headers themselves: the same check, without the gain).
  # The two --param: no garbage collection in a unit (it starts past 4 GB of GCC's heap; a unit
  # peaks far below, under 1 GB): collecting is wasted work in a process that ends after the parse
  # (about 13 % of the pass's CPU, docs/benchmarks.md, "CI time, 2026-12-02, third session").
  xargs -P "$(nproc)" -I{} -d '\n' sh -c '
    line=$1; logs=$2; inc=$3; warn=$4
    eval "set -- $line"; h=$1; f=$2; shift 2
    [ "$h" != - ] && [ -f "$h.gch" ] && set -- -include "$h" -Winvalid-pch "$@"
    x86_64-w64-mingw32-g++-posix -fsyntax-only --param=ggc-min-expand=1000 --param=ggc-min-heapsize=4194304 \
      -DUNICODE -D_UNICODE -DWIN32 $warn "$@" -isystem "$inc" "$f" \
      >"$logs/$(echo "$f" | sed "s|/|%|g").log" 2>&1 || true' _ {} "$work/mingw-logs" "$inc" "$warn" <"$work/mingw-units.txt"
  # The precompiled headers weigh 1–1.5 GB in all: gone once used.
  rm -f "$pch"/*.gch
  local log unused
  unused=$(grep -l -- '-Winvalid-pch' "$work"/mingw-logs/*.log | wc -l || true)
  ((unused == 0)) || echo "mingw: $unused units could not use their precompiled header (-Winvalid-pch in their logs)"
  for log in "$work"/mingw-logs/*.log; do
    if grep -q 'error:' "$log"; then
      finding "MinGW-w64 cannot compile $(basename "$log" .log | tr % /):"
      grep -m 10 'error:' "$log"
    fi
  done
}

check_clang() {
  need clang++ python3 || return 0
  need_build || return 0
  # A -fsyntax-only pass with clang's own warnings as errors (AppleClang is clang; the warnings
  # only clang gives are all front-end ones), each unit with the build's own flags. With
  # --skip-asan-tree-units (scripts/test.sh) the units that scripts/asan-unit.sh builds
  # with clang -Werror anyway (mapi_core, the unit tests and the CLI: the "asan" preset) are left
  # to it, so each unit goes through clang once per CI run, not twice.
  local qt pch=$work/clang-pch
  # Qt's headers join the precompiled headers only when their folder is found (the pass itself
  # does not need it).
  qt=$(grep -m1 -o -- '-isystem [^ ]*/qt6 ' "$build/compile_commands.json" | awk 'NR == 1 {print $2}' || true)
  rm -rf "$pch" && mkdir -p "$pch"
  python3 "$src/scripts/portability_units.py" clang "$build/compile_commands.json" "$src" "$qt" "$pch" \
    "$skip_asan_tree" >"$work/clang-units.txt"
  local units with_pch built h
  units=$(wc -l <"$work/clang-units.txt")
  with_pch=$(grep -c -v '^- ' "$work/clang-units.txt" || true)
  built=$(wc -l <"$pch/built-by-clang.txt")
  ((built == 0)) || echo "clang: $built translation units were compiled by the build itself with clang -Werror (scripts/build.sh --clang): not again here"
  echo "clang: $units translation units, $with_pch of them with a precompiled header ($(find "$pch" -name '*.h' | wc -l) groups)"
  ((units > 0 || built > 0)) || { finding "clang: no translation unit of $src in $build/compile_commands.json"; return 0; }
  ((units > 0)) || return 0
  # -Wno-gnu-zero-variadic-macro-arguments: what CMakeLists.txt adds for Clang (Qt Test's QSKIP).
  # The precompiled headers first, with their group's flags; one that fails to build leaves its
  # group to compile without it.
  find "$pch" -name '*.flags' | sort | xargs -r -P "$(nproc)" -I{} sh -c '
    flags=$1; h=${flags%.flags}.h
    eval "set -- $(cat "$flags")"
    clang++ -x c++-header "$@" -Werror -Wno-gnu-zero-variadic-macro-arguments "$h" -o "$h.pch" \
      >"${h%.h}.log" 2>&1 || rm -f "$h.pch"' _ {}
  for h in "$pch"/*.h; do
    [[ -e $h ]] || continue
    [[ -f $h.pch ]] ||
      { echo "clang: $(basename "$h") could not be built ($(wc -l <"${h%.h}.units") units compile without it):"
        grep -m 5 'error:' "${h%.h}.log" || tail -5 "${h%.h}.log"; }
  done
  mkdir -p "$work/clang-logs"
  rm -f "$work"/clang-logs/* "$work"/clang-refused
  # A unit's log stays empty when it compiles cleanly. clang refuses a PCH whose flags or macros
  # disagree with the unit's (an error, not a warning as with GCC): a unit that fails with its PCH
  # is compiled again without it, and that second log is the verdict.
  xargs -P "$(nproc)" -I{} -d '\n' sh -c '
    line=$1; logs=$2; refused=$3
    eval "set -- $line"; h=$1; f=$2; shift 2
    log="$logs/$(echo "$f" | sed "s|/|%|g").log"
    if [ "$h" != - ] && [ -f "$h.pch" ] &&
       clang++ -fsyntax-only -include-pch "$h.pch" "$@" -Werror -Wno-gnu-zero-variadic-macro-arguments "$f" >"$log" 2>&1; then
      exit 0
    fi
    if clang++ -fsyntax-only "$@" -Werror -Wno-gnu-zero-variadic-macro-arguments "$f" >"$log" 2>&1; then
      if [ "$h" != - ] && [ -f "$h.pch" ]; then echo "$f" >>"$refused"; fi
    else
      echo "clang++ exited with an error" >>"$log"
    fi' _ {} "$work/clang-logs" "$work/clang-refused" <"$work/clang-units.txt"
  # The precompiled headers weigh about 200 MB in all: gone once used.
  rm -f "$pch"/*.pch
  # Those that pass without their PCH but not with it: a slower check, the same verdict.
  if [[ -f $work/clang-refused ]]; then
    echo "clang: $(wc -l <"$work/clang-refused") units could not use their precompiled header:"
    head -5 "$work/clang-refused"
  fi
  local log
  for log in "$work"/clang-logs/*.log; do
    if [[ -s $log ]]; then
      finding "clang -Werror cannot compile $(basename "$log" .log | tr % /):"
      grep -m 10 -E 'error:|warning:' "$log" || head -5 "$log"
    fi
  done
}

check_nsis() {
  need cpack makensis wrestool icotool || return 0
  need_build || return 0
  local out=$work/nsis
  rm -rf "$out"
  if ! cpack -G NSIS --config "$build/CPackConfig.cmake" -B "$out" >"$work/nsis.log" 2>&1; then
    finding "cpack -G NSIS failed:"; tail -20 "$work/nsis.log"; return 0
  fi
  local exe nsi want have
  exe=$(ls "$out"/*.exe 2>/dev/null | awk 'NR == 1')
  [[ -n $exe ]] || { finding "cpack -G NSIS made no installer"; return 0; }
  nsi=$(find "$out/_CPack_Packages" -name project.nsi | awk 'NR == 1')
  grep -q 'MUI_PAGE_LICENSE ".*LICENSE.txt"' "$nsi" || finding "the installer has no licence page with LICENSE.txt"
  grep -q 'define MUI_ICON ".*map-inspector.ico"' "$nsi" || finding "the installer's icon is not map-inspector.ico"
  # The installer's icon group carries every image of the .ico.
  want=$(icotool -l "$build/icons/map-inspector.ico" | wc -l)
  have=$(wrestool -l --type=3 "$exe" | wc -l)
  ((have == want)) || finding "the installer carries $have icon images, map-inspector.ico has $want"
  echo "nsis: $(basename "$exe") ($(du -k "$exe" | cut -f1) KiB), $have icon images, licence page"
}

check_resources() {
  need icotool icns2png x86_64-w64-mingw32-windres plistutil python3 || return 0
  need_build || return 0
  local icons=$build/icons size
  for size in 16 24 32 48 64 128 256; do
    icotool -l "$icons/map-inspector.ico" | grep -q -- "--width=$size --height=$size --bit-depth=32" ||
      finding "map-inspector.ico has no ${size}x${size} 32-bit image"
  done
  rm -rf "$work/icns" && mkdir -p "$work/icns"
  icns2png -x -o "$work/icns" "$icons/map-inspector.icns" >/dev/null 2>&1 || true
  for size in 256 512 1024; do
    [[ -f $work/icns/map-inspector_${size}x${size}x32.png ]] || finding "map-inspector.icns has no ${size}x${size} image"
  done
  local rc
  for rc in map-inspector map-inspector-cli; do
    x86_64-w64-mingw32-windres "$build/app/$rc.rc" -O coff -o "$work/$rc.res.o" 2>"$work/windres.log" ||
      { finding "windres cannot compile $rc.rc:"; cat "$work/windres.log"; }
  done
  local plist=$build/app/Info.plist
  plistutil -i "$plist" -o "$work/Info.plist.bin" >/dev/null 2>&1 || finding "Info.plist is not a valid property list"
  local version triplet workflow
  version=$(sed -n 's/^CMAKE_PROJECT_VERSION:STATIC=//p' "$build/CMakeCache.txt")
  triplet=$(sed -n 's/^set(VCPKG_OSX_DEPLOYMENT_TARGET \([0-9.]*\))/\1/p' packaging/vcpkg/triplets/*osx*.cmake | awk 'NR == 1')
  workflow=$(sed -n "s/^ *MACOSX_DEPLOYMENT_TARGET: '\([0-9.]*\)'.*/\1/p" .github/workflows/ci.yml | awk 'NR == 1')
  python3 - "$plist" "$version" "$triplet" "$workflow" <<'EOF' || findings=$((findings + 1))
import plistlib, sys
path, version, triplet, workflow = sys.argv[1:5]
p = plistlib.load(open(path, 'rb'))
want = {'CFBundleExecutable': 'map-inspector', 'CFBundleIconFile': 'map-inspector.icns',
        'CFBundleIdentifier': 'io.github.mapinspector.MapInspector', 'CFBundlePackageType': 'APPL',
        'CFBundleShortVersionString': version, 'CFBundleVersion': version,
        'LSMinimumSystemVersion': triplet, 'NSHighResolutionCapable': True}
bad = [f'{k} is {p.get(k)!r}, expected {v!r}' for k, v in want.items() if p.get(k) != v]
if workflow != triplet:
    bad.append(f"CI's MACOSX_DEPLOYMENT_TARGET {workflow!r} differs from the vcpkg triplet's {triplet!r}")
bad += [f'{k} is not filled in: {v!r}' for k, v in p.items() if isinstance(v, str) and ('${' in v or '@' in v or not v)]
for b in bad: print('FINDING: Info.plist: ' + b)
sys.exit(1 if bad else 0)
EOF
  echo "resources: .ico, .icns, 2 .rc files, Info.plist (macOS $triplet) checked"
}

mkdir -p "$work"
for check in "${checks[@]}"; do
  before=$findings
  echo "== $check"
  "check_$check"
  ((findings == before)) && echo "$check: no finding"
done
if ((findings > 0)); then
  echo "check-portability: $findings finding(s)" >&2
  exit 1
fi
echo "check-portability: ${checks[*]}: no finding"
