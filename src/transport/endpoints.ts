/**
 * Where WebTransport sessions can be opened: the origin's `/config.json` list and the manifest's
 * (docs/mpd.md → "WebTransport endpoints") merged into the one list the failover rules number.
 * The origin's list is live — it knows the certificate it serves now and which origins run —
 * while the manifest's was written when the scene was packed, so the origin's wins: its endpoints
 * come first in its order, and an endpoint both name keeps the origin's pins. The manifest's
 * others follow, pinned like the origin's own endpoint (right when the origins share a
 * certificate; with PKI certificates nothing is pinned). A static host has no `/config.json`: the
 * manifest's list is then the whole list, unpinned, and without either there is no WebTransport.
 */
import type { OriginConfig, WebTransportEndpoint } from './originConfig';

/**
 * The most endpoints one list holds. A session is opened to every endpoint at once (the first to
 * open wins), so a long list would open as many sessions at every start; sixteen is far more
 * origins than one region's DNS name spreads players over.
 */
export const MAX_WEBTRANSPORT_ENDPOINTS = 16;

/**
 * `/config.json`'s endpoints (null: the host has none), then the manifest's session URLs it does
 * not list, at most `MAX_WEBTRANSPORT_ENDPOINTS` in all. URLs are compared after parsing
 * (`https://A.test:443/x` and `https://a.test/x` are one endpoint).
 */
export function mergeEndpoints(config: OriginConfig | null, manifestUrls: readonly string[]): WebTransportEndpoint[] {
  const merged: WebTransportEndpoint[] = [];
  const seen = new Set<string>();
  const add = (endpoint: WebTransportEndpoint) => {
    const key = normalized(endpoint.url);
    if (seen.has(key) || merged.length >= MAX_WEBTRANSPORT_ENDPOINTS) return;
    seen.add(key);
    merged.push(endpoint);
  };
  for (const endpoint of config?.endpoints ?? []) add(endpoint);
  for (const url of manifestUrls) add({ url, certificateHashes: config?.certificateHashes ?? [] });
  return merged;
}

function normalized(url: string): string {
  try {
    return new URL(url).href;
  } catch {
    return url;
  }
}
