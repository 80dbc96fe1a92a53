/**
 * The player's view of the link, in one place: throughput for the ABR (application goodput of
 * each segment's deliveries, measured here), the link watch's busy rate for the buffer target and
 * abandonment (measured here from every received byte), and datagram loss and round-trip time
 * for FEC planning and `adaptive` — those measured by the transport that carries the requests,
 * which sees every symbol, response and PATH report (`ObjectTransport.linkEstimate`), and only
 * read here; which round trip counts is defined once, in pathRtt.ts.
 * The planner reads a `LinkSnapshot` per segment, and the stats read the same snapshot.
 */
import type { LinkSnapshot } from '../model/link';
import type { ObjectTransport } from '../transport/types';
import { ByteArrivals } from './arrivals';
import { type BusyWindow, LinkWatch } from './linkWatch';
import { LinkOutages } from './outages';
import { type DeliverySample, ThroughputEstimator } from './throughput';

/** Segments the throughput estimate averages over (harmonic mean, throughput.ts). */
const THROUGHPUT_WINDOW = 5;

export class LinkEstimates {
  private readonly throughput = new ThroughputEstimator(THROUGHPUT_WINDOW);
  private readonly watch = new LinkWatch();
  private readonly outages = new LinkOutages();
  /**
   * When object bytes arrived, over every request (arrivals.ts): what the throughput estimate
   * counts, and the running total the link watch and the outages sample.
   */
  private readonly arrivals = new ByteArrivals();

  /** Bytes of some object arrived at `atS` (the samples' clock). */
  addBytes(bytes: number, atS: number): void {
    this.arrivals.add(bytes, atS * 1000);
  }

  /** A sample for the link watch (every 50 ms): `busy` when some request still owes bytes. */
  sample(nowS: number, busy: boolean): void {
    this.watch.sample(nowS, this.arrivals.totalBytes, busy);
    this.outages.sample(nowS, this.arrivals.totalBytes, busy);
  }

  /** Bit/s over the last window while requests were in flight throughout it, else null (linkWatch.ts). */
  busyRateBps(): number | null {
    return this.watch.busyRateBps();
  }

  /** The link watch's last window while requests were in flight throughout it, else null (linkWatch.ts). */
  busyWindow(): BusyWindow | null {
    return this.watch.busyWindow();
  }

  /**
   * The deliveries of one shown segment, for the throughput estimate: what the link delivered
   * while they were owed bytes, whichever request the bytes were for; the propagation round trip
   * `carrier` measured comes off each busy period, and the link's outages are not link time
   * (outages.ts; throughput.ts). Returns the segment's sample (bit/s), null if none.
   */
  addSegment(samples: DeliverySample[], carrier: ObjectTransport): number | null {
    const since = Math.min(Infinity, ...samples.map((s) => s.startMs));
    return this.throughput.addSegment(samples, this.snapshot(carrier).minRttS * 1000, this.arrivals, this.outages.spansSince(since));
  }

  /** What the planner and the stats read; loss and RTT as `carrier` measured them. */
  snapshot(carrier: ObjectTransport): LinkSnapshot {
    const { loss, rttS, rtt } = carrier.linkEstimate();
    return {
      throughputBps: this.throughput.estimate(), loss, rttS,
      minRttS: Math.min(rttS, rtt?.minRttS ?? rttS), rttSource: rtt?.source ?? 'responses',
    };
  }

  /** The ABR's throughput estimate (bit/s), null before the first measured segment. */
  throughputBps(): number | null {
    return this.throughput.estimate();
  }
}
