/**
 * Utility-maximising quality allocation: a multiple-choice knapsack over objects × qualities.
 *
 * Each object must get exactly one quality. Choosing quality q of object o costs its bit rate
 * times (1 + FEC overhead of o) — datagram objects pay for their repair symbols — and is worth
 * `visibleArea(o) × u(q)`, with u the logarithmic utility of bit rate used by BOLA:
 * u(q) = 1 + ln(bitrate_q / bitrate_0). Log utility means doubling the bit rate of a visible object
 * is worth the same anywhere on the ladder, and visibility weighs objects by what the viewer sees.
 *
 * Solved exactly by the multiple-choice knapsack of `mck.ts`; with 4–16 objects, 5 qualities and
 * 512 capacity steps that is well under a millisecond.
 */
import { type Allocation, type AllocationInput, validate } from './abr';
import { solveMultipleChoice } from './mck';

export interface KnapsackInput extends AllocationInput {
  /** Repair symbols as a fraction of source symbols for this object's delivery (0 = none). */
  fecOverhead?: number;
}

/** BOLA's logarithmic utility of quality q on a ladder: 1 + ln(bitrate_q / bitrate_0). */
export function logUtility(bitrates: readonly number[], q: number): number {
  return 1 + Math.log(bitrates[q] / Math.max(bitrates[0], 1));
}

export function utilityKnapsack(objects: KnapsackInput[], budgetBps: number): Allocation {
  validate(objects, budgetBps);
  const groups = objects.map((o) => o.bitrates.map((bitrate, q) => ({
    cost: bitrate * (1 + (o.fecOverhead ?? 0)),
    value: Math.max(o.visibleArea, 0) * logUtility(o.bitrates, q),
  })));
  const picked = solveMultipleChoice(groups, budgetBps);
  return new Map(objects.map((o, i) => [o.objectId, picked[i]]));
}
