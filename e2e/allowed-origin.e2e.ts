/**
 * Which pages may open WebTransport sessions (`--allow-origin`, docs/origin.md): real headless
 * Chromium on a page whose origin an origin does not list gets its extended CONNECT refused with
 * 403 — the session never opens, the player falls back, and the origin counts the refusal — while
 * a page of a listed origin opens a session to the same kind of origin.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type Browser, launch } from './lib/browser';
import { type Origin, originMetric, startOrigin } from './lib/processes';

let strict: Origin;
let welcoming: Origin;
let browser: Browser;

beforeAll(async () => {
  const content = mkdtempSync(join(tmpdir(), 'holoquic-allowed-'));
  // `strict` serves the page and lists only another site; `welcoming` lists `strict`'s page origin.
  strict = await startOrigin(content, ['--allow-origin', 'https://elsewhere.example']);
  welcoming = await startOrigin(content, ['--allow-origin', strict.httpBase]);
  browser = await launch();
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await strict?.stop();
  await welcoming?.stop();
});

/** Opens the transport page on `strict`'s plain-HTTP listener, taking /config.json from `configFrom`. */
async function connectFromStrictPage(configFrom: Origin): Promise<{ webtransport: boolean; fallbackReason?: string }> {
  const query = new URLSearchParams({ origin: configFrom.httpBase });
  await browser.page.goto(`${strict.httpBase}/e2e/pages/transport.html?${query}`);
  return browser.page.evaluate(() => window.holoquicTransportTest.connect());
}

it('a page on an origin not in --allow-origin gets 403 for its CONNECT', async () => {
  const refusedBefore = await originMetric(strict, 'sessions_refused_total');
  const result = await connectFromStrictPage(strict);
  expect(result.fallbackReason, browser.log.join('\n')).toMatch(/WebTransport/);
  expect(await originMetric(strict, 'sessions_refused_total')).toBeGreaterThan(refusedBefore);
  expect(await originMetric(strict, 'sessions_total')).toBe(0);
});

it('a page on a listed origin opens its session', async () => {
  const result = await connectFromStrictPage(welcoming);
  expect(result, browser.log.join('\n')).toEqual({ webtransport: true });
  expect(await originMetric(welcoming, 'sessions_refused_total')).toBe(0);
});
