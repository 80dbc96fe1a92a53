#!/usr/bin/env bash
# Runs the holoquic demo on a fresh Debian 12 machine: installs and builds what is missing, packs
# the built-in demo scene if it is not complete, starts the origin and prints the URL to open.
# The scene is packed growing (holoquic-pack --grow): the origin starts as soon as its first,
# short stage is playable, and the packer goes on beside it, lowest quality first, printing what it
# does and how long is left. Ctrl-C stops both; the next run resumes the packing where it stopped.
# Environment: HOLOQUIC_PORT (default 4433), HOLOQUIC_HTTP_PORT (default 8080).
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$ROOT"

"$ROOT/scripts/setup.sh"

PORT="${HOLOQUIC_PORT:-4433}"
HTTP_PORT="${HOLOQUIC_HTTP_PORT:-8080}"
CONTENT="$ROOT/content"
SCENE="$CONTENT/demo"
PACKER_PID=""
ORIGIN_PID=""

# Finished: a manifest and no packing log (the packer removes its log last; docs/packaging.md).
scene_finished() { [ -f "$SCENE/manifest.mpd" ] && [ ! -f "$SCENE/packing.jsonl" ]; }

# Ctrl-C (or SIGTERM): stop the packer and the origin (background jobs of a script ignore the
# terminal's SIGINT, so they are told here), then say how to go on.
stop() {
  trap - INT TERM
  [ -z "$PACKER_PID" ] || kill -TERM "$PACKER_PID" 2>/dev/null || true
  [ -z "$ORIGIN_PID" ] || kill -TERM "$ORIGIN_PID" 2>/dev/null || true
  wait || true
  if [ -f "$SCENE/packing.jsonl" ]; then
    log "stopped. The demo scene is unfinished; scripts/demo.sh resumes its packing where it stopped."
  fi
  exit 130
}
trap stop INT TERM

if ! scene_finished; then
  if [ -f "$SCENE/packing.jsonl" ]; then
    step "resuming the packing of the demo scene (content/demo: 4 figures × 5 qualities × 10 s)"
  else
    step "packing the demo scene (content/demo: 4 figures × 5 qualities × 10 s): playable after its first 3 s at the" \
      "lowest quality (about half a minute on 2 idle cores), complete after about 10 minutes; the origin starts as soon as it plays"
  fi
  "$PACK_BIN" demo --out "$SCENE" --grow &
  PACKER_PID=$!
  # The origin starts with the first manifest (written last, by a rename: everything it names exists).
  while [ ! -f "$SCENE/manifest.mpd" ]; do
    if ! kill -0 "$PACKER_PID" 2>/dev/null; then
      status=0
      wait "$PACKER_PID" || status=$?
      PACKER_PID=""
      case $status in
        0) break ;;
        130 | 143) stop ;;  # the terminal's Ctrl-C reached the packer first
        *) die "packing the demo scene failed (the lines above say why)" ;;
      esac
    fi
    sleep 1
  done
fi
# The demo app: the four dancers, delivery-mode selector and live statistics.
OPEN_PATH="/?autoplay=1"
log "serving content/demo (manifest: /content/demo/manifest.mpd)"

# While the packer writes to this console, the origin's access log goes to a file.
ACCESS_LOG=()
if [ -n "$PACKER_PID" ]; then
  ACCESS_LOG=(--access-log "$(mktemp -t holoquic-demo-access.XXXXXX.log)")
  log "the origin's access log: ${ACCESS_LOG[1]}"
fi
step "starting holoquic-origin on UDP+TCP :$PORT (app also on http://127.0.0.1:$HTTP_PORT)"
"$ORIGIN_BIN" --listen "[::]:$PORT" --http-listen "127.0.0.1:$HTTP_PORT" \
  --content "$CONTENT" --web "$ROOT/dist" "${ACCESS_LOG[@]}" &
ORIGIN_PID=$!
GROWING=""
[ -z "$PACKER_PID" ] || GROWING="
  The scene is still being packed: the lines 'published …' below say when more of it is
  ready (first more seconds, then one quality more at a time); the page follows it as it grows."
cat >&2 <<MSG

  Open in Chrome:   http://127.0.0.1:$HTTP_PORT$OPEN_PATH
                    (WebTransport to :$PORT with the origin's certificate hash; nothing to accept)
  HTTP/2 baseline:  https://localhost:$PORT/?mode=h2&autoplay=1  (self-signed: accept the certificate once)
  Transport check:  http://127.0.0.1:$HTTP_PORT/e2e/pages/transport.html
  Stop with Ctrl-C.$GROWING

MSG
if [ -n "$PACKER_PID" ]; then
  status=0
  wait "$PACKER_PID" || status=$?
  PACKER_PID=""
  case $status in
    0) log "the demo scene is complete: every second and quality is in the page's manifest" ;;
    130 | 143) stop ;;
    *) log "packing failed (above); the origin serves what was published; scripts/demo.sh tries again" ;;
  esac
fi
wait "$ORIGIN_PID"
