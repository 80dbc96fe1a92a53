# libde265 (LGPL-3.0), the HEVC decoder of the wasm module for browsers whose WebCodecs has no
# HEVC, and natively a second HEVC decoder the conformance tests check against TMC2. Sourced by
# scripts/setup.sh: fetches Debian 12's source package (bookworm's, 1.0.11-1+deb12u2, with
# Debian's CVE patches applied by apt-get source; the security archive's newer source is not
# reachable from every network, ours included) and builds it as a static library twice — native
# and Emscripten — under .holoquic/deps. Idempotent: nothing happens when both libraries exist.
#
# Outputs: LIBDE265_NATIVE and LIBDE265_WASM, the install prefixes given to wasm/CMakeLists.txt
# as VPCC_DE265_ROOT.

DEPS="$ROOT/.holoquic/deps"
LIBDE265_NATIVE="$DEPS/libde265-native"
LIBDE265_WASM="$DEPS/libde265-wasm"

# The unpacked source tree (apt-get source, which needs the deb-src lines this adds once).
libde265_source() {
  local dir
  mkdir -p "$DEPS/src"
  dir=$(find "$DEPS/src" -maxdepth 1 -type d -name 'libde265-*' | sort | tail -1)
  if [ -z "$dir" ]; then
    [ "$(id -u)" -eq 0 ] || die "libde265's source is missing: run scripts/setup.sh as root once (it uses apt-get source)"
    local list=/etc/apt/sources.list.d/holoquic-deb-src.sources
    if [ ! -f "$list" ]; then
      step "apt: enabling Debian source packages ($list)"
      cat > "$list" <<'SOURCES'
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: bookworm
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SOURCES
      apt-get update -qq
    fi
    step "apt-get source libde265"
    (cd "$DEPS/src" && apt-get source -qq libde265/bookworm >/dev/null 2>&1) || die 'apt-get source libde265/bookworm failed'
    dir=$(find "$DEPS/src" -maxdepth 1 -type d -name 'libde265-*' | sort | tail -1)
    [ -n "$dir" ] || die "apt-get source libde265 gave no source tree"
  fi
  printf '%s\n' "$dir"
}

# Decoder library only: no SDL player, no encoder, no command-line tools.
libde265_configure_flags=(-G Ninja -DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS=OFF -DENABLE_SDL=OFF
  -DENABLE_ENCODER=OFF -DENABLE_DECODER=OFF)

build_libde265() {
  if [ -f "$LIBDE265_NATIVE/lib/libde265.a" ] && [ -f "$LIBDE265_WASM/lib/libde265.a" ]; then return 0; fi
  local src
  src=$(libde265_source)
  step "libde265 native (static, $LIBDE265_NATIVE)"
  cmake -S "$src" -B "$DEPS/build/libde265-native" "${libde265_configure_flags[@]}" \
    -DCMAKE_INSTALL_PREFIX="$LIBDE265_NATIVE" >/dev/null
  cmake --build "$DEPS/build/libde265-native" --parallel 2 --target install >/dev/null
  step "libde265 wasm (static, $LIBDE265_WASM)"
  # No x86 SIMD in wasm; the compiler's own wasm SIMD and the module's bulk-memory flags instead.
  emcmake cmake -S "$src" -B "$DEPS/build/libde265-wasm" "${libde265_configure_flags[@]}" -DDISABLE_SSE=ON \
    "-DCMAKE_CXX_FLAGS=-msimd128 -mbulk-memory -mnontrapping-fptoint" -DCMAKE_INSTALL_PREFIX="$LIBDE265_WASM" >/dev/null
  cmake --build "$DEPS/build/libde265-wasm" --parallel 2 --target install >/dev/null
}
