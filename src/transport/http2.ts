/**
 * `Http2Transport`: the same `ObjectTransport` over `fetch()` to the origin's HTTPS listener
 * (HTTP/2 when the browser negotiates it) — the `h2` baseline and the fallback when WebTransport
 * is missing. Everything is reliable; deadlines are the player's business (abort).
 */
import { fetchWithRetry } from './retry';
import { RttEstimator } from './rtt';
import { TransportStateCell } from './state';
import type { DeliveryStats, LinkMeasurement, ObjectRequest, ObjectResult, ObjectTransport, TransportState } from './types';

export class Http2Transport implements ObjectTransport {
  readonly kind = 'http2' as const;
  private readonly stateCell = new TransportStateCell();
  /** Round-trip time from request → response headers (windowed minimum, rtt.ts). */
  private readonly rtt = new RttEstimator();

  /** @param originBase e.g. `https://origin.example:4433` (paths are appended). */
  constructor(private readonly originBase: string) {}

  get state(): TransportState {
    return this.stateCell.current;
  }

  onStateChange(listener: (state: TransportState) => void): () => void {
    return this.stateCell.listen(listener);
  }

  async connect(): Promise<void> {
    this.stateCell.set('connecting');
    const response = await fetchWithRetry(new URL('/healthz', this.originBase), { cache: 'no-store' });
    if (!response.ok) {
      this.stateCell.set('failed');
      throw new Error(`origin health check: HTTP ${response.status}`);
    }
    this.stateCell.set('connected');
  }

  close(): void {
    this.stateCell.set('closed');
  }

  /** TCP hides loss from the page: only the round-trip time is measured. */
  linkEstimate(): LinkMeasurement {
    return { loss: { rate: 0, meanBurst: 1 }, rttS: this.rtt.ms / 1000 };
  }

  async fetchObject(request: ObjectRequest): Promise<ObjectResult> {
    const requestedAt = performance.now();
    const stats: DeliveryStats = { delivery: 'reliable', transport: 'http2', objectBytes: 0, receivedBytes: 0, requestedAt, recovered: false };
    try {
      const response = await fetch(new URL(request.path, this.originBase), { signal: request.signal, cache: 'no-store' });
      stats.firstByteAt = performance.now();
      this.rtt.add(stats.firstByteAt - requestedAt);
      if (!response.ok || !response.body) {
        await response.body?.cancel();
        return { status: response.status, bytes: null, stats, error: `HTTP ${response.status}` };
      }
      const length = Number(response.headers.get('content-length') ?? 0);
      stats.objectBytes = length;
      const reader = response.body.getReader();
      const chunks: Uint8Array[] = [];
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        chunks.push(value);
        stats.receivedBytes += value.length;
        request.onProgress?.(stats.receivedBytes, length || stats.receivedBytes);
      }
      stats.lastByteAt = performance.now();
      const bytes = new Uint8Array(stats.receivedBytes);
      let offset = 0;
      for (const c of chunks) {
        bytes.set(c, offset);
        offset += c.length;
      }
      if (length && bytes.length !== length) return { status: 200, bytes: null, stats, error: 'body shorter than Content-Length' };
      stats.objectBytes = bytes.length;
      stats.recovered = true;
      return { status: 200, bytes, stats };
    } catch (e) {
      const aborted = request.signal?.aborted;
      return { status: 0, bytes: null, stats, error: aborted ? 'cancelled' : e instanceof Error ? e.message : String(e) };
    }
  }
}
