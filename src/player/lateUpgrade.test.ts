import { describe, expect, it } from 'vitest';
import { decoder, playOn, scene, ScriptedLink } from '../testing/scriptedLink';
import { LinkEstimates } from '../link/estimates';
import { summarizeQoe } from '../qoe/schema';
import type { QoeLog, QoeSegment } from '../model/qoe';
import { qoeTotalsOf } from '../model/qoeTotals';
import { objectsToAbandon } from './abandon';
import { AdaptivePolicy } from './adaptive';
import { VirtualClock } from './clock';
import { DecodeCostModel } from './decodeBudget';
import { decideUpgrades, type UpgradeContext, upgradesToGiveUp, UPGRADE_URGENCY } from './lateUpgrade';
import { type PlanContext, planSegment } from './plan';
import { FixedModePolicy } from './policy';
import { knapsackRule } from './rules';
import { SegmentRequests } from './segmentRequests';

const test = scene(2);

function context(over: Partial<PlanContext> = {}): PlanContext {
  return {
    scene: test, viewport: { visibleArea: (id) => (id === 'o0' ? 0.5 : 0) }, policy: new FixedModePolicy('qr', knapsackRule),
    segment: 5, deadlineS: 10, nowS: 8, link: { throughputBps: 20e6, loss: { rate: 0, meanBurst: 1 }, rttS: 0.02, minRttS: 0.02, rttSource: 'origin' },
    bufferS: 2, bufferTargetS: 2, previousQuality: new Map(), behind: false, decodeParallelism: 2, decodeCost: new DecodeCostModel(),
    maxQuality: null, hasWebTransport: true, ...over,
  };
}

function upgradeContext(over: Partial<UpgradeContext> = {}): UpgradeContext {
  const base = planSegment(context({ lateUpgrades: true }));
  return { ...context(), base, owedBytes: 0, rateBps: 20e6, checkS: 0.1, ...over };
}

describe('late upgrades: the early plan', () => {
  it('asks for every object\'s lowest rung in the mode\'s delivery when on, the full allocation when off', () => {
    const off = planSegment(context());
    const on = planSegment(context({ lateUpgrades: true }));
    expect(Math.max(...off.map((r) => r.plan.quality))).toBeGreaterThan(0);
    expect(on.map((r) => r.plan.quality)).toEqual([0, 0]);
    expect(on.map((r) => r.plan.delivery)).toEqual(off.map((r) => r.plan.delivery));
  });

  it('leaves `adaptive` and HTTP/2 as they are', () => {
    const adaptive = new AdaptivePolicy();
    const a = planSegment(context({ policy: adaptive, lateUpgrades: true }));
    expect(a.map((r) => r.plan)).toEqual(planSegment(context({ policy: adaptive })).map((r) => r.plan));
    const h2 = planSegment(context({ hasWebTransport: false, lateUpgrades: true }));
    expect(Math.max(...h2.map((r) => r.plan.quality))).toBeGreaterThan(0);
  });
});

