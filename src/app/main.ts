/**
 * App shell. Reports what this browser offers the player (WebTransport for object delivery,
 * WebCodecs for the video sub-streams, WebXR for headsets). The player, its transport and its
 * renderer are not wired in yet (see docs/architecture.md).
 */
const statusLine = document.getElementById('status');

function capabilities(): string[] {
  const has = (name: string): boolean => name in globalThis;
  return [
    `WebTransport: ${has('WebTransport') ? 'yes' : 'no (HTTP/2 only)'}`,
    `WebCodecs VideoDecoder: ${has('VideoDecoder') ? 'yes' : 'no'}`,
    `WebXR: ${'xr' in navigator ? 'yes' : 'no'}`,
    `Secure context: ${isSecureContext ? 'yes' : 'no (WebTransport needs one)'}`,
  ];
}

if (statusLine) statusLine.textContent = capabilities().join(' · ');

export {};
