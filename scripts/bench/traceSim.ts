/**
 * The playout loop's decisions on a recorded bandwidth trace, on a virtual clock: the real planner,
 * policy, abandonment and buffer target (src/player), the real viewport model fed a recorded head
 * pose trace, the QoE content's objects and sizes, and a link that carries `goodput` × the scaled
 * trace's rate in the origin's serving order (src/testing/scriptedLink.ts) — no loss, no round
 * trip, no congestion controller. Decoding takes the time it took in the QoE runs on this machine
 * (by rung), two segments at once. Each run starts the player at a different point of the trace's
 * first seconds, as the real runs do (page load and connection time vary).
 *
 * For trying a change to the loop's decisions on many runs in seconds before the QoE matrix
 * (npm run qoe), which decides: the link here is an idealised stand-in for the emulator.
 *
 *   npx tsx scripts/bench/traceSim.ts [--trace ../shared/data/network/5g_driving_lumos5g_103.csv]
 *       [--pose ../shared/data/pose/hhi_hololens/hololens_trace_01.csv] [--content .holoquic/e2e-content]
 *       [--mode adaptive] [--duration 120] [--runs 10] [--goodput 0.85] [--trough 104-118]
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { VirtualClock } from '../../src/player/clock';
import type { DecodeJob, SegmentDecoder } from '../../src/model/decoder';
import { AdaptivePolicy } from '../../src/player/adaptive';
import { parseManifest } from '../../src/player/mpd';
import { type DeliveryPolicy, FixedModePolicy } from '../../src/player/policy';
import { PLAYER_MODES, type PlayerMode } from '../../src/model/modes';
import { knapsackRule } from '../../src/player/rules';
import { qoeTotalsOf } from '../../src/model/qoeTotals';
import { playOn, ScriptedLink } from '../../src/testing/scriptedLink';
import { TracePoseSource } from '../../src/viewport/traceSource';
import { createViewportModel } from '../../src/viewport/visibility';
import { autoTraceScale, parseBandwidthTrace } from '../qoe/lib/matrix';

const { values } = parseArgs({
  options: {
    trace: { type: 'string', default: '../shared/data/network/5g_driving_lumos5g_103.csv' },
    pose: { type: 'string', default: '../shared/data/pose/hhi_hololens/hololens_trace_01.csv' },
    content: { type: 'string', default: '.holoquic/e2e-content' },
    mode: { type: 'string', default: 'adaptive' },
    duration: { type: 'string', default: '120' },
    runs: { type: 'string', default: '10' },
    goodput: { type: 'string', default: '0.85' },
    trough: { type: 'string', default: '104-118' },
    verbose: { type: 'boolean', default: false },
    /** One run starting at this trace second (instead of `runs` spread over 1.5–3 s). */
    start: { type: 'string' },
    /** The buffer target once the link has starved (seconds; default the player's). */
    'volatile-buffer': { type: 'string' },
    /** `FROM-TO:FACTOR`: trace seconds whose rate is multiplied by FACTOR (a deeper trough than the trace's). */
    deepen: { type: 'string' },
  },
});

/** Decode time by rung (ms): the means of the QoE runs on the 2-vCPU machine (reference matrix, 2026-11-29). */
const DECODE_MS = [210, 210, 490, 660, 680];
const DECODE_WORKERS = 2;

const contentDir = resolve(values.content!, 'demo');
const scene = parseManifest(readFileSync(join(contentDir, 'manifest.mpd'), 'utf8'));
// Bytes of each object's rungs: the content loops one segment per rung.
const sizes = new Map<string, number>();
for (const object of readdirSync(contentDir)) {
  const dir = join(contentDir, object);
  if (!statSync(dir).isDirectory()) continue;
  for (const rung of readdirSync(dir)) for (const file of readdirSync(join(dir, rung))) sizes.set(`${object}/${rung}`, statSync(join(dir, rung, file)).size);
}
const objectBytes = (path: string) => {
  const m = /([^/]+)\/([^/]+)\/seg-\d+\.v3c$/.exec(path);
  const bytes = m ? sizes.get(`${m[1]}/${m[2]}`) : undefined;
  if (bytes === undefined) throw new Error(`no object for ${path}`);
  return bytes;
};

const trace = parseBandwidthTrace(readFileSync(values.trace!, 'utf8'));
const scale = autoTraceScale(trace.map((r) => r.mbps), scene.objects.map((o) => o.representations.map((r) => r.bandwidth)));
const goodput = Number(values.goodput);
/**
 * The emulator's floor (scripts/net/topology.sh): tbf needs a positive rate, so a trace's 0-Mbit/s
 * second carries 0.05 Mbit/s there — an outage that trickles.
 */
const EMULATOR_FLOOR_MBPS = 0.05;
/** The trace's rate at trace time t (a step per row, as the emulator plays it), bit/s. */
const deepen = values.deepen ? /^([\d.]+)-([\d.]+):([\d.]+)$/.exec(values.deepen)?.slice(1).map(Number) : undefined;
if (values.deepen && !deepen) throw new Error(`--deepen FROM-TO:FACTOR, got ${values.deepen}`);
const rateAt = (t: number) => {
  let i = 0;
  while (i + 1 < trace.length && trace[i + 1].t <= t) i++;
  const factor = deepen && t >= deepen[0] && t < deepen[1] ? deepen[2] : 1;
  return Math.max(EMULATOR_FLOOR_MBPS, trace[i].mbps * scale * factor) * 1e6 * goodput;
};
const durationS = Number(values.duration);
const poseCsv = readFileSync(values.pose!, 'utf8');
const [troughFrom, troughTo] = values.trough!.split('-').map(Number);