describe('late upgrades: the decision', () => {
  it('waits while the time left covers the upgrade, then upgrades the object predicted in view, reliably', () => {
    const early = decideUpgrades(upgradeContext({ nowS: 8 }));
    expect(early.due).toBe(false);
    expect(early.requests.map((r) => r.object.id)).toEqual(['o0']);
    // Due once the time left is about the lead: the link sets the horizon.
    const late = decideUpgrades(upgradeContext({ nowS: 10 - early.leadS }));
    expect(late.due).toBe(true);
    const [up] = late.requests;
    expect(up.upgrade).toBe(true);
    expect(up.plan).toMatchObject({ objectId: 'o0', delivery: 'reliable', urgency: UPGRADE_URGENCY });
    expect(up.plan.quality).toBeGreaterThan(0);
  });

  it('decides earlier behind more queued bytes or on a slower link', () => {
    const lead = decideUpgrades(upgradeContext()).leadS;
    expect(decideUpgrades(upgradeContext({ owedBytes: 1e6 })).leadS).toBeGreaterThan(lead + 0.3);
    expect(decideUpgrades(upgradeContext({ rateBps: 10e6 })).leadS).toBeGreaterThan(lead);
  });

  it('with little time left, asks only for what still arrives in time', () => {
    const roomy = decideUpgrades(upgradeContext({ nowS: 8 })).requests[0].plan.quality;
    const tight = decideUpgrades(upgradeContext({ nowS: 9.55 }));
    expect(tight.due).toBe(true);
    expect(tight.requests.length === 0 || tight.requests[0].plan.quality < roomy).toBe(true);
    const bits = tight.requests.reduce((s, r) => s + r.object.representations[r.plan.quality].bandwidth, 0);
    expect(bits).toBeLessThanOrEqual(20e6 * (0.45 - 0.02 - 0.1));
  });

  it('upgrades nothing out of view and nothing without a throughput measurement', () => {
    const blind = decideUpgrades(upgradeContext({ viewport: { visibleArea: () => 0 } }));
    expect(blind.requests).toEqual([]);
    const unmeasured = decideUpgrades(upgradeContext({ link: { ...context().link, throughputBps: null } }));
    expect(unmeasured.requests).toEqual([]);
  });
});

describe('late upgrades: giving up', () => {
  it('gives up what turned out unseen and what cannot be ready in time; those no longer delay the rest', () => {
    const up = (key: number, over = {}) => ({ key, upgrade: true, deadlineS: 11, remainingBytes: 250_000, decodeS: 0.05, visibleAreaNow: 0.3, ...over });
    // A lowest rung served first is never judged, only waited behind.
    const base = (key: number, bytes: number) => ({ key, upgrade: false, deadlineS: 10, remainingBytes: bytes, decodeS: 0, visibleAreaNow: 0 });
    // 8 Mbit/s: 250 kB in 0.25 s each.
    expect(upgradesToGiveUp([up(0), up(1)], 10, 8e6)).toEqual([]);
    expect(upgradesToGiveUp([up(0, { visibleAreaNow: 0 }), up(1)], 10, 8e6)).toEqual([0]);
    expect(upgradesToGiveUp([up(0, { deadlineS: 10.1 }), up(1, { deadlineS: 10.3 })], 10, 8e6)).toEqual([0]);
    expect(upgradesToGiveUp([base(0, 800_000), up(1), up(2)], 10, 8e6)).toEqual([1, 2]);
    expect(upgradesToGiveUp([up(0), up(1), base(2, 800_000)], 10, 8e6)).toEqual([]);
  });
});

/**
 * A viewer who looks at o0 for 5 s, then o1 for 5 s, and so on; the viewport model predicts
 * perfectly up to 0.8 s ahead and holds the current view beyond (as prediction at long horizons
 * barely beats holding the last pose).
 */
function turningViewer(clock: VirtualClock) {
  const truth = (id: string, s: number) => ((Math.floor(s / 5) % 2 === 0) === (id === 'o0') ? 0.5 : 0);
  return { visibleArea: (id: string, timeMs: number) => truth(id, timeMs / 1000 - clock.now() > 0.8 ? clock.now() : timeMs / 1000) };
}

async function run(lateUpgrades: boolean, rate: (t: number) => number) {
  const clock = new VirtualClock();
  const link = new ScriptedLink(clock, rate);
  const session = await playOn(clock, link, 30, { viewport: turningViewer(clock), lateUpgrades });
  const log = { segments: session.segmentRecords(), freezes: [], playback: { startupS: 0 }, config: { bufferTargetS: 2 } } as unknown as QoeLog;
  return { session, link, summary: summarizeQoe(log), records: session.segmentRecords() };
}

