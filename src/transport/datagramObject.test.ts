import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { decodeMessage, type Message, writeVarint } from './codec';
import { DatagramDemux } from './datagramDemux';
import { datagramResponseRefusal, type DatagramResponse, type FecDecoder, receiveDatagramObject, REPAIR_MARGIN } from './datagramObject';
import { LossEstimator } from './loss';
import type { DeliveryStats, ObjectRequest, ObjectResult } from './types';

const REQUEST_ID = 7;
const K = 10;

/** The object size these tests accept. */
const LIMIT = 2 ** 20;

/** A RESPONSE for 10 source symbols of 100 bytes in `blocks` source blocks, 2 repair planned per block. */
function response(blocks = 1): DatagramResponse {
  // transfer length 1000 (bytes 0–4), symbol size 100 (6–7), source blocks, 1 sub-block, alignment 4
  const oti = Uint8Array.from([0, 0, 0, 0x03, 0xe8, 0, 0, 100, blocks, 0, 1, 4]);
  return { type: 'response', status: 200, delivery: 'datagram', objectLength: 1000, oti, sourceSymbols: K, plannedRepair: 2, firstRepairEsi: 12 };
}

function datagram(esi: number, block = 0): Uint8Array {
  const bytes: number[] = [];
  writeVarint(bytes, REQUEST_ID);
  bytes.push(block, 0, 0, esi, ...new Array(100).fill(esi));
  return Uint8Array.from(bytes);
}

function packet(esi: number, block = 0): Uint8Array {
  return Uint8Array.from([block, 0, 0, esi, ...new Array(100).fill(esi)]);
}

/** A decoder that decodes when told to, and records what it was given. */
function fakeFec() {
  let decode!: (object: Uint8Array) => void;
  let fail!: (e: Error) => void;
  const pushedEsis: number[] = [];
  const closed: number[] = [];
  const fec: FecDecoder = {
    open: () => new Promise<Uint8Array>((resolve, reject) => ((decode = resolve), (fail = reject))),
    push: (_id, p) => void pushedEsis.push(p[3]),
    close: (id) => {
      closed.push(id);
      fail(new Error('closed'));
    },
  };
  return { fec, pushedEsis, closed, decode: (object: Uint8Array) => decode(object) };
}

/** The request stream: messages the test sends as the origin, and what the receiver wrote back. */
function fakeStream() {
  const queue: Array<Message | null> = [];
  let waiting: ((m: Message | null) => void) | null = null;
  const written: Message[] = [];
  let closed = false;
  return {
    messages: {
      next: () => new Promise<Message | null>((resolve) => (queue.length ? resolve(queue.shift()!) : (waiting = resolve))),
    },
    writer: {
      write: async (chunk: Uint8Array) => void written.push(decodeMessage(chunk)!.message),
      close: async () => void (closed = true),
    },
    /** The origin sends `m` (null: FIN). */
    send(m: Message | null) {
      if (waiting) {
        const w = waiting;
        waiting = null;
        w(m);
      } else queue.push(m);
    },
    written,
    get closed() {
      return closed;
    },
  };
}

function setup(options: { rttMs?: number; request?: Partial<ObjectRequest>; blocks?: number } = {}) {
  const demux = new DatagramDemux();
  const loss = new LossEstimator();
  const fec = fakeFec();
  const stream = fakeStream();
  const request: ObjectRequest = { path: '/o', delivery: 'datagram', urgency: 3, ...options.request };
  const stats: DeliveryStats = { delivery: 'datagram', transport: 'webtransport', objectBytes: 1000, receivedBytes: 0, requestedAt: performance.now(), recovered: false };
  demux.expect(REQUEST_ID);
  let result: ObjectResult | undefined;
  const start = () => {
    void receiveDatagramObject({ demux, fec: () => fec.fec, rtt: { ms: options.rttMs ?? 100 }, loss }, REQUEST_ID, response(options.blocks), request, stats, stream, LIMIT)
      .then((r) => (result = r));
  };
  return { demux, loss, fec, stream, stats, start, result: () => result };
}

