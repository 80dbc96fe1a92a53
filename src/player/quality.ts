/**
 * Every decision about an object's quality, in one list, in the order they act (dash.js keeps
 * its ABR rules in one collection for the same reason: a reader sees everything that can change
 * a quality in one place). The ABR rule proper (rules.ts: knapsack, priority-greedy, hybrid) is
 * the first, applied by the mode's delivery policy together with delivery and FEC; the others
 * correct it for what the network rule cannot see.
 *
 * | rule              | when                       | what it does                                              |
 * |-------------------|----------------------------|-----------------------------------------------------------|
 * | `allocation`      | planning (policy.ts)       | qualities within the throughput budget (`AbrRule`)        |
 * | `quality-cap`     | planning                   | no object above the viewer's cap (`Player.maxQuality`)    |
 * | `decode-budget`   | planning                   | steps the least visible down until decodes fit the workers |
 * | `abandonment`     | every 0.1 s, in flight     | gives a late reliable request up for the lowest quality, or drops it if out of view |
 * | `session-restore` | a request lost with the session | asks for it again at the lowest quality              |
 */
import { type InFlightObject, objectsToAbandon, type Serving } from './abandon';
import { DECODE_HEADROOM, type DecodeCostModel, fitDecodeBudget } from './decodeBudget';
import type { SceneModel } from '../model/scene';
import type { ObjectPlan } from './policy';

/** What a planning-time rule may read. */
export interface PlanningState {
  scene: SceneModel;
  decodeParallelism: number;
  decodeCost: DecodeCostModel;
  /** The highest ladder index the viewer allows (the controls' quality menu); null = no cap. */
  maxQuality: number | null;
}

/** What an in-flight rule may read. */
export interface InFlightState {
  nowS: number;
  /** The link's rate (bit/s): its busy rate over the last window, else the ABR's estimate. */
  rateBps: number;
  /** Segments due within this many seconds are judged. */
  horizonS: number;
  /** How the origin divides the link among them (abandon.ts; default in order, as the QUIC origin serves). */
  serving?: Serving;
  /** Seconds from asking for a replacement to its first byte: the path's round trip (0 when unknown). */
  requestS?: number;
}

/** One quality rule; each acts at one or more of the three moments. */
export interface QualityRule {
  readonly name: string;
  /** While planning a segment: plans in (most visible first), plans out. */
  plan?(plans: ObjectPlan[], state: PlanningState): ObjectPlan[];
  /** While reliable requests are in flight: the keys of those to give up (abandon.ts → `replacedWhenGivenUp`). */
  abandon?(inFlight: readonly InFlightObject[], state: InFlightState): number[];
  /** A reliable request lost with its session, asked for again once the session is back. */
  reRequest?(plan: ObjectPlan): ObjectPlan;
}

/**
 * The viewer's choice wins over the network's: a cap chosen in the controls (or set in code)
 * lowers every object above it. It acts before the decode budget, which may lower further.
 */
export const qualityCapRule: QualityRule = {
  name: 'quality-cap',
  plan: (plans, { maxQuality }) => (maxQuality === null ? plans : plans.map((p) => (p.quality > maxQuality ? { ...p, quality: Math.max(0, maxQuality) } : p))),
};

export const decodeBudgetRule: QualityRule = {
  name: 'decode-budget',
  plan: (plans, { scene, decodeParallelism, decodeCost }) => fitDecodeBudget(plans, scene.objects.map((o) => ({
    objectId: o.id, pointsPerFrame: o.representations.map((r) => r.pointsPerFrame),
  })), decodeCost, decodeParallelism * scene.segmentDuration * 1000 * DECODE_HEADROOM),
};

export const abandonmentRule: QualityRule = {
  name: 'abandonment',
  abandon: (inFlight, { nowS, rateBps, horizonS, serving, requestS }) => objectsToAbandon(inFlight, nowS, rateBps, horizonS, serving, requestS),
};

/**
 * The lowest quality arrives soonest: the session went down with the link in trouble (or was
 * replaced for stalling) or the origin gone, and the deadline may be near or past.
 */
export const sessionRestoreRule: QualityRule = {
  name: 'session-restore',
  reRequest: (plan) => ({ ...plan, quality: 0 }),
};

/** The rules after the policy's allocation, in the order they act. */
export const QUALITY_RULES: readonly QualityRule[] = [qualityCapRule, decodeBudgetRule, abandonmentRule, sessionRestoreRule];

/** Applies every planning-time rule in turn. */
export function applyPlanningRules(plans: ObjectPlan[], state: PlanningState, rules = QUALITY_RULES): ObjectPlan[] {
  return rules.reduce((out, rule) => (rule.plan ? rule.plan(out, state) : out), plans);
}

/** The union of what the in-flight rules give up, in the order the rules name them. */
export function requestsToAbandon(inFlight: readonly InFlightObject[], state: InFlightState, rules = QUALITY_RULES): number[] {
  const keys: number[] = [];
  for (const rule of rules) for (const key of rule.abandon?.(inFlight, state) ?? []) if (!keys.includes(key)) keys.push(key);
  return keys;
}

/** The plan of a request asked for again after its session was lost. */
export function reRequestPlan(plan: ObjectPlan, rules = QUALITY_RULES): ObjectPlan {
  return rules.reduce((out, rule) => (rule.reRequest ? rule.reRequest(out) : out), plan);
}
