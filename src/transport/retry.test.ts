import { describe, expect, it } from 'vitest';
import { fetchWithRetry, OBJECT_ATTEMPTS, objectRetryDelayS } from './retry';

function scripted(outcomes: Array<number | Error>) {
  const calls: string[] = [];
  const fetchImpl = (async (url: string | URL) => {
    calls.push(String(url));
    const next = outcomes.shift();
    if (next === undefined) throw new Error('no more outcomes');
    if (next instanceof Error) throw next;
    return new Response('body', { status: next });
  }) as typeof fetch;
  return { calls, fetchImpl };
}

const noSleep = { sleep: async () => {}, random: () => 1 };

describe('fetchWithRetry', () => {
  it('retries network errors and transient statuses until one succeeds', async () => {
    const { calls, fetchImpl } = scripted([new TypeError('Failed to fetch'), 503, 200]);
    const delays: number[] = [];
    const response = await fetchWithRetry('https://o/x', {}, { ...noSleep, fetchImpl, onRetry: (_a, _r, d) => delays.push(d) });
    expect(response.status).toBe(200);
    expect(calls.length).toBe(3);
    expect(delays).toEqual([250, 500]);
  });

  it('does not retry a permanent failure', async () => {
    const { calls, fetchImpl } = scripted([404]);
    const response = await fetchWithRetry('https://o/x', {}, { ...noSleep, fetchImpl });
    expect(response.status).toBe(404);
    expect(calls.length).toBe(1);
  });

  it('gives up after the attempts with the last error', async () => {
    const { calls, fetchImpl } = scripted([new TypeError('a'), new TypeError('b'), new TypeError('c')]);
    await expect(fetchWithRetry('https://o/x', {}, { ...noSleep, fetchImpl, attempts: 3 })).rejects.toThrow('c');
    expect(calls.length).toBe(3);
  });

  it('returns the last transient response when attempts run out', async () => {
    const { fetchImpl } = scripted([503, 503]);
    const response = await fetchWithRetry('https://o/x', {}, { ...noSleep, fetchImpl, attempts: 2 });
    expect(response.status).toBe(503);
  });

  it('doubles the delay up to its cap', async () => {
    const { fetchImpl } = scripted([503, 503, 503, 200]);
    const delays: number[] = [];
    await fetchWithRetry('https://o/x', {}, { ...noSleep, fetchImpl, baseDelayMs: 1000, maxDelayMs: 1500, onRetry: (_a, _r, d) => delays.push(d) });
    expect(delays).toEqual([1000, 1500, 1500]);
  });

  it('stops waiting when aborted', async () => {
    const { fetchImpl } = scripted([new TypeError('down'), new TypeError('down')]);
    const controller = new AbortController();
    const pending = fetchWithRetry('https://o/x', { signal: controller.signal }, { fetchImpl, baseDelayMs: 60_000, maxDelayMs: 60_000 });
    controller.abort(new Error('closed'));
    await expect(pending).rejects.toThrow('closed');
  });
});

describe('objectRetryDelayS', () => {
  it('retries a 502 or 504 with a doubling wait while the answer can still arrive before the deadline', () => {
    expect(objectRetryDelayS(502, 1, 10, 12, 0.02, 0.1)).toBe(0.1);
    expect(objectRetryDelayS(504, 2, 10, 12, 0.02, 0.1)).toBe(0.2);
  });

  it('stops after the last attempt, on a permanent status, and when the retry would come too late', () => {
    expect(objectRetryDelayS(502, OBJECT_ATTEMPTS, 10, 12, 0.02, 0.1)).toBeNull();
    expect(objectRetryDelayS(404, 1, 10, 12, 0.02, 0.1)).toBeNull();
    expect(objectRetryDelayS(200, 1, 10, 12, 0.02, 0.1)).toBeNull();
    // 0.1 s wait + 0.02 s round trip + 0.3 s of bytes: 10.42 s, after a deadline at 10.4 s.
    expect(objectRetryDelayS(502, 1, 10, 10.4, 0.02, 0.3)).toBeNull();
  });
});
