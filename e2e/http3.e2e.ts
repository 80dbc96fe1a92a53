/**
 * The origin as an HTTP/3 web server, in real headless Chromium: with the browser forced onto
 * QUIC for the origin (where a browser goes after the HTTPS side's `Alt-Svc: h3` once it trusts
 * the certificate), the app page, its scripts, `/config.json`, the manifest and every segment of
 * an `h2`-mode run load over HTTP/3. Proven twice: the browser's Resource Timing says `h3` for
 * each of them, and the origin counted them as HTTP/3 requests (none as HTTPS).
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type Browser, launch, until } from './lib/browser';
import { demoContentRoot } from './lib/content';
import { type Origin, originMetric, spkiHash, startOrigin } from './lib/processes';

const MANIFEST = '/content/demo/manifest.mpd';

let origin: Origin;
let browser: Browser;

beforeAll(async () => {
  origin = await startOrigin(demoContentRoot());
  browser = await launch({ spki: await spkiHash('127.0.0.1', origin.quicPort), forceQuic: `127.0.0.1:${origin.quicPort}` });
});

afterAll(async () => {
  await browser?.close();
  await origin?.stop();
});

interface Loaded {
  name: string;
  protocol: string;
  /** Whether a response arrived (false: aborted before it did). */
  answered: boolean;
  /** Whether it came from the origin (not the browser's cache). */
  fromNetwork: boolean;
}

it('loads the page, the manifest and h2-mode segments over HTTP/3', async () => {
  const [h3Before, httpsBefore] = [await originMetric(origin, 'http3_requests_total'), await originMetric(origin, 'https_requests_total')];
  const query = new URLSearchParams({ origin: origin.httpsBase, manifest: MANIFEST, mode: 'h2', autoplay: '1', render: '0', duration: '3' });
  const page = browser.page;
  await page.goto(`${origin.httpsBase}/?${query}`);
  const state = await until(browser, 'the h2-mode run to end', async () => {
    const s = await page.evaluate(() => window.holoquic?.state() ?? 'loading');
    return s === 'ended' || s === 'failed' ? s : null;
  }, 90_000);
  const qoe = await page.evaluate(() => window.holoquic?.qoe() ?? null);
  expect(state, `${await page.evaluate(() => window.holoquic?.error())}\n${browser.log.slice(-10).join('\n')}`).toBe('ended');
  expect(qoe?.config.transport).toBe('http2');

  const loaded: Loaded[] = await page.evaluate(() =>
    [...performance.getEntriesByType('navigation'), ...performance.getEntriesByType('resource')].map((e) => {
      const timing = e as PerformanceResourceTiming;
      return { name: new URL(e.name).pathname, protocol: timing.nextHopProtocol, answered: timing.responseStart > 0, fromNetwork: timing.transferSize > 0 };
    }));
  const story = loaded.map((l) => `${l.protocol || '-'} ${l.answered ? '' : '(aborted) '}${l.name}`).join('\n');
  const segments = loaded.filter((l) => l.answered && l.name.startsWith('/content/demo/') && l.name !== MANIFEST);
  for (const must of ['/', '/config.json', MANIFEST]) expect(loaded.some((l) => l.answered && l.name === must), `${must} missing:\n${story}`).toBe(true);
  expect(segments.length, story).toBeGreaterThanOrEqual(8);
  // Everything answered came over HTTP/3. The run's end aborts the segment requests still in
  // flight: those have no protocol, and may only be segments.
  expect(loaded.filter((l) => l.answered && l.protocol !== 'h3'), story).toEqual([]);
  expect(loaded.filter((l) => !l.answered && !l.name.startsWith('/content/demo/')), story).toEqual([]);

  // The origin saw them on QUIC: an HTTP/3 request at least for every answer from the network,
  // and no HTTPS request but the two /metrics reads of this test (before and after).
  const [h3After, httpsAfter] = [await originMetric(origin, 'http3_requests_total'), await originMetric(origin, 'https_requests_total')];
  expect(h3After - h3Before, story).toBeGreaterThanOrEqual(loaded.filter((l) => l.answered && l.fromNetwork).length);
  expect(httpsAfter - httpsBefore).toBeLessThanOrEqual(2);
});
