/**
 * The origin in use drains mid-play (docs/player.md → "Failover and fallback", Drain): two real
 * origins serving the same packed demo scene, the first listing the second's WebTransport
 * endpoint (pinned by its certificate hash), and real headless Chromium playing the app page.
 * The origin whose session is in use gets SIGTERM: it refuses new requests (503) and tells its
 * sessions it drains, finishes the objects it is sending, closes the session and exits. The
 * player must move its new requests to the other origin before that close — no freeze, no
 * object lost, one switch with the reason `drain` in the QoE log and the stats, and no second
 * switch when the drained session closes — while the objects in flight on the draining session
 * arrive there.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type QoeLog } from '../src/model/qoe';
import type { PlayerStats } from '../src/player/report';
import { validateQoeLog } from '../src/qoe/schema';
import { type Browser, launch, until } from './lib/browser';
import { demoContentRoot } from './lib/content';
import { type Origin, spkiHash, startOrigin } from './lib/processes';

const MANIFEST = '/content/demo/manifest.mpd';
const wtUrl = (origin: Origin) => `https://127.0.0.1:${origin.quicPort}/holoquic`;

let content: string;
const origins: Origin[] = [];
let browser: Browser | null = null;

async function stats(b: Browser): Promise<PlayerStats | null> {
  return b.page.evaluate(() => window.holoquic?.stats() ?? null);
}

async function qoe(b: Browser): Promise<QoeLog> {
  const log = await b.page.evaluate(() => window.holoquic?.qoe() ?? null);
  return validateQoeLog(JSON.parse(JSON.stringify(log)));
}

declare global {
  interface Window {
    /** Request streams the page has opened (counted by `watchSessions`). */
    requestStreams?: number;
    /** Sessions whose `draining` promise resolved (where the browser has it). */
    drainingResolved?: number;
  }
}

/**
 * Counts the WebTransport streams the page opens (each is one object request), and the sessions
 * whose `draining` promise resolves where the browser has one.
 */
function watchSessions(): void {
  window.requestStreams = 0;
  window.drainingResolved = 0;
  const open = WebTransport.prototype.createBidirectionalStream;
  WebTransport.prototype.createBidirectionalStream = function (this: WebTransport, ...args: Parameters<typeof open>) {
    window.requestStreams!++;
    return open.apply(this, args);
  };
  const draining = Object.getOwnPropertyDescriptor(WebTransport.prototype, 'draining');
  if (!draining?.get) return;
  const seen = new WeakSet<object>();
  Object.defineProperty(WebTransport.prototype, 'draining', {
    get(this: WebTransport) {
      const promise = draining.get!.call(this) as Promise<unknown>;
      if (!seen.has(this)) {
        seen.add(this);
        promise.then(() => window.drainingResolved!++, () => undefined);
      }
      return promise;
    },
  });
}

/**
 * Resolves once the page opens its next request stream (requests are in flight then), with the
 * player's clock then (the QoE log's seconds).
 */
async function nextRequest(b: Browser): Promise<number> {
  return b.page.evaluate(() => new Promise<number>((resolve, reject) => {
    const seen = window.requestStreams!;
    const deadline = performance.now() + 10_000;
    const check = () => {
      if (window.requestStreams! > seen) resolve(window.holoquic!.qoe()!.playback.wallS);
      else if (performance.now() > deadline) reject(new Error('no request within 10 s'));
      else setTimeout(check, 1);
    };
    check();
  }));
}

/** Origin B, then origin A listing B after itself in its /config.json. */
async function twoOrigins(): Promise<[Origin, Origin]> {
  const b = await startOrigin(content);
  origins.push(b);
  const hash = (await (await fetch(`${b.httpBase}/cert-hash`)).json()) as { value: string };
  const a = await startOrigin(content, ['--wt-endpoint', `${wtUrl(b)} sha-256=${hash.value}`]);
  origins.push(a);
  return [a, b];
}

