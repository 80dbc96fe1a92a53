/**
 * `WebTransportSession`: the object delivery protocol (docs/protocol.md §3) over one WebTransport
 * session to the origin — one bidi stream per request, reliable bytes on the stream, or RaptorQ
 * symbols as datagrams decoded in a worker with repair on demand — plus session-loss detection
 * and reconnection.
 */
import { FecWorkerClient } from '../fec/client';
import { decodeMessage, decodeObjectDatagram, encodeMessage, type FecMode, type Message, REQUEST_ID_LIMIT } from './codec';
import { countLosses, datagramObservation, LossEstimator, sendingIndex } from './loss';
import { type OriginConfig, parseOriginConfig } from './originConfig';
import { fetchWithRetry } from './retry';
import { RttEstimator } from './rtt';
import { TransportStateCell } from './state';
import { DEFAULT_STALL_TIMEOUT_MS, StallWatch } from './stall';
import type { DeliveryStats, ObjectRequest, ObjectResult, ObjectTransport, TransportState } from './types';

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

/** Per datagram request: where its symbols go while it is open. */
interface DatagramSink {
  onPacket(packet: Uint8Array, block: number, esi: number): void;
}

const EARLY_PACKETS_LIMIT = 4096;
/**
 * Datagrams the browser may hold for us while the page is busy. Chromium's default is 1: a
 * datagram that arrives while no read() is pending replaces the one waiting, so a main thread busy
 * for a few milliseconds would lose symbols the network delivered, and the loss estimate would
 * charge them to the network. 8192 symbols (≈ 11 MB) cover about a second at 80 Mbit/s.
 */
const INCOMING_DATAGRAM_QUEUE = 8192;
/** WebTransport close code of a session replaced because it stalled. */
const STALLED_CLOSE_CODE = 0x5354;
/**
 * Largest object the client takes: RESPONSE's length is allocated at once, so a wrong or hostile
 * one must not ask for gigabytes. Four times the origin's default limit (64 MiB).
 */
const MAX_OBJECT_BYTES = 256 * 2 ** 20;
/** Extra repair symbols asked for beyond the measured shortfall. */
const REPAIR_MARGIN = 2;

export class WebTransportSession implements ObjectTransport {
  readonly kind = 'webtransport' as const;
  private readonly stateCell = new TransportStateCell();
  private transport: WebTransport | null = null;
  private readonly sinks = new Map<number, DatagramSink>();
  /** Datagrams that arrived before their RESPONSE (the stream is slower than the first symbols). */
  private readonly early = new Map<number, Uint8Array[]>();
  private earlyCount = 0;
  private nextRequestId = 1;
  private closing = false;
  private connecting: Promise<void> | null = null;
  private fec: FecWorkerClient | null;
  readonly loss = new LossEstimator();
  /** Round-trip time from REQUEST → RESPONSE times (windowed minimum, rtt.ts). */
  readonly rtt = new RttEstimator();
  datagramsDropped = 0;
  /** Sessions closed and opened again because they stalled (StallWatch). */
  stallReplacements = 0;
  /** The stall watch of the current session. */
  private watch: StallWatch | null = null;
  /** The session was closed for stalling: reconnect without the first backoff. */
  private replacingStalled = false;

  constructor(private readonly options: WebTransportSessionOptions) {
    this.fec = options.fec ?? null;
  }

