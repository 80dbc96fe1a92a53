/**
 * The one interface every object transport implements (WebTransport and HTTP/2), so the player
 * core never cares which one carries a segment. Wire details: docs/protocol.md.
 *
 * What else is in src/transport/, one job a file:
 *   connect.ts         choosing the transport: WebTransport when it opens, else HTTP/2 and why
 *   http2.ts           `Http2Transport`: objects over fetch() (the h2 baseline and the fallback)
 *   webtransport.ts    `WebTransportSession`: the session's lifecycle — open with pinned
 *                      certificates, stall watch and replacement, failover between endpoints,
 *                      fallback to HTTP/2 and background probes, close, state
 *   failover.ts        the failover rules: which endpoint next, when to fall back, when to probe
 *   drain.ts           how the player learns that the origin in use drains (its move: webtransport.ts)
 *   openSession.ts     opening a session to an endpoint, or to several at once (the first wins)
 *   requestStream.ts   one request on its own stream: REQUEST out, RESPONSE and the object in
 *   messageReader.ts   framed messages and raw bytes read off a request stream
 *   datagramDemux.ts   the session's datagrams sorted by request id (early ones held)
 *   datagramObject.ts  one object's RaptorQ symbols to the decoder (fec/): repair on demand,
 *                      the delivery's datagram loss measured
 *   codec.ts           the protocol's messages and datagrams as bytes, no I/O
 *   limits.ts          the largest object one request takes (from the manifest, and a hard cap)
 *   budget.ts          `InFlightBudget`: the object bytes all requests together may be receiving
 *   loss.ts, rtt.ts    the session's datagram loss and round-trip estimates
 *   stall.ts           when an open session counts as stalled
 *   originConfig.ts    the origin's /config.json, fetched and checked
 *   endpoints.ts       /config.json's endpoints merged with the manifest's: the one list
 *   retry.ts           fetch with backoff for the few requests playback cannot start without
 *   state.ts           a transport's state and who listens to it
 *
 * An object's way over WebTransport: `fetchObject` → requestStream → on the stream
 * (messageReader) or as datagrams (datagramDemux → datagramObject → fec/) → `ObjectResult`.
 */

import type { RttView } from './pathRtt';
import type { LossModel } from '../model/link';
import type { Delivery } from '../model/modes';

/** FEC settings of a datagram request (docs/protocol.md §3, REQUEST fec_mode). */
export type FecRequest =
  | { kind: 'none' }
  /** The origin plans repair from the reported loss rate and mean burst length. */
  | { kind: 'planned'; lossRate: number; meanBurstLength?: number }
  /** Fixed repair overhead, as a fraction of the source symbols (0.1 = 10 %). */
  | { kind: 'fixed'; overhead: number };

export interface ObjectRequest {
  /** Object path on the origin, e.g. `/content/demo/o0/q2/seg-00005.v3c`. */
  path: string;
  delivery: Delivery;
  /** RFC 9218 urgency: 0 (most urgent) … 7. */
  urgency: number;
  /** Milliseconds from now after which the object is useless; the origin stops sending. */
  deadlineMs?: number;
  /** Datagram delivery only; default `planned` with the session's measured loss. */
  fec?: FecRequest;
  /** Aborting cancels the request on the origin (CANCEL) and rejects nothing: status is 0. */
  signal?: AbortSignal;
  /**
   * The object size the player expects, in bytes (the representation's peak bandwidth × the
   * segment duration, from the manifest). The request refuses an object announced or arriving
   * larger than `EXPECTED_SIZE_FACTOR` times this, and never takes one above
   * `PROTOCOL_MAX_OBJECT_BYTES` (limits.ts).
   */
  expectedBytes?: number;
  /** Called as bytes (reliable) or symbols (datagram, as symbol bytes) arrive; lets the player
   *  abandon a request that will miss its deadline. */
  onProgress?: (receivedBytes: number, objectBytes: number) => void;
  /**
   * Datagram delivery only: called once, when the origin reports (SENT) that every symbol it
   * planned to send unprompted has left it. What the object waits for from then on is repair — a
   * round trip of the protocol's, then a few symbols — or its deadline: not the link's work.
   */
  onAllPlannedSent?: () => void;
}

