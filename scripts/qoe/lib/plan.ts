/**
 * The plan of a QoE experiment: every run (mode, loss, trace, pose, delay, buffer, repetition)
 * and the settings they share, as one JSON file. A plan is made from the runner's flags or a
 * preset (`--matrix reference`), written with `--plan-out`, read with `--plan`, and split with
 * `--shard I/N` so any batch scheduler can spread a matrix over machines; each shard's directory
 * keeps the plan, and the report merges shards of the same plan (merge.ts).
 */
import { createHash } from 'node:crypto';
import { PLAYER_MODES } from '../../../src/model/modes';
import { expandMatrix, type MatrixEntry, type MatrixSpec, runId } from './matrix';

export const PLAN_SCHEMA = 'holoquic-qoe-plan/1';

/** What every run of a plan shares. */
export interface PlanSettings {
  durationS: number;
  /** `auto` (the trace's median onto the ladder, per trace) or a fixed multiplier. */
  traceScale: 'auto' | number;
  lossDirection: 'down' | 'both';
  /** The loss chain on a clock, Bad periods of this many ms; absent = per packet. */
  lossBadMs?: number;
  /** The bottleneck's queue as this many round trips of the path (2 × the one-way delay); absent = 100 ms. */
  queueRtts?: number;
  /** The origin's congestion control; absent = its default. */
  congestionControl?: 'cubic' | 'bbr2';
  /** Player options beyond mode, duration and buffer (`abr`, `k`, `fec-target`, …), as the page gets them. */
  page: Record<string, string>;
  /** The manifest the page plays, under the content directory (`/content/demo/manifest.mpd`). */
  manifest: string;
}

export interface Plan {
  schema: typeof PLAN_SCHEMA;
  name: string;
  settings: PlanSettings;
  runs: MatrixEntry[];
}

/** A matrix preset: its dimensions, repetitions and run length. */
export type MatrixPreset = Required<MatrixSpec> & { durationS: number };

const ALL_LOSS = [0, 0.5, 1, 2, 5];
const HHI_01 = 'hhi_hololens/hololens_trace_01';
const TWO_5G = ['5g_walking_lumos5g_100', '5g_driving_lumos5g_103'];

/**
 * Named matrices. `default` is what the runner measured before delay and buffer were
 * dimensions (both 5G traces, 10 ms, the player's buffer: 180 runs). `reference` is issue 35's:
 * three traces — the two 5G ones and an LTE drive (Lumos5G 4G trace 50015, Verizon, 250 s, the
 * same dataset and licence as the 5G ones; ../shared/data/README.md) — × one-way delay 10 and
 * 50 ms × buffer 2 and 1 s × 5 loss levels × 6 modes × 3 repetitions. `smoke` needs nothing beside
 * the checkout: the built-in synthetic traces (synthetic.ts).
 */
export const MATRIX_PRESETS = {
  default: { modes: [...PLAYER_MODES], lossPct: ALL_LOSS, traces: TWO_5G, poses: [HHI_01], delaysMs: [10], buffersS: [null], repetitions: 3, durationS: 120 },
  reference: {
    modes: [...PLAYER_MODES], lossPct: ALL_LOSS, traces: [...TWO_5G, '4g_driving_lumos5g_50015'], poses: [HHI_01],
    delaysMs: [10, 50], buffersS: [2, 1], repetitions: 3, durationS: 120,
  },
  smoke: { modes: ['qr', 'qpr-fec'], lossPct: [2], traces: ['synthetic'], poses: ['synthetic'], delaysMs: [10], buffersS: [null], repetitions: 1, durationS: 30 },
} satisfies Record<string, MatrixPreset>;

export type PresetName = keyof typeof MATRIX_PRESETS;

export function makePlan(name: string, spec: MatrixSpec, settings: PlanSettings): Plan {
  checkSettings(settings);
  return { schema: PLAN_SCHEMA, name, settings, runs: expandMatrix(spec) };
}

/**
 * A digest of what the plan measures (settings and runs; not its name): shards whose plans have
 * the same digest belong to one matrix.
 */
export function planDigest(plan: Plan): string {
  return createHash('sha256').update(canonicalJson({ settings: plan.settings, runs: plan.runs })).digest('hex').slice(0, 16);
}

