/**
 * `WebTransportSession`: the session lifecycle of the object transport over WebTransport — open
 * a session to the origin (its `/config.json` names the URL and the certificate hashes to pin),
 * watch it for stalls and replace a stalled one, reconnect with backoff when one is lost, close,
 * and report each state change. A request runs on its own stream (requestStream.ts); datagrams
 * are sorted by request in the demux (datagramDemux.ts) and decoded per object
 * (datagramObject.ts). The link estimates the REQUESTs carry (loss.ts, rtt.ts) live here, one
 * per session object, across reconnections.
 */
import { FecWorkerClient } from '../fec/client';
import { DatagramDemux } from './datagramDemux';
import { LossEstimator } from './loss';
import { fetchOriginConfig } from './originConfig';
import { exchange, failure, nextRequestId, type RequestSession } from './requestStream';
import { RttEstimator } from './rtt';
import { TransportStateCell } from './state';
import { DEFAULT_STALL_TIMEOUT_MS, StallWatch } from './stall';
import type { DeliveryStats, LinkMeasurement, ObjectRequest, ObjectResult, ObjectTransport, TransportState } from './types';

export interface WebTransportSessionOptions {
  /** Origin base URL whose `/config.json` names the session URL and certificate hashes. */
  originBase: string;
  /** Session URL to use instead of the configuration's (e.g. through a relay in tests). */
  webtransportUrl?: string;
  /** Reconnect after the session is lost (default true). */
  reconnect?: boolean;
  /** Give up after this many failed reconnection attempts in a row (default 8). */
  maxReconnectAttempts?: number;
  /**
   * Replace the session when requests have waited this long without a byte while it reads as open
   * (stall.ts; default `DEFAULT_STALL_TIMEOUT_MS`, 0 = never). Needs `reconnect`.
   */
  stallTimeoutMs?: number;
  fec?: FecWorkerClient;
}

/**
 * Datagrams the browser may hold for us while the page is busy. Chromium's default is 1: a
 * datagram that arrives while no read() is pending replaces the one waiting, so a main thread busy
 * for a few milliseconds would lose symbols the network delivered, and the loss estimate would
 * charge them to the network. 8192 symbols (≈ 11 MB) cover about a second at 80 Mbit/s.
 */
const INCOMING_DATAGRAM_QUEUE = 8192;
/** WebTransport close code of a session replaced because it stalled. */
const STALLED_CLOSE_CODE = 0x5354;

export class WebTransportSession implements ObjectTransport {
  readonly kind = 'webtransport' as const;
  private readonly stateCell = new TransportStateCell();
  private transport: WebTransport | null = null;
  /** The datagrams of every session this object opens, sorted by request id. */
  private readonly demux = new DatagramDemux();
  private requestId = 0;
  private closing = false;
  private connecting: Promise<void> | null = null;
  private fec: FecWorkerClient | null;
  readonly loss = new LossEstimator();
  /** Round-trip time from REQUEST → RESPONSE times (windowed minimum, rtt.ts). */
  readonly rtt = new RttEstimator();
  /** Sessions closed and opened again because they stalled (StallWatch). */
  stallReplacements = 0;
  /** The stall watch of the current session. */
  private watch: StallWatch | null = null;
  /** The session was closed for stalling: reconnect without the first backoff. */
  private replacingStalled = false;
  /** What a request uses of this session (requestStream.ts, datagramObject.ts). */
  private readonly parts: RequestSession = {
    demux: this.demux,
    fec: () => this.fec!,
    rtt: this.rtt,
    loss: this.loss,
  };

  constructor(private readonly options: WebTransportSessionOptions) {
    this.fec = options.fec ?? null;
  }

  get state(): TransportState {
    return this.stateCell.current;
  }

  /** Datagrams that could not be given to a request (datagramDemux.ts). */
  get datagramsDropped(): number {
    return this.demux.dropped;
  }

  onStateChange(listener: (state: TransportState) => void): () => void {
    return this.stateCell.listen(listener);
  }

  async connect(): Promise<void> {
    if (typeof WebTransport === 'undefined') throw new Error('this browser has no WebTransport');
    this.closing = false;
    this.stateCell.set('connecting');
    this.connecting ??= this.open().finally(() => (this.connecting = null));
    await this.connecting;
  }

