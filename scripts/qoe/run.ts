/**
 * QoE experiment runner (docs/qoe.md → "Experiment runner", docs/results.md → "How the QoE
 * experiments run"): makes the plan of an experiment (every run of a matrix), runs its runs — or
 * one shard's — with scripts/qoe/run-one.sh (namespaces, impairer, rate trace, origin, headless
 * Chromium), stores one record per run and writes the report.
 *
 *   npm run qoe -- [--name NAME] [--matrix default|reference|smoke] [--smoke] [--modes qr,qpr-fec]
 *                  [--loss 0,0.5,1,2,5] [--traces NAME|PATH,...] [--poses NAME|PATH,...] [--reps 3]
 *                  [--duration 120] [--delay-ms 10,50] [--buffer 2,1|default] [--trace-scale auto|X] [--abr RULE]
 *                  [--volatile-buffer S] [--stall-timeout S] [--fec-target P] [--late-upgrade 0|1] [--pipeline-ahead 0|1] [--k N] [--manifest PATH]
 *                  [--loss-direction down|both] [--loss-bad-ms MS] [--queue-rtts N] [--cc cubic|bbr2]
 *                  [--plan FILE] [--plan-out FILE] [--shard I/N] [--dry-run] [--out DIR]
 *                  [--content DIR] [--no-build] [--resume] [--qlog] [--keep-run-dirs]
 *
 * The matrix: a preset (`--matrix`, lib/plan.ts: `default` the 180-run matrix of both 5G traces at
 * 10 ms, `reference` issue 35's with an LTE trace, 50 ms and a 1-s buffer, `smoke` two short runs
 * on the built-in synthetic traces, which needs nothing beside the checkout; `--smoke` is
 * `--matrix smoke`), each dimension replaceable by its flag. Or `--plan FILE`, a plan written
 * earlier with `--plan-out` (then no matrix flag is taken). `--dry-run` prints the matrix, its
 * size and the estimated time and stops (no root needed). `--shard I/N` runs every N-th run of
 * the plan from the I-th (1-based), into results/qoe/<name>-shard<I>of<N> unless `--out` says
 * otherwise; `npm run qoe:report -- --merge` joins the shards.
 *
 * --resume keeps the runs of an earlier invocation with the same --name that succeeded and runs
 * only the others, so a long matrix can be spread over several sittings (repetitions run outermost,
 * so a partial matrix covers every cell once before repeating any). --cc picks the origin's
 * congestion control (default: the origin's, loss-tolerant BBR2); `cubic` is the loss-based
 * controller of the reference paper's QUIC stack. --qlog has the origin write a qlog per QUIC
 * connection into each run's directory, which is then kept (results/qoe/<name>/<run>/qlog).
 * A run whose page never started its player (the client's `pageStarted: false`: the page did not
 * load, or loaded without its script), or whose player began on its HTTP/2 fallback in a
 * WebTransport mode (the session did not open), measured nothing of its mode and is made once
 * more; its record keeps why the first attempt did not count (`retriedAfter`). `--resume` makes
 * again any recorded run that cannot stand for its cell (aggregate.ts, `unusableReason`).
 *
 * Needs root. Results: <out>/{plan.json, shard.json, runs/*.json, runs.csv, cells.json, summary.md, dominance.md, report.html}.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { parseManifest } from '../../src/player/mpd';
import { FELL_BACK, type ImpairerDirection, keptOnResume, PAGE_NEVER_STARTED, parsePrometheusText, parseQdiscStats, parseTcpCounters, parseUdpSnmp, queueMsOf, type RunConfig, type RunRecord, startedOnFallback, unusableReason } from './lib/aggregate';
import { resolvePose, resolveTrace } from './lib/inputs';
import { autoTraceScale, geForLoss, parseBandwidthTrace } from './lib/matrix';
import { describePlan, MATRIX_PRESETS, makePlan, type Plan, parsePlan, parseShard, type PresetName, planDigest, shardRuns } from './lib/plan';
import type { QoeLog } from '../../src/model/qoe';
import { loadPlan, PLAN_FILE, SHARD_FILE, writeReport } from './report';
import { checkoutCommit, measuredCommit, stampBuild } from './lib/provenance';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const ROOTS = { root: ROOT, shared: resolve(ROOT, '../shared/data') };

const OPTIONS = {
  name: { type: 'string' }, matrix: { type: 'string' }, smoke: { type: 'boolean', default: false }, modes: { type: 'string' }, loss: { type: 'string' },
  traces: { type: 'string' }, poses: { type: 'string' }, reps: { type: 'string' }, duration: { type: 'string' },
  'delay-ms': { type: 'string' }, 'trace-scale': { type: 'string' }, abr: { type: 'string' }, buffer: { type: 'string' }, 'volatile-buffer': { type: 'string' },
  'stall-timeout': { type: 'string' }, 'fec-target': { type: 'string' }, 'late-upgrade': { type: 'string' }, 'pipeline-ahead': { type: 'string' },
  k: { type: 'string' }, content: { type: 'string' }, manifest: { type: 'string' }, 'keep-run-dirs': { type: 'boolean', default: false },
  'loss-direction': { type: 'string' }, 'loss-bad-ms': { type: 'string' }, 'queue-rtts': { type: 'string' }, 'no-build': { type: 'boolean', default: false },
  resume: { type: 'boolean', default: false }, cc: { type: 'string' }, qlog: { type: 'boolean', default: false },
  plan: { type: 'string' }, 'plan-out': { type: 'string' }, shard: { type: 'string' }, 'dry-run': { type: 'boolean', default: false }, out: { type: 'string' },
} as const;
type Values = ReturnType<typeof parseArgs<{ options: typeof OPTIONS }>>['values'];

/** The flags that define a matrix: a plan file defines it instead. */
const MATRIX_FLAGS = ['matrix', 'smoke', 'modes', 'loss', 'traces', 'poses', 'reps', 'duration', 'delay-ms', 'trace-scale', 'abr', 'buffer',
  'volatile-buffer', 'stall-timeout', 'fec-target', 'late-upgrade', 'pipeline-ahead', 'k', 'manifest', 'loss-direction', 'loss-bad-ms', 'queue-rtts', 'cc'] as const;
