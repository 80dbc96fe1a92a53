/**
 * `GET /config.json` on the origin (docs/protocol.md §1): where the WebTransport session is and
 * which certificate hashes to pin — and, when several origins serve the content, every endpoint a
 * player may fail over to (`webtransportEndpoints`, the origin's own first). Read once per session, from the network, so checked field by
 * field: a wrong answer (a proxy's error page, another server's JSON) is an error naming the URL
 * and the field, not a TypeError deep in `new WebTransport`.
 */
import { fetchWithRetry, type RetryOptions } from './retry';

export type CertificateHash = { algorithm: 'sha-256'; value: Uint8Array<ArrayBuffer> };

/** One place a WebTransport session can be opened, with the hashes its certificate is pinned by. */
export interface WebTransportEndpoint {
  url: string;
  certificateHashes: CertificateHash[];
}

export interface OriginConfig {
  webtransportUrl: string;
  /** SHA-256 hashes of the self-signed certificate(s) served; empty with a PKI certificate. */
  certificateHashes: CertificateHash[];
  /**
   * Every endpoint, in the origin's order: `webtransportEndpoints` when the origin lists several
   * (`--wt-endpoint`), else the one above.
   */
  endpoints: WebTransportEndpoint[];
}

export function parseOriginConfig(json: unknown, url: string): OriginConfig {
  const fail = (what: string): never => {
    throw new Error(`${url}: not an origin configuration (${what})`);
  };
  if (typeof json !== 'object' || json === null || Array.isArray(json)) return fail('not a JSON object');
  const { webtransportUrl, certificateHashes, webtransportEndpoints } = json as Record<string, unknown>;
  const own = parseEndpoint(webtransportUrl, certificateHashes, 'webtransportUrl', 'certificateHashes', fail);
  let endpoints = [own];
  if (webtransportEndpoints !== undefined) {
    if (!Array.isArray(webtransportEndpoints) || webtransportEndpoints.length === 0) return fail('webtransportEndpoints is not a non-empty list');
    endpoints = webtransportEndpoints.map((e: unknown, i) => {
      const { url, certificateHashes: hashes } = (typeof e === 'object' && e !== null ? e : {}) as Record<string, unknown>;
      return parseEndpoint(url, hashes, `webtransportEndpoints[${i}].url`, `webtransportEndpoints[${i}].certificateHashes`, fail);
    });
  }
  return { webtransportUrl: own.url, certificateHashes: own.certificateHashes, endpoints };
}

/** One session URL (absolute https) and its hashes (absent: none), checked; `fail` names the field. */
function parseEndpoint(url: unknown, certificateHashes: unknown, urlField: string, hashField: string, fail: (what: string) => never): WebTransportEndpoint {
  if (typeof url !== 'string') return fail(`${urlField} is not a string`);
  let session: URL;
  try {
    session = new URL(url);
  } catch {
    return fail(`${urlField} "${url}" is not a URL`);
  }
  if (session.protocol !== 'https:') fail(`${urlField} "${url}" is not https`);
  const hashes = certificateHashes ?? [];
  if (!Array.isArray(hashes)) return fail(`${hashField} is not a list`);
  return {
    url,
    certificateHashes: hashes.map((h: unknown, i) => {
      const { algorithm, value } = (typeof h === 'object' && h !== null ? h : {}) as Record<string, unknown>;
      if (algorithm !== 'sha-256') fail(`${hashField}[${i}].algorithm is not "sha-256"`);
      if (typeof value !== 'string' || !/^[0-9a-f]{64}$/i.test(value)) fail(`${hashField}[${i}].value is not 64 hex digits`);
      const bytes = new Uint8Array(32);
      for (let b = 0; b < 32; b++) bytes[b] = parseInt((value as string).slice(2 * b, 2 * b + 2), 16);
      return { algorithm: 'sha-256' as const, value: bytes };
    }),
  };
}

/**
 * Fetches and checks `originBase`'s `/config.json`; network hiccups are retried (retry.ts, with
 * `retry`: one attempt when failing over, where a copy read before will do).
 */
export async function fetchOriginConfig(originBase: string, signal?: AbortSignal, retry?: RetryOptions): Promise<OriginConfig> {
  const url = new URL('/config.json', originBase).href;
  const response = await fetchWithRetry(url, { signal, cache: 'no-store' }, retry);
  if (!response.ok) throw new Error(`${url}: HTTP ${response.status}`);
  let json: unknown;
  try {
    json = await response.json();
  } catch {
    throw new Error(`${url}: not JSON`);
  }
  return parseOriginConfig(json, url);
}
