/**
 * `adaptive` delivery: per object, quality, reliability and FEC overhead chosen jointly for the
 * next segment, to maximise the expected displayed quality without freezes (the reference paper's
 * future work).
 *
 * Model, per object o and option (quality q, delivery d):
 *  - value = visibility(o) × [u(q) · P(shown) + u_stale · (1 − P(shown))], u = BOLA's log utility
 *    and u_stale the worth of re-showing the previous frame (half the utility of what was shown).
 *  - an object predicted out of view gets the lowest quality as datagrams only (as the utility
 *    allocation of the fixed modes gives it the lowest quality): spending spare capacity on what
 *    is not seen only adds bytes the origin may have to purge at the deadline when the link dips.
 *  - reliable: P(shown) = 1 (the transport retransmits), cost = bytes / (1 − loss), inflated by the
 *    freeze margin: a late reliable object freezes everyone, so it gets headroom. When there is
 *    loss the segment's reliable objects also wait, together, for the last retransmission: one
 *    round trip of capacity per segment, not per object — the origin sends the objects one after
 *    another on one connection, so an early object's retransmission overlaps the later objects'
 *    bytes and only the last one's shows. Charged per object it took 4 × 13 % of the capacity at
 *    a 100-ms round trip (docs/results.md, "Goodput at 50 ms one way", second pass).
 *  - datagram with R repair symbols: P(shown) = P(≥ K + 2 of K + R arrive) under the measured
 *    Gilbert–Elliott loss (fecModel.ts, the origin's own planning model), cost = (K + R) symbols.
 *    R is chosen among a few overheads (plan at 90 %, 99 %, 99.9 %); a datagram object is never
 *    waited for, so it never freezes playback.
 *  - every object is fetched, at least at its cheapest option (as every fixed mode fetches every
 *    object): when even the cheapest options do not fit, the cheapest are sent and the origin's
 *    urgency order (most visible first) and deadlines decide what the link carries. There is no
 *    skip: it was judged against the throughput estimate, which at a 100-ms round trip with loss
 *    undershoots the link (each segment's last retransmission is in it), and a skipped object is
 *    demand the congestion controller never sees — an application-limited sender whose BBR2
 *    lower bounds were cut by a lossy round cannot probe back up, so skips fed themselves (in a
 *    probe at 50 ms and 5 % `adaptive` skipped 78 of 159 objects while the origin's rate
 *    estimate sank to 0.2–5 Mbit/s, where `qr`, fetching everything, kept 7–28; docs/results.md,
 *    "Goodput at 50 ms one way", second pass).
 * The capacity is what the path carries in one segment duration, or until the deadline when that
 * is sooner: segments are requested once per segment duration, so planning with the whole time to
 * a deadline a full buffer pushes further out would commit the same seconds of the link to two
 * segments at once (the first QoE runs froze exactly that way). The options are solved as one
 * multiple-choice knapsack (mck.ts). Without a throughput measurement
 * yet, every object starts at the lowest quality, the most visible half reliably.
 */
import { logUtility } from './knapsack';
import { planningLoss, recoveryProbability } from './fecModel';
import { type LossModel } from '../model/link';
import { solveMultipleChoice } from './mck';
import { type DeliveryPolicy, type ObjectPlan, type PlanInput, SYMBOL_BYTES } from './policy';
import { SAFETY } from './rules';

/** Headroom a reliable object needs over its transfer time. */
export const FREEZE_MARGIN = 1.3;
/**
 * Weight of an object predicted out of view: small, only so that among its datagram options the
 * better-protected one wins when the capacity allows (the prediction may be wrong).
 */
const OUT_OF_VIEW_WEIGHT = 1e-3;
/** Success probabilities the repair options aim for. */
const REPAIR_TARGETS = [0.9, 0.99, 0.999];
/** Datagram bytes on the wire per symbol byte (QUIC + datagram headers). */
const DATAGRAM_FRAMING = 1.04;

export interface Candidate {
  cost: number;
  value: number;
  plan: ObjectPlan;
}