describe('late upgrades: the requests table', () => {
  it('playback and readiness never wait on an upgrade; segments requested meanwhile queue behind it', async () => {
    const clock = new VirtualClock();
    // Fast until the lowest rungs are in, then nothing: the upgrade stays in flight.
    let blocked = false;
    const link = new ScriptedLink(clock, () => (blocked ? 0 : 40e6));
    const tasks = new SegmentRequests({
      clock, decoder, decodeCost: new DecodeCostModel(), link: new LinkEstimates(), contentBase: '/content/test/',
      segmentDurationS: 1, stopped: new AbortController().signal,
    }, { webtransport: link, http2: link });
    tasks.start(5, planSegment(context({ lateUpgrades: true })), 10, 2);
    await clock.run(0.4);
    expect(tasks.awaited(5)).toEqual([]);
    blocked = true;
    const [upgrade] = tasks.addUpgrades(5, decideUpgrades(upgradeContext({ nowS: 8 })).requests, 2);
    await clock.run(1);
    expect(upgrade.settled).toBe(false);
    expect(tasks.awaited(5)).toEqual([]);
    expect(tasks.readyFrom(5)).toBe(1);
    expect(tasks.behind(6)).toBe(true);
    expect(tasks.owedReliable()).toEqual([upgrade]);
    tasks.giveUpUpgrade(upgrade);
    expect(upgrade.abandoned).toBe(true);
    expect(tasks.owedReliable()).toEqual([]);
    expect(tasks.behind(6)).toBe(false);
    expect(tasks.of(5).filter((t) => !t.upgrade).every((t) => t.decoded && !t.abandoned)).toBe(true);
    tasks.abortAll();
    await clock.run();
  });
});

describe('late upgrades: the abandonment rule', () => {
  it('counts an upgrade\'s bytes before what it serves after it, but never judges or gives it up', () => {
    // An upgrade (no deadline for playback) served before a lowest rung due in 0.5 s.
    const upgrade = { key: 0, deadlineS: Infinity, quality: 3, remainingBytes: 1_000_000, lowestBytes: 60_000, decodeS: 0.3, lowestDecodeS: 0.1, visibleArea: 0.01 };
    const lowest = { key: 1, deadlineS: 10.5, quality: 0, remainingBytes: 60_000, lowestBytes: 60_000, decodeS: 0.1, lowestDecodeS: 0.1, visibleArea: 0.4 };
    expect(objectsToAbandon([upgrade, lowest], 10, 8e6, 1)).toEqual([]);
    expect(objectsToAbandon([upgrade, { ...lowest, quality: 2, lowestBytes: 10_000 }], 10, 8e6, 1)).toEqual([1]);
  });
});

describe('late upgrades: playout', () => {
  it('shows the upgrade of what the viewer turned to, where the early plan upgraded what they turned from', async () => {
    const rate = () => 12e6;
    const off = await run(false, rate);
    const on = await run(true, rate);
    expect(on.session.freezeSummary().count).toBe(0);
    expect(off.session.freezeSummary().count).toBe(0);
    expect(on.records.some((r) => r.upgrade && r.onTime)).toBe(true);
    expect(on.summary.meanSeenQuality).toBeGreaterThan(off.summary.meanSeenQuality + 0.3);
  });

  it('an upgrade never holds playback: the lowest rung plays when it does not arrive', async () => {
    // The link dies 3 s in for 20 s: the lowest rungs already there play; upgrades in flight never arrive.
    const { records } = await run(true, (t) => (t >= 3.2 && t < 23 ? 0 : 12e6));
    const upgrades = records.filter((r) => r.upgrade);
    expect(upgrades.length).toBeGreaterThan(0);
    // Every object-segment is one outcome: a shown upgrade supersedes its lower rung.
    const totals = qoeTotalsOf(records as QoeSegment[], 2);
    const keys = new Set(records.map((r) => `${r.object}/${r.index}`));
    expect(totals.outcomes).toBe(keys.size);
    for (const r of records.filter((x) => x.superseded)) {
      expect(records.some((u) => u.upgrade && u.onTime && u.object === r.object && u.index === r.index)).toBe(true);
    }
    // Some upgrade never arrived, and playback waited for none.
    expect(upgrades.some((r) => !r.onTime)).toBe(true);
    expect(upgrades.every((r) => !r.shownLate)).toBe(true);
  });
});
