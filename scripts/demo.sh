#!/usr/bin/env bash
# Runs the holoquic demo on a fresh Debian 12 machine: installs and builds what is missing,
# generates the built-in demo content if absent, starts the origin and prints the URL to open.
# Environment: HOLOQUIC_PORT (default 4433), HOLOQUIC_HTTP_PORT (default 8080).
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$ROOT"

"$ROOT/scripts/setup.sh"

PORT="${HOLOQUIC_PORT:-4433}"
HTTP_PORT="${HOLOQUIC_HTTP_PORT:-8080}"
CONTENT="$ROOT/content"

# Fail clearly while parts of the product are still missing (see README "Status").
[ -x "$PACK_BIN" ] || die "the packager holoquic-pack is not built (server/crates/holoquic-pack does not exist yet): no demo content can be made"

if [ ! -f "$CONTENT/demo/manifest.mpd" ]; then
  step "generating the built-in demo content (content/demo) — a few minutes on 2 cores"
  "$PACK_BIN" demo --out "$CONTENT/demo"
fi

step "starting holoquic-origin on UDP+TCP :$PORT (app also on http://127.0.0.1:$HTTP_PORT)"
cat >&2 <<MSG

  Open in Chrome:   http://127.0.0.1:$HTTP_PORT/
                    (WebTransport to :$PORT with the origin's certificate hash; nothing to accept)
  HTTP/2 baseline:  https://localhost:$PORT/  (self-signed: accept the certificate once)
  Stop with Ctrl-C.

MSG
exec "$ORIGIN_BIN" --listen "[::]:$PORT" --http-listen "127.0.0.1:$HTTP_PORT" \
  --content "$CONTENT" --web "$ROOT/dist"