/** Player options that are settings of every run (the buffer is a dimension). */
const PAGE_OPTIONS = ['abr', 'volatile-buffer', 'stall-timeout', 'fec-target', 'late-upgrade', 'pipeline-ahead', 'k'] as const;

function list(value: string | undefined): string[] | undefined {
  return value === undefined ? undefined : value.split(',').map((s) => s.trim()).filter(Boolean);
}

function numbers(value: string | undefined, flag: string): number[] | undefined {
  return list(value)?.map((v) => {
    if (!Number.isFinite(Number(v))) throw new Error(`--${flag}: "${v}" is not a number`);
    return Number(v);
  });
}

/** The plan the flags describe: a preset with each given dimension replaced. */
function planFromFlags(values: Values): Plan {
  const presetName = (values.matrix ?? (values.smoke ? 'smoke' : 'default')) as PresetName;
  const preset = MATRIX_PRESETS[presetName];
  if (!preset) throw new Error(`--matrix must be one of ${Object.keys(MATRIX_PRESETS).join(', ')}, got ${values.matrix}`);
  const lossDirection = values['loss-direction'] ?? 'down';
  if (lossDirection !== 'down' && lossDirection !== 'both') throw new Error(`--loss-direction must be down or both, got ${lossDirection}`);
  // The loss chain on a clock (Bad periods of this many ms) instead of per packet (docs/qoe.md).
  const lossBadMs = values['loss-bad-ms'] === undefined ? undefined : Number(values['loss-bad-ms']);
  if (lossBadMs !== undefined && !(lossBadMs > 0)) throw new Error(`--loss-bad-ms must be a positive number of milliseconds, got ${values['loss-bad-ms']}`);
  // The bottleneck's queue as round trips of the path instead of the usual 100 ms (docs/qoe.md, `--queue-rtts`).
  const queueRtts = values['queue-rtts'] === undefined ? undefined : Number(values['queue-rtts']);
  if (queueRtts !== undefined && !(queueRtts > 0)) throw new Error(`--queue-rtts must be a positive number of round trips, got ${values['queue-rtts']}`);
  const cc = values.cc;
  if (cc !== undefined && cc !== 'cubic' && cc !== 'bbr2') throw new Error(`--cc must be cubic or bbr2, got ${cc}`);
  const scale = values['trace-scale'] ?? 'auto';
  const page: Record<string, string> = {};
  for (const option of PAGE_OPTIONS) if (values[option]) page[option] = values[option];
  const buffers = list(values.buffer)?.map((b) => (b === 'default' ? null : Number(b)));
  const name = values.name ?? (presetName === 'smoke' ? 'smoke' : new Date().toISOString().replace(/[:.]/g, '-'));
  return makePlan(name, {
    modes: list(values.modes) ?? preset.modes, lossPct: numbers(values.loss, 'loss') ?? preset.lossPct, traces: list(values.traces) ?? preset.traces,
    poses: list(values.poses) ?? preset.poses, delaysMs: numbers(values['delay-ms'], 'delay-ms') ?? preset.delaysMs, buffersS: buffers ?? preset.buffersS,
    repetitions: Number(values.reps ?? preset.repetitions),
  }, {
    durationS: Number(values.duration ?? preset.durationS), traceScale: scale === 'auto' ? 'auto' : Number(scale), lossDirection,
    ...(lossBadMs !== undefined ? { lossBadMs } : {}), ...(queueRtts !== undefined ? { queueRtts } : {}), ...(cc ? { congestionControl: cc } : {}), page,
    manifest: values.manifest ?? '/content/demo/manifest.mpd',
  });
}