  get state(): TransportState {
    return this.stateCell.current;
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
    void this.readDatagrams(wt, watch);
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

  private async readDatagrams(wt: WebTransport, watch: StallWatch | null): Promise<void> {
    const reader = wt.datagrams.readable.getReader();
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return;
        watch?.progress(performance.now());
        let datagram;
        try {
          datagram = decodeObjectDatagram(value);
        } catch {
          this.datagramsDropped++;
          continue;
        }
        const sink = this.sinks.get(datagram.requestId);
        if (sink) {
          // One request's trouble (its progress callback, say) must not end reception for all.
          try {
            sink.onPacket(datagram.packet, datagram.sourceBlock, datagram.symbolId);
          } catch {
            this.datagramsDropped++;
          }
        } else if (this.early.has(datagram.requestId) && this.earlyCount < EARLY_PACKETS_LIMIT) {
          this.early.get(datagram.requestId)!.push(datagram.packet);
          this.earlyCount++;
        } else {
          this.datagramsDropped++;
        }
      }
    } catch {
      // the session ended; onLost handles it
    }
  }

  async fetchObject(request: ObjectRequest): Promise<ObjectResult> {
    const requestedAt = performance.now();
    const stats: DeliveryStats = { delivery: request.delivery, transport: 'webtransport', objectBytes: 0, receivedBytes: 0, requestedAt, recovered: false };
    const fail = (status: number, error: string): ObjectResult => ({ status, bytes: null, stats, error });
    if (this.connecting) await this.connecting.catch(() => undefined);
    const wt = this.transport;
    if (!wt) return fail(0, `no WebTransport session (${this.stateCell.current})`);
    if (request.signal?.aborted) return fail(0, 'cancelled');
    const watch = this.watch;
    watch?.begin(performance.now());
    try {
      return await this.exchange(wt, watch, request, stats);
    } finally {
      watch?.end();
    }
  }

  /** One request on its own stream of `wt`: REQUEST out, RESPONSE and the object (or symbols) in. */
  private async exchange(wt: WebTransport, watch: StallWatch | null, request: ObjectRequest, stats: DeliveryStats): Promise<ObjectResult> {
    const fail = (status: number, error: string): ObjectResult => ({ status, bytes: null, stats, error });
    const requestId = this.nextRequestId;
    this.nextRequestId = (this.nextRequestId % (REQUEST_ID_LIMIT - 1)) + 1;
    const fec = request.fec ?? { kind: 'planned', lossRate: this.loss.estimate().rate };
    const measured = this.loss.wireFields();
    const fecMode: FecMode = request.delivery === 'reliable' ? 'none' : fec.kind;
    const message: Extract<Message, { type: 'request' }> = {
      type: 'request', requestId, delivery: request.delivery, urgency: Math.max(0, Math.min(7, Math.round(request.urgency))),
      deadlineMs: Math.max(0, Math.round(request.deadlineMs ?? 0)), fecMode,
      lossPpm: fec.kind === 'planned' ? Math.round(Math.min(1, Math.max(0, fec.lossRate)) * 1e6) : measured.lossPpm,
      burstMilli: fec.kind === 'planned' && fec.meanBurstLength ? Math.round(fec.meanBurstLength * 1000) : measured.burstMilli,
      overheadPermille: fec.kind === 'fixed' ? Math.round(Math.max(0, fec.overhead) * 1000) : 0,
      path: request.path,
    };
    if (request.delivery === 'datagram') this.early.set(requestId, []);
    let stream: WebTransportBidirectionalStream;
    try {
      stream = await wt.createBidirectionalStream();
    } catch (e) {
      this.dropEarly(requestId);
      return fail(0, `could not open a stream: ${e instanceof Error ? e.message : e}`);
    }
    const writer = stream.writable.getWriter();
    const reader = stream.readable.getReader();
    const messages = new MessageReader(reader, () => watch?.progress(performance.now()));
    let result: ObjectResult | undefined;
    try {
      result = await this.converse(request, message, stats, writer, messages);
      return result;
    } finally {
      this.dropEarly(requestId);
      this.sinks.delete(requestId);
      if (!result?.bytes) {
        // Not delivered (abandoned, cancelled, failed): stop the origin's side of the stream
        // (STOP_SENDING) and ours (RESET_STREAM), or it would go on sending what nobody reads —
        // an abandoned object's bytes competing with its replacement on a struggling link.
        reader.cancel().catch(() => undefined);
        writer.abort().catch(() => undefined);
      }
    }
  }

  /** The messages of one request on its stream; `exchange` opens and closes the stream. */
  private async converse(
    request: ObjectRequest,
    message: Extract<Message, { type: 'request' }>,
    stats: DeliveryStats,
    writer: WritableStreamDefaultWriter<Uint8Array>,
    messages: MessageReader,
  ): Promise<ObjectResult> {
    const requestedAt = stats.requestedAt;
    const requestId = message.requestId;
    const fail = (status: number, error: string): ObjectResult => ({ status, bytes: null, stats, error });
    try {
      await writer.write(encodeMessage(message));
      // A reliable request says everything in its REQUEST: finish our side at once.
      if (request.delivery === 'reliable') await writer.close();
      const first = await messages.next(request.signal);
      if (!first) return fail(0, request.signal?.aborted ? 'cancelled' : 'stream ended before RESPONSE');
      if (first.type !== 'response') return fail(0, `expected RESPONSE, got ${first.type}`);
      stats.firstByteAt = performance.now();
      this.rtt.add(stats.firstByteAt - requestedAt);
      if (first.status !== 200 || first.delivery === 'error') {
        return fail(first.status, first.delivery === 'error' ? first.message : `status ${first.status}`);
      }
      if (first.objectLength > MAX_OBJECT_BYTES) return fail(0, `object of ${first.objectLength} bytes is over the ${MAX_OBJECT_BYTES}-byte limit`);
      stats.objectBytes = first.objectLength;
      if (first.delivery === 'reliable') {
        const bytes = await messages.readRaw(first.objectLength, request.signal, (n) => {
          stats.receivedBytes = n;
          request.onProgress?.(n, first.objectLength);
        });
        stats.lastByteAt = performance.now();
        if (!bytes) return fail(0, request.signal?.aborted ? 'cancelled' : 'stream ended before the object did');
        stats.receivedBytes = bytes.length;
        stats.recovered = true;
        return { status: 200, bytes, stats };
      }
      return await this.receiveDatagrams(requestId, first, request, stats, messages, writer);
    } catch (e) {
      return fail(0, e instanceof Error ? e.message : String(e));
    }
  }

  private dropEarly(requestId: number): void {
    const early = this.early.get(requestId);
    if (early) {
      this.earlyCount -= early.length;
      this.early.delete(requestId);
    }
  }

  private async receiveDatagrams(
    requestId: number,
    response: Extract<Message, { type: 'response'; delivery: 'datagram' }>,
    request: ObjectRequest,
    stats: DeliveryStats,
    messages: MessageReader,
    writer: WritableStreamDefaultWriter<Uint8Array>,
  ): Promise<ObjectResult> {
    const fec = this.fec!;
    const symbolSize = (response.oti[6] << 8) | response.oti[7];
    const blocks = Math.max(1, response.oti[8]);
    stats.symbolSize = symbolSize;
    stats.sourceSymbols = response.sourceSymbols;
    stats.symbolsReceived = 0;
    stats.symbolsOnStream = 0;
    stats.repairRequests = 0;
    // Block 0's symbols that arrived, by position in sending order: the gaps are the losses. A
    // SYMBOL on the stream was taken from ahead of the datagrams still queued at the origin, so
    // only datagrams say how far sending has got (`lastDatagram`) and stream ones leave the count.
    const arrivedBlock0 = new Set<number>();
    const streamBlock0: number[] = [];
    let lastDatagram = -1;
    const decoded = fec.open(requestId, response.oti);
    decoded.catch(() => undefined);
    const onPacket = (packet: Uint8Array, block: number, esi: number, byStream = false) => {
      stats.symbolsReceived!++;
      if (byStream) stats.symbolsOnStream!++;
      stats.receivedBytes += packet.length;
      const index = block === 0 ? sendingIndex(esi, response.sourceSymbols, response.firstRepairEsi) : null;
      if (index !== null && byStream) streamBlock0.push(index);
      else if (index !== null) {
        arrivedBlock0.add(index);
        lastDatagram = Math.max(lastDatagram, index);
      }
      request.onProgress?.(Math.min(stats.receivedBytes, response.objectLength), response.objectLength);
      fec.push(requestId, packet);
    };
    this.sinks.set(requestId, { onPacket: (p, b, e) => onPacket(p, b, e) });
    for (const packet of this.early.get(requestId) ?? []) {
      onPacket(packet, packet[0], (packet[1] << 16) | (packet[2] << 8) | packet[3]);
    }
    this.dropEarly(requestId);

    const deadlineAt = request.deadlineMs ? stats.requestedAt + request.deadlineMs : Infinity;
    let symbolsSent = 0;
    // What the origin will send unprompted, then what we asked for: repair is asked for only once
    // all of it has left the origin (SENT comes per batch; asking after an early batch would
    // request symbols that are already on their way).
    let expectedSymbols = response.sourceSymbols + response.plannedRepair * blocks;
    let outcome: 'decoded' | 'deadline' | 'cancelled' | 'ended' | null = null;
    let object: Uint8Array | null = null;
    let repairTimer: ReturnType<typeof setTimeout> | null = null;
    const settle = new Promise<void>((resolve) => {
      const finish = (o: typeof outcome) => {
        if (outcome === null) outcome = o;
        resolve();
      };
      decoded.then((bytes) => {
        object = bytes;
        finish('decoded');
      }, () => finish('ended'));
      if (Number.isFinite(deadlineAt)) setTimeout(() => finish('deadline'), Math.max(0, deadlineAt - performance.now()));
      request.signal?.addEventListener('abort', () => finish('cancelled'), { once: true });
      // Messages: SENT drives repair on demand, SYMBOL is one more symbol; END or FIN ends the request.
      void (async () => {
        for (;;) {
          const m = await messages.next().catch(() => null);
          if (!m) return finish('ended');
          if (m.type === 'sent') {
            symbolsSent = m.symbolsSent;
            stats.symbolsSent = symbolsSent;
            if (repairTimer) clearTimeout(repairTimer);
            if (symbolsSent < expectedSymbols) continue;
            // Symbols still in flight arrive within about one RTT; ask for what is missing then.
            repairTimer = setTimeout(() => {
              if (outcome !== null) return;
              const timeLeft = deadlineAt - performance.now();
              if (timeLeft < 1.5 * this.rtt.ms) return;
              const shortfall = response.sourceSymbols + REPAIR_MARGIN * blocks - stats.symbolsReceived!;
              const perBlock = Math.min(65_535, Math.max(1, Math.ceil(Math.max(shortfall, blocks) / blocks) + REPAIR_MARGIN));
              stats.repairRequests!++;
              expectedSymbols = symbolsSent + perBlock * blocks;
              writer.write(encodeMessage({ type: 'repair', symbols: perBlock })).catch(() => undefined);
            }, Math.max(30, 1.5 * this.rtt.ms));
          } else if (m.type === 'symbol') {
            onPacket(m.packet, m.packet[0], (m.packet[1] << 16) | (m.packet[2] << 8) | m.packet[3], true);
          } else if (m.type === 'end') {
            symbolsSent = m.symbolsSent;
            stats.symbolsSent = symbolsSent;
            return finish('ended');
          }
        }
      })();
    });
    await settle;
    if (repairTimer) clearTimeout(repairTimer);
    stats.lastByteAt = performance.now();
    if (outcome === 'decoded') {
      // Our FIN tells the origin to stop and purge; it answers END.
      writer.close().catch(() => undefined);
    } else {
      fec.close(requestId);
      writer.write(encodeMessage({ type: 'cancel' })).then(() => writer.close()).catch(() => undefined);
    }
    if (blocks === 1 && lastDatagram >= 0) {
      // Symbols after the last datagram received are still in flight or were purged when we
      // stopped: only the span up to it says anything about loss. It is observed whether or not
      // SENT has come (objects decoded before it are the loss-free ones; leaving them out made
      // every estimate a pessimistic one).
      const last = lastDatagram;
      const observed = symbolsSent > 0 ? Math.min(symbolsSent, last + 1) : last + 1;
      const observation = datagramObservation(observed, arrivedBlock0, streamBlock0);
      this.loss.observe(observation);
      const losses = countLosses(observation);
      stats.symbolsObserved = observed;
      stats.symbolsLost = losses.lost;
      stats.lossBursts = losses.runs;
    }
    if (object) {
      stats.recovered = true;
      return { status: 200, bytes: object, stats };
    }
    const error = outcome === 'deadline' ? 'deadline passed before the object could be decoded'
      : outcome === 'cancelled' ? 'cancelled' : 'the origin ended the request before the object could be decoded';
    return { status: outcome === 'deadline' ? 408 : outcome === 'cancelled' ? 0 : 200, bytes: null, stats, error };
  }
}

