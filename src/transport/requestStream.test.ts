import { describe, expect, it } from 'vitest';
import { decodeMessage, encodeMessage, type Message, REQUEST_ID_LIMIT, writeVarint } from './codec';
import { DatagramDemux } from './datagramDemux';
import { LossEstimator } from './loss';
import { InFlightBudget } from './budget';
import { PROTOCOL_MAX_OBJECT_BYTES } from './limits';
import { exchange, nextRequestId, type RequestSession, requestMessage } from './requestStream';
import { RttEstimator } from './rtt';
import { PathRtt } from './pathRtt';
import type { DeliveryStats, ObjectRequest } from './types';

const request = (r: Partial<ObjectRequest> = {}): ObjectRequest => ({ path: '/content/a', delivery: 'datagram', urgency: 3, ...r });

/** A loss estimator that has seen 1 of 10 symbols lost, in one run. */
function measuredLoss(): LossEstimator {
  const loss = new LossEstimator();
  loss.observe({ sent: 10, arrived: [0, 1, 2, 3, 4, 6, 7, 8, 9] });
  return loss;
}

describe('requestMessage', () => {
  it('plans repair from the session’s measured loss unless told otherwise', () => {
    const m = requestMessage(5, request(), measuredLoss());
    expect(m).toMatchObject({ type: 'request', requestId: 5, delivery: 'datagram', fecMode: 'planned', lossPpm: 100_000, burstMilli: 1000, overheadPermille: 0 });
    const given = requestMessage(5, request({ fec: { kind: 'planned', lossRate: 0.02, meanBurstLength: 1.5 } }), measuredLoss());
    expect(given).toMatchObject({ fecMode: 'planned', lossPpm: 20_000, burstMilli: 1500 });
  });

  it('reports the measured loss with fixed repair, and asks no FEC of a reliable request', () => {
    expect(requestMessage(1, request({ fec: { kind: 'fixed', overhead: 0.25 } }), measuredLoss()))
      .toMatchObject({ fecMode: 'fixed', overheadPermille: 250, lossPpm: 100_000, burstMilli: 1000 });
    expect(requestMessage(1, request({ delivery: 'reliable' }), new LossEstimator())).toMatchObject({ fecMode: 'none', lossPpm: 0, burstMilli: 0 });
  });

  it('sends urgency and deadline as whole numbers in range', () => {
    expect(requestMessage(1, request({ urgency: 9.4, deadlineMs: 899.6 }), new LossEstimator())).toMatchObject({ urgency: 7, deadlineMs: 900 });
    expect(requestMessage(1, request({ urgency: -2, deadlineMs: -5 }), new LossEstimator())).toMatchObject({ urgency: 0, deadlineMs: 0 });
  });
});

it('nextRequestId counts 1 … 2^32 − 1 and starts over at 1, never 0', () => {
  expect(nextRequestId(0)).toBe(1);
  expect(nextRequestId(41)).toBe(42);
  expect(nextRequestId(REQUEST_ID_LIMIT - 2)).toBe(REQUEST_ID_LIMIT - 1);
  expect(nextRequestId(REQUEST_ID_LIMIT - 1)).toBe(1);
});

/**
 * A WebTransport whose one stream's far end the test plays as the origin: it reads the REQUEST
 * and answers with `reply`. `stopped` resolves once the client has stopped the stream both ways.
 */
function fakeOrigin(reply: (request: Message) => Uint8Array[]) {
  const up = new TransformStream<Uint8Array, Uint8Array>();
  const down = new TransformStream<Uint8Array, Uint8Array>();
  const received: Message[] = [];
  const origin = down.writable.getWriter();
  const served = (async () => {
    const reader = up.readable.getReader();
    let buffer = new Uint8Array(0);
    for (;;) {
      const decoded = decodeMessage(buffer);
      if (decoded) {
        buffer = buffer.subarray(decoded.consumed);
        received.push(decoded.message);
        if (received.length === 1) for (const chunk of reply(decoded.message)) await origin.write(chunk).catch(() => undefined);
        continue;
      }
      const chunk = await reader.read().catch(() => ({ done: true as const, value: undefined, reset: true }));
      if (chunk.done) return 'reset' in chunk ? 'reset' : 'fin';
      buffer = Uint8Array.from([...buffer, ...chunk.value]);
    }
  })();
  const wt = { createBidirectionalStream: async () => ({ readable: down.readable, writable: up.writable }) } as unknown as WebTransport;
  return { wt, received, served, downClosed: origin.closed.then(() => 'open', () => 'stopped') };
}

/** A session with an RTT estimate that has no sample yet (an hour until one comes). */
function session(): RequestSession & { demux: DatagramDemux } {
  return { demux: new DatagramDemux(), fec: () => { throw new Error('no decoder in this test'); }, rtt: new PathRtt(undefined, new RttEstimator(16, 3_600_000)), loss: new LossEstimator() };
}

