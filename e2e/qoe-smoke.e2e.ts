/**
 * The QoE harness end to end (issue: QoE experiments, CI smoke): `npm run qoe -- --smoke` on the
 * packed demo — two network namespaces, the NFQUEUE Gilbert–Elliott impairer, tbf replaying the
 * built-in synthetic bandwidth trace (no evaluation data needed beside the checkout), the real
 * origin, headless Chromium playing the synthetic head-pose trace — must produce a QoE log per
 * run, impairer counters near the configured loss, the plan a report can merge shards by, and the
 * report. Needs root (namespaces); CI runs as root.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { measuredLossPct, PAGE_NEVER_STARTED, type RunRecord, unusableReason } from '../scripts/qoe/lib/aggregate';
import { planDigest } from '../scripts/qoe/lib/plan';
import { loadPlan, SHARD_FILE } from '../scripts/qoe/report';
import { validateQoeLog } from '../src/qoe/schema';
import { demoContentRoot } from './lib/content';
import { ROOT } from './lib/processes';

const isRoot = process.getuid?.() === 0;
const NAME = 'e2e-smoke';
const OUT = join(ROOT, 'results/qoe', NAME);
const MODES = ['qr', 'qpr-fec'];
const LOSS_PCT = 2;

describe.skipIf(!isRoot)('QoE experiment smoke run', () => {
  it('produces a QoE log per run, impairer counters near the configured loss, and the report', () => {
    rmSync(OUT, { recursive: true, force: true });
    const run = spawnSync(join(ROOT, 'node_modules/.bin/tsx'), [
      join(ROOT, 'scripts/qoe/run.ts'), '--smoke', '--name', NAME, '--modes', MODES.join(','), '--loss', String(LOSS_PCT),
      '--duration', '25', '--content', demoContentRoot(),
    ], { cwd: ROOT, encoding: 'utf8', timeout: 600_000 });
    expect(run.status, `${run.stdout}\n${run.stderr}`).toBe(0);

    const runs = readdirSync(join(OUT, 'runs')).filter((f) => f.endsWith('.json'));
    expect(runs.length).toBe(MODES.length);
    for (const file of runs) {
      const record = JSON.parse(readFileSync(join(OUT, 'runs', file), 'utf8')) as RunRecord;
      expect(record.error, `${file}: ${record.error}`).toBeUndefined();
      // The smoke matrix's inputs are the project's own, not ../shared's.
      expect([record.run.trace, record.run.pose]).toEqual(['synthetic_bandwidth', 'synthetic_pose.csv']);
      // A run the report counts: its mode's transport, playback started, the log spans the run.
      expect(unusableReason(record), file).toBeUndefined();
      const log = validateQoeLog(record.qoe);
      expect(log.config.mode).toBe(record.run.mode);
      expect(log.segments.length).toBeGreaterThan(0);
      expect(log.segments.some((s) => s.decoded)).toBe(true);
      // The impairer saw the run's packets and dropped about the configured share of them
      // (Gilbert–Elliott losses come in bursts, so a 25-s sample is allowed a wide margin).
      const toClient = record.impairer?.toClient;
      expect(toClient?.seen ?? 0).toBeGreaterThan(1000);
      const measured = measuredLossPct(toClient);
      expect(measured).toBeGreaterThan(LOSS_PCT * 0.4);
      expect(measured).toBeLessThan(LOSS_PCT * 2);
      // Loss on the origin → client direction only (the runner's default); delay both ways.
      expect(record.run.lossDirection).toBe('down');
      expect(record.impairer?.toServer?.seen ?? 0).toBeGreaterThan(100);
      expect(record.impairer?.toServer?.dropped_loss).toBe(0);
    }
    for (const output of ['runs.csv', 'cells.json', 'summary.md', 'dominance.md', 'report.html']) expect(existsSync(join(OUT, output)), output).toBe(true);
    // The plan (every run) and this directory's share of it: one shard of one, all runs.
    const plan = loadPlan(OUT);
    expect(plan?.runs.map((r) => `${r.id}.json`).sort()).toEqual(runs.sort());
    const shard = JSON.parse(readFileSync(join(OUT, SHARD_FILE), 'utf8')) as { plan: string; shard: { index: number; count: number }; runs: string[] };
    expect(shard.shard).toEqual({ index: 1, count: 1 });
    expect(shard.plan).toBe(planDigest(plan!));
    const report = readFileSync(join(OUT, 'report.html'), 'utf8');
    for (const mode of MODES) expect(report).toContain(mode);
  }, 700_000);
});

describe('QoE client', () => {
  it('says at once that a page never started its player (the runner then runs it again)', () => {
    // A page that loads but has no player, as when the player's script was lost on the way:
    // the client must not wait out the run's timeout for a state that cannot come.
    const dir = mkdtempSync(join(tmpdir(), 'holoquic-client-'));
    const out = join(dir, 'qoe.json');
    const startedAt = Date.now();
    const client = spawnSync(join(ROOT, 'node_modules/.bin/tsx'), [
      join(ROOT, 'scripts/qoe/client.ts'), '--url', 'data:text/html,<p>no player here</p>', '--timeout', '300', '--out', out,
    ], { cwd: ROOT, encoding: 'utf8', timeout: 120_000 });
    expect(client.status, `${client.stdout}\n${client.stderr}`).toBe(0);
    expect(Date.now() - startedAt).toBeLessThan(90_000);
    const result = JSON.parse(readFileSync(out, 'utf8')) as { qoe: unknown; error: string | null; pageStarted: boolean };
    expect(result.pageStarted).toBe(false);
    expect(result.qoe).toBeNull();
    expect(result.error?.startsWith(PAGE_NEVER_STARTED), result.error ?? '').toBe(true);
    rmSync(dir, { recursive: true, force: true });
  }, 150_000);
});