/** Resolves with the exit code once `origin` has exited, or null after `timeoutMs`. */
function exited(origin: Origin, timeoutMs: number): Promise<number | null> {
  const child = origin.process;
  if (child.exitCode !== null) return Promise.resolve(child.exitCode);
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(null), timeoutMs);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve(code);
    });
  });
}

beforeAll(() => {
  content = demoContentRoot();
});

afterAll(async () => {
  await browser?.close();
  for (const o of origins) await o.stop();
});

/** Attempts at one drain before Chromium's renderer crash fails the test (see below). */
const MAX_ATTEMPTS = 5;

describe('drain', () => {
  // Chromium 156 resolves a session's `draining` promise only with its Blink feature
  // `WebTransportDraining` on; without it the player learns of the drain from the origin
  // (drain.ts).
  it.each([
    { mode: 'qr', draining: false },
    { mode: 'qpr-fec', draining: false },
    { mode: 'qr', draining: true },
  ])('mode $mode, draining promise $draining: SIGTERM to the origin in use moves playback to the other with no freeze and no object lost', async ({ mode, draining }) => {
    // Chromium 156's renderer sometimes crashes as the origin drains (a null dereference on the
    // page's main thread; docs/player.md → Drain, "Known browser defect": one drain in five to
    // ten here while this test polled the page through the drain, about one in 70 when nothing
    // asks the page anything, which is why it waits for the origin's exit before asking; no
    // change of ours was shown to avoid it; e2e/bench/drain-crash.ts measures the rate). Web
    // content must not be able to crash a renderer, so that is Chromium's defect: a crashed
    // attempt is logged and run again in a fresh browser with fresh origins, up to five
    // attempts; a fifth crash, or any other failure, fails the test. Three were not enough:
    // CI once saw three crashes in a row (2 in 20 drains with the draining promise on an idle
    // machine, e2e/bench/drain-crash.ts --draining; more under CI's load).
    for (let attempt = 1; ; attempt++) {
      try {
        await drainScenario(mode, draining);
        return;
      } catch (error) {
        // Playwright's `crash` event, or the rejection it gives what was asked of the page then.
        const crashed = (browser?.crashed() ?? false) || /Target crashed/.test(String(error));
        await browser?.close();
        browser = null;
        if (!crashed || attempt === MAX_ATTEMPTS) throw error;
        console.log(`drain (${mode}): Chromium's renderer crashed (attempt ${attempt}); once more in a fresh browser`);
      }
    }
  }, 420_000);
});

/**
 * One drain: two fresh origins, a fresh browser playing from the first, SIGTERM to the one in
 * use as a segment's requests go out, and every check of the move.
 */
