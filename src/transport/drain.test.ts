import { describe, expect, it } from 'vitest';
import { isDrainRefusal } from './drain';
import type { ObjectResult } from './types';

const result = (status: number, error?: string): ObjectResult => ({
  status, bytes: null, error,
  stats: { delivery: 'reliable', transport: 'webtransport', objectBytes: 0, receivedBytes: 0, requestedAt: 0, recovered: false },
});

// The draining promise and the clean close are followed in real Chromium: e2e/drain.e2e.ts.
describe('drain signals', () => {
  it("a 503 is a drain only with the origin's shutting-down message; a busy origin's 503 is not", () => {
    // The origin's words (server/crates/holoquic-origin/src/quic/delivery.rs).
    expect(isDrainRefusal(result(503, 'the origin is shutting down: ask another'))).toBe(true);
    expect(isDrainRefusal(result(503, 'too many objects being read'))).toBe(false);
    expect(isDrainRefusal(result(500, 'the origin is shutting down: ask another'))).toBe(false);
    expect(isDrainRefusal(result(503))).toBe(false);
  });
});