const settle = () => vi.advanceTimersByTimeAsync(0);

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
});
afterEach(() => {
  vi.useRealTimers();
});

describe('receiveDatagramObject', () => {
  it('decodes from early, datagram and stream symbols, ends with FIN, and charges only datagram gaps to loss', async () => {
    const t = setup();
    t.demux.accept(datagram(0));
    t.demux.accept(datagram(1));
    t.start();
    for (const esi of [3, 4, 6]) t.demux.accept(datagram(esi));
    t.stream.send({ type: 'symbol', packet: packet(2) });
    await settle();
    expect(t.fec.pushedEsis).toEqual([0, 1, 3, 4, 6, 2]);
    t.fec.decode(new Uint8Array(1000));
    await settle();
    const result = t.result()!;
    expect(result.status).toBe(200);
    expect(result.bytes).toHaveLength(1000);
    expect(t.stream.closed).toBe(true);
    expect(t.stream.written).toEqual([]);
    expect(t.fec.closed).toEqual([]);
    // Datagrams up to ESI 6 are observed; ESI 2 came on the stream and leaves the count, so 6
    // datagrams were sent and one (ESI 5) lost.
    expect(result.stats).toMatchObject({ symbolsReceived: 6, symbolsOnStream: 1, receivedBytes: 6 * 104, symbolsObserved: 7, symbolsLost: 1, lossBursts: 1, recovered: true });
    expect(t.loss.estimate().rate).toBeCloseTo(1 / 6);
  });

  it('asks for repair about 1.5 RTT after everything planned was sent: the shortfall plus a margin', async () => {
    let allPlannedSent = 0;
    const t = setup({ rttMs: 100, request: { onAllPlannedSent: () => allPlannedSent++ } });
    t.start();
    for (let esi = 0; esi < 6; esi++) t.demux.accept(datagram(esi));
    t.stream.send({ type: 'sent', symbolsSent: 8, nextEsi: 0 });
    await vi.advanceTimersByTimeAsync(1000);
    expect(t.stream.written).toEqual([]); // planned symbols still to come
    expect(allPlannedSent).toBe(0);
    t.stream.send({ type: 'sent', symbolsSent: K + 2, nextEsi: 0 });
    await settle();
    expect(allPlannedSent).toBe(1); // from now on it waits on repair (the link watch leaves it out)
    await vi.advanceTimersByTimeAsync(149);
    expect(t.stream.written).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    const perBlock = K + REPAIR_MARGIN - 6 + REPAIR_MARGIN;
    expect(t.stream.written).toEqual([{ type: 'repair', symbols: perBlock }]);
    expect(t.stats.repairRequests).toBe(1);
    // The repair asked for is now expected: no second request until it has all been sent.
    t.stream.send({ type: 'sent', symbolsSent: K + 2 + perBlock - 1, nextEsi: 0 });
    await vi.advanceTimersByTimeAsync(1000);
    expect(t.stats.repairRequests).toBe(1);
    expect(allPlannedSent).toBe(1); // once
    t.stream.send({ type: 'end', reason: 'completed', symbolsSent: K + 2 + perBlock, purged: 0 });
    await settle();
    expect(t.result()).toMatchObject({ status: 200, bytes: null, error: 'the origin ended the request before the object could be decoded' });
    expect(t.fec.closed).toEqual([REQUEST_ID]);
    expect(t.stream.written.at(-1)).toEqual({ type: 'cancel' });
    expect(t.stats.symbolsSent).toBe(K + 2 + perBlock);
  });

  it('does not ask for repair that could not come before the deadline, and gives up at the deadline with 408', async () => {
    const t = setup({ rttMs: 100, request: { deadlineMs: 1000 } });
    t.start();
    t.demux.accept(datagram(0));
    await vi.advanceTimersByTimeAsync(800);
    t.stream.send({ type: 'sent', symbolsSent: K + 2, nextEsi: 0 });
    await vi.advanceTimersByTimeAsync(150); // 50 ms left: less than 1.5 RTT
    expect(t.stream.written).toEqual([]);
    await vi.advanceTimersByTimeAsync(50);
    expect(t.result()).toMatchObject({ status: 408, bytes: null, error: 'deadline passed before the object could be decoded' });
    expect(t.stats.repairRequests).toBe(0);
    expect(t.stream.written).toEqual([{ type: 'cancel' }]);
    expect(t.fec.closed).toEqual([REQUEST_ID]);
    // The link's work ended with the last symbol, not with the wait for the deadline: that time
    // is what the throughput estimate counts.
    expect(t.stats.lastByteAt! - t.stats.requestedAt).toBe(0);
  });

  it('has no last byte when nothing arrived: an object sent into an outage measured no link time', async () => {
    const t = setup({ rttMs: 100, request: { deadlineMs: 1000 } });
    t.start();
    await vi.advanceTimersByTimeAsync(1000);
    expect(t.result()).toMatchObject({ status: 408, bytes: null });
    expect(t.stats.receivedBytes).toBe(0);
    expect(t.stats.lastByteAt).toBeUndefined();
  });

  it('stops when the request is cancelled: status 0, CANCEL sent', async () => {
    const abort = new AbortController();
    const t = setup({ request: { signal: abort.signal } });
    t.start();
    t.demux.accept(datagram(0));
    abort.abort();
    await settle();
    expect(t.result()).toMatchObject({ status: 0, bytes: null, error: 'cancelled' });
    expect(t.stream.written).toEqual([{ type: 'cancel' }]);
    // One datagram observed, none lost: still a loss observation.
    expect(t.loss.estimate()).toMatchObject({ rate: 0, weight: 1 });
  });

  it('leaves the loss estimate alone for objects of several source blocks', async () => {
    const t = setup({ blocks: 2 });
    t.start();
    t.demux.accept(datagram(0));
    t.demux.accept(datagram(2));
    t.fec.decode(new Uint8Array(1000));
    await settle();
    expect(t.result()!.status).toBe(200);
    expect(t.stats.symbolsObserved).toBeUndefined();
    expect(t.loss.estimate().weight).toBe(0);
  });
});

