import { afterEach, describe, expect, it, vi } from 'vitest';
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

  it('hands the turn on when the rest should have arrived, even if no byte came since (a lost packet holds TCP)', async () => {
    vi.useFakeTimers();
    const queue = new RequestQueue();
    const head = (await queue.acquire(0))!;
    let nextGranted = false;
    void queue.acquire(0).then(() => { nextGranted = true; });
    head.firstByte(0.05);
    head.progress(50_000, 100_000, 10.5, 10); // 100 kB/s: the rest in 0.5 s, hand on in 0.45 s
    await vi.advanceTimersByTimeAsync(400);
    expect(nextGranted).toBe(false);
    await vi.advanceTimersByTimeAsync(60);
    expect(nextGranted).toBe(true);
  });

  it('re-arms the hand-on from each report; keeps the turn while nothing tells how long the rest takes', async () => {
    vi.useFakeTimers();
    const queue = new RequestQueue();
    const head = (await queue.acquire(0))!;
    let nextGranted = false;
    void queue.acquire(0).then(() => { nextGranted = true; });
    head.progress(90_000, 100_000, 10.9, 10); // no first-byte delay measured yet
    head.firstByte(0.05);
    head.progress(50_000, 0, 10.5, 10); // size unknown
    await vi.advanceTimersByTimeAsync(5_000);
    expect(nextGranted).toBe(false);
    head.progress(10_000, 100_000, 10.1, 10); // 100 kB/s: 0.9 s left, hand on in 0.85 s
    await vi.advanceTimersByTimeAsync(500);
    head.progress(20_000, 100_000, 10.4, 10); // slower, 50 kB/s: 1.6 s left, re-armed for 1.55 s
    await vi.advanceTimersByTimeAsync(1_000);
    expect(nextGranted).toBe(false);
    await vi.advanceTimersByTimeAsync(600);
    expect(nextGranted).toBe(true);
  });

  it('a burst within the first round trip does not read as the rate', async () => {
    const queue = new RequestQueue();
    const head = (await queue.acquire(0))!;
    let nextGranted = false;
    void queue.acquire(0).then(() => { nextGranted = true; });
    head.firstByte(0.05);
    head.progress(16_000, 500_000, 10.001, 10); // 16 kB 1 ms after the first byte
    await settle();
    expect(nextGranted).toBe(false);
    head.release();
  });
});

afterEach(() => {
  vi.useRealTimers();
});
