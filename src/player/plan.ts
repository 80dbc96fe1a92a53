/**
 * Planning one segment, as a pure function of what the player knows. Each decision is taken once,
 * here, in this order (docs/architecture.md → "The player's data path"):
 *
 *   1. rank     — objects by predicted visible area at the segment's playout time (viewport);
 *   2. policy   — quality, delivery and FEC per object (the mode's `DeliveryPolicy`, whose ABR
 *                 rule allocates the throughput);
 *   3. urgency  — RFC 9218 bands from delivery, rank and whether an earlier segment is behind;
 *   4. rules    — the planning-time quality rules (quality.ts: the viewer's quality cap, the decode budget);
 *   5. carrier  — the transport of each request (`transportKind`: HTTP/2 for `h2` or when
 *                 WebTransport is absent, which also makes every request reliable).
 *
 * What later changes a request in flight — abandonment, and the re-request after a lost session —
 * is in the same list of quality rules (quality.ts).
 */
import type { DecodeCostModel } from './decodeBudget';
import type { LinkSnapshot } from '../model/link';
import type { PlanDelivery, PlayerMode } from '../model/modes';
import type { ViewportModel } from '../model/pose';
import type { SceneModel, SceneObject } from '../model/scene';
import type { ObjectTransport } from '../transport/types';
import { rankObjects } from '../viewport/ranking';
import { type DeliveryPolicy, holdsPlayback, type ObjectPlan, type PlanObject } from './policy';
import { applyPlanningRules } from './quality';

export type TransportKind = ObjectTransport['kind'];

/**
 * The transport a mode's requests travel on: HTTP/2 for `h2`, and for every mode when the browser
 * has no WebTransport (the fallback); WebTransport otherwise. The one place this rule is written.
 */
export function transportKind(mode: PlayerMode, hasWebTransport: boolean): TransportKind {
  return mode === 'h2' || !hasWebTransport ? 'http2' : 'webtransport';
}

/**
 * RFC 9218 urgency of a request, from its delivery, its rank (the policy's urgency) and whether
 * an earlier segment is still arriving ("behind"). Four bands, most urgent first:
 *   0–2 reliable objects of the earliest segment in flight, by rank;
 *   3   reliable objects of a segment requested behind an unfinished one;
 *   4–6 datagram objects of the earliest segment in flight, by rank;
 *   7   datagram objects of a segment requested behind.
 * (Reliable objects playback does not wait for go in the datagram bands.)
 * A later segment must not overtake an earlier one (its most visible object would take the link
 * from the earlier segment's last ones: the startup freezes of the first QoE runs), except that
 * a reliable object always goes before a datagram object: a missing reliable object freezes
 * playback, a missing datagram object only keeps its last frame. (With one band for a whole
 * segment behind, the next segment's visible objects waited for the earlier segment's datagram
 * objects still being sent until their deadline, and froze on a dip of the 5G trace.)
 * Equal urgencies are served in request order, which is rank order.
 */
export function requestUrgency(delivery: PlanDelivery, rank: number, behind: boolean, waitedFor = true): number {
  const inBand = Math.min(2, Math.max(0, rank));
  // A reliable object playback does not wait for goes with the datagram objects (policy.ts → `holdsPlayback`).
  if (delivery === 'reliable' && waitedFor) return behind ? 3 : inBand;
  return behind ? 7 : 4 + inBand;
}

/** Everything planning a segment reads; nothing in it is changed. */
export interface PlanContext {
  scene: SceneModel;
  viewport: ViewportModel;
  policy: DeliveryPolicy;
  segment: number;
  /** The segment's playout time and now, on the session clock (seconds). */
  deadlineS: number;
  nowS: number;
  link: LinkSnapshot;
  /** Seconds of content ready ahead of the playhead, and the buffer target now. */
  bufferS: number;
  bufferTargetS: number;
  /** The link starved recently (the buffer target is raised); absent: not known, treated as volatile. */
  linkVolatile?: boolean;
  /** Quality shown per object in the last segment played (absent: none yet). */
  previousQuality: ReadonlyMap<string, number>;
  /** Requests of an earlier segment are still arriving. */
  behind: boolean;
  /** Segments the decoder decodes at once, and what a decode costs. */
  decodeParallelism: number;
  decodeCost: DecodeCostModel;
  /** The highest quality the viewer allows (null: any). */
  maxQuality: number | null;
  hasWebTransport: boolean;
  /**
   * Late upgrades are on (lateUpgrade.ts): where they apply, this early plan asks for every
   * object's lowest rung only, in the mode's delivery, and the upgrades are decided near playout.
   */
  lateUpgrades?: boolean;
}

