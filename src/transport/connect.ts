/**
 * Choosing the transport: WebTransport when the browser has it and a session opens, else HTTP/2
 * with the reason, so a player always plays and says why it is on the fallback. When the origin
 * offers WebTransport but no session opens, the session is kept, fallen back: it probes in the
 * background and carries requests again once one opens (webtransport.ts, failover.ts).
 */
import { Http2Transport } from './http2';
import { carriesRequests, type ObjectTransport } from './types';
import { NoEndpointError, WebTransportSession } from './webtransport';
import { fetchOriginConfig, type OriginConfig } from './originConfig';

export interface Transports {
  /** Absent when the browser or the origin has no WebTransport; may be fallen back (`carriesRequests`). */
  webtransport?: WebTransportSession;
  http2: Http2Transport;
  /** Why WebTransport was not available at the start, when it was not. */
  fallbackReason?: string;
}

/** Whether requests go over WebTransport now (a session exists and has not fallen back). */
export function webTransportUsable(t: Pick<Transports, 'webtransport'> | null): boolean {
  return t?.webtransport !== undefined && carriesRequests(t.webtransport.state);
}

/** Why requests go over HTTP/2 now, or null while WebTransport carries them. */
export function currentFallbackReason(t: Transports | null): string | null {
  if (!t || webTransportUsable(t)) return null;
  const session = t.webtransport;
  const last = session?.switches.at(-1);
  if (last?.to === 'http2') return last.reason;
  return t.fallbackReason ?? session?.lastFailure ?? null;
}

export interface ConnectOptions {
  /** false: HTTP/2 only. */
  webtransport?: boolean;
  /** Session URL overriding the origin's configuration. */
  webtransportUrl?: string;
  /** Base URL of the HTTPS listener for HTTP/2 (default: `originBase`). */
  http2Base?: string;
  /** A path the HTTP/2 base must serve, checked once by HEAD (`Http2Transport.connect`); none: no check. */
  http2Probe?: string;
  /** WebTransport session URLs the manifest lists, merged after `/config.json`'s (endpoints.ts). */
  manifestEndpoints?: readonly string[];
  /** Replace a WebTransport session stalled this long (ms; default `DEFAULT_STALL_TIMEOUT_MS`, 0 = never). */
  stallTimeoutMs?: number;
  /** The largest object the manifest lets the player expect: the FEC worker makes room for it (webtransport.ts). */
  largestObjectBytes?: number;
  /** `originBase`'s `/config.json`, already asked for (`prefetchOriginConfig`). */
  originConfig?: Promise<OriginConfig>;
}

/**
 * Asks for `originBase`'s `/config.json` now, for `connectTransports` later: a player asks for it
 * beside the manifest, one round trip before the session could otherwise start (at 50 ms one way,
 * 100 ms of startup). None where the browser has no WebTransport (nothing would read it).
 */
export function prefetchOriginConfig(originBase: string): Promise<OriginConfig> | undefined {
  if (typeof WebTransport === 'undefined') return undefined;
  const config = fetchOriginConfig(originBase);
  // Read later, or never (HTTP/2 only, the load failed): a static host's 404 is no unhandled error.
  config.catch(() => undefined);
  return config;
}

export async function connectTransports(originBase: string, options: ConnectOptions = {}): Promise<Transports> {
  const http2 = new Http2Transport(options.http2Base ?? originBase);
  await http2.connect(options.http2Probe);
  if (options.webtransport === false) return { http2, fallbackReason: 'WebTransport disabled' };
  if (typeof WebTransport === 'undefined') return { http2, fallbackReason: 'this browser has no WebTransport' };
  const session = new WebTransportSession({
    originBase, originConfig: options.originConfig, webtransportUrl: options.webtransportUrl, manifestEndpoints: options.manifestEndpoints,
    stallTimeoutMs: options.stallTimeoutMs, largestObjectBytes: options.largestObjectBytes,
  });
  try {
    await session.connect();
    return { webtransport: session, http2 };
  } catch (e) {
    // No endpoint anywhere is how a static host looks: HTTP/2 only, and that is no failure.
    const fallbackReason = e instanceof NoEndpointError ? e.message : `WebTransport session failed: ${e instanceof Error ? e.message : e}`;
    // The origin offers WebTransport but no session opened: keep probing for one.
    if (session.state === 'fallback') return { webtransport: session, http2, fallbackReason };
    session.close();
    return { http2, fallbackReason };
  }
}

export type { ObjectTransport };