function policyFor(mode: PlayerMode): DeliveryPolicy {
  return mode === 'adaptive' ? new AdaptivePolicy() : new FixedModePolicy(mode, knapsackRule);
}

/** A decoder of `DECODE_WORKERS` workers: jobs wait for a free one, then take their rung's time. */
function decoderOn(clock: VirtualClock): SegmentDecoder {
  let busy = 0;
  const waiting: Array<() => void> = [];
  return {
    parallelism: DECODE_WORKERS,
    decode: async (job: DecodeJob) => {
      if (busy >= DECODE_WORKERS) await new Promise<void>((go) => waiting.push(go));
      busy++;
      const ms = DECODE_MS[Math.min(job.quality, DECODE_MS.length - 1)];
      await clock.sleep(ms / 1000);
      busy--;
      waiting.shift()?.();
      return { frames: [], decodeMs: ms };
    },
  };
}

async function run(startS: number, mode: PlayerMode) {
  const clock = new VirtualClock();
  const link = new ScriptedLink(clock, (t) => rateAt(t + startS), objectBytes);
  const viewport = createViewportModel(scene, { now: () => clock.now() * 1000 });
  const replay = {
    now: () => clock.now() * 1000,
    after: (ms: number, fn: () => void) => {
      // No poses after playback: the clock then runs until nothing sleeps.
      if (clock.now() > durationS) return () => {};
      let cancelled = false;
      void clock.sleep(ms / 1000).then(() => { if (!cancelled) fn(); });
      return () => { cancelled = true; };
    },
  };
  const stop = TracePoseSource.fromCsv(poseCsv, { convention: 'unity-left-handed', loop: true, clock: replay }).start((p) => viewport.observe(p));
  const session = await playOn(clock, link, durationS, {
    scene, contentBase: '/content/', decoder: decoderOn(clock), policy: policyFor(mode), viewport,
    ...(values['volatile-buffer'] ? { volatileBufferTargetS: Number(values['volatile-buffer']) } : {}),
  });
  stop();
  const records = session.segmentRecords();
  const totals = qoeTotalsOf(records, 2);
  const freezes = session.freezeSummary();
  // The trough: the tightest margin of an in-view object shown (ready − playout), and what was given up.
  let minSlackS = Infinity;
  for (const r of records) {
    if (r.index < troughFrom || r.index > troughTo || r.abandoned || r.superseded || !(r.visibleArea > 0) || r.completedAtS === undefined) continue;
    if (r.upgrade && !r.onTime && !r.shownLate) continue;
    minSlackS = Math.min(minSlackS, r.deadlineS - (r.completedAtS + (r.decodeMs ?? 0) / 1000));
  }
  if (values.verbose) {
    for (const r of [...records].sort((a, b) => a.index - b.index || a.requestedAtS - b.requestedAtS)) {
      if (r.index < troughFrom - 3 || r.index > troughTo) continue;
      const f = (v?: number) => (v === undefined ? '  -  ' : v.toFixed(2));
      console.log(r.index, r.object, `q${r.quality}`, r.delivery.slice(0, 3), `u${r.urgency}`, 'area', r.visibleArea.toFixed(2), 'req', f(r.requestedAtS), 'done', f(r.completedAtS),
        'due', f(r.deadlineS), 'tp', ((r.plannedThroughputBps ?? 0) / 1e6).toFixed(1),
        [r.abandoned && 'A', r.upgrade && 'U', r.superseded && 'S', r.onTime && 'T', r.shownLate && 'L'].filter(Boolean).join(''));
    }
  }
  return {
    freezes: freezes.count, frozenS: freezes.totalMs / 1000,
    visible: totals.shownAreaSum > 0 ? totals.shownAreaQualitySum / totals.shownAreaSum : NaN,
    seen: (totals.shownSeenAreaSum ?? 0) > 0 ? (totals.shownSeenAreaQualitySum ?? 0) / totals.shownSeenAreaSum! : NaN,
    minSlackS, freezeAt: freezes.freezes.map((f) => (f.startMs / 1000).toFixed(1)).join(' '),
    abandoned: records.filter((r) => r.abandoned).length,
  };
}

async function main(): Promise<void> {
  const mode = values.mode as PlayerMode;
  if (!PLAYER_MODES.includes(mode)) throw new Error(`unknown mode ${mode}`);
  const runs = values.start !== undefined ? 1 : Number(values.runs);
  console.log(`trace scale ${scale.toPrecision(3)} × goodput ${goodput}${deepen ? `, ×${deepen[2]} over ${deepen[0]}–${deepen[1]} s` : ''}, ${mode}, ${runs} runs, trough ${troughFrom}–${troughTo}`);
  const all = [];
  for (let i = 0; i < runs; i++) {
    const startS = values.start !== undefined ? Number(values.start) : 1.5 + (1.5 * i) / Math.max(1, runs);
    const r = await run(startS, mode);
    all.push(r);
    console.log(`start ${startS.toFixed(2)} s: visible ${r.visible.toFixed(3)}, seen ${r.seen.toFixed(3)}, freezes ${r.freezes} (${r.frozenS.toFixed(2)} s${r.freezeAt ? ` at ${r.freezeAt}` : ''}), trough margin ${r.minSlackS.toFixed(2)} s`);
  }
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  console.log(`mean visible ${mean(all.map((r) => r.visible)).toFixed(3)}, seen ${mean(all.map((r) => r.seen)).toFixed(3)}, freezes ${all.reduce((a, r) => a + r.freezes, 0)} (${all.reduce((a, r) => a + r.frozenS, 0).toFixed(2)} s), trough margin min ${Math.min(...all.map((r) => r.minSlackS)).toFixed(2)} s`);
}

void main();
