# The patched quiche the origin builds against. Sourced by scripts/setup.sh.
#
# server/Cargo.toml replaces the crates.io quiche with server/vendor/quiche (`[patch.crates-io]`).
# That directory is not in git (quiche's crate bundles far too much to commit): this unpacks the
# exact release named in server/patches/quiche.release ("VERSION SHA256" of the crates.io .crate;
# server/Cargo.lock records no checksum for a patched path), from cargo's own download of it, and
# applies our patches in server/patches/ (each one small, commented, written to
# be offered upstream). Idempotent: nothing happens when the tree matches the release and the
# patches already; a changed patch or version unpacks afresh.

QUICHE_VENDOR="$ROOT/server/vendor/quiche"

# The .crate file cargo downloaded for quiche VERSION; fetched with cargo when missing. The
# fetch goes through a throwaway manifest because the project's own manifest points at the
# vendored copy that does not exist yet.
quiche_crate_file() {
    local version=$1 found
    found=$(find "${CARGO_HOME:-$HOME/.cargo}/registry/cache" -name "quiche-$version.crate" 2>/dev/null | head -1)
    if [ -z "$found" ]; then
        local tmp
        tmp=$(mktemp -d)
        mkdir -p "$tmp/src" && : > "$tmp/src/lib.rs"
        printf '[package]\nname = "quiche-fetch"\nversion = "0.0.0"\nedition = "2021"\n[dependencies]\nquiche = "=%s"\n' "$version" > "$tmp/Cargo.toml"
        (cd "$tmp" && cargo fetch --quiet) || die "cargo could not download quiche $version"
        rm -rf "$tmp"
        found=$(find "${CARGO_HOME:-$HOME/.cargo}/registry/cache" -name "quiche-$version.crate" | head -1)
    fi
    [ -n "$found" ] || die "quiche-$version.crate not found in cargo's registry cache"
    echo "$found"
}

vendor_quiche() {
    local version checksum crate stamp want
    read -r version checksum < "$ROOT/server/patches/quiche.release"
    # What the tree must have been made from: the release and every patch, byte for byte.
    want="$version $checksum $(cat "$ROOT"/server/patches/quiche-*.patch | sha256sum | cut -d' ' -f1)"
    stamp="$QUICHE_VENDOR/.holoquic-vendored"
    [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] && return 0
    step "quiche $version from crates.io, patched (server/vendor/quiche)"
    crate=$(quiche_crate_file "$version")
    [ "$(sha256sum "$crate" | cut -d' ' -f1)" = "$checksum" ] || die "$crate does not match the checksum in server/patches/quiche.release"
    rm -rf "$QUICHE_VENDOR" "$QUICHE_VENDOR.partial"
    mkdir -p "$QUICHE_VENDOR.partial"
    tar -xzf "$crate" -C "$QUICHE_VENDOR.partial" --strip-components=1
    local p
    for p in "$ROOT"/server/patches/quiche-*.patch; do
        patch --quiet --forward -p1 -d "$QUICHE_VENDOR.partial" < "$p" || die "$p does not apply to quiche $version"
    done
    echo "$want" > "$QUICHE_VENDOR.partial/.holoquic-vendored"
    # Renamed when complete: an interrupted run leaves no tree that looks done.
    mv "$QUICHE_VENDOR.partial" "$QUICHE_VENDOR"
}
