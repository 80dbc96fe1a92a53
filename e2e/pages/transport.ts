/**
 * The transport check page: a person fetches an object over each delivery path and sees what it
 * measured; end-to-end tests drive the same code through `window.holoquicTransportTest`.
 *
 * URL parameters: `origin` (base of /config.json, default this page's origin), `https` (base of
 * the HTTPS listener for HTTP/2, default `origin`), `wt` (session URL override), `path` (the object
 * path the form starts with).
 */
import { connectTransports, type Transports } from '../../src/transport/connect';
import type { FecRequest } from '../../src/transport/types';

export interface TransportTestResult {
  status: number;
  sha256: string | null;
  bytes: number;
  stats: unknown;
  error?: string;
}

const params = new URLSearchParams(location.search);
const originBase = params.get('origin') ?? location.origin;
let transports: Transports | null = null;

async function connect(): Promise<{ webtransport: boolean; fallbackReason?: string }> {
  transports = await connectTransports(originBase, { http2Base: params.get('https') ?? undefined, webtransportUrl: params.get('wt') ?? undefined });
  return { webtransport: !!transports.webtransport, fallbackReason: transports.fallbackReason };
}

async function sha256(bytes: Uint8Array<ArrayBuffer>): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', bytes));
  return Array.from(digest, (b) => b.toString(16).padStart(2, '0')).join('');
}

/** `abortAtBytes`: give the request up (as the player abandons one) once that many bytes arrived. */
async function fetchPath(path: string, options: { via: 'reliable' | 'datagram' | 'http2'; fec?: FecRequest; deadlineMs?: number; abortAtBytes?: number }): Promise<TransportTestResult> {
  if (!transports) await connect();
  const t = transports!;
  const transport = options.via === 'http2' ? t.http2 : t.webtransport;
  if (!transport) return { status: 0, sha256: null, bytes: 0, stats: null, error: t.fallbackReason };
  const abort = new AbortController();
  const result = await transport.fetchObject({
    path, delivery: options.via === 'datagram' ? 'datagram' : 'reliable', urgency: 3, fec: options.fec, deadlineMs: options.deadlineMs,
    signal: abort.signal,
    // From a timer, as the player's abandonment does: the transport is then waiting for bytes.
    onProgress: (received) => {
      if (options.abortAtBytes !== undefined && received >= options.abortAtBytes) setTimeout(() => abort.abort(), 0);
    },
  });
  return {
    status: result.status,
    sha256: result.bytes ? await sha256(result.bytes as Uint8Array<ArrayBuffer>) : null,
    bytes: result.bytes?.length ?? 0,
    stats: result.stats,
    error: result.error,
  };
}

declare global {
  interface Window {
    holoquicTransportTest: { connect: typeof connect; fetch: typeof fetchPath };
  }
}
window.holoquicTransportTest = { connect, fetch: fetchPath };

const initialPath = params.get('path');
if (initialPath) (document.getElementById('path') as HTMLInputElement).value = initialPath;
const connection = document.getElementById('connection')!;
connect().then(
  (c) => (connection.textContent = c.webtransport ? 'WebTransport session open.' : `HTTP/2 only: ${c.fallbackReason}`),
  (e) => (connection.textContent = `Cannot reach the origin: ${e instanceof Error ? e.message : e}`),
);
document.getElementById('fetch')!.addEventListener('submit', async (event) => {
  event.preventDefault();
  const path = (document.getElementById('path') as HTMLInputElement).value;
  const via = (document.getElementById('mode') as HTMLSelectElement).value as 'reliable' | 'datagram' | 'http2';
  const out = document.getElementById('result')!;
  out.textContent = 'Fetching…';
  try {
    out.textContent = JSON.stringify(await fetchPath(path, { via }), null, 2);
  } catch (e) {
    out.textContent = `Failed: ${e instanceof Error ? e.message : e}`;
  }
});
