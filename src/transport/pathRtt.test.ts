import { describe, expect, it } from 'vitest';
import { RttEstimator } from './rtt';
import { originDeadlineMs, PATH_REPORT_FRESH_MS, PathRtt } from './pathRtt';

/** A 100-ms path with a little queue, as the origin's PATH report has it. */
const REPORT = { smoothedRttUs: 104_000, minRttUs: 100_000, rttVarUs: 3_000, cwndBytes: 125_000, deliveryRateBytesPerS: 1_000_000 };

describe('PathRtt', () => {
  it('uses the origin’s smoothed RTT, not responses that waited behind more urgent objects', () => {
    let now = 0;
    const rtt = new PathRtt(() => now);
    // Responses queued behind other objects: the loopback demo's 329 ms.
    for (const ms of [329, 410, 380]) rtt.addResponseTime(ms);
    expect(rtt.ms).toBe(329);
    expect(rtt.view().source).toBe('responses');
    rtt.addReport(REPORT);
    now = 100;
    expect(rtt.ms).toBeCloseTo(104);
    expect(rtt.view()).toMatchObject({ rttS: 0.104, minRttS: 0.1, rttVarS: 0.003, source: 'origin', cwndBytes: 125_000, deliveryRateBps: 8e6 });
  });

  it('falls back to the responses once the origin has gone quiet', () => {
    let now = 0;
    const rtt = new PathRtt(() => now, new RttEstimator(16, 50));
    rtt.addReport(REPORT);
    now = PATH_REPORT_FRESH_MS;
    expect(rtt.view().source).toBe('origin');
    now = PATH_REPORT_FRESH_MS + 1;
    expect(rtt.view()).toEqual({ rttS: 0.05, minRttS: 0.05, rttVarS: 0, source: 'responses' });
  });

  it('a report without an RTT sample yet does not count, and a minimum above the smoothed RTT is capped by it', () => {
    const rtt = new PathRtt(() => 0, new RttEstimator(16, 50));
    rtt.addReport({ ...REPORT, smoothedRttUs: 0 });
    expect(rtt.view().source).toBe('responses');
    rtt.addReport({ ...REPORT, minRttUs: 0 });
    expect(rtt.view().minRttS).toBeCloseTo(0.104);
    rtt.addReport({ ...REPORT, minRttUs: 200_000 });
    expect(rtt.view().minRttS).toBeCloseTo(0.104);
  });
});

describe('originDeadlineMs', () => {
  it('takes the round trip off: the REQUEST’s way there and the last symbol’s way back', () => {
    expect(originDeadlineMs(900, 0.1)).toBe(800);
    expect(originDeadlineMs(900, 0)).toBe(900);
    expect(originDeadlineMs(50, 0.1)).toBe(1); // nothing sent now could arrive in time
  });
});