  private async open(): Promise<void> {
    const config = await fetchOriginConfig(this.options.originBase);
    if (this.closing) throw new Error('closed while connecting');
    const hashes = config.certificateHashes;
    const wt = new WebTransport(this.options.webtransportUrl ?? config.webtransportUrl, hashes.length > 0 ? { serverCertificateHashes: hashes } : {});
    wt.datagrams.incomingHighWaterMark = INCOMING_DATAGRAM_QUEUE;
    await wt.ready;
    // close() may have come while the session was being set up: it must not outlive it.
    if (this.closing) {
      wt.close({ closeCode: 0, reason: 'player closed' });
      throw new Error('closed while connecting');
    }
    this.transport = wt;
    const timeoutMs = this.options.stallTimeoutMs ?? DEFAULT_STALL_TIMEOUT_MS;
    const watch = timeoutMs <= 0 || this.options.reconnect === false ? null : new StallWatch(timeoutMs);
    this.watch = watch;
    this.fec ??= new FecWorkerClient();
    this.stateCell.set('connected');
    void this.demux.read(wt.datagrams.readable, () => watch?.progress(performance.now()));
    if (watch) {
      const timer = setInterval(() => {
        if (this.transport !== wt) return clearInterval(timer);
        if (!watch.stalled(performance.now())) return;
        clearInterval(timer);
        this.stallReplacements++;
        this.replacingStalled = true;
        wt.close({ closeCode: STALLED_CLOSE_CODE, reason: `no bytes for ${timeoutMs} ms while requests waited` });
      }, 250);
    }
    wt.closed.then(() => this.onLost(wt), () => this.onLost(wt));
  }

  private async onLost(wt: WebTransport): Promise<void> {
    if (this.transport !== wt) return;
    this.transport = null;
    if (this.closing) return this.stateCell.set('closed');
    if (this.options.reconnect === false) return this.stateCell.set('failed');
    this.stateCell.set('reconnecting');
    const attempts = this.options.maxReconnectAttempts ?? 8;
    const stalled = this.replacingStalled;
    this.replacingStalled = false;
    for (let attempt = 0; attempt < attempts && !this.closing; attempt++) {
      // A stalled session's link may be fine: try a new one at once.
      const backoffMs = stalled && attempt === 0 ? 0 : Math.min(4000, 250 * 2 ** attempt);
      await new Promise((r) => setTimeout(r, backoffMs));
      if (this.closing) return;
      try {
        await this.open();
        return;
      } catch {
        // try again after the backoff
      }
    }
    if (!this.closing) this.stateCell.set('failed');
  }

  close(): void {
    this.closing = true;
    this.transport?.close({ closeCode: 0, reason: 'player closed' });
    this.transport = null;
    this.fec?.terminate();
    this.fec = null;
    this.stateCell.set('closed');
  }

  /** Datagram loss from the symbols of every datagram request, RTT from REQUEST → RESPONSE times. */
  linkEstimate(): LinkMeasurement {
    const { rate, meanBurst } = this.loss.estimate();
    return { loss: { rate, meanBurst }, rttS: this.rtt.ms / 1000 };
  }

  async fetchObject(request: ObjectRequest): Promise<ObjectResult> {
    const requestedAt = performance.now();
    const stats: DeliveryStats = { delivery: request.delivery, transport: 'webtransport', objectBytes: 0, receivedBytes: 0, requestedAt, recovered: false };
    if (this.connecting) await this.connecting.catch(() => undefined);
    const wt = this.transport;
    if (!wt) return failure(stats, 0, `no WebTransport session (${this.stateCell.current})`);
    if (request.signal?.aborted) return failure(stats, 0, 'cancelled');
    const watch = this.watch;
    watch?.begin(performance.now());
    try {
      // Ids are unique across this object's sessions: the demux outlives each one.
      this.requestId = nextRequestId(this.requestId);
      return await exchange(this.parts, wt, this.requestId, request, stats, () => watch?.progress(performance.now()));
    } finally {
      watch?.end();
    }
  }
}
