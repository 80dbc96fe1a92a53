/**
 * The playout loop's abandonment rule (docs/player.md → "Abandonment") on scripted links: abrupt
 * rate drops, dips and a saw-tooth, 2 and 4 objects, 20 s of each delivery mode that has reliable
 * objects, on a virtual clock, decoding that takes longer at higher qualities (20 + 60·q ms on two
 * workers). A simulation of the loop's decisions, not of the network: the QoE matrix (npm run qoe) decides.
 *
 *   npx tsx scripts/bench/abandon.ts
 */
import { VirtualClock } from '../../src/player/clock';
import type { SegmentDecoder } from '../../src/model/decoder';
import { AdaptivePolicy } from '../../src/player/adaptive';
import { type DeliveryPolicy, FixedModePolicy } from '../../src/player/policy';
import { type PlayerMode } from '../../src/model/modes';
import { knapsackRule } from '../../src/player/rules';
import { qoeTotalsOf } from '../../src/model/qoeTotals';
import { playOn, scene, ScriptedLink } from '../../src/testing/scriptedLink';

const decodeMs = (quality: number) => 20 + 60 * quality;

const scenarios: Array<[string, (t: number) => number]> = [
  ['drop 60 → 3 Mbit/s at 5 s', (t) => (t < 5 ? 60e6 : 3e6)],
  ['drop 60 → 6 Mbit/s at 5 s', (t) => (t < 5 ? 60e6 : 6e6)],
  ['drop 40 → 8 Mbit/s at 6 s', (t) => (t < 6 ? 40e6 : 8e6)],
  ['dip 40 → 4 Mbit/s, 6–9 s', (t) => (t < 6 || t > 9 ? 40e6 : 4e6)],
  ['dip 40 → 10 Mbit/s, 6–8 s', (t) => (t < 6 || t > 8 ? 40e6 : 10e6)],
  ['saw 30 / 5 Mbit/s, 2 s each', (t) => (Math.floor(t) % 4 < 2 ? 30e6 : 5e6)],
];

async function play(rate: (t: number) => number, objects: number, mode: PlayerMode) {
  const clock = new VirtualClock();
  const link = new ScriptedLink(clock, rate);
  const base = scene(objects);
  // Points per frame in proportion to decode time, as in the real content (decodeBudget.ts).
  const sceneModel = { ...base, objects: base.objects.map((o) => ({ ...o, representations: o.representations.map((r, q) => ({ ...r, pointsPerFrame: decodeMs(q) * 100 })) })) };
  const decoder: SegmentDecoder = {
    parallelism: 2,
    decode: async (job) => {
      await clock.sleep(decodeMs(job.quality) / 1000);
      return { frames: [], decodeMs: decodeMs(job.quality) };
    },
  };
  const session = await playOn(clock, link, 20, {
    scene: sceneModel, decoder, policy: policyFor(mode),
    viewport: { visibleArea: (id: string) => (id === 'o0' ? 0.5 : 0.5 / (objects * Number(id.slice(1)))) },
  });
  const freezes = session.freezeSummary();
  // Visible quality as the QoE log defines it (model/qoeTotals.ts): one outcome per object-segment, shown ones only.
  const totals = qoeTotalsOf(session.segmentRecords(), 2);
  return {
    freezes: freezes.count, frozenS: freezes.totalMs / 1000,
    visibleQuality: totals.shownAreaQualitySum / totals.shownAreaSum,
    abandoned: session.segmentRecords().filter((r) => r.abandoned).length,
  };
}

function policyFor(mode: PlayerMode): DeliveryPolicy {
  return mode === 'adaptive' ? new AdaptivePolicy() : new FixedModePolicy(mode, knapsackRule);
}

/** The modes with reliable objects (the only ones the rule acts on). */
const MODES: PlayerMode[] = ['qr', 'qpr-fec', 'adaptive'];

async function main(): Promise<void> {
  console.log(`| link | objects | ${MODES.map((m) => `\`${m}\`: freezes / s frozen · visible quality · abandoned`).join(' | ')} |`);
  console.log(`|---|---|${MODES.map(() => '---').join('|')}|`);
  for (const [name, rate] of scenarios) {
    for (const objects of [2, 4]) {
      const cells: string[] = [];
      for (const mode of MODES) {
        const r = await play(rate, objects, mode);
        cells.push(`${r.freezes} / ${r.frozenS.toFixed(2)} s · ${r.visibleQuality.toFixed(2)} · ${r.abandoned}`);
      }
      console.log(`| ${name} | ${objects} | ${cells.join(' | ')} |`);
    }
  }
}

void main();