/** One request of the plan: what to fetch, how, on which transport, and why (its rank). */
export interface PlannedRequest {
  object: SceneObject;
  plan: ObjectPlan;
  transport: TransportKind;
  visibleArea: number;
  rank: number;
  /** A late upgrade over a lower rung already requested (lateUpgrade.ts): playback does not wait for it. */
  upgrade?: boolean;
  /** The throughput estimate the policy planned with (bit/s; absent: none yet), for the QoE record. */
  plannedThroughputBps?: number;
}

/** The requests of one segment, most visible first (one per object). */
export function planSegment(ctx: PlanContext): PlannedRequest[] {
  const { scene } = ctx;
  const ranked = rankObjects(scene.objects.map((o) => o.id), ctx.viewport, ctx.deadlineS * 1000);
  const objects: PlanObject[] = ranked.map((r, rank) => ({
    objectId: r.objectId, visibleArea: r.visibleArea, rank,
    bitrates: objectById(scene, r.objectId).representations.map((rep) => rep.bandwidth),
    previousQuality: ctx.previousQuality.get(r.objectId) ?? -1,
  }));
  // A policy that knows no throughput plans every object's lowest rung (policy.ts).
  const upgradeLater = !!ctx.lateUpgrades && lateUpgradesApply(ctx.policy.mode, ctx.hasWebTransport);
  const networkPlans = ctx.policy.plan({
    segment: ctx.segment, segmentDurationS: scene.segmentDuration, objects,
    throughputBps: upgradeLater ? null : ctx.link.throughputBps, loss: ctx.link.loss, rttS: ctx.link.rttS, minRttS: ctx.link.minRttS,
    timeToDeadlineS: ctx.deadlineS - ctx.nowS, bufferS: ctx.bufferS, bufferTargetS: ctx.bufferTargetS, linkVolatile: ctx.linkVolatile,
  });
  for (const p of networkPlans) p.urgency = requestUrgency(p.delivery, p.urgency, ctx.behind, holdsPlayback(p));
  const plans = applyPlanningRules(networkPlans, { scene, decodeParallelism: ctx.decodeParallelism, decodeCost: ctx.decodeCost, maxQuality: ctx.maxQuality });
  const transport = transportKind(ctx.policy.mode, ctx.hasWebTransport);
  return plans.map((plan) => {
    const object = objectById(scene, plan.objectId);
    const r = objects.find((o) => o.objectId === plan.objectId)!;
    const quality = Math.min(plan.quality, object.representations.length - 1);
    // HTTP/2 carries everything reliably; a skipped object is not fetched at all.
    const carried = transport === 'http2' && plan.delivery !== 'skip'
      ? { ...plan, quality, delivery: 'reliable' as const, fec: { kind: 'none' as const } }
      : { ...plan, quality };
    return { object, plan: carried, transport, visibleArea: r.visibleArea, rank: r.rank, plannedThroughputBps: ctx.link.throughputBps ?? undefined };
  });
}

/**
 * Whether late upgrades act for this mode and carrier. Over HTTP/2 every open response shares the
 * link (abandon.ts → `Serving`), so an upgrade would slow the lowest rungs of later segments;
 * `adaptive` decides quality and delivery jointly per segment (adaptive.ts), not in two steps.
 */
export function lateUpgradesApply(mode: PlayerMode, hasWebTransport: boolean): boolean {
  return hasWebTransport && mode !== 'h2' && mode !== 'adaptive';
}

/** The scene's object of that id; an id the scene lacks is an error. */
export function objectById(scene: SceneModel, id: string): SceneObject {
  const object = scene.objects.find((o) => o.id === id);
  if (!object) throw new Error(`the plan names object "${id}", which the scene does not have`);
  return object;
}