/** What happened while an object was delivered; the player's QoE log is built from these. */
export interface DeliveryStats {
  delivery: Delivery;
  transport: 'webtransport' | 'http2';
  /** Object size in bytes (0 if unknown). */
  objectBytes: number;
  /** Payload bytes received, including FEC symbols that turned out redundant. */
  receivedBytes: number;
  /** performance.now() timestamps. */
  requestedAt: number;
  firstByteAt?: number;
  /** When the last byte arrived — on failure too; absent when none did. */
  lastByteAt?: number;
  /** Datagram delivery only. */
  symbolSize?: number;
  sourceSymbols?: number;
  symbolsSent?: number;
  symbolsReceived?: number;
  /** Of those, the ones the origin sent on the request stream to fill its window (SYMBOL). */
  symbolsOnStream?: number;
  repairRequests?: number;
  /**
   * Datagram delivery only: the spans (performance.now() ms) this object waited on its own repair
   * timer — from the last symbol before a repair request to that request — in which the link owed
   * it nothing. The throughput estimate leaves them out of its busy time (link/throughput.ts).
   */
  repairWaits?: Array<[number, number]>;
  /**
   * Loss seen by this delivery: symbols up to the highest ESI received (those after it were still
   * in flight or unneeded when the object decoded: not losses), how many of them were lost, and
   * in how many runs of consecutive losses.
   */
  symbolsObserved?: number;
  symbolsLost?: number;
  lossBursts?: number;
  /** True when the object bytes are complete and exact. */
  recovered: boolean;
}

export interface ObjectResult {
  /** Protocol status (200 ok, 404, 408 …); 0 when cancelled or the session failed. */
  status: number;
  /** The object's bytes when recovered, else null. */
  bytes: Uint8Array | null;
  stats: DeliveryStats;
  /** Human-readable reason when not recovered. */
  error?: string;
}

/**
 * `fallback`: WebTransport kept failing, so requests go over HTTP/2 while the session is probed in
 * the background (it turns `connected` again when a probe opens one; failover.ts). `failed` is
 * for good, and only a session told not to reconnect ends there.
 */
export type TransportState = 'connecting' | 'connected' | 'reconnecting' | 'fallback' | 'closed' | 'failed';

/** Whether requests may be given to a WebTransport session in `state` (not while it has fallen back, failed or closed). */
export function carriesRequests(state: TransportState): boolean {
  return state === 'connected' || state === 'connecting' || state === 'reconnecting';
}

/**
 * The path requests travel changed: from one WebTransport endpoint (its URL) to another, or to
 * HTTP/2 (`http2`) and back. `atMs` on the performance clock.
 */
export interface PathSwitch {
  atMs: number;
  from: string;
  to: string;
  reason: string;
}

export interface ObjectTransport {
  readonly kind: 'webtransport' | 'http2';
  readonly state: TransportState;
  connect(): Promise<void>;
  fetchObject(request: ObjectRequest): Promise<ObjectResult>;
  /** Called on every state change (e.g. session lost → reconnecting → connected). */
  onStateChange(listener: (state: TransportState) => void): () => void;
  close(): void;
  /**
   * What this transport has measured of the link: datagram loss and round-trip time. The
   * transport is where they are measured (every symbol and every response passes through it),
   * so it is their one owner; the player reads them here (src/link/estimates.ts).
   */
  linkEstimate(): LinkMeasurement;
}

export interface LinkMeasurement {
  loss: LossModel;
  /** The round trip to use (seconds): `rtt.rttS` when the transport has the full view. */
  rttS: number;
  /** The whole round-trip view (src/transport/pathRtt.ts): path RTT, its minimum and where it came from. */
  rtt?: RttView;
}
