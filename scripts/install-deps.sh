#!/usr/bin/env bash
# Installs what MAP Inspector needs on Debian 12 (build tools, Qt 6, libraries, Node.js for the
# demo MAP system, Xvfb for GUI tests) and the demo system's npm packages. Idempotent.
set -euo pipefail
cd "$(dirname "$0")/.."

PACKAGES=(
  cmake ninja-build g++ make pkg-config
  qt6-base-dev qt6-websockets-dev qt6-charts-dev libqt6opengl6-dev qt6-svg-dev
  nlohmann-json3-dev libsimdjson-dev qtkeychain-qt6-dev libzstd-dev zlib1g-dev libxxhash-dev libmimalloc-dev
  xvfb xauth
  appstream desktop-file-utils  # packaging checks: metainfo and .desktop validation (ctest)
  systemd                       # ctest packaging.collector-unit: systemd-analyze verify (nothing is started)
  file                          # dpkg-shlibdeps (the .deb's dependencies, cpack) runs it
  # scripts/check-portability.sh (ctest label portability): what would break Windows and macOS
  g++-mingw-w64-x86-64-posix binutils-mingw-w64-x86-64 clang nsis icoutils icnsutils libplist-utils python3
  libclang-rt-14-dev            # scripts/fuzz.sh: libFuzzer and Clang's sanitizer runtimes
  lld                           # links the Clang trees (build-asan, the portability build) fast
  python3-prometheus-client     # tests/integration/tst_telemetry_live: /metrics read by Prometheus's own text parser
)
# Node.js for the demo system: Debian's packages only when no node/npm is on the PATH (a
# Node.js installed another way would conflict with them).
command -v node >/dev/null 2>&1 || PACKAGES+=(nodejs)
command -v npm >/dev/null 2>&1 || PACKAGES+=(npm)
missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  SUDO=""; [[ $(id -u) -ne 0 ]] && SUDO="sudo"
  echo "installing: ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# The demo system: the official MAP SDK, pinned in package-lock.json. --ignore-scripts skips a
# native build the SDK's optional storage never uses here.
if [[ ! -d tools/demo-system/node_modules/@multi-agent-protocol/sdk ]]; then
  (cd tools/demo-system && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error)
fi
# The OpenTelemetry checks (tests/integration/tst_otel_interop): the official JS SDK and the
# OTLP protobuf definitions, pinned in tools/otel-check/package-lock.json.
if [[ ! -d tools/otel-check/node_modules/otlp-protobuf-definitions ]]; then
  (cd tools/otel-check && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error)
fi
# Third-party MAP programs for the interop tests (tests/integration/tst_third_party, tools/interop):
# macro-agent and agent-inbox, pinned in tools/interop/package-lock.json. macro-agent's SQLite
# module (better-sqlite3) is built from source against Node's headers, about two minutes on two
# cores: --ignore-scripts skips its install script, which would try to download a prebuilt one.
# Debian's own nodejs has its headers in libnode-dev.
if [[ ! -f /usr/include/node/node.h ]]; then
  SUDO=""; [[ $(id -u) -ne 0 ]] && SUDO="sudo"
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends libnode-dev >/dev/null
fi
if [[ ! -f tools/interop/node_modules/.mapi-built ]]; then
  (cd tools/interop && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error \
     && npm rebuild better-sqlite3 --build-from-source --nodedir=/usr --loglevel=error >/dev/null \
     && touch node_modules/.mapi-built)
fi