/** JSON with object keys sorted, so the digest does not depend on the order a file lists them. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    return `{${Object.keys(value).sort().filter((k) => (value as Record<string, unknown>)[k] !== undefined)
      .map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

/** Plans larger than this are refused unread (a plan of the reference matrix is ~250 KB). */
export const MAX_PLAN_BYTES = 16 * 1024 * 1024;

function fail(source: string, message: string): never {
  throw new Error(`plan ${source}: ${message}`);
}

function checkSettings(s: PlanSettings, source = 'settings'): void {
  if (!(Number.isFinite(s.durationS) && s.durationS > 0)) fail(source, `durationS must be a positive number, got ${s.durationS}`);
  if (s.traceScale !== 'auto' && !(typeof s.traceScale === 'number' && s.traceScale > 0)) fail(source, `traceScale must be "auto" or a positive number, got ${s.traceScale}`);
  if (s.lossDirection !== 'down' && s.lossDirection !== 'both') fail(source, `lossDirection must be "down" or "both", got ${s.lossDirection}`);
  if (s.lossBadMs !== undefined && !(typeof s.lossBadMs === 'number' && s.lossBadMs > 0)) fail(source, `lossBadMs must be a positive number, got ${s.lossBadMs}`);
  if (s.queueRtts !== undefined && !(typeof s.queueRtts === 'number' && s.queueRtts > 0)) fail(source, `queueRtts must be a positive number, got ${s.queueRtts}`);
  if (s.congestionControl !== undefined && s.congestionControl !== 'cubic' && s.congestionControl !== 'bbr2') fail(source, `congestionControl must be cubic or bbr2, got ${s.congestionControl}`);
  if (typeof s.page !== 'object' || s.page === null || Object.values(s.page).some((v) => typeof v !== 'string')) fail(source, 'page must map option names to strings');
  if ('buffer' in s.page) fail(source, 'the buffer is a dimension of the runs (bufferS), not a page setting');
  if (typeof s.manifest !== 'string' || s.manifest === '') fail(source, 'manifest must be a path such as /content/demo/manifest.mpd');
}

/** Reads and checks a plan file's text; every error names the file and what is wrong. */
export function parsePlan(text: string, source: string): Plan {
  if (text.length > MAX_PLAN_BYTES) fail(source, `larger than ${MAX_PLAN_BYTES} bytes`);
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (e) {
    fail(source, `not JSON (${e instanceof Error ? e.message : e})`);
  }
  const plan = raw as Plan;
  if (typeof plan !== 'object' || plan === null) fail(source, 'not a JSON object');
  if (plan.schema !== PLAN_SCHEMA) fail(source, `schema must be "${PLAN_SCHEMA}", got ${JSON.stringify(plan.schema)}`);
  if (typeof plan.name !== 'string' || !/^[A-Za-z0-9_.-]+$/.test(plan.name)) fail(source, 'name must be a file-name-safe string');
  if (typeof plan.settings !== 'object' || plan.settings === null) fail(source, 'settings missing');
  checkSettings(plan.settings, source);
  if (!Array.isArray(plan.runs) || plan.runs.length === 0) fail(source, 'runs must be a non-empty array');
  const ids = new Set<string>();
  plan.runs.forEach((r, i) => {
    const where = `run ${i + 1}`;
    if (typeof r !== 'object' || r === null) fail(source, `${where} is not an object`);
    for (const key of ['mode', 'trace', 'pose'] as const) if (typeof r[key] !== 'string' || r[key] === '') fail(source, `${where}: ${key} must be a non-empty string`);
    if (!(typeof r.lossPct === 'number' && r.lossPct >= 0)) fail(source, `${where}: lossPct must be a number ≥ 0`);
    if (!(typeof r.delayMs === 'number' && r.delayMs >= 0)) fail(source, `${where}: delayMs must be a number ≥ 0`);
    if (!(r.bufferS === null || (typeof r.bufferS === 'number' && r.bufferS > 0))) fail(source, `${where}: bufferS must be a positive number or null (the player's default)`);
    if (!(Number.isInteger(r.repetition) && r.repetition >= 0)) fail(source, `${where}: repetition must be an integer ≥ 0`);
    // The id names the run's record file: it must be the one the runner derives, so plans cannot collide or escape the directory.
    if (r.id !== runId(r)) fail(source, `${where}: id ${JSON.stringify(r.id)} is not ${JSON.stringify(runId(r))}`);
    if (ids.has(r.id)) fail(source, `${where}: id ${r.id} appears twice`);
    ids.add(r.id);
  });
  return { schema: PLAN_SCHEMA, name: plan.name, settings: plan.settings, runs: plan.runs.map((r) => ({ ...r })) };
}

