/**
 * How often Chromium's renderer crashes when the origin in use drains (docs/player.md → Drain,
 * "Known browser defect"; docs/benchmarks.md "Drain: renderer crashes"). Each run is one drain as
 * `e2e/drain.e2e.ts` makes it — two fresh origins, a fresh browser playing the app page from the
 * first, SIGTERM to the origin in use as a segment's requests go out — watched for four seconds
 * (the crash comes 0.1–0.5 s after the SIGTERM). A run that crashes is counted by Playwright's
 * `crash` event and, where Crashpad keeps reports, by the minidumps that appeared meanwhile.
 *
 * `--poll`: the test process asks the page for its stats every 100 ms while it watches (as
 * `e2e/drain.e2e.ts` once did every 500 ms from the SIGTERM on): each ask runs script on the
 * page's main thread from outside (the DevTools protocol), which makes the crash much likelier.
 *
 *   npx tsx e2e/bench/drain-crash.ts [--runs 20] [--mode qr] [--draining] [--poll]
 */
import { existsSync, readdirSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { type Browser, launch, until } from '../lib/browser';
import { demoContentRoot } from '../lib/content';
import { type Origin, spkiHash, startOrigin } from '../lib/processes';

const { values } = parseArgs({
  options: { runs: { type: 'string', default: '20' }, mode: { type: 'string', default: 'qr' }, draining: { type: 'boolean', default: false }, poll: { type: 'boolean', default: false } },
});
const runs = Number(values.runs);
if (!(Number.isInteger(runs) && runs > 0)) throw new Error(`--runs must be a positive whole number, got ${values.runs}`);
/** Where Debian's Chromium keeps crash reports not yet uploaded (whatever the profile). */
const CRASH_REPORTS = join(homedir(), '.config/chromium/Crash Reports/pending');
/** How long after the SIGTERM a run watches for the crash. */
const WATCH_MS = 4000;

const wtUrl = (origin: Origin) => `https://127.0.0.1:${origin.quicPort}/holoquic`;
const dumps = () => (existsSync(CRASH_REPORTS) ? readdirSync(CRASH_REPORTS).filter((f) => f.endsWith('.dmp')).length : 0);

/** One drain; what happened: `crash` (with ms after the SIGTERM), `moved` (the player is on the other origin) or `stayed`. */
async function drainOnce(content: string): Promise<string> {
  const origins: Origin[] = [];
  let browser: Browser | null = null;
  try {
    const b = await startOrigin(content);
    origins.push(b);
    const hash = (await (await fetch(`${b.httpBase}/cert-hash`)).json()) as { value: string };
    const a = await startOrigin(content, ['--wt-endpoint', `${wtUrl(b)} sha-256=${hash.value}`]);
    origins.push(a);
    browser = await launch({ spki: await spkiHash('127.0.0.1', a.quicPort), args: values.draining ? ['--enable-blink-features=WebTransportDraining'] : [] });
    const page = browser.page;
    // Counts request streams, so that the SIGTERM can come as one goes out.
    await page.addInitScript(() => {
      const counted = window as unknown as { requestStreams: number };
      counted.requestStreams = 0;
      const open = WebTransport.prototype.createBidirectionalStream;
      WebTransport.prototype.createBidirectionalStream = function (this: WebTransport, ...args: Parameters<typeof open>) {
        counted.requestStreams++;
        return open.apply(this, args);
      };
    });
    const query = new URLSearchParams({ origin: a.httpsBase, manifest: '/content/demo/manifest.mpd', autoplay: '1', render: '0', mode: values.mode!, duration: '60' });
    await page.goto(`${a.httpBase}/?${query}`);
    const stats = () => page.evaluate(() => window.holoquic?.stats() ?? null);
    const before = await until(browser, 'three seconds played', async () => {
      const s = await stats();
      return s && s.playedS > 3 && s.endpoint ? s : null;
    }, 60_000);
    const victim = before.endpoint === wtUrl(a) ? a : b;
    await page.evaluate(() => new Promise<void>((resolve) => {
      const counted = window as unknown as { requestStreams: number };
      const seen = counted.requestStreams;
      const deadline = performance.now() + 10_000;
      // (no named function here: tsx would wrap it in a helper the page does not have)
      const timer = setInterval(() => {
        if (counted.requestStreams === seen && performance.now() < deadline) return;
        clearInterval(timer);
        resolve();
      }, 1);
    }));
    victim.process.kill('SIGTERM');
    const sigtermAt = Date.now();
    while (Date.now() - sigtermAt < WATCH_MS && !browser.crashed()) {
      if (values.poll) await stats().catch(() => null);
      await new Promise((r) => setTimeout(r, values.poll ? 100 : 20));
    }
    if (browser.crashed()) return `crash ${Date.now() - sigtermAt} ms after the SIGTERM`;
    const after = await stats();
    return after?.endpoint && after.endpoint !== wtUrl(victim) ? `moved (${after.lastSwitchReason})` : 'stayed';
  } catch (e) {
    if (browser?.crashed()) return 'crash';
    throw e;
  } finally {
    await browser?.close();
    for (const o of origins) await o.stop();
  }
}

const content = demoContentRoot();
const dumpsBefore = dumps();
let crashes = 0;
for (let run = 1; run <= runs; run++) {
  const outcome = await drainOnce(content);
  if (outcome.startsWith('crash')) crashes++;
  console.log(`run ${run}/${runs}: ${outcome}`);
}
console.log(`drain-crash: mode ${values.mode}${values.draining ? ', draining promise' : ''}${values.poll ? ', polled' : ''}: ${crashes} renderer crashes in ${runs} drains; ` +
  `${dumps() - dumpsBefore} new minidumps in ${CRASH_REPORTS} (other browsers on this machine write there too)`);
