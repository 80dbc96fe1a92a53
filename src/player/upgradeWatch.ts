/**
 * The upgrade watch: every 0.1 s while playing with late upgrades on (lateUpgrade.ts), it decides
 * the upgrades of each segment in flight once they are due, and gives up upgrades in flight that
 * the fresh prediction finds out of view or that can no longer be ready in time.
 */
import type { Clock } from './clock';
import type { ContentClock } from './contentClock';
import type { DecodeCostModel } from './decodeBudget';
import type { LinkEstimates } from '../link/estimates';
import type { ViewportModel } from '../model/pose';
import type { SceneModel } from '../model/scene';
import { decideUpgrades, UPGRADE_URGENCY, type UpgradeInFlight, upgradesToGiveUp } from './lateUpgrade';
import { owedBytes } from './objectTask';
import type { PlanContext, PlannedRequest } from './plan';
import type { SegmentRequests } from './segmentRequests';

/** Seconds between two checks. */
export const UPGRADE_CHECK_S = 0.1;

/** What the watch reads, and what it acts through. */
export interface UpgradeWatchEnv {
  clock: Clock;
  scene: SceneModel;
  viewport: ViewportModel;
  tasks: SegmentRequests;
  link: LinkEstimates;
  content: ContentClock;
  decodeCost: DecodeCostModel;
  /** Late upgrades act now (the option is on, and the mode and carrier take them: `lateUpgradesApply`). */
  active(): boolean;
  /** The WebTransport session is down and being restored. */
  sessionDown(): boolean;
  /** What planning segment k due at `deadlineS` would read now (playout.ts). */
  planContext(k: number, deadlineS: number): PlanContext;
  /** Starts the upgrades of segment k (the loop reports them). */
  upgrade(k: number, requests: PlannedRequest[]): void;
}

/** Runs the checks until `signal` aborts. */
export async function watchUpgrades(env: UpgradeWatchEnv, signal: AbortSignal): Promise<void> {
  const decided = new Set<number>();
  while (!signal.aborted) {
    try {
      await env.clock.sleep(UPGRADE_CHECK_S, signal);
    } catch {
      return;
    }
    const segments = env.tasks.segments();
    for (const k of decided) if (!segments.includes(k)) decided.delete(k);
    if (!env.active() || !env.content.started || env.content.paused || env.sessionDown()) continue;
    const rateBps = env.link.busyRateBps() ?? env.link.throughputBps();
    if (rateBps === null) continue;
    checkUpgrades(env, segments, decided, rateBps);
  }
}

/** One check: decide the segments whose upgrades are due, then give up what the link or the view no longer supports. */
export function checkUpgrades(env: UpgradeWatchEnv, segments: readonly number[], decided: Set<number>, rateBps: number): void {
  const { clock, content, tasks } = env;
  const now = clock.now();
  const playoutS = (k: number) => content.playoutTime(k) + content.haltedFor(now);
  // What the origin serves before a new upgrade: reliable requests at its urgency or more urgent
  // (equal urgencies go in request order, and a new one is the last).
  const ahead = tasks.owedReliable().filter((t) => t.plan.urgency <= UPGRADE_URGENCY)
    .reduce((sum, t) => sum + owedBytes(t, env.scene.segmentDuration), 0);
  for (const k of segments) {
    if (decided.has(k)) continue;
    const base = tasks.of(k);
    const decision = decideUpgrades({ ...env.planContext(k, playoutS(k)), base, owedBytes: ahead, rateBps, checkS: UPGRADE_CHECK_S });
    if (!decision.due) continue;
    decided.add(k);
    if (decision.requests.length > 0) env.upgrade(k, decision.requests);
  }
  const pending = tasks.owedReliable();
  const inFlight: UpgradeInFlight[] = pending.map((t, key) => ({
    key, upgrade: t.upgrade, deadlineS: playoutS(t.index), remainingBytes: owedBytes(t, env.scene.segmentDuration),
    decodeS: (env.decodeCost.estimateMs(t.object.representations[t.plan.quality].pointsPerFrame) ?? 0) / 1000,
    visibleAreaNow: t.upgrade ? env.viewport.visibleArea(t.object.id, playoutS(t.index) * 1000) : 1,
  }));
  for (const key of upgradesToGiveUp(inFlight, now, rateBps)) tasks.giveUpUpgrade(pending[key]);
}
