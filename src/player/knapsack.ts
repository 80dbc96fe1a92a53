/**
 * Utility-maximising quality allocation: a multiple-choice knapsack over objects × qualities.
 *
 * Each object must get exactly one quality. Choosing quality q of object o costs its bit rate
 * times (1 + FEC overhead of o) — datagram objects pay for their repair symbols — and is worth
 * `visibleArea(o) × u(q)`, with u the logarithmic utility of bit rate used by BOLA:
 * u(q) = 1 + ln(bitrate_q / bitrate_0). Log utility means doubling the bit rate of a visible object
 * is worth the same anywhere on the ladder, and visibility weighs objects by what the viewer sees.
 *
 * Solved exactly by dynamic programming over the budget in fixed steps, O(objects × qualities ×
 * steps); with 4–16 objects, 5 qualities and 512 steps that is well under a millisecond.
 */
import { type Allocation, type AllocationInput, validate } from './abr';

export interface KnapsackInput extends AllocationInput {
  /** Repair symbols as a fraction of source symbols for this object's delivery (0 = none). */
  fecOverhead?: number;
}

/** Budget discretisation: finer is more exact and slower. */
const STEPS = 512;

export function utilityKnapsack(objects: KnapsackInput[], budgetBps: number): Allocation {
  validate(objects, budgetBps);
  const allocation: Allocation = new Map();
  if (objects.length === 0) return allocation;

  const cost = (o: KnapsackInput, q: number) => o.bitrates[q] * (1 + (o.fecOverhead ?? 0));
  const utility = (o: KnapsackInput, q: number) =>
    Math.max(o.visibleArea, 0) * (1 + Math.log(o.bitrates[q] / Math.max(o.bitrates[0], 1)));

  // Every object gets at least its lowest quality, even when that alone exceeds the budget
  // (showing something beats showing nothing); only the rest of the budget is optimised.
  const floor = objects.reduce((sum, o) => sum + cost(o, 0), 0);
  const spare = budgetBps - floor;
  for (const o of objects) allocation.set(o.objectId, 0);
  if (spare <= 0) return allocation;

  const step = spare / STEPS;
  // best[b] = max extra utility using at most b steps of spare budget over the objects so far.
  let best = new Float64Array(STEPS + 1);
  const choices: Int8Array[] = [];
  for (const o of objects) {
    const next = new Float64Array(STEPS + 1).fill(-Infinity);
    const choice = new Int8Array(STEPS + 1);
    for (let q = 0; q < o.bitrates.length; q++) {
      // Round the extra cost up so the chosen allocation never exceeds the budget.
      const extra = Math.ceil((cost(o, q) - cost(o, 0)) / step - 1e-9);
      if (extra > STEPS) break;
      const gain = utility(o, q) - utility(o, 0);
      for (let b = extra; b <= STEPS; b++) {
        const value = best[b - extra] + gain;
        if (value > next[b]) {
          next[b] = value;
          choice[b] = q;
        }
      }
    }
    choices.push(choice);
    best = next;
  }
  // Walk back from the full budget to recover each object's quality.
  let b = STEPS;
  for (let i = objects.length - 1; i >= 0; i--) {
    const o = objects[i];
    const q = choices[i][b];
    allocation.set(o.objectId, q);
    b -= Math.ceil((cost(o, q) - cost(o, 0)) / step - 1e-9);
  }
  return allocation;
}
