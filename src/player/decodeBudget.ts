/**
 * Decoding is a resource like bandwidth. The reference paper's player never decoded; ours does,
 * and on a small device four objects at the top quality can take longer to decode than the second
 * they last — every segment then arrives in time and still freezes. So after the delivery policy
 * has chosen qualities for the network, the playout loop fits them to the measured decoding
 * speed: if the segment's predicted decode time exceeds what the decode workers can do in one
 * segment duration, the least visible objects step down first.
 *
 * Cost model: decode time grows with the points decoded (reconstruction, colour, post-processing
 * and the video pictures all scale with the patch area), so the model learns milliseconds per
 * point of a representation's `pointsPerFrame` — an exponentially weighted mean over decoded
 * segments, per segment duration of content.
 */
import type { ObjectPlan } from './policy';

/** Share of the workers' time the plan may fill: the rest absorbs jitter and the first decode. */
export const DECODE_HEADROOM = 0.8;

export class DecodeCostModel {
  private msPerPoint: number | null = null;

  /** Learns from one decoded segment of a representation with `pointsPerFrame` points. */
  observe(pointsPerFrame: number, decodeMs: number): void {
    if (!(pointsPerFrame > 0) || !(decodeMs >= 0)) return;
    const sample = decodeMs / pointsPerFrame;
    this.msPerPoint = this.msPerPoint === null ? sample : 0.7 * this.msPerPoint + 0.3 * sample;
  }

  /** Predicted decode time of a segment of `pointsPerFrame` points (null before any measurement). */
  estimateMs(pointsPerFrame: number): number | null {
    return this.msPerPoint === null ? null : this.msPerPoint * pointsPerFrame;
  }
}

export interface BudgetObject {
  objectId: string;
  /** Points per frame of each quality, ascending with quality. */
  pointsPerFrame: number[];
}

/**
 * Lowers qualities until the segment's predicted decode time fits `capacityMs` (workers × segment
 * duration × headroom): the least visible object that can still step down gives up one quality
 * step at a time (`plans` are most visible first). Unchanged before the model has measured anything.
 */
export function fitDecodeBudget(plans: readonly ObjectPlan[], objects: readonly BudgetObject[], model: DecodeCostModel, capacityMs: number): ObjectPlan[] {
  const out = plans.map((p) => ({ ...p }));
  const ladder = (p: ObjectPlan) => objects.find((o) => o.objectId === p.objectId)?.pointsPerFrame ?? [];
  const fetched = out.filter((p) => p.delivery !== 'skip');
  const cost = () => fetched.reduce((sum, p) => sum + (model.estimateMs(ladder(p)[p.quality] ?? 0) ?? 0), 0);
  if (model.estimateMs(1) === null) return out;
  while (cost() > capacityMs) {
    const victim = [...fetched].reverse().find((p) => p.quality > 0);
    if (!victim) break;
    victim.quality--;
  }
  return out;
}
