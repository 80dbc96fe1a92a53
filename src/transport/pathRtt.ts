/**
 * `PathRtt`: the one definition of the round-trip time the player uses — for repair on demand,
 * datagram deadlines, the throughput estimate's round-trip discount, `adaptive` and the stats.
 *
 * Two sources. The origin's PATH reports (docs/protocol.md §3.4) carry its QUIC connection's
 * smoothed RTT (propagation + the bottleneck's queue), minimum RTT (propagation alone) and RTT
 * variation, four times a second. The player's own request → response times (rtt.ts, a windowed
 * minimum) are what is left where there are no reports — HTTP/2, an origin without the path
 * stream, the first quarter second of a session — and they overstate the path: a response waits
 * behind every more urgent object the origin is sending (the demo on loopback showed 329 ms).
 * A report counts while it is younger than `PATH_REPORT_FRESH_MS`.
 */
import { RttEstimator } from './rtt';

/** A report older than this (ms) no longer speaks for the path: the session may be gone or stalled. */
export const PATH_REPORT_FRESH_MS = 2000;

/** What the origin reported (the PATH message's fields, µs and bytes). */
export interface PathReportFields {
  smoothedRttUs: number;
  minRttUs: number;
  rttVarUs: number;
  cwndBytes: number;
  deliveryRateBytesPerS: number;
}

/** The round trip as the player uses it (seconds), and where it came from. */
export interface RttView {
  /** Smoothed path RTT: what a request, or a symbol in flight, takes there and back now. */
  rttS: number;
  /** The path's propagation round trip (no queue): the part of a fetch no bandwidth shortens. */
  minRttS: number;
  /** RTT variation (0 when only responses were measured). */
  rttVarS: number;
  source: 'origin' | 'responses';
  /** The origin's congestion window and delivery-rate estimate (bytes, bit/s), when reported. */
  cwndBytes?: number;
  deliveryRateBps?: number;
}

/**
 * The deadline to give the origin for a datagram object due in `timeLeftMs` (ms, at least 1): the
 * origin counts it from the REQUEST's arrival, half a round trip after it left, and a symbol sent
 * at the deadline needs the other half to arrive, so a whole round trip comes off.
 */
export function originDeadlineMs(timeLeftMs: number, rttS: number): number {
  return Math.max(1, Math.round(timeLeftMs - Math.max(0, rttS) * 1000));
}

export class PathRtt {
  private readonly responses: RttEstimator;
  private report: (PathReportFields & { atMs: number }) | null = null;

  /** @param now the clock reports are dated by (ms) */
  constructor(private readonly now: () => number = () => performance.now(), responses = new RttEstimator()) {
    this.responses = responses;
  }

  /** A request's time from REQUEST to its first response byte (ms). */
  addResponseTime(ms: number): void {
    this.responses.add(ms);
  }

  /** A PATH report from the origin arrived. */
  addReport(report: PathReportFields): void {
    this.report = { ...report, atMs: this.now() };
  }

  /** The RTT to use (ms): the origin's smoothed RTT while its report is fresh, else the responses' minimum. */
  get ms(): number {
    return this.view().rttS * 1000;
  }

  view(): RttView {
    const r = this.report;
    if (r && this.now() - r.atMs <= PATH_REPORT_FRESH_MS && r.smoothedRttUs > 0) {
      const minUs = r.minRttUs > 0 ? Math.min(r.minRttUs, r.smoothedRttUs) : r.smoothedRttUs;
      return {
        rttS: r.smoothedRttUs / 1e6, minRttS: minUs / 1e6, rttVarS: r.rttVarUs / 1e6, source: 'origin',
        cwndBytes: r.cwndBytes, deliveryRateBps: r.deliveryRateBytesPerS * 8,
      };
    }
    const s = this.responses.ms / 1000;
    return { rttS: s, minRttS: s, rttVarS: 0, source: 'responses' };
  }
}
