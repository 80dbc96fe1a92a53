/**
 * Quality allocation and delivery-mode policy for one segment.
 *
 * Objects arrive ranked by predicted visible area (largest first). The priority-greedy rule
 * (the paper's baseline) starts every object at the lowest quality, then walks the ranking and
 * raises each object as far as the remaining throughput budget allows, so the most visible
 * objects get the budget first.
 */
import type { FixedMode } from '../model/modes';

/** One object to allocate: its visibility and the bit rate (bits/s) of each quality, low → high. */
export interface AllocationInput {
  objectId: string;
  visibleArea: number;
  bitrates: number[];
}

/** Chosen quality index per object id. */
export type Allocation = Map<string, number>;

/** Rejects inputs that would make the allocation meaningless, with a message naming the object. */
export function validate(objects: AllocationInput[], budgetBps: number): void {
  if (!Number.isFinite(budgetBps) || budgetBps < 0) {
    throw new Error(`budget must be a non-negative finite number, got ${budgetBps}`);
  }
  for (const o of objects) {
    if (o.bitrates.length === 0) throw new Error(`object ${o.objectId} has no representations`);
    for (let i = 1; i < o.bitrates.length; i++) {
      if (!(o.bitrates[i] >= o.bitrates[i - 1])) {
        throw new Error(`object ${o.objectId}: bitrates must be ascending`);
      }
    }
  }
}

/** Priority-greedy allocation over a throughput budget (bits/s). */
export function priorityGreedy(objects: AllocationInput[], budgetBps: number): Allocation {
  validate(objects, budgetBps);
  const ranked = [...objects].sort((a, b) => b.visibleArea - a.visibleArea);
  const allocation: Allocation = new Map();
  let remaining = budgetBps;
  for (const o of ranked) {
    allocation.set(o.objectId, 0);
    remaining -= o.bitrates[0];
  }
  for (const o of ranked) {
    let q = 0;
    while (q + 1 < o.bitrates.length && o.bitrates[q + 1] - o.bitrates[q] <= remaining) {
      remaining -= o.bitrates[q + 1] - o.bitrates[q];
      q++;
    }
    allocation.set(o.objectId, q);
  }
  return allocation;
}

/** Delivery modes of docs/player.md; `qpr` keeps the top k objects reliable. */
export interface DeliveryChoice {
  delivery: 'reliable' | 'datagram';
  fec: boolean;
}

/**
 * Delivery per object for a fixed mode. `rankedIds` is most visible first; `k` defaults to half
 * the objects (rounded up) for the partially reliable modes.
 */
export function assignDelivery(
  mode: FixedMode,
  rankedIds: string[],
  k: number = Math.ceil(rankedIds.length / 2),
): Map<string, DeliveryChoice> {
  const out = new Map<string, DeliveryChoice>();
  rankedIds.forEach((id, rank) => {
    switch (mode) {
      case 'h2':
      case 'qr':
        out.set(id, { delivery: 'reliable', fec: false });
        break;
      case 'qpr':
      case 'qpr-fec':
        out.set(
          id,
          rank < k
            ? { delivery: 'reliable', fec: false }
            : { delivery: 'datagram', fec: mode === 'qpr-fec' },
        );
        break;
      case 'q100-fec':
        out.set(id, { delivery: 'datagram', fec: true });
        break;
    }
  });
  return out;
}
