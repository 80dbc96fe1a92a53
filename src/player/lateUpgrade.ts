/**
 * Late upgrades: decide late what can be decided late (docs/player.md → "Late upgrades").
 *
 * A segment is requested a buffer target (2 s) before it plays, and ranking objects for a pose
 * that far ahead is barely better than holding the last pose (docs/results.md → "Viewport
 * prediction"). So, with late upgrades on, the early request asks for every object's lowest rung
 * only (in the mode's delivery: nothing freezes for want of it), and shortly before the segment
 * plays this rule ranks the objects again from a fresh prediction and asks for the higher rungs
 * the link affords, reliably, for the objects now predicted in view. How shortly is set by the
 * link, not fixed: the decision waits while the time left still covers the upgrades' bytes behind
 * what is queued before them, at the measured rate, plus a round trip and the decode. An upgrade
 * never holds playback; when it is ready in time the segment shows it instead of the lowest rung
 * (playout.ts → `show`), otherwise the lowest rung plays. While in flight, an upgrade the fresher
 * prediction finds out of view, or one that can no longer be ready in time, is given up.
 *
 * Pure: the upgrade watch (upgradeWatch.ts) supplies the state and acts on the answers.
 */
import { rankObjects } from '../viewport/ranking';
import { objectById, type PlanContext, type PlannedRequest } from './plan';

import type { PlanObject } from './policy';
import { applyPlanningRules } from './quality';
import { SAFETY } from './rules';

/**
 * RFC 9218 urgency of an upgrade: the band of the earliest segment's reliable objects (plan.ts →
 * `requestUrgency`), served after the lowest rungs requested before it, and before the segments
 * requested while it is in flight (they are "behind" it: 3 and 7). Earliest deadline first: an
 * upgrade is due a second or more before the next segments' lowest rungs, and it never delays
 * them past its own playout time (it is given up by then). Behind every later segment's lowest
 * rungs instead (urgency 4, tried first), an upgrade waited for about a segment of bytes and was
 * decided 1.4 s ahead on the 5G driving trace, or given up.
 */
export const UPGRADE_URGENCY = 2;

/** Seconds kept spare between an upgrade's projected readiness and its playout time. */
export const UPGRADE_MARGIN_S = 0.1;

/** What deciding the upgrades of one segment reads, beyond what planning reads. */
export interface UpgradeContext extends PlanContext {
  /** The segment's requests so far (its lowest rungs), one or more per object. */
  base: readonly Pick<PlannedRequest, 'object' | 'plan'>[];
  /** Bytes the origin serves before an upgrade of this segment: the reliable requests still owed at `UPGRADE_URGENCY` or more urgent. */
  owedBytes: number;
  /** The link's rate now (bit/s): its busy rate over the last window, else the ABR's estimate. */
  rateBps: number;
  /** Seconds until the next check: a decision that would be due before then is due now. */
  checkS: number;
}

/** The answer: the upgrades the link affords now, and whether waiting longer would leave too little time for them. */
export interface UpgradeDecision {
  due: boolean;
  requests: PlannedRequest[];
  /** Seconds the upgrades need before playout (round trip, queued and own bytes, decode, margin). */
  leadS: number;
}

/**
 * The upgrades of one segment as the fresh prediction and the link see them now. The budget is
 * the one a segment gets today (`SAFETY` × throughput, per second of content) less its lowest
 * rungs, and no more than can arrive before the playout time behind the bytes queued first.
 */
