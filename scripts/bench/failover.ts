/**
 * Failover time (docs/benchmarks.md → "Failover"): two real origins serving the packed demo
 * scene, the first listing the second in its /config.json (`--wt-endpoint`, pinned by the
 * second's certificate hash), and real headless Chromium playing the app page. Each trial starts
 * both origins and a fresh browser, plays until 3 s are shown, kills (SIGKILL) the origin whose
 * WebTransport session is in use and measures, on the player's own clock (the QoE log's, seconds
 * since load()):
 *
 *   switch       loss of the origin → the session on the other origin opened (the QoE switch record;
 *                straight, or through HTTP/2 when the first attempts failed and a probe found it)
 *   first frame  loss of the origin → the first object from the other origin (over WebTransport,
 *                complete after the switch) decoded: completedAtS + decodeMs, its frames can be shown
 *   freezes      playback stops after the kill, and their total length
 *
 * and prints each trial and the median and p95 (nearest rank) over the trials.
 *
 *   npx tsx scripts/bench/failover.ts [--trials 20] [--mode qr]
 */
import { parseArgs } from 'node:util';
import type { QoeLog } from '../../src/model/qoe';
import type { PlayerStats } from '../../src/player/report';
import { type Browser, launch, until } from '../../e2e/lib/browser';
import { demoContentRoot } from '../../e2e/lib/content';
import { type Origin, spkiHash, startOrigin } from '../../e2e/lib/processes';

const { values } = parseArgs({ options: { trials: { type: 'string', default: '20' }, mode: { type: 'string', default: 'qr' } } });
const trials = Number(values.trials);
if (!(Number.isInteger(trials) && trials >= 1)) throw new Error(`--trials must be a whole number ≥ 1, got ${values.trials}`);

const MANIFEST = '/content/demo/manifest.mpd';
const wtUrl = (origin: Origin) => `https://127.0.0.1:${origin.quicPort}/holoquic`;

interface Trial {
  killed: 'A' | 'B';
  /** `direct`: the session moved to the other origin at once; `http2`: it fell back first and a probe found the other. */
  via: 'direct' | 'http2';
  reasons: string[];
  switchS: number;
  firstFrameS: number;
  freezes: number;
  frozenS: number;
}

async function stats(browser: Browser): Promise<PlayerStats | null> {
  return browser.page.evaluate(() => window.holoquic?.stats() ?? null);
}

async function qoe(browser: Browser): Promise<QoeLog | null> {
  return browser.page.evaluate(() => JSON.parse(JSON.stringify(window.holoquic?.qoe() ?? null)) as QoeLog | null);
}