/** Smallest repair count whose recovery probability reaches `target` (≤ 2K). */
export function repairFor(k: number, loss: LossModel, target: number): number {
  if (loss.rate <= 0) return 0;
  let lo = 0, hi = 2 * k;
  if (recoveryProbability(k, hi, loss) < target) return hi;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (recoveryProbability(k, mid, loss) >= target) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

export class AdaptivePolicy implements DeliveryPolicy {
  readonly mode = 'adaptive' as const;

  plan(input: PlanInput): ObjectPlan[] {
    const { objects, rttS } = input;
    // Datagram options are planned for at least the loss floor (fecModel.ts); the reliable
    // option's cost uses what was measured.
    const measured = input.loss;
    const loss = planningLoss(measured);
    if (input.throughputBps === null || input.segment === 0) {
      const half = Math.ceil(objects.length / 2);
      return objects.map((o) => ({
        objectId: o.objectId, quality: 0, urgency: Math.min(7, o.rank),
        delivery: o.rank < half ? 'reliable' : 'datagram',
        fec: o.rank < half ? { kind: 'none' } : { kind: 'planned', lossRate: loss.rate, meanBurstLength: loss.meanBurst },
      }));
    }
    const groups: Candidate[][] = objects.map((o) => {
      const urgency = Math.min(7, o.rank);
      const stale = o.previousQuality >= 0 ? 0.5 * logUtility(o.bitrates, o.previousQuality) : 0;
      const inView = o.visibleArea > 0;
      const weight = inView ? o.visibleArea : OUT_OF_VIEW_WEIGHT;
      const candidates: Candidate[] = [];
      o.bitrates.forEach((bitrate, q) => {
        // Out of view: the lowest quality, and never reliably — a late reliable object freezes the
        // whole scene, which nothing the viewer cannot see is worth.
        if (!inView && q > 0) return;
        const bits = bitrate * input.segmentDurationS;
        const u = logUtility(o.bitrates, q);
        if (inView) candidates.push({
          cost: FREEZE_MARGIN * bits / (1 - Math.min(measured.rate, 0.5)),
          value: weight * u,
          plan: { objectId: o.objectId, quality: q, delivery: 'reliable', fec: { kind: 'none' }, urgency },
        });
        const k = Math.max(1, Math.ceil(bits / 8 / SYMBOL_BYTES));
        const repairs = new Set(REPAIR_TARGETS.map((t) => repairFor(k, loss, t)));
        for (const r of repairs) {
          const shown = recoveryProbability(k, r, loss);
          candidates.push({
            cost: (k + r) * SYMBOL_BYTES * 8 * DATAGRAM_FRAMING,
            value: weight * (u * shown + stale * (1 - shown)),
            plan: { objectId: o.objectId, quality: q, delivery: 'datagram', fec: r === 0 ? { kind: 'none' } : { kind: 'fixed', overhead: r / k }, urgency },
          });
        }
      });
      return candidates;
    });
    const window = Math.max(0, Math.min(input.timeToDeadlineS, input.segmentDurationS));
    const capacity = SAFETY * input.throughputBps * window;
    const retransmitTail = measured.rate > 0 ? FREEZE_MARGIN * input.throughputBps * rttS : 0;
    return pickWithTail(groups, capacity, retransmitTail).map((c) => c.plan);
  }
}

/**
 * The best option per group within `capacity` when choosing any reliable option costs `tail` once
 * (the segment's wait for its last retransmission): the better of the plan with the tail reserved
 * and the plan without reliable options.
 */
export function pickWithTail(groups: readonly Candidate[][], capacity: number, tail: number): Candidate[] {
  const solve = (options: readonly Candidate[][], room: number) =>
    solveMultipleChoice(options, Math.max(0, room)).map((pick, i) => options[i][pick]);
  const withReliable = solve(groups, capacity - tail);
  if (tail <= 0) return withReliable;
  const datagramOnly = solve(groups.map((g) => g.filter((c) => c.plan.delivery !== 'reliable')), capacity);
  const value = (picks: readonly Candidate[]) => picks.reduce((sum, c) => sum + c.value, 0);
  return value(datagramOnly) >= value(withReliable) ? datagramOnly : withReliable;
}