function readImpairer(file: string): ImpairerDirection | undefined {
  if (!existsSync(file)) return undefined;
  const lines = readFileSync(file, 'utf8').trim().split('\n').filter(Boolean);
  if (lines.length === 0) return undefined;
  try {
    return JSON.parse(lines[lines.length - 1]) as ImpairerDirection;
  } catch {
    return undefined;
  }
}

function readIfExists<T>(file: string, parse: (text: string) => T | undefined): T | undefined {
  return existsSync(file) ? parse(readFileSync(file, 'utf8')) : undefined;
}

/** Each distinct trace or pose name of the runs, resolved on this machine (an Error: not found, and where it looked). */
function resolveAll(names: string[], resolveOne: (name: string) => string): Map<string, string | Error> {
  return new Map(names.map((n): [string, string | Error] => {
    try {
      return [n, resolveOne(n)];
    } catch (e) {
      return [n, e as Error];
    }
  }));
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: OPTIONS });
  if (values.plan !== undefined) {
    const given = MATRIX_FLAGS.filter((f) => values[f] !== undefined && values[f] !== false);
    if (given.length) throw new Error(`--plan defines the matrix and its settings: drop ${given.map((f) => `--${f}`).join(', ')}`);
  }
  const plan = values.plan !== undefined ? parsePlan(readFileSync(values.plan, 'utf8'), values.plan) : planFromFlags(values);
  const shard = values.shard === undefined ? undefined : parseShard(values.shard);
  // Shards on different machines must agree on the experiment's name (a dated default would not).
  if (shard && values.plan === undefined && values.name === undefined) throw new Error('--shard needs --name (or --plan) so every shard names the experiment alike');
  const runs = shard ? shardRuns(plan.runs, shard) : plan.runs;
  const traces = resolveAll([...new Set(runs.map((r) => r.trace))], (n) => resolveTrace(n, ROOTS));
  const poses = resolveAll([...new Set(runs.map((r) => r.pose))], (n) => resolvePose(n, ROOTS));
  const unresolved = [...traces.values(), ...poses.values()].filter((v): v is Error => v instanceof Error);
  if (values['plan-out']) {
    writeFileSync(values['plan-out'], JSON.stringify(plan, null, 1) + '\n');
    console.log(`plan written to ${values['plan-out']}`);
  }
  if (values['dry-run']) {
    for (const line of describePlan(plan, shard)) console.log(line);
    for (const e of unresolved) console.log(`  not on this machine: ${e.message}`);
    return;
  }
  if (unresolved.length) throw new Error(unresolved.map((e) => e.message).join('; '));
  const tracePath = (name: string) => traces.get(name) as string, posePath = (name: string) => poses.get(name) as string;
  if (process.getuid?.() !== 0) throw new Error('the QoE runner needs root (network namespaces, tc, iptables)');
  const { settings } = plan;
  const contentDir = resolve(values.content ?? join(ROOT, 'content'));
  const name = values.name ?? plan.name;
  const out = resolve(values.out ?? join(ROOT, 'results/qoe', shard ? `${name}-shard${shard.index}of${shard.count}` : name));
  const originBin = join(ROOT, 'server/target/release/holoquic-origin');
  const impairBin = join(ROOT, 'server/target/release/holoquic-impair');
  const checkout = checkoutCommit(ROOT);
  if (!values['no-build']) {
    // The player under test is the built app: rebuild it so a run never measures stale sources
    // (vite is incremental enough: ~20 s).
    console.log('building the web app (vite build; --no-build to skip)');
    const build = spawnSync('npx', ['vite', 'build', '--logLevel', 'warn'], { cwd: ROOT, stdio: 'inherit' });
    if (build.status !== 0) throw new Error('vite build failed');
    stampBuild(join(ROOT, 'dist'), checkout);
  }
  for (const [what, path] of [['origin', originBin], ['impairer', impairBin], ['built app', join(ROOT, 'dist/index.html')]]) {
    if (!existsSync(path)) throw new Error(`${what} missing at ${path}: run scripts/setup.sh`);
  }
  const manifestFile = join(contentDir, settings.manifest.replace(/^\/content\//, ''));
  if (!existsSync(manifestFile)) throw new Error(`manifest ${manifestFile} missing: package content first (scripts/demo.sh or holoquic-pack)`);
  const scene = parseManifest(readFileSync(manifestFile, 'utf8'));
  const ladders = scene.objects.map((o) => o.representations.map((r) => r.bandwidth));

  // The code measured (provenance.ts): results of different commits must not be pooled (--resume warns).
  const commit = measuredCommit(join(ROOT, 'dist'), checkout, !values['no-build']);
  const commitFile = join(out, 'commit.txt');
  if (values.resume && existsSync(commitFile) && readFileSync(commitFile, 'utf8').trim() !== commit) {
    console.warn(`warning: resuming runs of ${readFileSync(commitFile, 'utf8').trim()} with ${commit}: the results pool two versions`);
  }
  const earlierPlan = existsSync(join(out, PLAN_FILE)) ? loadPlan(out) : undefined;
  if (earlierPlan && planDigest(earlierPlan) !== planDigest(plan)) {
    console.warn(`warning: ${out} held runs of another plan (${planDigest(earlierPlan)}); it now keeps this one (${planDigest(plan)})`);
  }
  mkdirSync(join(out, 'runs'), { recursive: true });
  writeFileSync(commitFile, `${commit}\n`);
  // The whole plan and this directory's share of it, so the report can merge shards and name what is missing.
  writeFileSync(join(out, PLAN_FILE), JSON.stringify(plan, null, 1) + '\n');
  writeFileSync(join(out, SHARD_FILE), JSON.stringify({ plan: planDigest(plan), shard: shard ?? { index: 1, count: 1 }, runs: runs.map((r) => r.id) }, null, 1) + '\n');
  console.log(`QoE experiment "${name}"${shard ? `, shard ${shard.index}/${shard.count}` : ''}: ${runs.length} of ${plan.runs.length} runs of ${settings.durationS} s → ${out}`);
  const duration = settings.durationS;
  for (const [i, entry] of runs.entries()) {
    const recordFile = join(out, 'runs', `${entry.id}.json`);
    const traceFile = tracePath(entry.trace), poseFile = posePath(entry.pose);
    const traceMbps = parseBandwidthTrace(readFileSync(traceFile, 'utf8')).map((s) => s.mbps);
    const scale = settings.traceScale === 'auto' ? autoTraceScale(traceMbps, ladders) : settings.traceScale;
    const ge = geForLoss(entry.lossPct);
    // Player options beyond mode and duration, as the page gets them (recorded with each run).
    const page: Record<string, string> = { ...settings.page, ...(entry.bufferS === null ? {} : { buffer: String(entry.bufferS) }) };
    const config: RunConfig = {
      id: entry.id, mode: entry.mode, lossPct: entry.lossPct, ge, trace: basename(traceFile).replace(/\.csv$/, ''),
      traceScale: scale, pose: basename(poseFile), repetition: entry.repetition, durationS: duration, delayMs: entry.delayMs, lossDirection: settings.lossDirection,
      ...(settings.congestionControl ? { congestionControl: settings.congestionControl } : {}),
      ...(settings.lossBadMs !== undefined && ge ? { lossBadMs: settings.lossBadMs } : {}),
      ...(settings.queueRtts !== undefined ? { queueRtts: settings.queueRtts } : {}), ...(Object.keys(page).length ? { page } : {}),
    };
    if (values.resume && existsSync(recordFile)) {
      const earlier = JSON.parse(readFileSync(recordFile, 'utf8')) as RunRecord;
      if (keptOnResume(earlier, config)) {
        console.log(`[${i + 1}/${runs.length}] ${entry.id}: kept from an earlier sitting`);
        continue;
      }
      const unusable = unusableReason(earlier);
      if (!earlier.error) console.log(`[${i + 1}/${runs.length}] ${entry.id}: ${unusable ? `recorded, but ${unusable}` : 'recorded under other settings'}, run again`);
    }
    const runDir = join(out, 'work', entry.id);
    // render=0: the whole pipeline (request → FEC → decode) without drawing, as in the paper's headless runs.
    const query = new URLSearchParams({ mode: entry.mode, manifest: settings.manifest, duration: String(duration), poseConvention: 'unity', render: '0' });
    for (const [option, value] of Object.entries(page)) query.set(option, value);
    process.stdout.write(`[${i + 1}/${runs.length}] ${config.trace} ${entry.delayMs} ms${entry.bufferS === null ? '' : ` buffer ${entry.bufferS} s`} loss ${entry.lossPct} % ${entry.mode} rep ${entry.repetition} (scale ${scale.toPrecision(3)}) … `);
    let qoe: QoeLog | null = null;
    let error: string | undefined;
    let retriedAfter: string | undefined;
    for (let attempt = 1; ; attempt++) {
      let neverStarted = false;
      rmSync(runDir, { recursive: true, force: true });
      mkdirSync(runDir, { recursive: true });
      const child = await runOne({
        timeoutMs: (duration + 120) * 1000,
        env: {
          ...process.env, RUN_DIR: runDir, ORIGIN_BIN: originBin, IMPAIR_BIN: impairBin, CONTENT_DIR: contentDir,
          WEB_DIR: join(ROOT, 'dist'), PAGE_QUERY: query.toString(), GE: ge, DELAY_MS: String(entry.delayMs),
          SEED: String(1 + entry.repetition), LOSS_DIRECTION: settings.lossDirection, GE_BAD_MS: config.lossBadMs === undefined ? '' : String(config.lossBadMs),
          QUEUE_MS: String(queueMsOf(config)),
          TRACE_FILE: traceFile, TRACE_SCALE: String(scale), POSE_FILE: poseFile,
          TIMEOUT_S: String(duration + 60), ORIGIN_CC: settings.congestionControl ?? '', ORIGIN_QLOG: values.qlog ? '1' : '',
        },
      });
      if (child.interrupted) {
        console.log(`interrupted (${child.interrupted}): the run's namespaces and processes were torn down; --resume continues`);
        process.exit(130);
      }
      const resultFile = join(runDir, 'qoe.json');
      if (existsSync(resultFile)) {
        const result = JSON.parse(readFileSync(resultFile, 'utf8')) as { qoe: QoeLog | null; error: string | null; pageStarted?: boolean };
        qoe = result.qoe;
        error = result.error ?? undefined;
        neverStarted = result.pageStarted === false;
      } else {
        qoe = null;
        error = `run failed (exit ${child.status ?? child.signal}): ${child.stderr.trim().split('\n').slice(-3).join(' | ')}`;
      }
      // Nothing of the mode was measured when the page never started its player, or when its
      // session did not open and the player began on its HTTP/2 fallback: one more attempt, recorded.
      const fellBack = !error && qoe !== null && startedOnFallback(entry.mode, qoe);
      if (attempt > 1 || !(neverStarted || fellBack)) break;
      retriedAfter = fellBack ? FELL_BACK : error;
      process.stdout.write(`${fellBack ? 'began on the HTTP/2 fallback' : PAGE_NEVER_STARTED}, once more … `);
    }
    const record: RunRecord = {
      run: config, commit, qoe, error, ...(retriedAfter ? { retriedAfter } : {}),
      impairer: { toServer: readImpairer(join(runDir, 'impair.a')), toClient: readImpairer(join(runDir, 'impair.b')) },
      bottleneck: readIfExists(join(runDir, 'qdisc.a'), parseQdiscStats),
      origin: readIfExists(join(runDir, 'metrics.a'), (text) => parsePrometheusText(text)),
      clientUdp: readIfExists(join(runDir, 'snmp.b'), parseUdpSnmp),
      originTcp: readIfExists(join(runDir, 'tcp.a'), parseTcpCounters),
    };
    writeFileSync(recordFile, JSON.stringify(record));
    console.log(error ? `FAILED: ${error}` : `ok (freezes ${qoe?.freezes.length ?? '?'})`);
    if (!values['keep-run-dirs'] && !values.qlog && !error) rmSync(runDir, { recursive: true, force: true });
  }
  const commandLine = `npm run qoe -- ${process.argv.slice(2).join(' ')}`;
  writeReport(out, [`command: ${commandLine}`, `date: ${new Date().toISOString()}`, `commit: ${commit}`, `machine: ${process.env.HOLOQUIC_MACHINE ?? 'Debian 12, 2 cores, no GPU'}`]);
  console.log(`report: ${join(out, 'report.html')}`);
}

interface RunOutcome {
  status: number | null;
  signal: NodeJS.Signals | null;
  stderr: string;
  /** The signal that interrupted the runner during this run, if one did. */
  interrupted?: NodeJS.Signals;
}

/**
 * Runs scripts/qoe/run-one.sh. SIGINT or SIGTERM to the runner is passed on to it, so its trap
 * tears the namespaces and processes down before the runner exits (a blocking spawn could not
 * hear the signal, and a killed runner left the run going on).
 */
function runOne(options: { timeoutMs: number; env: NodeJS.ProcessEnv }): Promise<RunOutcome> {
  return new Promise((resolveRun) => {
    const child = spawn('bash', [join(ROOT, 'scripts/qoe/run-one.sh')], { stdio: ['ignore', 'ignore', 'pipe'], env: options.env });
    let stderr = '';
    let interrupted: NodeJS.Signals | undefined;
    child.stderr.on('data', (chunk: Buffer) => {
      stderr = (stderr + chunk.toString()).slice(-8192);
    });
    const forward = (signal: NodeJS.Signals) => {
      if (interrupted) return;
      interrupted = signal;
      child.kill('SIGTERM');
    };
    const onInt = () => forward('SIGINT');
    const onTerm = () => forward('SIGTERM');
    process.on('SIGINT', onInt);
    process.on('SIGTERM', onTerm);
    const timer = setTimeout(() => child.kill('SIGTERM'), options.timeoutMs);
    child.on('close', (status, signal) => {
      clearTimeout(timer);
      process.off('SIGINT', onInt);
      process.off('SIGTERM', onTerm);
      resolveRun({ status, signal, stderr, interrupted });
    });
  });
}

main().catch((e: unknown) => {
  console.error(`qoe: ${e instanceof Error ? e.message : e}`);
  process.exit(1);
});
