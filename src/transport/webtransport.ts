/**
 * `WebTransportSession`: the session lifecycle of the object transport over WebTransport — open
 * a session to one of the endpoints (the origin's `/config.json` lists them with the certificate
 * hashes to pin, the manifest may list more: endpoints.ts; the first to open wins), watch it for stalls and replace a stalled one, move to
 * the next endpoint when one is lost, fall back to HTTP/2 when WebTransport keeps failing and
 * probe it in the background until it works again (the rules: failover.ts), move new requests
 * to another endpoint while the origin in use drains (drain.ts), close, and report each state
 * change and each switch of path. Where sessions can be opened: sessionEndpoints.ts. A request runs on its own stream (requestStream.ts);
 * datagrams are sorted by request in the demux (datagramDemux.ts) and decoded per object
 * (datagramObject.ts). The link estimates the REQUESTs carry (loss.ts, and the round trip:
 * the origin's PATH reports read from the path stream, pathStream.ts, or request → response times,
 * src/transport/pathRtt.ts) live here, one per session object, across reconnections.
 */
import { FecWorkerClient } from '../fec/client';
import { DatagramDemux } from './datagramDemux';
import { DRAIN_REASON, isDrainRefusal, watchDraining } from './drain';
import type { FailoverCause, FailoverRules } from './failover';
import { LossEstimator } from './loss';
import { message, openFirst } from './openSession';
import { exchange, failure, nextRequestId, type RequestSession } from './requestStream';
import { PathRtt } from './pathRtt';
import { readPathStreams } from './pathStream';
import { type EndpointSettings, SessionEndpoints } from './sessionEndpoints';
import { TransportStateCell } from './state';
import { DEFAULT_STALL_TIMEOUT_MS, StallWatch } from './stall';
import type { DeliveryStats, LinkMeasurement, ObjectRequest, ObjectResult, ObjectTransport, PathSwitch, TransportState } from './types';

/** Where sessions are opened (`EndpointSettings`, sessionEndpoints.ts), and how this object keeps one. */
export interface WebTransportSessionOptions extends EndpointSettings {
  /** Reconnect after the session is lost (default true). */
  reconnect?: boolean;
  /**
   * Replace the session when requests have waited this long without a byte while it reads as open
   * (stall.ts; default `DEFAULT_STALL_TIMEOUT_MS`, 0 = never). Needs `reconnect`.
   */
  stallTimeoutMs?: number;
  /**
   * The largest object the manifest lets the player expect (its largest representation's peak
   * bandwidth × the segment duration): the FEC worker makes room to decode one that large as it
   * starts (`reserveRaptorqMemory`, src/fec/objectDecoder.ts), so its memory is set while playback
   * warms up, not whenever the adaptation first reaches that segment.
   */
  largestObjectBytes?: number;
  fec?: FecWorkerClient;
}

/** WebTransport close code of a session replaced because it stalled. */
const STALLED_CLOSE_CODE = 0x5354;
/** How long a request cut without a status waits for its session's close to be reported. */
const CUT_STREAM_GRACE_MS = 100;
/** The path name of HTTP/2 in switch records. */
const HTTP2_PATH = 'http2';

/** There is nowhere to open a session: no `/config.json` (a static host) and no endpoint in the manifest. */
export class NoEndpointError extends Error {
  override name = 'NoEndpointError';
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

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
  /** The round trip: the origin's PATH reports, else REQUEST → RESPONSE times (src/transport/pathRtt.ts). */
  readonly rtt = new PathRtt();
  /** Sessions closed and opened again because they stalled (StallWatch). */
  stallReplacements = 0;
  /** The stall watch of the current session. */
  private watch: StallWatch | null = null;
  /** The session was closed for stalling: reconnect without the first backoff. */
  private replacingStalled = false;
  /** Where sessions can be opened, as `/config.json` (and the manifest) said when last read. */
  private readonly endpoints: SessionEndpoints;
  /** Sessions whose origin drains, open until it closes them so the objects in flight arrive. */
  private readonly drained = new Set<WebTransport>();
  /** Every session whose origin was seen to drain, kept past its close (a request cut by it is asked again). */
  private readonly drainedEver = new WeakSet<WebTransport>();
  /** While moving off a draining session: settles once another endpoint's session is in use, or none opened. */
  private moving: Promise<void> | null = null;
  /** Every change of path since connect(), in order. */
  readonly switches: PathSwitch[] = [];

