/**
 * Delivery policies: for the next segment, the quality, reliability, FEC and urgency of every
 * object. The fixed modes follow the reference paper (`h2`, `qr`, `qpr`, `qpr-fec`, `q100-fec`,
 * with a degree of reliability Qn = share of objects sent reliably); `adaptive` chooses all of it
 * jointly (adaptive.ts).
 */
import type { PlanDelivery, PlayerMode } from '../model/modes';
import type { FecRequest } from '../transport/types';
import { assignDelivery } from './abr';
import { planningLoss, planRepair } from './fecModel';
import { type LossModel } from '../model/link';
import type { AbrRule } from './rules';

/** Typical RaptorQ symbol payload on a 1350-byte QUIC path (docs/protocol.md §3). */
export const SYMBOL_BYTES = 1200;

export interface PlanObject {
  objectId: string;
  visibleArea: number;
  /** 0 = most visible. */
  rank: number;
  /** Declared bit rate per quality, ascending. */
  bitrates: number[];
  /** Quality shown for this object in the previous segment (-1 = none yet). */
  previousQuality: number;
}

export interface PlanInput {
  segment: number;
  segmentDurationS: number;
  /** Most visible first. */
  objects: PlanObject[];
  throughputBps: number | null;
  loss: LossModel;
  rttS: number;
  /** The path's minimum round trip (propagation, without queueing); absent: `rttS`. */
  minRttS?: number;
  /** Seconds from now until the segment must play. */
  timeToDeadlineS: number;
  /** Seconds of content ready ahead of the playhead (`PlayoutSession.bufferedS`), and the target. */
  bufferS: number;
  bufferTargetS: number;
  /**
   * The link starved recently, so the buffer target is raised (bufferTarget.ts → `volatileAt`).
   * Absent: not known, treated as volatile.
   */
  linkVolatile?: boolean;
}

export interface ObjectPlan {
  objectId: string;
  quality: number;
  delivery: PlanDelivery;
  fec: FecRequest;
  /** RFC 9218 urgency 0 … 7. */
  urgency: number;
  /**
   * False for a reliable object playback does not wait for (`adaptive`'s objects out of view on a
   * long lossy path, adaptive.ts): shown if it has arrived by its playout, else its request is
   * stopped, as a datagram object's; served in the datagram bands (plan.ts). Absent: a reliable
   * object holds playback until it arrives.
   */
  holdsPlayback?: false;
}

/** Whether playback waits for the object of `plan` (a reliable one not planned otherwise). */
export function holdsPlayback(plan: Pick<ObjectPlan, 'delivery' | 'holdsPlayback'>): boolean {
  return plan.delivery === 'reliable' && plan.holdsPlayback !== false;
}

export interface DeliveryPolicy {
  readonly mode: PlayerMode;
  plan(input: PlanInput): ObjectPlan[];
}

/** Repair fraction planned for an object of `bytes` under `loss` (at the origin's target unless `target` is given). */
export function plannedOverhead(bytes: number, loss: LossModel, target?: number): number {
  const k = Math.max(1, Math.ceil(bytes / SYMBOL_BYTES));
  return planRepair(k, loss, target) / k;
}

/**
 * The probability `qpr-fec` plans its up-front repair for: the player plans it with the shared
 * model and asks for fixed FEC; repair on demand makes up the rest while the deadline allows.
 * Its datagram objects are those ranked below the reliable top-k, mostly out of view, and on the
 * driving trace at 5 % loss 70 % instead of the origin's 99 % cut their repair from 35 % to 21 %
 * of their bytes and recovered slightly more of them, the bytes going to the objects in view
 * (docs/results.md → "Abandonment by segment and less FEC up front"). `q100-fec` sends the
 * objects in view as datagrams too and keeps the origin's 99 %.
 */
export const QPR_FEC_TARGET = 0.7;

/**
 * The FEC target a mode plans its up-front repair with: `requested`, else the mode's default.
 * Undefined where the origin plans it (for 99 %) or the mode sends no FEC up front.
 */
export function fecTargetFor(mode: PlayerMode, requested?: number): number | undefined {
  if (mode !== 'qpr-fec' && mode !== 'q100-fec') return undefined;
  return requested ?? (mode === 'qpr-fec' ? QPR_FEC_TARGET : undefined);
}

/** Fixed modes: qualities from the ABR rule, delivery from the mode. */
export class FixedModePolicy implements DeliveryPolicy {
  private readonly fecTarget: number | undefined;

  /**
   * @param reliableCount objects sent reliably in `qpr` / `qpr-fec` (default: half, rounded up);
   *   ignored by the other modes.
   * @param fecTarget the probability the repair sent up front must reach, planned by the player
   *   and asked for as fixed FEC (repair on demand makes up the rest while the deadline allows).
   *   Resolved by `fecTargetFor`; where that is undefined the origin plans (`planned` FEC) for
   *   the protocol's 99 %.
   */
  constructor(
    readonly mode: Exclude<PlayerMode, 'adaptive'>,
    private readonly rule: AbrRule,
    private readonly reliableCount?: number,
    fecTarget?: number,
  ) {
    if (fecTarget !== undefined && !(fecTarget > 0 && fecTarget < 1)) throw new Error(`FEC target must be between 0 and 1 (exclusive), got ${fecTarget}`);
    this.fecTarget = fecTargetFor(mode, fecTarget);
  }

  plan(input: PlanInput): ObjectPlan[] {
    const ids = input.objects.map((o) => o.objectId);
    const deliveries = assignDelivery(this.mode, ids, this.reliableCount ?? Math.ceil(ids.length / 2));
    const objects = input.objects.map((o) => {
      const d = deliveries.get(o.objectId)!;
      const bytes = (o.bitrates[Math.max(0, o.previousQuality)] * input.segmentDurationS) / 8;
      return { ...o, fecOverhead: d.delivery === 'datagram' && d.fec ? plannedOverhead(bytes, planningLoss(input.loss), this.fecTarget) : 0 };
    });
    const allocation = input.segment === 0
      ? new Map(ids.map((id) => [id, 0]))
      : this.rule.allocate({ objects, throughputBps: input.throughputBps, bufferS: input.bufferS, bufferTargetS: input.bufferTargetS });
    const planned = planningLoss(input.loss);
    return input.objects.map((o) => {
      const d = deliveries.get(o.objectId)!;
      const quality = allocation.get(o.objectId) ?? 0;
      let fec: FecRequest = { kind: 'none' };
      if (d.delivery === 'datagram' && d.fec) {
        fec = this.fecTarget === undefined
          ? { kind: 'planned', lossRate: planned.rate, meanBurstLength: planned.meanBurst }
          : { kind: 'fixed', overhead: plannedOverhead((o.bitrates[quality] * input.segmentDurationS) / 8, planned, this.fecTarget) };
      }
      return { objectId: o.objectId, quality, delivery: d.delivery, fec, urgency: Math.min(7, o.rank) };
    });
  }
}

/** Parses a degree of reliability `Q0` … `Q100` into a reliable object count. */
export function reliableCountFromDegree(degree: string, objectCount: number): number {
  const m = /^Q(\d{1,3})$/i.exec(degree.trim());
  if (!m || Number(m[1]) > 100) throw new Error(`degree of reliability must be Q0 … Q100, got "${degree}"`);
  return Math.round((Number(m[1]) / 100) * objectCount);
}