describe('datagramResponseRefusal', () => {
  it('accepts what the origin sends and refuses a RESPONSE whose OTI disagrees with it or its limit', () => {
    expect(datagramResponseRefusal(response(), LIMIT)).toBeNull();
    expect(datagramResponseRefusal(response(2), LIMIT)).toBeNull();
    const hostile = (change: Partial<DatagramResponse>, oti?: (o: Uint8Array) => void) => {
      const r = { ...response(), ...change } as DatagramResponse;
      r.oti = r.oti.slice();
      oti?.(r.oti);
      return datagramResponseRefusal(r, LIMIT);
    };
    // The OTI claims 4 GiB while the RESPONSE says 1000 bytes.
    expect(hostile({}, (o) => o.set([1, 0, 0, 0, 0], 0))).toMatch(/transfer length 4294967296 above the 1048576-byte limit/);
    expect(hostile({}, (o) => o.set([0, 0, 0, 0x07, 0xd0], 0))).toMatch(/OTI transfer length 2000 is not the object length 1000/);
    expect(hostile({ sourceSymbols: 5_000_000 })).toMatch(/RESPONSE says 5000000 source symbols, the OTI 10/);
    expect(hostile({ firstRepairEsi: 16_000_000 })).toMatch(/first repair ESI 16000000/);
    expect(hostile({ plannedRepair: 1_000_000 })).toMatch(/1000000 repair symbols planned per block of 10/);
    expect(hostile({}, (o) => (o[8] = 0))).toMatch(/0 source blocks/);
    expect(hostile({}, (o) => (o[10] = 0))).toMatch(/0 sub-blocks/);
  });
});