/** A datagram of request `id` (one 1-byte symbol). */
function datagram(id: number): Uint8Array {
  const bytes: number[] = [];
  writeVarint(bytes, id);
  return Uint8Array.from([...bytes, 0, 0, 0, 0, 1]);
}

const newStats = (delivery: 'reliable' | 'datagram'): DeliveryStats =>
  ({ delivery, transport: 'webtransport', objectBytes: 0, receivedBytes: 0, requestedAt: performance.now(), recovered: false });

describe('exchange', () => {
  it('sends REQUEST with FIN for a reliable object and reads the object after RESPONSE, taking an RTT sample', async () => {
    const object = Uint8Array.from({ length: 3000 }, (_, i) => i & 0xff);
    const origin = fakeOrigin(() => [encodeMessage({ type: 'response', status: 200, delivery: 'reliable', objectLength: 3000 }), object.subarray(0, 1000), object.subarray(1000)]);
    const s = session();
    let arrivals = 0;
    const progress: number[] = [];
    const result = await exchange(s, origin.wt, 9, request({ delivery: 'reliable', onProgress: (n) => progress.push(n) }), newStats('reliable'), () => arrivals++);
    expect(result.error).toBeUndefined();
    expect(result.bytes).toEqual(object);
    expect(result.stats).toMatchObject({ objectBytes: 3000, receivedBytes: 3000, recovered: true });
    expect(progress.at(-1)).toBe(3000);
    expect(arrivals).toBeGreaterThanOrEqual(2);
    expect(origin.received[0]).toMatchObject({ type: 'request', requestId: 9, fecMode: 'none', path: '/content/a' });
    expect(await origin.served).toBe('fin');
    expect(s.rtt.ms).toBeLessThan(3_600_000); // a sample was taken
  });

  it('records when the last byte came, not when a cut-short request gave up: the wait was no link time', async () => {
    const origin = fakeOrigin(() => [encodeMessage({ type: 'response', status: 200, delivery: 'reliable', objectLength: 3000 }), new Uint8Array(1000)]);
    const abort = new AbortController();
    let firstBytes!: () => void;
    const arrived = new Promise<void>((resolve) => { firstBytes = resolve; });
    const pending = exchange(session(), origin.wt, 4, request({ delivery: 'reliable', signal: abort.signal, onProgress: () => firstBytes() }), newStats('reliable'), () => {});
    await arrived;
    const lastByte = performance.now();
    await new Promise((r) => setTimeout(r, 50));
    const abortedAt = performance.now();
    abort.abort();
    const result = await pending;
    expect(result).toMatchObject({ bytes: null, error: 'cancelled' });
    expect(result.stats.receivedBytes).toBe(1000);
    expect(result.stats.lastByteAt).toBeDefined();
    expect(result.stats.lastByteAt!).toBeLessThanOrEqual(lastByte);
    expect(result.stats.lastByteAt!).toBeLessThan(abortedAt);
  });

  it('fails with the origin’s status and stops the stream both ways', async () => {
    const origin = fakeOrigin(() => [encodeMessage({ type: 'response', status: 404, delivery: 'error', message: 'no such object' })]);
    const s = session();
    const result = await exchange(s, origin.wt, 3, request(), newStats('datagram'), () => {});
    expect(result).toMatchObject({ status: 404, bytes: null, error: 'no such object' });
    expect(await origin.served).toBe('reset');
    expect(await origin.downClosed).toBe('stopped');
    // The request's hold is gone: its late datagrams are dropped.
    s.demux.accept(datagram(3));
    expect(s.demux.dropped).toBe(1);
  });

  it('fails without a stream when none can be opened', async () => {
    const wt = { createBidirectionalStream: async () => { throw new Error('session is closed'); } } as unknown as WebTransport;
    const s = session();
    const result = await exchange(s, wt, 1, request(), newStats('datagram'), () => {});
    expect(result).toMatchObject({ status: 0, bytes: null, error: 'could not open a stream: session is closed' });
    s.demux.accept(datagram(1));
    expect(s.demux.dropped).toBe(1);
  });
});

/**
 * One stream whose far end the test plays as the origin, served only as the client reads (so what
 * the client has started reading is what it pulled): RESPONSE, then the object in two halves,
 * the second once `gate` resolves.
 */
function pulledOrigin(objectLength: number, gate: Promise<void>, onBody: () => void) {
  const half = new Uint8Array(objectLength / 2);
  const chunks: Array<Uint8Array | 'gate'> = [encodeMessage({ type: 'response', status: 200, delivery: 'reliable', objectLength }), half, 'gate', half];
  const readable = new ReadableStream<Uint8Array>({
    async pull(controller) {
      let next = chunks.shift();
      if (next === 'gate') {
        await gate;
        next = chunks.shift();
      }
      if (next === half && chunks.length === 2) onBody();
      if (next) controller.enqueue(next as Uint8Array);
      else controller.close();
    },
  }, { highWaterMark: 0 });
  const writable = new WritableStream<Uint8Array>();
  return { createBidirectionalStream: async () => ({ readable, writable }) } as unknown as WebTransport;
}