  /** The RaptorQ worker's wasm memory (bytes; 0 until it decoded something). */
  get fecMemoryBytes(): number {
    return this.fec?.memoryBytes ?? 0;
  }
  /** Why the last attempt to open a session failed (or why the session fell back). */
  lastFailure: string | null = null;
  /** What a request uses of this session (requestStream.ts, datagramObject.ts). */
  private readonly parts: RequestSession = {
    demux: this.demux,
    fec: () => this.fec!,
    rtt: this.rtt,
    loss: this.loss,
  };

  constructor(private readonly options: WebTransportSessionOptions) {
    this.fec = options.fec ?? null;
    this.endpoints = new SessionEndpoints(options);
  }

  /** The failover rules over the current endpoints (sessionEndpoints.ts). */
  private get rules(): FailoverRules {
    return this.endpoints.rules;
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

  /** The endpoint's URL the session is open to, or null (none open: reconnecting, fallen back). */
  get endpoint(): string | null {
    return this.transport ? this.endpoints.url(this.rules.current) : null;
  }

  /**
   * Reads `/config.json`, merges its endpoints with the manifest's and opens a session to every
   * endpoint at once; the first to open is used (the lowest handshake time), the others are
   * closed. Rejects when there is no endpoint (no `/config.json` — a static host — and none in
   * the manifest: no WebTransport here) or no session opens; in that second case the session has
   * fallen back (state `fallback`) and goes on probing in the background unless told not to reconnect.
   */
  async connect(): Promise<void> {
    if (typeof WebTransport === 'undefined') throw new Error('this browser has no WebTransport');
    this.closing = false;
    this.stateCell.set('connecting');
    this.connecting ??= this.start().finally(() => (this.connecting = null));
    await this.connecting;
  }

  private async start(): Promise<void> {
    const noConfig = await this.endpoints.read();
    if (this.closing) throw new Error('closed while connecting');
    if (this.endpoints.count === 0) throw new NoEndpointError(`no WebTransport endpoint: ${noConfig}, and the manifest lists none`);
    let winner: { wt: WebTransport; i: number };
    try {
      winner = await openFirst([...Array(this.endpoints.count).keys()], (i) => this.endpoints.open(i, (late) => this.adoptLate(late, i)));
    } catch (e) {
      this.lastFailure = message(e);
      if (this.options.reconnect !== false && !this.closing) this.fallBack(null, `no session opened: ${this.lastFailure}`);
      throw e;
    }
    if (this.closing) {
      winner.wt.close({ closeCode: 0, reason: 'player closed' });
      throw new Error('closed while connecting');
    }
    this.adopt(winner.wt, winner.i);
  }

  /**
   * A first handshake that outlived the connect timeout completed after all: while requests go
   * over HTTP/2 for want of any session, it becomes the session (no need to wait for a probe);
   * otherwise it is closed.
   */
  private adoptLate(wt: WebTransport, i: number): void {
    if (this.closing || this.transport || this.state !== 'fallback') {
      wt.close({ closeCode: 0, reason: 'no longer needed' });
      return;
    }
    this.adopt(wt, i);
    this.switches.push({ atMs: performance.now(), from: HTTP2_PATH, to: this.endpoints.url(i), reason: 'the first handshake completed after the connect timeout' });
  }

  /** Makes `wt`, open to endpoint `i`, the session requests use: stall watch, datagrams, loss. */
  private adopt(wt: WebTransport, i: number): void {
    this.transport = wt;
    this.rules.connected(i);
    const timeoutMs = this.options.stallTimeoutMs ?? DEFAULT_STALL_TIMEOUT_MS;
    const watch = timeoutMs <= 0 || this.options.reconnect === false ? null : new StallWatch(timeoutMs);
    this.watch = watch;
    if (!this.fec) {
      this.fec = new FecWorkerClient();
      if (this.options.largestObjectBytes) this.fec.reserve(this.options.largestObjectBytes);
    }
    this.stateCell.set('connected');
    void this.demux.read(wt.datagrams.readable, () => watch?.progress(performance.now()));
    void readPathStreams(wt, (report) => this.transport === wt && this.rtt.addReport(report));
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
    watchDraining(wt, () => void this.onDraining(wt));
    // A session the origin closes cleanly, unasked, is one it drains (drain.ts); any other end is a loss.
    const byOrigin = () => !this.closing && !this.replacingStalled && this.options.reconnect !== false;
    wt.closed.then(() => (byOrigin() ? this.onClosedByOrigin(wt) : this.onLost(wt)), () => this.onLost(wt));
  }

  /**
   * The origin closed `wt` cleanly, before any sign of its drain reached us (nothing was asked of
   * it meanwhile): move as on a drain; with nowhere to move, it is a loss.
   */
  private async onClosedByOrigin(wt: WebTransport): Promise<void> {
    await this.onDraining(wt);
    if (this.transport === wt) await this.onLost(wt);
  }

  /**
   * The origin of `wt` drains (drain.ts): opens a session to another endpoint and makes it the
   * one new requests use; `wt` stays open for the objects in flight until the origin closes it.
   * Resolves once that is done, or failed (then requests stay on `wt` and its close is a loss).
   */
  private onDraining(wt: WebTransport): Promise<void> {
    if (this.transport === wt && !this.closing && !this.drained.has(wt)) {
      this.drained.add(wt);
      this.drainedEver.add(wt);
      const forget = () => this.drained.delete(wt);
      wt.closed.then(forget, forget);
      this.moving = this.moveOff(wt).finally(() => (this.moving = null));
    }
    return this.moving ?? Promise.resolve();
  }

  private async moveOff(wt: WebTransport): Promise<void> {
    const from = this.rules.current;
    const targets = this.rules.drainTargets();
    if (targets.length === 0) return;
    let winner: { wt: WebTransport; i: number };
    try {
      winner = await openFirst(targets, (i) => this.endpoints.open(i));
    } catch (e) {
      this.lastFailure = message(e);
      return;
    }
    if (this.closing || this.transport !== wt) {
      winner.wt.close({ closeCode: 0, reason: this.closing ? 'player closed' : 'no longer needed' });
      return;
    }
    this.adopt(winner.wt, winner.i);
    this.switches.push({ atMs: performance.now(), from: this.endpoints.url(from), to: this.endpoints.url(winner.i), reason: DRAIN_REASON });
  }

  private async onLost(wt: WebTransport): Promise<void> {
    if (this.transport !== wt) return;
    // Closed while moving off it (the origin finished its drain first): the move decides.
    if (this.moving) await this.moving;
    if (this.transport !== wt) return;
    this.transport = null;
    if (this.closing) return this.stateCell.set('closed');
    if (this.options.reconnect === false) return this.stateCell.set('failed');
    this.stateCell.set('reconnecting');
    const cause: FailoverCause = this.replacingStalled ? 'stalled' : 'lost';
    this.replacingStalled = false;
    const from = this.endpoints.url(this.rules.current);
    let step = this.rules.next(cause);
    let reason = cause === 'stalled' ? 'session stalled' : 'session lost';
    let failed = 0;
    // Every attempt's failure, in order: which endpoint refused and how says why the fallback came.
    const failures: string[] = [];
    while (!this.closing) {
      if (step.kind === 'fall-back') return this.fallBack(from, `${reason}, then ${failed} attempt(s) failed (${failures.join('; ')})`);
      if (step.delayMs > 0) await sleep(step.delayMs);
      if (this.closing) return;
      await this.endpoints.refresh();
      if (await this.tryOpen(step.endpoint, from, failed > 0 ? `${reason}, then ${failed} attempt(s) failed` : reason)) return;
      failed++;
      failures.push(this.lastFailure ?? 'unknown');
      step = this.rules.next('failed');
    }
  }

  /** Opens a session to `endpoint` and uses it, recording a switch from `from`; false if it failed. */
  private async tryOpen(endpoint: number, from: string, reason: string): Promise<boolean> {
    try {
      const wt = await this.endpoints.open(endpoint);
      // Closed meanwhile, or a late first handshake became the session (adoptLate): nothing to do.
      if (this.closing || this.transport) {
        wt.close({ closeCode: 0, reason: this.closing ? 'player closed' : 'no longer needed' });
        return true;
      }
      this.adopt(wt, endpoint);
      const to = this.endpoints.url(endpoint);
      if (to !== from) this.switches.push({ atMs: performance.now(), from, to, reason });
      return true;
    } catch (e) {
      this.lastFailure = message(e);
      return false;
    }
  }

  /** Requests go over HTTP/2 from now on; probes try WebTransport again in the background. */
  private fallBack(from: string | null, reason: string): void {
    if (from !== null) this.switches.push({ atMs: performance.now(), from, to: HTTP2_PATH, reason });
    this.stateCell.set('fallback');
    void this.probe();
  }

  private async probe(): Promise<void> {
    while (!this.closing && this.state === 'fallback') {
      const { endpoint, delayMs } = this.rules.nextProbe();
      await sleep(delayMs);
      if (this.closing || this.state !== 'fallback') return;
      await this.endpoints.refresh();
      if (await this.tryOpen(endpoint, HTTP2_PATH, 'a background probe opened a session')) return;
      this.rules.probeFailed();
    }
  }

  close(): void {
    this.closing = true;
    this.transport?.close({ closeCode: 0, reason: 'player closed' });
    this.transport = null;
    for (const wt of this.drained) wt.close({ closeCode: 0, reason: 'player closed' });
    this.drained.clear();
    this.fec?.terminate();
    this.fec = null;
    this.stateCell.set('closed');
  }

  /** Datagram loss from the symbols of every datagram request; the round trip as pathRtt.ts defines it. */
  linkEstimate(): LinkMeasurement {
    const { rate, meanBurst } = this.loss.estimate();
    const rtt = this.rtt.view();
    return { loss: { rate, meanBurst }, rttS: rtt.rttS, rtt };
  }

  async fetchObject(request: ObjectRequest): Promise<ObjectResult> {
    const requestedAt = performance.now();
    const stats: DeliveryStats = { delivery: request.delivery, transport: 'webtransport', objectBytes: 0, receivedBytes: 0, requestedAt, recovered: false };
    if (this.connecting) await this.connecting.catch(() => undefined);
    // While moving off a draining origin, new requests wait for the next one's session (bounded by the connect timeout).
    if (this.moving) await this.moving;
    const wt = this.transport;
    if (!wt) return failure(stats, 0, `no WebTransport session (${this.stateCell.current})`);
    if (request.signal?.aborted) return failure(stats, 0, 'cancelled');
    const result = await this.send(wt, request, stats);
    if (!(await this.lostToDrain(wt, result, request))) return result;
    // The session moved to another endpoint, and the request is asked there within what is left
    // of its deadline (its RTT sample and deadline count from the new send).
    const next = this.transport;
    const leftMs = request.deadlineMs === undefined ? undefined : request.deadlineMs - (performance.now() - requestedAt);
    if (!next || next === wt || request.signal?.aborted || (leftMs !== undefined && leftMs <= 0)) return result;
    return this.send(next, { ...request, deadlineMs: leftMs }, { ...stats, requestedAt: performance.now() });
  }

  /**
   * Whether `result`, which `wt` gave, failed because `wt`'s origin drains: refused (then the
   * move starts, and is waited for), or cut without a status when the drained session closed (as
   * seen for a request sent after the origin's GOAWAY: never answered; the close, and the move it
   * starts, may be reported a moment after the cut stream).
   */
  private async lostToDrain(wt: WebTransport, result: ObjectResult, request: ObjectRequest): Promise<boolean> {
    if (isDrainRefusal(result)) {
      await this.onDraining(wt);
      return true;
    }
    if (result.status !== 0 || result.bytes || request.signal?.aborted) return false;
    await Promise.race([wt.closed.catch(() => undefined), sleep(CUT_STREAM_GRACE_MS)]);
    if (this.moving) await this.moving;
    return this.drainedEver.has(wt);
  }

  /** One request on `wt`, watched by the current session's stall watch. */
  private async send(wt: WebTransport, request: ObjectRequest, stats: DeliveryStats): Promise<ObjectResult> {
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
