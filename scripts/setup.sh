#!/usr/bin/env bash
# Installs what holoquic needs on Debian 12 and builds everything. Idempotent: quick when
# everything is already installed and built. Used by scripts/demo.sh and scripts/test.sh.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
source "$(dirname "${BASH_SOURCE[0]}")/libde265.sh"
cd "$ROOT"

install_apt_packages() {
  mapfile -t wanted < <(grep -vE '^\s*(#|$)' scripts/apt-packages.txt)
  local missing=()
  for p in "${wanted[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  if [ "$(id -u)" -ne 0 ]; then
    die "missing Debian packages: ${missing[*]} (run as root, or: sudo apt-get install ${missing[*]})"
  fi
  step "apt-get install ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

install_rust() {
  if ! command -v cargo >/dev/null; then
    [ -x "$HOME/.cargo/bin/cargo" ] || die "cargo not found: install Rust (https://rustup.rs)"
    export PATH="$HOME/.cargo/bin:$PATH"
  fi
}

install_node_modules() {
  command -v npm >/dev/null || die "node/npm not found (Node.js ≥ 20 needed)"
  # npm ci when package-lock.json is newer than the installed tree.
  if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
    step "npm ci"
    npm ci --no-audit --no-fund --loglevel=error
  fi
}

build_server() {
  step "cargo build --release (server/)"
  (cd server && cargo build --release --quiet)
}

build_wasm() {
  [ -f wasm/CMakeLists.txt ] || return 0
  build_libde265
  step "cmake native build (wasm/build-native)"
  cmake -S wasm -B wasm/build-native -G Ninja -DCMAKE_BUILD_TYPE=Release -DVPCC_DE265_ROOT="$LIBDE265_NATIVE" >/dev/null
  cmake --build wasm/build-native --parallel 2
  step "emscripten build (wasm/build-wasm)"
  if ! grep -qs "VPCC_DE265_ROOT:PATH=$LIBDE265_WASM\$" wasm/build-wasm/CMakeCache.txt; then
    emcmake cmake -S wasm -B wasm/build-wasm -G Ninja -DCMAKE_BUILD_TYPE=Release -DVPCC_DE265_ROOT="$LIBDE265_WASM" >/dev/null
  fi
  cmake --build wasm/build-wasm --parallel 2
  # The decoder's libFuzzer target (clang, ASan + UBSan), run for a bounded time by the cpp suite.
  step "clang fuzzing build (wasm/build-fuzz)"
  CC=clang CXX=clang++ cmake -S wasm -B wasm/build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DVPCC_FUZZ=ON \
    -DVPCC_DE265_ROOT="$LIBDE265_NATIVE" >/dev/null
  cmake --build wasm/build-fuzz --parallel 2
}

# The S3 store the origin's tests run against (docs/deployment.md, "The object store in the
# tests"): SeaweedFS's `weed`, a Go module, built once into $HOLOQUIC_TOOLS (default
# .holoquic/tools) and reused; skipped when that version is there. `go install …@version` refuses
# this module (its go.mod has a replace directive), so it is built inside the module's download.
SEAWEEDFS_VERSION=v0.0.0-20261109003541-7506e5f91cd6
install_seaweedfs() {
  local dir="${HOLOQUIC_TOOLS:-$ROOT/.holoquic/tools}/seaweedfs-$SEAWEEDFS_VERSION"
  [ -x "$dir/weed" ] && return 0
  if ! command -v go >/dev/null && [ -x /usr/local/go/bin/go ]; then export PATH="/usr/local/go/bin:$PATH"; fi
  if ! command -v go >/dev/null; then
    log "go not found: SeaweedFS (the origin's S3 tests) not built; those tests fail under scripts/test.sh"
    return 0
  fi
  step "SeaweedFS $SEAWEEDFS_VERSION (the S3 store of the origin's tests; built once)"
  local src
  src=$(go mod download -json "github.com/seaweedfs/seaweedfs@$SEAWEEDFS_VERSION" | sed -n 's/^\t*"Dir": "\(.*\)",$/\1/p')
  [ -d "$src" ] || die "could not download github.com/seaweedfs/seaweedfs@$SEAWEEDFS_VERSION"
  mkdir -p "$dir"
  # Written beside and renamed: an interrupted build leaves no binary that looks complete.
  (cd "$src" && go build -trimpath -ldflags "-s -w" -o "$dir/weed.partial" ./weed)
  mv "$dir/weed.partial" "$dir/weed"
}

build_web() {
  step "vite build (dist/)"
  npx vite build --logLevel warn
}

install_apt_packages
install_rust
install_node_modules
timed build_server
timed install_seaweedfs
timed build_wasm
timed build_web
log "setup complete"