describe('exchange with a hostile or buggy origin', () => {
  it('refuses a RESPONSE claiming 4 GiB, or more than the protocol cap, or far more than expected, before allocating it', async () => {
    for (const [objectLength, expectedBytes, limit] of [
      [4 * 2 ** 30, undefined, PROTOCOL_MAX_OBJECT_BYTES],
      [200 * 2 ** 20, undefined, PROTOCOL_MAX_OBJECT_BYTES],
      [3 * 2 ** 20, 500_000, 2_000_000],
    ] as const) {
      const origin = fakeOrigin(() => [encodeMessage({ type: 'response', status: 200, delivery: 'reliable', objectLength })]);
      const s = { ...session(), budget: new InFlightBudget() };
      const result = await exchange(s, origin.wt, 1, request({ delivery: 'reliable', expectedBytes }), newStats('reliable'), () => {});
      expect(result).toMatchObject({ status: 200, bytes: null, error: `object of ${objectLength} bytes is over this request's ${limit}-byte limit` });
      // Nothing was reserved, let alone allocated; the stream was stopped.
      expect(s.budget.peak).toBe(0);
      expect(await origin.downClosed).toBe('stopped');
    }
  });

  it('refuses a datagram RESPONSE whose OTI claims 4 GiB or absurd symbol counts without asking the FEC worker for anything', async () => {
    let opened = 0;
    const fec = { open: () => (opened++, new Promise<Uint8Array>(() => {})), push: () => {}, close: () => {} };
    const oti = (bytes: number[]) => Uint8Array.from(bytes);
    for (const [change, why] of [
      [{ oti: oti([1, 0, 0, 0, 0, 0, 0x04, 0xb0, 1, 0, 1, 8]) }, /transfer length 4294967296 above/],
      [{ oti: oti([0, 0x04, 0, 0, 0, 0, 0, 64, 1, 0, 1, 8]) }, /1048576 symbols in a source block/],
      [{ sourceSymbols: 2 ** 40 }, /source symbols, the OTI/],
    ] as const) {
      const response = Object.assign({
        type: 'response', status: 200, delivery: 'datagram', objectLength: 1000,
        oti: oti([0, 0, 0, 0x03, 0xe8, 0, 0x04, 0xb0, 1, 0, 1, 8]), sourceSymbols: 1, plannedRepair: 2, firstRepairEsi: 10,
      }, change) as Message;
      const origin = fakeOrigin(() => [encodeMessage(response)]);
      const result = await exchange({ ...session(), fec: () => fec }, origin.wt, 1, request(), newStats('datagram'), () => {});
      expect(result.status).toBe(200);
      expect(result.error).toMatch(why);
    }
    expect(opened).toBe(0);
  });

  it('keeps the bytes in flight of many concurrent requests within the budget: the rest wait their turn', async () => {
    const budget = new InFlightBudget(2.5 * 2 ** 20);
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let reading = 0;
    const results = Array.from({ length: 6 }, (_, i) =>
      exchange({ ...session(), budget }, pulledOrigin(2 ** 20, gate, () => reading++), i + 1, request({ delivery: 'reliable' }), newStats('reliable'), () => {}));
    await new Promise((r) => setTimeout(r, 50));
    // Two 1 MiB objects fit 2.5 MiB: only they are being read; four RESPONSEs wait.
    expect(reading).toBe(2);
    expect(budget.inUse).toBe(2 * 2 ** 20);
    release();
    for (const r of await Promise.all(results)) expect(r.bytes).toHaveLength(2 ** 20);
    expect(reading).toBe(6);
    expect(budget.peak).toBeLessThanOrEqual(budget.capacity);
    expect(budget.waited).toBe(4);
    expect(budget.inUse).toBe(0);
  });

  it('fails a request clearly when the budget has no room before its deadline', async () => {
    const budget = new InFlightBudget(2 ** 20);
    const held = await budget.acquire(2 ** 20);
    const origin = fakeOrigin(() => [encodeMessage({ type: 'response', status: 200, delivery: 'reliable', objectLength: 1000 })]);
    const result = await exchange({ ...session(), budget }, origin.wt, 1, request({ delivery: 'reliable', deadlineMs: 30 }), newStats('reliable'), () => {});
    expect(result.status).toBe(408);
    expect(result.error).toMatch(/for 1000 bytes of the 1048576-byte in-flight budget \(1048576 in use\)/);
    held.release();
  });
});
