#!/usr/bin/env bash
# Portability checks that run on Debian (issue 17). Exits non-zero on any finding.
#
#   scripts/check-portability.sh [SOURCE_DIR]
#
# Done so far: POSIX-only headers and calls (fork, waitpid, setrlimit, getpriority, unistd.h,
# sys/*.h, ...) in core/, ui/, app/, tests/, bench/ and tools/ must sit inside a platform guard
# (an enclosing #if/#ifdef/#ifndef that names Q_OS_*, _WIN32, __linux__, __APPLE__ or __unix__).
# Not yet: the MinGW-w64 syntax pass, the clang -Werror build and `cpack -G NSIS`.
set -euo pipefail
root=${1:-$(cd "$(dirname "$0")/.." && pwd)}
cd "$root"

findings=0
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
    echo "$out"
    findings=$((findings + $(printf '%s\n' "$out" | wc -l)))
  fi
done < <(find core ui app tests bench tools -path tools/demo-system -prune -o \( -name '*.cpp' -o -name '*.h' \) -print | sort)

if (( findings > 0 )); then
  echo "check-portability: $findings finding(s)" >&2
  exit 1
fi
echo "check-portability: no unguarded platform-only header or call"
