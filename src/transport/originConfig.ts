/**
 * `GET /config.json` on the origin (docs/protocol.md §1): where the WebTransport session is and
 * which certificate hashes to pin. Read once per session, from the network, so checked field by
 * field: a wrong answer (a proxy's error page, another server's JSON) is an error naming the URL
 * and the field, not a TypeError deep in `new WebTransport`.
 */
import { fetchWithRetry } from './retry';

export interface OriginConfig {
  webtransportUrl: string;
  /** SHA-256 hashes of the self-signed certificate(s) served; empty with a PKI certificate. */
  certificateHashes: Array<{ algorithm: 'sha-256'; value: Uint8Array<ArrayBuffer> }>;
}

export function parseOriginConfig(json: unknown, url: string): OriginConfig {
  const fail = (what: string): never => {
    throw new Error(`${url}: not an origin configuration (${what})`);
  };
  if (typeof json !== 'object' || json === null || Array.isArray(json)) return fail('not a JSON object');
  const { webtransportUrl, certificateHashes } = json as Record<string, unknown>;
  if (typeof webtransportUrl !== 'string') return fail('webtransportUrl is not a string');
  let session: URL;
  try {
    session = new URL(webtransportUrl);
  } catch {
    return fail(`webtransportUrl "${webtransportUrl}" is not a URL`);
  }
  if (session.protocol !== 'https:') fail(`webtransportUrl "${webtransportUrl}" is not https`);
  const hashes = certificateHashes ?? [];
  if (!Array.isArray(hashes)) return fail('certificateHashes is not a list');
  return {
    webtransportUrl,
    certificateHashes: hashes.map((h: unknown, i) => {
      const { algorithm, value } = (typeof h === 'object' && h !== null ? h : {}) as Record<string, unknown>;
      if (algorithm !== 'sha-256') fail(`certificateHashes[${i}].algorithm is not "sha-256"`);
      if (typeof value !== 'string' || !/^[0-9a-f]{64}$/i.test(value)) fail(`certificateHashes[${i}].value is not 64 hex digits`);
      const bytes = new Uint8Array(32);
      for (let b = 0; b < 32; b++) bytes[b] = parseInt((value as string).slice(2 * b, 2 * b + 2), 16);
      return { algorithm: 'sha-256' as const, value: bytes };
    }),
  };
}

/** Fetches and checks `originBase`'s `/config.json`; network hiccups are retried (retry.ts). */
export async function fetchOriginConfig(originBase: string, signal?: AbortSignal): Promise<OriginConfig> {
  const url = new URL('/config.json', originBase).href;
  const response = await fetchWithRetry(url, { signal, cache: 'no-store' });
  if (!response.ok) throw new Error(`${url}: HTTP ${response.status}`);
  let json: unknown;
  try {
    json = await response.json();
  } catch {
    throw new Error(`${url}: not JSON`);
  }
  return parseOriginConfig(json, url);
}