export function decideUpgrades(ctx: UpgradeContext): UpgradeDecision {
  const { scene } = ctx;
  const d = scene.segmentDuration;
  const timeLeftS = ctx.deadlineS - ctx.nowS;
  const none = { due: false, requests: [], leadS: 0 };
  if (ctx.link.throughputBps === null || !(ctx.rateBps > 0) || timeLeftS <= 0) return none;
  const baseQuality = new Map<string, number>();
  let baseBps = 0;
  for (const b of ctx.base) {
    if (b.plan.delivery === 'skip') continue;
    baseQuality.set(b.object.id, Math.max(baseQuality.get(b.object.id) ?? -1, b.plan.quality));
    baseBps += b.object.representations[b.plan.quality].bandwidth;
  }
  const ranked = rankObjects(scene.objects.map((o) => o.id), ctx.viewport, ctx.deadlineS * 1000);
  const objects: PlanObject[] = ranked.map((r, rank) => ({
    objectId: r.objectId, visibleArea: r.visibleArea, rank,
    bitrates: objectById(ctx.scene, r.objectId).representations.map((rep) => rep.bandwidth),
    previousQuality: ctx.previousQuality.get(r.objectId) ?? -1,
  }));
  // The ABR charges every object its lowest rung and an upgraded one the steps above it; an
  // upgrade costs its whole rung. Objects predicted out of view are not upgraded, so their lowest
  // rungs are given back to the budget (those in view and not upgraded are charged: cautious).
  const outOfViewBps = objects.filter((o) => o.visibleArea <= 0).reduce((sum, o) => sum + o.bitrates[0], 0);
  const upgradesFor = (spendBps: number) => {
    const plans = applyPlanningRules(ctx.policy.plan({
      segment: ctx.segment, segmentDurationS: d, objects,
      throughputBps: Math.max(0, spendBps + outOfViewBps) / SAFETY, loss: ctx.link.loss, rttS: ctx.link.rttS,
      timeToDeadlineS: timeLeftS, bufferS: ctx.bufferS, bufferTargetS: ctx.bufferTargetS,
    }), { scene, decodeParallelism: ctx.decodeParallelism, decodeCost: ctx.decodeCost, maxQuality: ctx.maxQuality });
    const requests: PlannedRequest[] = [];
    let bytes = 0;
    let decodeS = 0;
    for (const plan of plans) {
      const r = objects.find((o) => o.objectId === plan.objectId)!;
      const object = objectById(scene, plan.objectId);
      const quality = Math.min(plan.quality, object.representations.length - 1);
      if (plan.delivery !== 'reliable' || r.visibleArea <= 0 || quality <= (baseQuality.get(plan.objectId) ?? 0)) continue;
      bytes += (object.representations[quality].bandwidth * d) / 8;
      decodeS = Math.max(decodeS, (ctx.decodeCost.estimateMs(object.representations[quality].pointsPerFrame) ?? 0) / 1000);
      requests.push({
        object, transport: 'webtransport', visibleArea: r.visibleArea, rank: r.rank, upgrade: true,
        plan: { objectId: plan.objectId, quality, delivery: 'reliable', fec: { kind: 'none' }, urgency: UPGRADE_URGENCY },
      });
    }
    // Lead: a round trip, the bytes served first and the upgrades' own at the link's rate, the slowest decode, a margin.
    const leadS = ctx.link.rttS + decodeS + UPGRADE_MARGIN_S + (8 * (ctx.owedBytes + bytes)) / (SAFETY * ctx.rateBps);
    return { requests, decodeS, leadS };
  };
  // What the upgrades may spend per second of content: the segment's budget less its lowest rungs,
  // and no more than arrives (and decodes) in time.
  const budgetBps = SAFETY * ctx.link.throughputBps - baseBps;
  const wanted = upgradesFor(budgetBps);
  const inTimeBps = (SAFETY * ctx.rateBps * (timeLeftS - ctx.link.rttS - wanted.decodeS - UPGRADE_MARGIN_S) - 8 * ctx.owedBytes) / d;
  const due = timeLeftS - ctx.checkS <= wanted.leadS;
  if (!due) return { due, requests: wanted.requests, leadS: wanted.leadS };
  const decision = inTimeBps < budgetBps ? upgradesFor(Math.min(budgetBps, inTimeBps)) : wanted;
  return { due, requests: decision.requests, leadS: decision.leadS };
}

/** A reliable request in flight, as the give-up check sees it: an upgrade, or bytes served before the ones after it. */
export interface UpgradeInFlight {
  /** The caller's handle. */
  key: number;
  /** Only upgrades are judged; the others only take the link first. */
  upgrade: boolean;
  /** When its segment plays (session clock, seconds). */
  deadlineS: number;
  /** Bytes still to arrive, and the predicted decode time at its rung. */
  remainingBytes: number;
  decodeS: number;
  /** Visible area the freshest prediction gives its object at the playout time. */
  visibleAreaNow: number;
}

/**
 * Keys of the upgrades to give up now: those whose object the fresh prediction finds out of view,
 * and those that would be ready after their playout time, the reliable requests in flight served
 * one after another (`inFlight` in the origin's serving order). A given-up upgrade no longer
 * delays the requests after it.
 */
export function upgradesToGiveUp(inFlight: readonly UpgradeInFlight[], nowS: number, rateBps: number): number[] {
  const out: number[] = [];
  let ahead = 0;
  for (const u of inFlight) {
    const readyS = nowS + (8 * (ahead + u.remainingBytes)) / rateBps + u.decodeS;
    if (u.upgrade && (u.visibleAreaNow <= 0 || !(rateBps > 0) || readyS > u.deadlineS)) {
      out.push(u.key);
      continue;
    }
    ahead += u.remainingBytes;
  }
  return out;
}
