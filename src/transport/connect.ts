/**
 * Choosing the transport: WebTransport when the browser has it and the session opens, else
 * HTTP/2 with the reason, so a player always plays and says why it is on the fallback.
 */
import { Http2Transport } from './http2';
import type { ObjectTransport } from './types';
import { WebTransportSession } from './webtransport';

export interface Transports {
  webtransport?: WebTransportSession;
  http2: Http2Transport;
  /** Why WebTransport is not available, when it is not. */
  fallbackReason?: string;
}

export interface ConnectOptions {
  /** false: HTTP/2 only. */
  webtransport?: boolean;
  /** Session URL overriding the origin's configuration. */
  webtransportUrl?: string;
  /** Base URL of the HTTPS listener for HTTP/2 (default: `originBase`). */
  http2Base?: string;
  /** Replace a WebTransport session stalled this long (ms; default `DEFAULT_STALL_TIMEOUT_MS`, 0 = never). */
  stallTimeoutMs?: number;
}

export async function connectTransports(originBase: string, options: ConnectOptions = {}): Promise<Transports> {
  const http2 = new Http2Transport(options.http2Base ?? originBase);
  await http2.connect();
  if (options.webtransport === false) return { http2, fallbackReason: 'WebTransport disabled' };
  if (typeof WebTransport === 'undefined') return { http2, fallbackReason: 'this browser has no WebTransport' };
  const session = new WebTransportSession({ originBase, webtransportUrl: options.webtransportUrl, stallTimeoutMs: options.stallTimeoutMs });
  try {
    await session.connect();
    return { webtransport: session, http2 };
  } catch (e) {
    session.close();
    return { http2, fallbackReason: `WebTransport session failed: ${e instanceof Error ? e.message : e}` };
  }
}

export type { ObjectTransport };