/** Reads framed messages, then (for reliable responses) raw object bytes, from a request stream. */
class MessageReader {
  private buffer = new Uint8Array(0);
  private ended = false;

  /** @param onBytes called whenever bytes arrive on the stream */
  constructor(private readonly reader: ReadableStreamDefaultReader<Uint8Array>, private readonly onBytes: () => void = () => {}) {}

  private async fill(signal?: AbortSignal): Promise<boolean> {
    if (this.ended) return false;
    const read = this.reader.read();
    const chunk = signal ? await abortable(read, signal) : await read;
    if (!chunk || chunk.done) {
      this.ended = true;
      return false;
    }
    this.onBytes();
    const merged = new Uint8Array(this.buffer.length + chunk.value.length);
    merged.set(this.buffer);
    merged.set(chunk.value, this.buffer.length);
    this.buffer = merged;
    return true;
  }

  /** The next message, or null at the end of the stream (or on abort). */
  async next(signal?: AbortSignal): Promise<Message | null> {
    for (;;) {
      const decoded = decodeMessage(this.buffer);
      if (decoded) {
        this.buffer = this.buffer.subarray(decoded.consumed);
        return decoded.message;
      }
      if (!(await this.fill(signal))) return null;
    }
  }

  /** Exactly `length` raw bytes (or null if the stream ends first or the signal aborts). */
  async readRaw(length: number, signal: AbortSignal | undefined, progress: (n: number) => void): Promise<Uint8Array | null> {
    const out = new Uint8Array(length);
    let have = Math.min(length, this.buffer.length);
    out.set(this.buffer.subarray(0, have));
    this.buffer = this.buffer.subarray(have);
    while (have < length) {
      // Given up: `exchange` stops the stream both ways.
      if (signal?.aborted) return null;
      const read = this.reader.read();
      const chunk = signal ? await abortable(read, signal) : await read;
      if (!chunk || chunk.done) return null;
      this.onBytes();
      const take = Math.min(chunk.value.length, length - have);
      out.set(chunk.value.subarray(0, take), have);
      have += take;
      progress(have);
    }
    return out;
  }
}

/** Resolves with the promise's value, or null as soon as the signal aborts. */
function abortable<T>(promise: Promise<T>, signal: AbortSignal): Promise<T | null> {
  if (signal.aborted) return Promise.resolve(null);
  return new Promise((resolve, reject) => {
    const onAbort = () => resolve(null);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then((v) => {
      signal.removeEventListener('abort', onAbort);
      resolve(v);
    }, (e) => {
      signal.removeEventListener('abort', onAbort);
      reject(e);
    });
  });
}
