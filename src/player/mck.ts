/**
 * Multiple-choice knapsack: pick exactly one option from every group so the total cost stays within
 * a capacity and the total value is largest. The ABR rules (utility allocation, `adaptive` mode)
 * are instances of it.
 *
 * Solved exactly over a discretised capacity by dynamic programming, O(groups × options × steps).
 * The cheapest option of every group is always affordable by construction: when even the sum of
 * the cheapest options exceeds the capacity, the cheapest ones are returned (showing something
 * beats showing nothing), and only the capacity left above that floor is optimised.
 */

export interface Option {
  cost: number;
  value: number;
}

/** Capacity discretisation: finer is more exact and slower. */
const STEPS = 512;

/** Index of the chosen option per group. */
export function solveMultipleChoice(groups: readonly (readonly Option[])[], capacity: number): number[] {
  if (!(capacity >= 0) || !Number.isFinite(capacity)) throw new Error(`capacity must be a non-negative finite number, got ${capacity}`);
  const cheapest = groups.map((options, g) => {
    if (options.length === 0) throw new Error(`group ${g} has no options`);
    let best = 0;
    options.forEach((o, i) => {
      if (!Number.isFinite(o.cost) || o.cost < 0 || Number.isNaN(o.value)) throw new Error(`group ${g} option ${i}: invalid cost/value`);
      if (o.cost < options[best].cost || (o.cost === options[best].cost && o.value > options[best].value)) best = i;
    });
    return best;
  });
  const floor = groups.reduce((sum, options, g) => sum + options[cheapest[g]].cost, 0);
  const spare = capacity - floor;
  if (spare <= 0 || groups.length === 0) return cheapest;

  const step = spare / STEPS;
  // Extra cost in steps, rounded up so the solution never exceeds the capacity.
  const extraSteps = (g: number, i: number) => Math.ceil((groups[g][i].cost - groups[g][cheapest[g]].cost) / step - 1e-9);
  let best = new Float64Array(STEPS + 1);
  const choices: Int16Array[] = [];
  groups.forEach((options, g) => {
    const next = new Float64Array(STEPS + 1).fill(-Infinity);
    const choice = new Int16Array(STEPS + 1);
    const base = options[cheapest[g]].value;
    options.forEach((o, i) => {
      const extra = extraSteps(g, i);
      if (extra > STEPS) return;
      const gain = o.value - base;
      for (let b = extra; b <= STEPS; b++) {
        const value = best[b - extra] + gain;
        if (value > next[b]) {
          next[b] = value;
          choice[b] = i;
        }
      }
    });
    choices.push(choice);
    best = next;
  });
  const picked = new Array<number>(groups.length);
  let b = STEPS;
  for (let g = groups.length - 1; g >= 0; g--) {
    picked[g] = choices[g][b];
    b -= extraSteps(g, picked[g]);
  }
  return picked;
}
