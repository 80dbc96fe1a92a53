/**
 * `Http2Transport`: the same `ObjectTransport` over `fetch()` to the origin's HTTPS listener
 * (HTTP/2 when the browser negotiates it) — the `h2` baseline and the fallback when WebTransport
 * is missing. Everything is reliable; deadlines are the player's business (abort).
 */
import { type InFlightBudget, type Reservation, sharedInFlightBudget } from './budget';
import { objectByteLimit, objectSizeRefusal } from './limits';
import { fetchWithRetry } from './retry';
import { PathRtt } from './pathRtt';
import { TransportStateCell } from './state';
import type { DeliveryStats, LinkMeasurement, ObjectRequest, ObjectResult, ObjectTransport, TransportState } from './types';

/**
 * Bytes of a response the origin's HTTPS listener lets the kernel hold unsent (its
 * `TCP_UNSENT_LIMIT`, docs/origin.md): what of a cancelled response still leaves after the
 * cancel, besides what is already in the network. The abandonment rule counts it (abandon.ts).
 */
export const HTTP2_ORIGIN_UNSENT_BYTES = 32 * 1024;

export class Http2Transport implements ObjectTransport {
  readonly kind = 'http2' as const;
  private readonly stateCell = new TransportStateCell();
  /** Round-trip time from request → response headers (no path reports over HTTP/2: pathRtt.ts). */
  private readonly rtt = new PathRtt();

  /**
   * @param originBase e.g. `https://origin.example:4433` (paths are appended).
   * @param budget where objects reserve their bytes while they arrive (default: the one shared
   *   with the WebTransport session)
   */
  constructor(private readonly originBase: string, private readonly budget: InFlightBudget = sharedInFlightBudget) {}

  get state(): TransportState {
    return this.stateCell.current;
  }

  onStateChange(listener: (state: TransportState) => void): () => void {
    return this.stateCell.listen(listener);
  }

  /**
   * Ready to carry requests. HTTP/2 needs nothing of ours on the host — any static file server or
   * CDN serves it — so there is no endpoint to ask; with `probe` (a file the host must have, e.g.
   * the manifest when it was read from another host) a HEAD of it checks the host answers.
   */
  async connect(probe?: string): Promise<void> {
    this.stateCell.set('connecting');
    if (probe !== undefined) {
      const url = new URL(probe, this.originBase);
      let response: Response;
      try {
        response = await fetchWithRetry(url, { method: 'HEAD', cache: 'no-store' });
      } catch (e) {
        this.stateCell.set('failed');
        throw new Error(`${url.href}: ${e instanceof Error ? e.message : e}`);
      }
      if (!response.ok) {
        this.stateCell.set('failed');
        throw new Error(`${url.href}: HTTP ${response.status}`);
      }
    }
    this.stateCell.set('connected');
  }

  close(): void {
    this.stateCell.set('closed');
  }

  /** TCP hides loss from the page: only the round-trip time is measured. */
  linkEstimate(): LinkMeasurement {
    const rtt = this.rtt.view();
    return { loss: { rate: 0, meanBurst: 1 }, rttS: rtt.rttS, rtt };
  }

  /**
   * One object over fetch(). The body is capped before it is read: a Content-Length above the
   * request's limit (limits.ts) is refused, the size is reserved in the in-flight budget
   * (budget.ts; the limit itself when the length is not declared), and a body that runs past
   * its Content-Length or the limit is cancelled at the first chunk beyond it.
   */
  async fetchObject(request: ObjectRequest): Promise<ObjectResult> {
    const requestedAt = performance.now();
    const stats: DeliveryStats = { delivery: 'reliable', transport: 'http2', objectBytes: 0, receivedBytes: 0, requestedAt, recovered: false };
    let reservation: Reservation | undefined;
    let reader: ReadableStreamDefaultReader<Uint8Array> | undefined;
    const fail = (error: string): ObjectResult => {
      reader?.cancel().catch(() => undefined);
      return { status: 200, bytes: null, stats, error };
    };
    try {
      const response = await fetch(new URL(request.path, this.originBase), { signal: request.signal, cache: 'no-store' });
      stats.firstByteAt = performance.now();
      this.rtt.addResponseTime(stats.firstByteAt - requestedAt);
      if (!response.ok || !response.body) {
        await response.body?.cancel();
        return { status: response.status, bytes: null, stats, error: `HTTP ${response.status}` };
      }
      reader = response.body.getReader();
      const limit = objectByteLimit(request.expectedBytes);
      const declared = declaredLength(response.headers);
      if (declared === 'invalid') return fail(`invalid Content-Length ${JSON.stringify(response.headers.get('content-length'))}`);
      const refusal = declared === null ? null : objectSizeRefusal(declared, limit);
      if (refusal) return fail(refusal);
      // Without a length, the most the body may grow to is what is reserved.
      const most = declared ?? limit;
      stats.objectBytes = declared ?? 0;
      reservation = await this.budget.acquire(most, { signal: request.signal });
      const whole = declared === null ? null : new Uint8Array(declared);
      const chunks: Uint8Array[] = [];
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        if (stats.receivedBytes + value.length > most) {
          return fail(declared === null ? `body longer than this request's ${limit}-byte limit` : `body longer than its Content-Length ${declared}`);
        }
        if (whole) whole.set(value, stats.receivedBytes);
        else chunks.push(value);
        stats.receivedBytes += value.length;
        request.onProgress?.(stats.receivedBytes, declared || stats.receivedBytes);
      }
      stats.lastByteAt = performance.now();
      if (declared !== null && stats.receivedBytes !== declared) return fail('body shorter than Content-Length');
      const bytes = whole ?? concat(chunks, stats.receivedBytes);
      stats.objectBytes = bytes.length;
      stats.recovered = true;
      return { status: 200, bytes, stats };
    } catch (e) {
      reader?.cancel().catch(() => undefined);
      const aborted = request.signal?.aborted;
      return { status: 0, bytes: null, stats, error: aborted ? 'cancelled' : e instanceof Error ? e.message : String(e) };
    } finally {
      reservation?.release();
    }
  }
}

/**
 * The body's length as the response declares it: null when it does not (no Content-Length, or
 * the body is content-encoded, so its Content-Length counts the encoded bytes, not those read).
 */
function declaredLength(headers: Headers): number | null | 'invalid' {
  const value = headers.get('content-length');
  const encoding = headers.get('content-encoding');
  if (value === null || (encoding !== null && encoding !== 'identity')) return null;
  const length = Number(value);
  return /^\d+$/.test(value.trim()) && Number.isSafeInteger(length) ? length : 'invalid';
}

function concat(chunks: readonly Uint8Array[], length: number): Uint8Array {
  const out = new Uint8Array(length);
  let offset = 0;
  for (const c of chunks) {
    out.set(c, offset);
    offset += c.length;
  }
  return out;
}
