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

OPEN_PATH="/"
if [ -x "$PACK_BIN" ]; then
  if [ ! -f "$CONTENT/demo/manifest.mpd" ]; then
    step "generating the built-in demo content (content/demo) — a few minutes on 2 cores"
    "$PACK_BIN" demo --out "$CONTENT/demo"
  fi
else
  # Until the packager lands (README "Status") the demo is the transport check page, fetching
  # generated test objects over WebTransport streams, RaptorQ datagrams and HTTP/2.
  mkdir -p "$CONTENT/check"
  for size in 1 5 20; do
    [ -f "$CONTENT/check/${size}MB.bin" ] || head -c $((size * 1000 * 1000)) /dev/urandom >"$CONTENT/check/${size}MB.bin"
  done
  OPEN_PATH="/transport.html?path=/content/check/5MB.bin"
  log "no packager yet: serving the transport check page with test objects in $CONTENT/check"
fi

step "starting holoquic-origin on UDP+TCP :$PORT (app also on http://127.0.0.1:$HTTP_PORT)"
cat >&2 <<MSG

  Open in Chrome:   http://127.0.0.1:$HTTP_PORT$OPEN_PATH
                    (WebTransport to :$PORT with the origin's certificate hash; nothing to accept)
  HTTP/2 baseline:  https://localhost:$PORT/  (self-signed: accept the certificate once)
  Stop with Ctrl-C.

MSG
exec "$ORIGIN_BIN" --listen "[::]:$PORT" --http-listen "127.0.0.1:$HTTP_PORT" \
  --content "$CONTENT" --web "$ROOT/dist"
