import { afterEach, describe, expect, it, vi } from 'vitest';
import { InFlightBudget } from './budget';
import { Http2Transport } from './http2';
import { PROTOCOL_MAX_OBJECT_BYTES } from './limits';

const CHUNK = 64 * 1024;

/**
 * A body produced only as it is read, `total` bytes in 64 KiB chunks (the last one shorter);
 * `pulled` counts the bytes the client asked for, `cancelled` whether it gave up on the rest.
 * With `gate`, the second chunk waits for it.
 */
function lazyBody(total: number, gate?: Promise<void>) {
  const body = { pulled: 0, cancelled: false, stream: null as unknown as ReadableStream<Uint8Array> };
  body.stream = new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (body.pulled >= total) return controller.close();
      if (body.pulled > 0 && gate) await gate;
      const n = Math.min(CHUNK, total - body.pulled);
      body.pulled += n;
      controller.enqueue(new Uint8Array(n));
    },
    cancel() {
      body.cancelled = true;
    },
  }, { highWaterMark: 0 });
  return body;
}

/** fetch() answering every request with `respond()`'s body and headers. */
function serve(respond: () => { body: ReadableStream<Uint8Array>; headers?: Record<string, string> }) {
  vi.stubGlobal('fetch', async () => {
    const { body, headers } = respond();
    return new Response(body, { status: 200, headers });
  });
}

afterEach(() => {
  vi.unstubAllGlobals();
});

describe('Http2Transport with a hostile or buggy origin', () => {
  it('refuses a Content-Length of 4 GiB, or far more than expected, before reading the body', async () => {
    for (const [length, expectedBytes, limit] of [[4 * 2 ** 30, undefined, PROTOCOL_MAX_OBJECT_BYTES], [3_000_000, 200_000, 1_048_576]] as const) {
      const body = lazyBody(10 * CHUNK);
      serve(() => ({ body: body.stream, headers: { 'content-length': String(length) } }));
      const budget = new InFlightBudget();
      const result = await new Http2Transport('https://origin.test', budget).fetchObject({ path: '/o', delivery: 'reliable', urgency: 3, expectedBytes });
      expect(result).toMatchObject({ bytes: null, error: `object of ${length} bytes is over this request's ${limit}-byte limit` });
      expect(body.pulled).toBe(0);
      expect(body.cancelled).toBe(true);
      expect(budget.peak).toBe(0);
    }
  });

  it('stops reading a body that runs past its Content-Length', async () => {
    const body = lazyBody(100 * 2 ** 20);
    serve(() => ({ body: body.stream, headers: { 'content-length': '1000' } }));
    const result = await new Http2Transport('https://origin.test', new InFlightBudget()).fetchObject({ path: '/o', delivery: 'reliable', urgency: 3 });
    expect(result).toMatchObject({ bytes: null, error: 'body longer than its Content-Length 1000' });
    expect(body.pulled).toBe(CHUNK);
    expect(body.cancelled).toBe(true);
  });

  it('stops reading a body without a length at the request’s limit', async () => {
    const body = lazyBody(100 * 2 ** 20);
    serve(() => ({ body: body.stream }));
    const budget = new InFlightBudget();
    const result = await new Http2Transport('https://origin.test', budget).fetchObject({ path: '/o', delivery: 'reliable', urgency: 3, expectedBytes: 100_000 });
    expect(result).toMatchObject({ bytes: null, error: "body longer than this request's 1048576-byte limit" });
    expect(body.pulled).toBeLessThanOrEqual(2 ** 20 + CHUNK);
    expect(body.cancelled).toBe(true);
    // The limit was what it reserved while the body came; all of it is back.
    expect(budget.peak).toBe(2 ** 20);
    expect(budget.inUse).toBe(0);
  });

  it('keeps concurrent bodies within the in-flight budget, delivering every object in turn', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const bodies: ReturnType<typeof lazyBody>[] = [];
    serve(() => {
      const body = lazyBody(2 ** 20, gate);
      bodies.push(body);
      return { body: body.stream, headers: { 'content-length': String(2 ** 20) } };
    });
    const budget = new InFlightBudget(2.5 * 2 ** 20);
    const transport = new Http2Transport('https://origin.test', budget);
    const results = Array.from({ length: 6 }, () => transport.fetchObject({ path: '/o', delivery: 'reliable', urgency: 3 }));
    await new Promise((r) => setTimeout(r, 50));
    expect(bodies).toHaveLength(6);
    // Two 1 MiB bodies fit 2.5 MiB: only they are being read.
    expect(bodies.filter((b) => b.pulled > 0)).toHaveLength(2);
    release();
    for (const r of await Promise.all(results)) expect(r.bytes).toHaveLength(2 ** 20);
    expect(budget.peak).toBeLessThanOrEqual(budget.capacity);
    expect(budget.waited).toBe(4);
  });

  it('still takes an ordinary object whole', async () => {
    const body = lazyBody(200_000);
    serve(() => ({ body: body.stream, headers: { 'content-length': '200000' } }));
    const progress: number[] = [];
    const result = await new Http2Transport('https://origin.test', new InFlightBudget()).fetchObject({
      path: '/o', delivery: 'reliable', urgency: 3, expectedBytes: 150_000, onProgress: (n) => progress.push(n),
    });
    expect(result.bytes).toHaveLength(200_000);
    expect(result.stats).toMatchObject({ objectBytes: 200_000, receivedBytes: 200_000, recovered: true });
    expect(progress.at(-1)).toBe(200_000);
  });
});
