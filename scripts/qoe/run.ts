/**
 * QoE experiment runner (docs/qoe.md → "Experiment runner"): expands the matrix, runs each run with
 * scripts/qoe/run-one.sh (namespaces, impairer, rate trace, origin, headless Chromium), stores one
 * record per run and writes the report.
 *
 *   npm run qoe -- [--name NAME] [--smoke] [--modes qr,qpr-fec] [--loss 0,0.5,1,2,5]
 *                  [--traces 5g_walking_lumos5g_100,...] [--poses FILE,...] [--reps 3]
 *                  [--duration 120] [--delay-ms 10] [--trace-scale auto|X] [--abr RULE]
 *                  [--buffer S] [--volatile-buffer S] [--stall-timeout S] [--fec-target P] [--k N] [--content DIR] [--manifest PATH] [--loss-direction down|both]
 *                  [--no-build] [--resume] [--cc cubic|bbr2] [--qlog]
 *
 * --resume keeps the runs of an earlier invocation with the same --name that succeeded and runs
 * only the others, so a long matrix can be spread over several sittings (repetitions run outermost,
 * so a partial matrix covers every cell once before repeating any). --cc picks the origin's
 * congestion control (default: the origin's, loss-tolerant BBR2); `cubic` is the loss-based
 * controller of the reference paper's QUIC stack. --qlog has the origin write a qlog per QUIC
 * connection into each run's directory, which is then kept (results/qoe/<name>/<run>/qlog).
 *
 * Needs root. Results: results/qoe/<name>/{runs/*.json, runs.csv, cells.json, report.html}.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { PLAYER_MODES } from '../../src/model/modes';
import { parseManifest } from '../../src/player/mpd';
import { type ImpairerDirection, parsePrometheusText, parseQdiscStats, parseTcpCounters, parseUdpSnmp, type RunConfig, type RunRecord, sameSettings } from './lib/aggregate';
import { autoTraceScale, expandMatrix, geForLoss, parseBandwidthTrace } from './lib/matrix';
import type { QoeLog } from '../../src/model/qoe';
import { writeReport } from './report';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const SHARED = resolve(ROOT, '../shared/data');

function list(value: string | undefined, fallback: string[]): string[] {
  return value === undefined ? fallback : value.split(',').map((s) => s.trim()).filter(Boolean);
}

function resolveTrace(name: string): string {
  const candidates = [name, join(SHARED, 'network', name), join(SHARED, 'network', `${name}.csv`)];
  const found = candidates.find((c) => existsSync(c) && c.endsWith('.csv'));
  if (!found) throw new Error(`bandwidth trace "${name}" not found (tried ${candidates.join(', ')})`);
  return resolve(found);
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

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      name: { type: 'string' }, smoke: { type: 'boolean', default: false }, modes: { type: 'string' }, loss: { type: 'string' },
      traces: { type: 'string' }, poses: { type: 'string' }, reps: { type: 'string' }, duration: { type: 'string' },
      'delay-ms': { type: 'string' }, 'trace-scale': { type: 'string' }, abr: { type: 'string' }, buffer: { type: 'string' }, 'volatile-buffer': { type: 'string' },
      'stall-timeout': { type: 'string' }, 'fec-target': { type: 'string' },
      k: { type: 'string' }, content: { type: 'string' }, manifest: { type: 'string' }, 'keep-run-dirs': { type: 'boolean', default: false },
      'loss-direction': { type: 'string' }, 'loss-bad-ms': { type: 'string' }, 'no-build': { type: 'boolean', default: false },
      resume: { type: 'boolean', default: false }, cc: { type: 'string' }, qlog: { type: 'boolean', default: false },
    },
  });
  if (process.getuid?.() !== 0) throw new Error('the QoE runner needs root (network namespaces, tc, iptables)');
  const smoke = values.smoke;
  const modes = list(values.modes, smoke ? ['qr', 'qpr-fec'] : [...PLAYER_MODES]);
  const losses = list(values.loss, smoke ? ['2'] : ['0', '0.5', '1', '2', '5']).map(Number);
  const traces = list(values.traces, smoke ? ['5g_driving_lumos5g_103'] : ['5g_walking_lumos5g_100', '5g_driving_lumos5g_103']).map(resolveTrace);
  const poses = list(values.poses, [join(SHARED, 'pose/hhi_hololens/hololens_trace_01.csv')]).map((p) => resolve(p));
  const reps = Number(values.reps ?? (smoke ? 1 : 3));
  const duration = Number(values.duration ?? (smoke ? 30 : 120));
  const delayMs = Number(values['delay-ms'] ?? 10);
  const lossDirection = values['loss-direction'] ?? 'down';
  if (lossDirection !== 'down' && lossDirection !== 'both') throw new Error(`--loss-direction must be down or both, got ${lossDirection}`);
  // The loss chain on a clock (Bad periods of this many ms) instead of per packet (docs/qoe.md).
  const lossBadMs = values['loss-bad-ms'] === undefined ? undefined : Number(values['loss-bad-ms']);
  if (lossBadMs !== undefined && !(lossBadMs > 0)) throw new Error(`--loss-bad-ms must be a positive number of milliseconds, got ${values['loss-bad-ms']}`);
  const cc = values.cc;
  if (cc !== undefined && cc !== 'cubic' && cc !== 'bbr2') throw new Error(`--cc must be cubic or bbr2, got ${cc}`);
  const contentDir = resolve(values.content ?? join(ROOT, 'content'));
  const manifest = values.manifest ?? '/content/demo/manifest.mpd';
  const name = values.name ?? (smoke ? 'smoke' : new Date().toISOString().replace(/[:.]/g, '-'));
  const out = join(ROOT, 'results/qoe', name);
  const originBin = join(ROOT, 'server/target/release/holoquic-origin');
  const impairBin = join(ROOT, 'server/target/release/holoquic-impair');
  if (!values['no-build']) {
    // The player under test is the built app: rebuild it so a run never measures stale sources
    // (vite is incremental enough: ~20 s).
    console.log('building the web app (vite build; --no-build to skip)');
    const build = spawnSync('npx', ['vite', 'build', '--logLevel', 'warn'], { cwd: ROOT, stdio: 'inherit' });
    if (build.status !== 0) throw new Error('vite build failed');
  }
  for (const [what, path] of [['origin', originBin], ['impairer', impairBin], ['built app', join(ROOT, 'dist/index.html')]]) {
    if (!existsSync(path)) throw new Error(`${what} missing at ${path}: run scripts/setup.sh`);
  }
  const manifestFile = join(contentDir, manifest.replace(/^\/content\//, ''));
  if (!existsSync(manifestFile)) throw new Error(`manifest ${manifestFile} missing: package content first (scripts/demo.sh or holoquic-pack)`);
  const scene = parseManifest(readFileSync(manifestFile, 'utf8'));
  const ladders = scene.objects.map((o) => o.representations.map((r) => r.bandwidth));
  for (const p of poses) if (!existsSync(p)) throw new Error(`pose trace ${p} not found`);

  // The code measured: results of different commits must not be pooled (--resume warns).
  const head = spawnSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT, encoding: 'utf8' }).stdout.trim() || 'unknown';
  const dirty = spawnSync('git', ['status', '--porcelain', '--untracked-files=no'], { cwd: ROOT, encoding: 'utf8' }).stdout.trim() !== '';
  const commit = `${head}${dirty ? ' (with uncommitted changes)' : ''}`;
  const commitFile = join(out, 'commit.txt');
  if (values.resume && existsSync(commitFile) && readFileSync(commitFile, 'utf8').trim() !== commit) {
    console.warn(`warning: resuming runs of ${readFileSync(commitFile, 'utf8').trim()} with ${commit}: the results pool two versions`);
  }
  const runs = expandMatrix({ modes, lossPct: losses, traces, poses, repetitions: reps });
  mkdirSync(join(out, 'runs'), { recursive: true });
  writeFileSync(commitFile, `${commit}\n`);
  console.log(`QoE experiment "${name}": ${runs.length} runs of ${duration} s → ${out}`);
  // Player options beyond mode and duration, as the page gets them (recorded with each run).
  const page: Record<string, string> = {};
  for (const option of ['abr', 'buffer', 'volatile-buffer', 'stall-timeout', 'fec-target', 'k'] as const) {
    if (values[option]) page[option] = values[option];
  }
  for (const [i, entry] of runs.entries()) {
    const recordFile = join(out, 'runs', `${entry.id}.json`);
    const traceText = readFileSync(entry.trace, 'utf8');
    const traceMbps = parseBandwidthTrace(traceText).map((s) => s.mbps);
    const scale = (values['trace-scale'] ?? 'auto') === 'auto' ? autoTraceScale(traceMbps, ladders) : Number(values['trace-scale']);
    const ge = geForLoss(entry.lossPct);
    const config: RunConfig = {
      id: entry.id, mode: entry.mode, lossPct: entry.lossPct, ge, trace: entry.trace.replace(/^.*\//, '').replace(/\.csv$/, ''),
      traceScale: scale, pose: entry.pose.replace(/^.*\//, ''), repetition: entry.repetition, durationS: duration, delayMs, lossDirection,
      ...(cc ? { congestionControl: cc } : {}), ...(lossBadMs !== undefined && ge ? { lossBadMs } : {}), ...(Object.keys(page).length ? { page } : {}),
    };
    if (values.resume && existsSync(recordFile)) {
      const earlier = JSON.parse(readFileSync(recordFile, 'utf8')) as RunRecord;
      if (!earlier.error && sameSettings(earlier.run, config)) {
        console.log(`[${i + 1}/${runs.length}] ${entry.id}: kept from an earlier sitting`);
        continue;
      }
      if (!earlier.error) console.log(`[${i + 1}/${runs.length}] ${entry.id}: recorded under other settings, run again`);
    }
    const runDir = join(out, 'work', entry.id);
    rmSync(runDir, { recursive: true, force: true });
    mkdirSync(runDir, { recursive: true });
    // render=0: the whole pipeline (request → FEC → decode) without drawing, as in the paper's headless runs.
    const query = new URLSearchParams({ mode: entry.mode, manifest, duration: String(duration), poseConvention: 'unity', render: '0' });
    for (const [option, value] of Object.entries(page)) query.set(option, value);
    process.stdout.write(`[${i + 1}/${runs.length}] ${config.trace} loss ${entry.lossPct} % ${entry.mode} rep ${entry.repetition} (scale ${scale.toPrecision(3)}) … `);
    const child = await runOne({
      timeoutMs: (duration + 120) * 1000,
      env: {
        ...process.env, RUN_DIR: runDir, ORIGIN_BIN: originBin, IMPAIR_BIN: impairBin, CONTENT_DIR: contentDir,
        WEB_DIR: join(ROOT, 'dist'), PAGE_QUERY: query.toString(), GE: ge, DELAY_MS: String(delayMs),
        SEED: String(1 + entry.repetition), LOSS_DIRECTION: lossDirection, GE_BAD_MS: config.lossBadMs === undefined ? '' : String(config.lossBadMs), TRACE_FILE: entry.trace, TRACE_SCALE: String(scale), POSE_FILE: entry.pose,
        TIMEOUT_S: String(duration + 60), ORIGIN_CC: cc ?? '', ORIGIN_QLOG: values.qlog ? '1' : '',
      },
    });
    if (child.interrupted) {
      console.log(`interrupted (${child.interrupted}): the run's namespaces and processes were torn down; --resume continues`);
      process.exit(130);
    }
    let qoe: QoeLog | null = null;
    let error: string | undefined;
    const resultFile = join(runDir, 'qoe.json');
    if (existsSync(resultFile)) {
      const result = JSON.parse(readFileSync(resultFile, 'utf8')) as { qoe: QoeLog | null; error: string | null };
      qoe = result.qoe;
      error = result.error ?? undefined;
    } else {
      error = `run failed (exit ${child.status ?? child.signal}): ${child.stderr.trim().split('\n').slice(-3).join(' | ')}`;
    }
    const record: RunRecord = {
      run: config, commit, qoe, error,
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
