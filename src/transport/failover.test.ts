import { describe, expect, it } from 'vitest';
import { FailoverRules } from './failover';

describe('FailoverRules', () => {
  it('one endpoint: a lost session is reopened after a backoff; a second failure falls back to HTTP/2', () => {
    const rules = new FailoverRules(1);
    rules.connected(0);
    expect(rules.next('lost')).toEqual({ kind: 'connect', endpoint: 0, delayMs: 250 });
    expect(rules.next('failed')).toEqual({ kind: 'fall-back' });
  });

  it('two endpoints: a lost session moves to the other endpoint at once', () => {
    const rules = new FailoverRules(2);
    rules.connected(0);
    expect(rules.next('lost')).toEqual({ kind: 'connect', endpoint: 1, delayMs: 0 });
    rules.connected(1);
    expect(rules.current).toBe(1);
    // Counts start again once a session opened: the next loss moves back, at once.
    expect(rules.next('lost')).toEqual({ kind: 'connect', endpoint: 0, delayMs: 0 });
  });

  it('a stalled session is replaced on its own endpoint first, then the others are tried, then HTTP/2', () => {
    const rules = new FailoverRules(2);
    rules.connected(1);
    expect(rules.next('stalled')).toEqual({ kind: 'connect', endpoint: 1, delayMs: 0 });
    expect(rules.next('failed')).toEqual({ kind: 'connect', endpoint: 0, delayMs: 0 });
    expect(rules.next('failed')).toEqual({ kind: 'connect', endpoint: 0, delayMs: 200 });
    expect(rules.next('failed')).toEqual({ kind: 'connect', endpoint: 0, delayMs: 400 });
    expect(rules.next('failed')).toEqual({ kind: 'fall-back' });
  });

  it('a failed attempt at the surviving endpoint is made again soon, before the lost endpoint is tried', () => {
    // The failover flake: the origin in use dies, the first attempt at the other fails with the
    // browser's "Connection lost." (its network service restarting), and the old rules went back
    // to the dead origin and then to HTTP/2, finding the survivor by a probe 7 s later.
    const rules = new FailoverRules(2);
    rules.connected(0);
    expect(rules.next('lost')).toEqual({ kind: 'connect', endpoint: 1, delayMs: 0 });
    expect(rules.next('failed')).toEqual({ kind: 'connect', endpoint: 1, delayMs: 200 });
    expect(rules.next('failed')).toEqual({ kind: 'connect', endpoint: 1, delayMs: 400 });
    // Only then the lost one (after a backoff: it failed in this run), then HTTP/2.
    expect(rules.next('failed')).toEqual({ kind: 'connect', endpoint: 0, delayMs: 250 });
    expect(rules.next('failed')).toEqual({ kind: 'fall-back' });
  });

  it('with three endpoints each survivor gets its retries in turn; the lost endpoint never does', () => {
    const rules = new FailoverRules(3, { survivorRetries: 1 });
    rules.connected(2);
    const causes = ['lost', 'failed', 'failed', 'failed', 'failed', 'failed'] as const;
    const steps = causes.map((cause) => rules.next(cause)).map((s) => (s.kind === 'connect' ? [s.endpoint, s.delayMs] : s.kind));
    expect(steps).toEqual([[0, 0], [0, 200], [1, 0], [1, 200], [2, 250], 'fall-back']);
  });

  it('drain targets: every other endpoint, from the one after the origin in use; none with one endpoint', () => {
    const rules = new FailoverRules(3);
    rules.connected(1);
    expect(rules.drainTargets()).toEqual([2, 0]);
    expect(new FailoverRules(1).drainTargets()).toEqual([]);
  });

  it('an endpoint that already failed in this run is tried again only after a doubling backoff', () => {
    const rules = new FailoverRules(3, { attemptsBeforeFallback: 8, survivorRetries: 0 });
    rules.connected(0);
    const delays = Array.from({ length: 6 }, () => rules.next('failed')).map((s) => (s.kind === 'connect' ? [s.endpoint, s.delayMs] : s.kind));
    expect(delays).toEqual([[1, 0], [2, 0], [0, 250], [1, 500], [2, 1000], [0, 2000]]);
    expect(rules.next('failed')).toEqual({ kind: 'connect', endpoint: 1, delayMs: 4000 });
    expect(rules.next('failed')).toEqual({ kind: 'fall-back' });
  });

  it('on HTTP/2 it probes each endpoint in turn, soon at first and then less often; a session that opens ends the fallback', () => {
    const rules = new FailoverRules(2);
    rules.connected(0);
    rules.next('lost');
    for (let i = 0; i < 3; i++) expect(rules.next('failed').kind).toBe('connect');
    expect(rules.next('failed')).toEqual({ kind: 'fall-back' });
    const probes: Array<[number, number]> = [];
    for (let i = 0; i < 6; i++) {
      const p = rules.nextProbe();
      probes.push([p.endpoint, p.delayMs]);
      rules.probeFailed();
    }
    expect(probes.map(([, d]) => d)).toEqual([2000, 4000, 8000, 16000, 16000, 16000]);
    // The survivor first: the lost endpoint's origin is the likeliest to be gone.
    expect(probes.map(([e]) => e)).toEqual([1, 0, 1, 0, 1, 0]);
    rules.connected(probes[0][0]);
    // Back on WebTransport, a later loss fails over between endpoints again before any fallback.
    expect(rules.next('lost').kind).toBe('connect');
    expect(rules.nextProbe().delayMs).toBe(2000);
  });

  it('needs an endpoint', () => {
    expect(() => new FailoverRules(0)).toThrow(/at least one endpoint/);
  });
});