async function drainScenario(mode: string, draining: boolean): Promise<void> {
  const [originA, originB] = await twoOrigins();
  const args = draining ? ['--enable-blink-features=WebTransportDraining'] : [];
  browser = await launch({ spki: await spkiHash('127.0.0.1', originA.quicPort), args });
  const b = browser;
  await b.page.addInitScript(watchSessions);
  const query = new URLSearchParams({ origin: originA.httpsBase, manifest: MANIFEST, autoplay: '1', render: '0', mode, duration: '60' });
  await b.page.goto(`${originA.httpBase}/?${query}`);
  const before = await until(b, 'three seconds played', async () => {
    const s = await stats(b);
    return s && s.playedS > 3 && s.endpoint ? s : null;
  }, 60_000);
  const [victim, survivor] = before.endpoint === wtUrl(originA) ? [originA, originB] : [originB, originA];
  // SIGTERM as a segment's requests go out, so that some are in flight on the draining session
  // and others reach it after the drain began (refused, asked again on the other origin).
  const drainAtS = await nextRequest(b);
  victim.process.kill('SIGTERM');
  // The drained origin finishes and exits by itself, well within its 10-s grace period. Nothing
  // is asked of the page until then: Chromium's renderer crash (see the retry above) comes in
  // that moment, and far more often while the test runs script on the page
  // (e2e/bench/drain-crash.ts --poll).
  expect(await exited(victim, 15_000), victim.output().slice(-2000)).toBe(0);
  const moved = await until(b, 'the session on the other origin', async () => {
    const s = await stats(b);
    return s?.endpoint === wtUrl(survivor) ? s : null;
  }, 20_000);
  await until(b, 'five more seconds played', async () => ((await stats(b))?.playedS ?? 0) > moved.playedS + 5, 30_000);
  // A segment's records are written when it is shown, and the first objects asked of the other
  // origin are for a segment a buffer target ahead (4 s once the link counted as volatile): five
  // seconds are not always enough for one to be shown (about one run in 25 had none yet).
  const log = await until(b, 'a record of an object asked for after the move', async () => {
    const l = await qoe(b);
    const switchedAtS = (l.switches ?? []).find((s) => s.atS >= drainAtS)?.atS ?? Infinity;
    return l.segments.some((s) => s.requestedAtS > switchedAtS && s.delivery !== 'skip') ? l : null;
  }, 20_000);
  // What happened, before any check: the access log's refusals and the origin's warnings.
  const refused = (victim.output().match(/status=503/g) ?? []).length;
  const warnings = victim.output().split('\n').filter((l) => /WARN|ERROR/.test(l)).slice(-10);
  console.log(`drain (${mode}${draining ? ', draining promise' : ''}): SIGTERM at ${drainAtS.toFixed(2)} s; ` +
    `switches ${JSON.stringify(log.switches)}; ${refused} requests refused by the draining origin (asked again on the other)${warnings.length ? `; origin: ${warnings.join(' | ')}` : ''}`);
  const after = (log.switches ?? []).filter((s) => s.atS >= drainAtS);
  // With the draining promise the player always learns of the drain in time. Without it, it
  // learns from a refusal or the clean close — but Chromium 156 reports about one drained
  // session in six as `Connection lost.` (closed rejects) before either reaches the page, which
  // reads as a loss: the move is the same, its reason is not (docs/player.md → Drain).
  const reasons = draining ? ['drain'] : ['drain', 'session lost'];
  expect(after, JSON.stringify(log.switches)).toEqual([expect.objectContaining({ from: wtUrl(victim), to: wtUrl(survivor) })]);
  expect(reasons, JSON.stringify(log.switches)).toContain(after[0].reason);
  const freezes = log.freezes.filter((f) => f.atS + f.durationS >= drainAtS);
  expect(freezes, JSON.stringify(freezes)).toEqual([]);
  // Every object asked for from a buffer before the drain on (those in flight on the draining
  // session, those refused by it and asked again, those from the other origin) arrived.
  const around = log.segments.filter((s) => s.delivery !== 'skip' && s.requestedAtS >= drainAtS - 2.5);
  const lost = around.filter((s) => !s.recovered);
  expect(lost.map((s) => `${s.object}#${s.index} q${s.quality} ${s.delivery} at ${s.requestedAtS.toFixed(2)} s`)).toEqual([]);
  expect(around.some((s) => s.requestedAtS < drainAtS), 'objects requested before the drain').toBe(true);
  const fromSurvivor = around.filter((s) => s.requestedAtS > after[0].atS && s.decoded && s.transport === 'webtransport');
  expect(fromSurvivor.length, 'objects decoded from the other origin').toBeGreaterThan(0);
  const drainingResolved = await b.page.evaluate(() => window.drainingResolved ?? 0);
  if (draining) expect(drainingResolved, 'the draining promise resolved').toBeGreaterThan(0);
  const final = (await stats(b))!;
  expect(final.lastSwitchReason).toBe(after[0].reason);
  expect(final.transport).toBe('webtransport');
  const inFlight = around.filter((s) => s.requestedAtS < drainAtS && (s.completedAtS ?? 0) > drainAtS).length;
  console.log(`drain (${mode}): switched (${after[0].reason}) ${((after[0].atS - drainAtS) * 1000).toFixed(0)} ms after the SIGTERM; ${around.length} objects around it ` +
    `(${inFlight} in flight at the SIGTERM; draining promises resolved: ${drainingResolved}), none lost, no freeze`);
  await b.close();
  browser = null;
  await survivor.stop();
}