async function trial(content: string): Promise<Trial> {
  const originB = await startOrigin(content);
  const origins: Origin[] = [originB];
  let browser: Browser | null = null;
  try {
    const hash = (await (await fetch(`${originB.httpBase}/cert-hash`)).json()) as { value: string };
    const originA = await startOrigin(content, ['--wt-endpoint', `${wtUrl(originB)} sha-256=${hash.value}`]);
    origins.push(originA);
    browser = await launch({ spki: await spkiHash('127.0.0.1', originA.quicPort) });
    const query = new URLSearchParams({ origin: originA.httpsBase, manifest: MANIFEST, autoplay: '1', render: '0', mode: values.mode!, duration: '60' });
    await browser.page.goto(`${originA.httpBase}/?${query}`);
    const b = browser;
    const before = await until(b, 'three seconds played', async () => {
      const s = await stats(b);
      return s && s.playedS > 3 && s.endpoint ? s : null;
    }, 60_000);
    const victim = before.endpoint === wtUrl(originA) ? originA : originB;
    const survivor = victim === originA ? originB : originA;
    const killedAtS = (await qoe(b))!.playback.wallS;
    victim.process.kill('SIGKILL');
    const story = async () => JSON.stringify((await qoe(b))?.switches ?? []);
    const result = await until(b, 'a decoded object from the other origin', async () => {
      const log = await qoe(b);
      // Straight from the lost origin, or through HTTP/2 when the first attempts failed.
      const sw = log?.switches?.find((s) => s.to === wtUrl(survivor) && s.atS > killedAtS);
      if (!log || !sw) return null;
      const ready = log.segments
        // Completed after the switch over WebTransport: from the other origin (the lost session is closed by then).
        .filter((s) => s.transport === 'webtransport' && s.decoded && s.completedAtS !== undefined && s.completedAtS > sw.atS)
        .map((s) => s.completedAtS! + (s.decodeMs ?? 0) / 1000);
      if (!ready.length) return null;
      const freezes = log.freezes.filter((f) => f.atS + f.durationS >= killedAtS);
      return {
        killed: victim === originA ? 'A' : 'B', via: log.switches!.some((s) => s.to === 'http2' && s.atS > killedAtS && s.atS < sw.atS) ? 'http2' : 'direct',
        reasons: log.switches!.filter((s) => s.atS > killedAtS && s.atS <= sw.atS).map((s) => `${s.to}: ${s.reason}`), switchS: sw.atS - killedAtS, firstFrameS: Math.min(...ready) - killedAtS,
        freezes: freezes.length, frozenS: freezes.reduce((a, f) => a + f.durationS, 0),
      } satisfies Trial;
    }, 60_000).catch(async (e: Error) => {
      throw new Error(`killed ${victim === originA ? 'A' : 'B'} (${wtUrl(victim)}): ${e.message.split('\n')[0]}; switches: ${await story()}`);
    });
    return result;
  } finally {
    await browser?.close();
    for (const o of origins) await o.stop();
  }
}

/** Nearest-rank percentile of `values` (p in 0…100). */
function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}

const content = demoContentRoot();
const results: Trial[] = [];
const failed: string[] = [];
for (let i = 0; i < trials; i++) {
  let t: Trial;
  try {
    t = await trial(content);
  } catch (e) {
    // A trial that never reached the other origin is a result too: counted and shown, not dropped silently.
    failed.push(`trial ${i + 1}: ${e instanceof Error ? e.message : e}`);
    console.log(failed.at(-1));
    continue;
  }
  results.push(t);
  console.log(`trial ${String(i + 1).padStart(2)}: killed ${t.killed}, ${t.via}, switch ${t.switchS.toFixed(3)} s, first frame ${t.firstFrameS.toFixed(3)} s, ` +
    `freezes ${t.freezes} (${t.frozenS.toFixed(2)} s)` + (t.via === 'http2' || retried(t) ? `\n  ${t.reasons.join('\n  ')}` : ''));
}
/** The first attempt at the other origin failed and a retry at it opened (no HTTP/2 between). */
function retried(t: Trial): boolean {
  return t.via === 'direct' && t.reasons.some((r) => r.includes('attempt(s) failed'));
}

const row = (name: string, xs: number[]) => `${name.padEnd(12)} median ${percentile(xs, 50).toFixed(3)} s, p95 ${percentile(xs, 95).toFixed(3)} s, max ${Math.max(...xs).toFixed(3)} s`;
console.log(`\n${trials} trials, mode ${values.mode}: ${results.length} reached the other origin, ${failed.length} did not`);
if (!results.length) process.exit(1);
console.log(row('switch', results.map((t) => t.switchS)));
console.log(row('first frame', results.map((t) => t.firstFrameS)));
console.log(`via HTTP/2    ${results.filter((t) => t.via === 'http2').length} of ${results.length} (the first attempts at the other origin failed; a background probe found it)`);
console.log(`retried      ${results.filter(retried).length} of ${results.length} (the first attempt at the other origin failed, a retry at it opened)`);
console.log(`freezes      ${results.filter((t) => t.freezes > 0).length} of ${trials} trials froze; longest total ${Math.max(...results.map((t) => t.frozenS)).toFixed(2)} s`);
