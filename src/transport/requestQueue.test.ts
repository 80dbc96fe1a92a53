import { describe, expect, it } from 'vitest';
import { RequestQueue, type Turn } from './requestQueue';

/** Lets pending promise callbacks run. */
const settle = () => new Promise((r) => setTimeout(r, 0));

describe('RequestQueue', () => {
  it('grants one request at a time, by urgency, then in request order', async () => {
    const queue = new RequestQueue();
    const order: string[] = [];
    const turns = new Map<string, Turn>();
    const ask = (name: string, urgency: number) => queue.acquire(urgency).then((t) => { order.push(name); turns.set(name, t!); });
    void ask('first', 5);
    await settle();
    void ask('late-low', 6);
    void ask('urgent-a', 0);
    void ask('urgent-b', 0);
    void ask('mid', 3);
    await settle();
    expect(order).toEqual(['first']);
    for (const expected of ['urgent-a', 'urgent-b', 'mid', 'late-low']) {
      turns.get(order[order.length - 1])!.release();
      await settle();
      expect(order[order.length - 1]).toBe(expected);
    }
    expect(queue.pending).toBe(0);
  });

  it('a waiter whose request is cancelled leaves the queue; release is idempotent', async () => {
    const queue = new RequestQueue();
    const head = (await queue.acquire(0))!;
    const abort = new AbortController();
    const cancelled = queue.acquire(1, abort.signal);
    const next = queue.acquire(2);
    abort.abort();
    expect(await cancelled).toBeNull();
    expect(queue.pending).toBe(1);
    head.release();
    head.release();
    const turn = await next;
    expect(turn).not.toBeNull();
    expect(await queue.acquire(0, AbortSignal.abort())).toBeNull();
  });

  it('hands the turn on once the rest of the response arrives sooner than a first byte would', async () => {
    const queue = new RequestQueue();
    const head = (await queue.acquire(0))!;
    let nextGranted = false;
    void queue.acquire(0).then(() => { nextGranted = true; });
    // 100 kB at 1 MB/s from t = 10 s; a first byte takes 0.05 s.
    head.firstByte(0.05);
    head.progress(60_000, 100_000, 10.06, 10); // 0.04 s left at this rate: hand on
    await settle();
    expect(nextGranted).toBe(true);
  });

  it('keeps the turn while the rest takes longer than a first byte, or nothing tells how long it takes', async () => {
    const queue = new RequestQueue();
    const head = (await queue.acquire(0))!;
    let nextGranted = false;
    void queue.acquire(0).then(() => { nextGranted = true; });
    head.progress(90_000, 100_000, 10.9, 10); // no first-byte delay measured yet
    head.firstByte(0.05);
    head.progress(50_000, 100_000, 10.5, 10); // 0.5 s left
    head.progress(50_000, 0, 10.5, 10); // size unknown
    await settle();
    expect(nextGranted).toBe(false);
    head.release();
    await settle();
    expect(nextGranted).toBe(true);
  });
});
