import { describe, expect, it } from 'vitest';
import { InFlightBudget, InFlightBudgetError } from './budget';
import { EXPECTED_SIZE_FACTOR, MIN_OBJECT_LIMIT_BYTES, objectByteLimit, PROTOCOL_MAX_OBJECT_BYTES } from './limits';

describe('InFlightBudget', () => {
  it('grants in order of asking, a large request not overtaken by smaller ones', async () => {
    const budget = new InFlightBudget(100);
    const a = await budget.acquire(60);
    const order: string[] = [];
    const big = budget.acquire(80).then((r) => (order.push('big'), r));
    const small = budget.acquire(10).then((r) => (order.push('small'), r));
    await Promise.resolve();
    expect(order).toEqual([]); // 10 would fit, but 80 asked first
    a.release();
    a.release(); // idempotent
    const [b, s] = await Promise.all([big, small]);
    expect(order).toEqual(['big', 'small']);
    expect(budget.inUse).toBe(90);
    b.release();
    s.release();
    expect(budget).toMatchObject({ inUse: 0, peak: 90, waited: 2 });
  });

  it('fails clearly: a request larger than the whole budget at once, a wait past its time, an abort', async () => {
    const budget = new InFlightBudget(100);
    await expect(budget.acquire(101)).rejects.toThrow(new InFlightBudgetError('an object of 101 bytes can never fit the 100-byte in-flight budget'));
    const held = await budget.acquire(100);
    await expect(budget.acquire(1, { timeoutMs: 10 })).rejects.toThrow(/waited 10 ms for 1 bytes of the 100-byte in-flight budget \(100 in use\)/);
    const abort = new AbortController();
    const waiting = budget.acquire(50, { signal: abort.signal });
    abort.abort(new Error('gone'));
    await expect(waiting).rejects.toThrow('gone');
    // Requests that gave up are out of the queue: the next one is granted on release.
    const next = budget.acquire(100);
    held.release();
    expect((await next).bytes).toBe(100);
  });
});

describe('objectByteLimit', () => {
  it('is a multiple of the expected size between a floor and the protocol cap', () => {
    expect(objectByteLimit()).toBe(PROTOCOL_MAX_OBJECT_BYTES);
    expect(objectByteLimit(10)).toBe(MIN_OBJECT_LIMIT_BYTES);
    expect(objectByteLimit(3_000_000)).toBe(EXPECTED_SIZE_FACTOR * 3_000_000);
    expect(objectByteLimit(1e12)).toBe(PROTOCOL_MAX_OBJECT_BYTES);
  });
});
