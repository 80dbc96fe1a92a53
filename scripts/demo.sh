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

if [ ! -f "$CONTENT/demo/manifest.mpd" ]; then
  step "generating the built-in demo content (content/demo: 4 figures × 5 qualities × 10 s) — about 10 minutes on 2 cores"
  "$PACK_BIN" demo --out "$CONTENT/demo"
fi
# The demo app: the four dancers, delivery-mode selector and live statistics.
OPEN_PATH="/?autoplay=1"
log "serving content/demo (manifest: /content/demo/manifest.mpd)"

step "starting holoquic-origin on UDP+TCP :$PORT (app also on http://127.0.0.1:$HTTP_PORT)"
cat >&2 <<MSG

  Open in Chrome:   http://127.0.0.1:$HTTP_PORT$OPEN_PATH
                    (WebTransport to :$PORT with the origin's certificate hash; nothing to accept)
  HTTP/2 baseline:  https://localhost:$PORT/?mode=h2&autoplay=1  (self-signed: accept the certificate once)
  Transport check:  http://127.0.0.1:$HTTP_PORT/e2e/pages/transport.html
  Stop with Ctrl-C.

MSG
exec "$ORIGIN_BIN" --listen "[::]:$PORT" --http-listen "127.0.0.1:$HTTP_PORT" \
  --content "$CONTENT" --web "$ROOT/dist"
