/**
 * ABR rules behind one interface: given the objects of the next segment (ranked, with their
 * ladders and delivery overhead) and what the player measured, choose a quality per object.
 *
 * - `priority-greedy` — the reference paper's rule: budget = safety × throughput of recent
 *   segments; everyone starts at the lowest quality, then the ranking is walked and each object
 *   raised as far as the budget allows.
 * - `hybrid` — buffer + throughput: the same walk, with a budget scaled by how full the buffer is
 *   relative to its target (a draining buffer makes it cautious, a full one lets it reach higher).
 * - `knapsack` — utility-maximising multiple-choice knapsack weighted by visibility, budgeting
 *   each datagram object's FEC overhead (the default).
 */
import { type Allocation, type AllocationInput, priorityGreedy } from './abr';
import { type KnapsackInput, utilityKnapsack } from './knapsack';

export interface AbrInput {
  /** Most visible first. `fecOverhead` is the repair fraction the object's delivery will add. */
  objects: KnapsackInput[];
  /** Estimated throughput (bit/s), null before anything was measured. */
  throughputBps: number | null;
  /** Seconds of content buffered ahead of the playhead, and the target. */
  bufferS: number;
  bufferTargetS: number;
}

export interface AbrRule {
  readonly name: string;
  allocate(input: AbrInput): Allocation;
}

/** Share of the estimated throughput a rule plans to use: the estimate is a mean, not a floor. */
export const SAFETY = 0.85;

function lowest(objects: AllocationInput[]): Allocation {
  return new Map(objects.map((o) => [o.objectId, 0]));
}

export const priorityGreedyRule: AbrRule = {
  name: 'priority-greedy',
  allocate: ({ objects, throughputBps }) =>
    throughputBps === null ? lowest(objects) : priorityGreedy(objects, SAFETY * throughputBps),
};

export const hybridRule: AbrRule = {
  name: 'hybrid',
  allocate: ({ objects, throughputBps, bufferS, bufferTargetS }) => {
    if (throughputBps === null) return lowest(objects);
    // Below target the budget shrinks with the buffer (down to half when empty); above it may
    // grow by up to 15 %, because a full buffer absorbs a throughput dip.
    const fill = bufferTargetS > 0 ? bufferS / bufferTargetS : 1;
    const factor = Math.min(1.15, Math.max(0.5, 0.5 + 0.5 * fill));
    return priorityGreedy(objects, SAFETY * factor * throughputBps);
  },
};

export const knapsackRule: AbrRule = {
  name: 'knapsack',
  allocate: ({ objects, throughputBps }) =>
    throughputBps === null ? lowest(objects) : utilityKnapsack(objects, SAFETY * throughputBps),
};

export const ABR_RULES: readonly AbrRule[] = [knapsackRule, priorityGreedyRule, hybridRule];

export function abrRule(name: string): AbrRule {
  const rule = ABR_RULES.find((r) => r.name === name);
  if (!rule) throw new Error(`unknown ABR rule "${name}" (${ABR_RULES.map((r) => r.name).join(', ')})`);
  return rule;
}
