/**
 * Content in a bucket, measured through the real origin binary (docs/benchmarks.md → "Content in
 * a bucket, through the origin binary"): a real SeaweedFS on 127.0.0.1 (e2e/lib/seaweed.ts), a
 * scene stretched from the packed demo and published with `holoquic-publish`
 * (e2e/lib/bucketScene.ts), and `holoquic-origin --content s3://…` with its defaults
 * (`--s3-revalidate 1`, 256 MiB cache).
 *
 *   first byte   every segment of the scene (objects × rungs × segments) fetched once over the
 *                origin's plain-HTTP listener (HTTP/1.1, one keep-alive connection) — cold: the
 *                origin reads it from the store — and at once again — warm: from its cache; the
 *                time to the response head, median, p95 and max (nearest rank)
 *   hit ratio    `--players` sessions of the native load client (`holoquic-load`, WebTransport,
 *                every object reliable at the top rung, opened over `--ramp` seconds) playing a
 *                fresh copy of the scene through a freshly started origin: the origin's reads
 *                (200s in its access log) against the bodies the store sent (`GET 200` in
 *                SeaweedFS's own request counters) and its 304s (revalidations: no body)
 *
 *   npx tsx scripts/bench/object-store.ts [--seconds 10] [--players 10] [--ramp 1,10]
 */
import { execSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { BUCKET_CONTENT, publish, stretchedDemo } from '../../e2e/lib/bucketScene';
import { type Origin, requireBuilt, ROOT, startOrigin } from '../../e2e/lib/processes';
import { type Seaweed, startSeaweed } from '../../e2e/lib/seaweed';

const { values } = parseArgs({ options: {
  seconds: { type: 'string', default: '10' }, players: { type: 'string', default: '10' }, ramp: { type: 'string', default: '1,10' },
} });
const seconds = wholeNumber('seconds', values.seconds);
const players = wholeNumber('players', values.players);
const ramps = values.ramp.split(',').map((r) => Number(r));
if (ramps.some((r) => !(r >= 0))) throw new Error(`--ramp takes seconds ≥ 0, comma-separated, got ${values.ramp}`);
const LOAD_BIN = resolve(ROOT, 'server/target/release/holoquic-load');
const RUNGS = [0, 1, 2, 3, 4];

function wholeNumber(name: string, text: string): number {
  const n = Number(text);
  if (!(Number.isInteger(n) && n >= 1)) throw new Error(`--${name} must be a whole number ≥ 1, got ${text}`);
  return n;
}

/** Nearest-rank percentile of `values` (not empty). */
function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}

const summary = (ms: number[]) => `median ${percentile(ms, 50).toFixed(2)}  p95 ${percentile(ms, 95).toFixed(2)}  max ${Math.max(...ms).toFixed(2)} ms`;

/** Milliseconds to the response head of GET `url` (the body is then read whole). */
async function firstByte(url: string): Promise<number> {
  const start = performance.now();
  const response = await fetch(url);
  const ms = performance.now() - start;
  await response.arrayBuffer();
  if (response.status !== 200) throw new Error(`${url}: ${response.status}`);
  return ms;
}

/** Segment paths of a stretched scene published as `name` in generation `generation`. */
function segmentPaths(name: string, generation: string): string[] {
  const paths: string[] = [];
  for (let n = 0; n < seconds; n++) {
    for (let object = 0; object < 4; object++) {
      for (const rung of RUNGS) paths.push(`/content/${name}/${generation}/figure-${object}/${rung}/seg-${String(n).padStart(5, '0')}.v3c`);
    }
  }
  return paths;
}