/** Shard I of N, 1-based as in `--shard 2/4` (Slurm's, Kubernetes' 0-based indices plus one). */
export interface Shard {
  index: number;
  count: number;
}

export function parseShard(text: string): Shard {
  const m = /^(\d+)\/(\d+)$/.exec(text.trim());
  const index = m ? Number(m[1]) : NaN, count = m ? Number(m[2]) : NaN;
  if (!m || count < 1 || index < 1 || index > count) throw new Error(`--shard must be I/N with 1 ≤ I ≤ N (e.g. 1/4), got "${text}"`);
  return { index, count };
}

/**
 * The runs of one shard: every N-th run of the plan, starting at the I-th. Dealt round-robin from
 * the plan's order (repetitions outermost), so each shard gets about the same number of runs and
 * a mix of cells, and the N shards together hold each run exactly once.
 */
export function shardRuns<T>(runs: readonly T[], shard: Shard): T[] {
  return runs.filter((_, k) => k % shard.count === shard.index - 1);
}

/**
 * Seconds a run takes beyond its playback: namespaces, origin and browser start-up, teardown.
 * Measured: the 180 runs of 120 s of 2026-11-24 took 6 h 19 min on the 2-vCPU VM (≈ 126 s each),
 * rounded up.
 */
export const RUN_OVERHEAD_S = 10;

/** Wall-clock estimate of `runs` runs of `durationS` one after another on one machine. */
export function estimateSeconds(runs: number, durationS: number): number {
  return runs * (durationS + RUN_OVERHEAD_S);
}

/** "39.0 h", "25 min", "40 s". */
export function formatDuration(seconds: number): string {
  if (seconds >= 5400) return `${(seconds / 3600).toFixed(1)} h`;
  if (seconds >= 120) return `${Math.round(seconds / 60)} min`;
  return `${Math.round(seconds)} s`;
}

/** What `--dry-run` prints: the dimensions, the size, and how long it takes on one machine and per shard. */
export function describePlan(plan: Plan, shard?: Shard): string[] {
  const values = <K extends keyof MatrixEntry>(key: K) => [...new Set(plan.runs.map((r) => r[key]))];
  const show = (v: unknown) => (v === null ? "player's default" : String(v));
  const cells = new Set(plan.runs.map((r) => JSON.stringify([r.mode, r.lossPct, r.trace, r.pose, r.delayMs, r.bufferS]))).size;
  const lines = [
    `plan "${plan.name}" (digest ${planDigest(plan)}): ${plan.runs.length} runs of ${plan.settings.durationS} s`,
    `  modes (${values('mode').length}): ${values('mode').join(', ')}`,
    `  loss % (${values('lossPct').length}): ${values('lossPct').join(', ')}`,
    `  bandwidth traces (${values('trace').length}): ${values('trace').join(', ')}`,
    `  pose traces (${values('pose').length}): ${values('pose').join(', ')}`,
    `  one-way delay ms (${values('delayMs').length}): ${values('delayMs').join(', ')}`,
    `  buffer s (${values('bufferS').length}): ${values('bufferS').map(show).join(', ')}`,
    `  repetitions: ${values('repetition').length}; cells: ${cells}`,
    `  estimated time on one machine: ${formatDuration(estimateSeconds(plan.runs.length, plan.settings.durationS))} ` +
      `(${plan.settings.durationS} + ${RUN_OVERHEAD_S} s per run, one run at a time)`,
  ];
  if (shard) {
    const mine = shardRuns(plan.runs, shard).length;
    lines.push(`  shard ${shard.index}/${shard.count}: ${mine} runs, ${formatDuration(estimateSeconds(mine, plan.settings.durationS))}`);
  }
  return lines;
}
