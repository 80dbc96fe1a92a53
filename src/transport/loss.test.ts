import { describe, expect, it } from 'vitest';
import { countLosses, datagramObservation, LossEstimator, sendingIndex } from './loss';

const range = (n: number) => Array.from({ length: n }, (_, i) => i);

describe('countLosses', () => {
  it('counts lost symbols and runs of consecutive losses', () => {
    // lost: 2,3,4 (one run), 7 (one run), 9 (one run, at the end)
    const received = range(10).filter((e) => ![2, 3, 4, 7, 9].includes(e));
    expect(countLosses({ sent: 10, arrived: received })).toEqual({ lost: 5, runs: 3 });
  });

  it('ignores ids outside what was sent and counts a loss at ESI 0 as a run', () => {
    expect(countLosses({ sent: 4, arrived: [1, 2, 3, 99, -1] })).toEqual({ lost: 1, runs: 1 });
  });
});

describe('sendingIndex', () => {
  // K = 80 source symbols; raptorq's repair symbol n carries ESI K' + n (K' = 84 for K = 80).
  it('places source ESIs as they are and repair ESIs after the last source symbol', () => {
    expect(sendingIndex(0, 80, 84)).toBe(0);
    expect(sendingIndex(79, 80, 84)).toBe(79);
    expect(sendingIndex(84, 80, 84)).toBe(80);
    expect(sendingIndex(90, 80, 84)).toBe(86);
  });
  it('rejects ESIs no symbol carries', () => {
    expect(sendingIndex(80, 80, 84)).toBeNull();
    expect(sendingIndex(83, 80, 84)).toBeNull();
    expect(sendingIndex(-1, 80, 84)).toBeNull();
    expect(sendingIndex(100, 80, 10)).toBeNull(); // a first repair ESI below K is malformed
  });
  it('rejects repair ESIs beyond the origin\'s repair budget of max(2K, 32)', () => {
    expect(sendingIndex(84 + 159, 80, 84)).toBe(239); // the 160th repair symbol: the last one
    expect(sendingIndex(84 + 160, 80, 84)).toBeNull();
    expect(sendingIndex(2 ** 24 - 1, 80, 84)).toBeNull(); // would have made the loss span 16 M long
    expect(sendingIndex(4 + 31, 1, 4)).toBe(32); // K = 1: 32 repair symbols
    expect(sendingIndex(4 + 32, 1, 4)).toBeNull();
  });
  it('all repair received after all source is no loss (raw ESIs counted 6 losses here)', () => {
    const arrived = [...range(80), ...[84, 85, 86, 87, 88, 89]].map((esi) => sendingIndex(esi, 80, 84)!);
    expect(countLosses({ sent: 86, arrived })).toEqual({ lost: 0, runs: 0 });
  });
});

describe('datagramObservation', () => {
  it('leaves symbols sent on the stream out of the span, and closes the sequence up around them', () => {
    // Positions 0…9: 3 and 7 went on the stream, 4 and 5 were lost, 9 is beyond the last datagram.
    const o = datagramObservation(9, [0, 1, 2, 6, 8, 9], [3, 7]);
    expect(o.sent).toBe(7);
    expect([...o.arrived].sort((a, b) => a - b)).toEqual([0, 1, 2, 5, 6]);
    expect(countLosses(o)).toEqual({ lost: 2, runs: 1 });
  });

  it('a stream symbol taken from far ahead is neither a loss nor the end of the span', () => {
    const o = datagramObservation(4, [0, 1, 2, 3], [50]);
    expect(o).toEqual({ sent: 4, arrived: [0, 1, 2, 3] });
    expect(countLosses(o).lost).toBe(0);
  });
});

describe('LossEstimator', () => {
  it('reports nothing before any observation', () => {
    expect(new LossEstimator().wireFields()).toEqual({ lossPpm: 0, burstMilli: 0 });
  });

  it('measures a known loss pattern exactly', () => {
    const estimator = new LossEstimator(1e12); // no decay
    // 1000 symbols, bursts of 2 lost every 100 → 2 % loss, mean burst 2
    const received = range(1000).filter((e) => e % 100 >= 2);
    estimator.observe({ sent: 1000, arrived: received });
    expect(estimator.wireFields()).toEqual({ lossPpm: 20_000, burstMilli: 2000 });
  });

  it('follows a change in loss with its half-life', () => {
    const estimator = new LossEstimator(1000);
    const lossy = range(1000).filter((e) => e % 10 !== 0); // 10 %
    for (let i = 0; i < 20; i++) estimator.observe({ sent: 1000, arrived: lossy });
    expect(estimator.estimate().rate).toBeCloseTo(0.1, 6);
    for (let i = 0; i < 3; i++) estimator.observe({ sent: 1000, arrived: range(1000) });
    // three half-lives of clean delivery: the old loss weighs ~1/8 of the total
    expect(estimator.estimate().rate).toBeGreaterThan(0.005);
    expect(estimator.estimate().rate).toBeLessThan(0.02);
  });
});