async function coldAndWarm(store: Seaweed, scene: string): Promise<void> {
  const generation = publish(store, scene, 'first-byte');
  const origin = await startOrigin(BUCKET_CONTENT, store.flags);
  try {
    const cold: number[] = [];
    const warm: number[] = [];
    const paths = segmentPaths('first-byte', generation);
    for (const path of paths) {
      cold.push(await firstByte(origin.httpBase + path));
      warm.push(await firstByte(origin.httpBase + path));
    }
    console.log(`first byte over plain HTTP/1.1, ${paths.length} segments (4 objects × ${RUNGS.length} rungs × ${seconds}):`);
    console.log(`  cold (the store)  ${summary(cold)}`);
    console.log(`  warm (the cache)  ${summary(warm)}`);
  } finally {
    await origin.stop();
  }
}

/** Counts of the store's GETs by status (`GET 200`, `GET 304`). */
async function storeGets(store: Seaweed): Promise<{ bodies: number; unchanged: number }> {
  const counts = await store.requests();
  return { bodies: counts.get('GET 200') ?? 0, unchanged: counts.get('GET 304') ?? 0 };
}

async function hitRatio(store: Seaweed, scene: string, ramp: number): Promise<void> {
  const name = `players-ramp-${ramp}`;
  publish(store, scene, name);
  const origin: Origin = await startOrigin(BUCKET_CONTENT, [...store.flags, '--max-connections-per-ip', '4096', '--max-handshakes-per-ip', '1024']);
  try {
    const before = await storeGets(store);
    const report = await loadClient(origin, name, ramp);
    const after = await storeGets(store);
    const reads = origin.output().split('\n').filter((l) => l.includes(`path="/content/${name}/`) && l.includes('status=200 '));
    const bodies = after.bodies - before.bodies;
    const unchanged = after.unchanged - before.unchanged;
    console.log(`${players} players (holoquic-load, top rung, all reliable, opened over ${ramp} s), ${seconds} s each: ${report}`);
    console.log(`  origin reads ${reads.length}; the store sent ${bodies} bodies and answered ${unchanged} revalidations with 304; ` +
      `hit ratio ${((reads.length - bodies) / reads.length).toFixed(3)} (reads answered without a body from the store)`);
  } finally {
    await origin.stop();
  }
}

/** Runs the load client to its end; resolves with its summary line. */
function loadClient(origin: Origin, name: string, ramp: number): Promise<string> {
  requireBuilt(LOAD_BIN);
  const child = spawn(LOAD_BIN, [
    '--origin', `127.0.0.1:${origin.quicPort}`, '--mpd', `/content/${name}/manifest.mpd`, '--sessions', String(players),
    '--duration', String(seconds), '--ramp', String(ramp), '--quality', 'top', '--reliable-fraction', '1', '--json',
  ], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.on('data', (c: Buffer) => { out += c.toString(); });
  child.stderr.on('data', (c: Buffer) => { err = (err + c.toString()).slice(-4000); });
  return new Promise((done, fail) => child.once('exit', () => {
    try {
      type Total = { requested: number; on_time: number; late: number; lost: number; latency_ms: { p50: number; p95: number } };
      const t = (JSON.parse(out) as { total: Total }).total;
      done(`${t.requested} objects, ${t.on_time} on time, ${t.late} late, ${t.lost} lost; object latency p50 ${t.latency_ms.p50.toFixed(1)}, p95 ${t.latency_ms.p95.toFixed(1)} ms`);
    } catch {
      fail(new Error(`holoquic-load gave no report:\n${err}`));
    }
  }));
}

const commit = execSync('git rev-parse --short HEAD', { cwd: ROOT, encoding: 'utf8' }).trim();
console.log(`commit ${commit}, load average ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
const work = mkdtempSync(join(tmpdir(), 'holoquic-bench-object-store-'));
const store = await startSeaweed();
try {
  const scene = stretchedDemo(join(work, 'scene'), seconds, RUNGS);
  await coldAndWarm(store, scene);
  for (const ramp of ramps) await hitRatio(store, scene, ramp);
  console.log(`load average after: ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
} finally {
  await store.close();
  rmSync(work, { recursive: true, force: true });
}
