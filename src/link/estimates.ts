/**
 * The one owner of the player's link estimates: throughput for the ABR, loss and round-trip time
 * for FEC planning and `adaptive`, and the link watch's busy rate for the buffer target and
 * abandonment. Every finished delivery and every received byte comes here; the planner reads a
 * `LinkSnapshot` of it per segment, and the stats read the same snapshot.
 */
import type { LinkSnapshot, LossModel } from '../model/link';
import { RttEstimator } from '../transport/rtt';
import type { ObjectResult } from '../transport/types';
import { LinkWatch } from './linkWatch';
import { type DeliverySample, ThroughputEstimator } from './throughput';

/** Round-trip time assumed before the first response (seconds). */
const DEFAULT_RTT_S = 0.05;
/** Segments the throughput estimate averages over (harmonic mean, throughput.ts). */
const THROUGHPUT_WINDOW = 5;
/** Symbols over which the weight of past loss observations halves. */
const LOSS_HALF_LIFE_SYMBOLS = 5000;

export class LinkEstimates {
  private readonly throughput = new ThroughputEstimator(THROUGHPUT_WINDOW);
  private readonly watch = new LinkWatch();
  private readonly rtt = new RttEstimator(16, DEFAULT_RTT_S * 1000);
  private loss: LossModel = { rate: 0, meanBurst: 1 };
  private lossWeight = 0;
  /** Object bytes received so far, over every request (the link watch's running total). */
  private receivedBytes = 0;

  /** Bytes of some object arrived. */
  addBytes(bytes: number): void {
    this.receivedBytes += Math.max(0, bytes);
  }

  /** A quarter-second sample for the link watch: `busy` when some request still owes bytes. */
  sample(nowS: number, busy: boolean): void {
    this.watch.sample(nowS, this.receivedBytes, busy);
  }

  /** Bit/s over the last window while requests were in flight throughout it, else null (linkWatch.ts). */
  busyRateBps(): number | null {
    return this.watch.busyRateBps();
  }

  /** The deliveries of one shown segment, for the throughput estimate. */
  addSegment(samples: DeliverySample[]): void {
    this.throughput.addSegment(samples);
  }

  /** Updates loss and RTT from a finished delivery. */
  learn(result: ObjectResult): void {
    const s = result.stats;
    if (s.firstByteAt !== undefined && s.delivery === 'reliable') {
      const ttfb = (s.firstByteAt - s.requestedAt) / 1000;
      if (ttfb > 0) this.rtt.add(ttfb * 1000);
    }
    // Loss as the transport observed it: sent − received would count the symbols still in flight
    // when the object decoded (planned repair, unneeded) as lost, which raised the next plan's
    // repair, which raised the count — up to the 2·K cap.
    if (s.delivery === 'datagram' && s.symbolsObserved && s.symbolsLost !== undefined) {
      const sent = s.symbolsObserved, lost = s.symbolsLost;
      const keep = Math.pow(0.5, sent / LOSS_HALF_LIFE_SYMBOLS);
      const total = this.lossWeight * keep + sent;
      this.loss = {
        rate: (this.loss.rate * this.lossWeight * keep + lost) / total,
        meanBurst: s.lossBursts && lost > 0 ? 0.7 * this.loss.meanBurst + 0.3 * Math.max(1, lost / s.lossBursts) : this.loss.meanBurst,
      };
      this.lossWeight = total;
    }
  }

  /** What the planner and the stats read. */
  snapshot(): LinkSnapshot {
    return { throughputBps: this.throughput.estimate(), loss: this.loss, rttS: this.rtt.ms / 1000 };
  }
}
