/**
 * Decode-to-display latency of the demo app (docs/benchmarks.md "Renderer"): the real origin,
 * the packed demo scene, headless Chromium drawing with SwiftShader. For every segment and object
 * that was decoded, from "bytes complete + decode time" (QoE log) to the end of the first draw
 * after the player made that segment current ('segment' event → renderer's next draw).
 *
 *   npx tsx e2e/bench/decode-to-display.ts [--seconds 40] [--mode qr]
 */
import { parseArgs } from 'node:util';
import { launch } from '../lib/browser';
import { demoContentRoot } from '../lib/content';
import { spkiHash, startOrigin } from '../lib/processes';

const { values } = parseArgs({ options: { seconds: { type: 'string', default: '40' }, mode: { type: 'string', default: 'qr' } } });
const seconds = Number(values.seconds);

const origin = await startOrigin(demoContentRoot());
const browser = await launch({ spki: await spkiHash('127.0.0.1', origin.quicPort) });
try {
  await browser.page.setViewportSize({ width: 960, height: 540 });
  await browser.page.addInitScript(() => {
    const shown: { k: number; eventAt: number; drawnAt: number }[] = [];
    (window as unknown as { shown: typeof shown }).shown = shown;
    const observer = new MutationObserver(() => {
      const element = document.querySelector('holoquic-player');
      if (!element) return;
      observer.disconnect();
      element.addEventListener('segment', (e) => {
        const k = (e as CustomEvent<{ index: number }>).detail.index;
        const eventAt = performance.now();
        // No named functions in here: tsx's keepNames would wrap them in a helper the page lacks.
        const poll = setInterval(() => {
          const drawnAt = element.renderer?.stats().lastDrawAt ?? NaN;
          if (!(drawnAt >= eventAt)) return;
          clearInterval(poll);
          shown.push({ k, eventAt, drawnAt });
        }, 2);
      });
    });
    observer.observe(document, { childList: true, subtree: true });
  });
  const query = new URLSearchParams({ origin: origin.httpsBase, manifest: '/content/demo/manifest.mpd', mode: values.mode!, autoplay: '1' });
  await browser.page.goto(`${origin.httpBase}/?${query}`);
  await new Promise((r) => setTimeout(r, seconds * 1000));
  const result = await browser.page.evaluate(() => {
    const element = document.querySelector('holoquic-player')!;
    const log = element.qoe()!;
    // The log's times are seconds since load(); this page's clock is performance.now().
    const originS = performance.now() / 1000 - log.playback.wallS;
    return { originS, shown: (window as unknown as { shown: { k: number; eventAt: number; drawnAt: number }[] }).shown, segments: log.segments, freezes: log.freezes.length };
  });
  const shownAt = new Map(result.shown.map((s) => [s.k, s]));
  const latency: number[] = [];
  const decode: number[] = [];
  const draw = result.shown.map((s) => s.drawnAt - s.eventAt);
  for (const r of result.segments) {
    const s = shownAt.get(r.index);
    if (!s || !r.decoded || r.completedAtS === undefined || r.decodeMs === undefined) continue;
    const decodedAt = r.completedAtS + r.decodeMs / 1000;
    const ms = (s.drawnAt / 1000 - result.originS - decodedAt) * 1000;
    if (ms >= 0) latency.push(ms); // a negative value: the segment was shown before this record's (late) decode
    decode.push(r.decodeMs);
  }
  const pct = (xs: number[], p: number) => {
    const sorted = [...xs].sort((a, b) => a - b);
    return sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor((sorted.length - 1) * p))] : NaN;
  };
  console.log(`${seconds} s, mode ${values.mode}: ${result.shown.length} segments shown, ${latency.length} decoded objects, ${result.freezes} freezes`);
  console.log('| quantity | median ms | p90 ms |');
  console.log('|---|---|---|');
  console.log(`| decode (worker, per segment of 30 frames) | ${pct(decode, 0.5).toFixed(0)} | ${pct(decode, 0.9).toFixed(0)} |`);
  console.log(`| decoded → first draw of its segment | ${pct(latency, 0.5).toFixed(0)} | ${pct(latency, 0.9).toFixed(0)} |`);
  console.log(`| segment current → drawn (renderer only) | ${pct(draw, 0.5).toFixed(0)} | ${pct(draw, 0.9).toFixed(0)} |`);
} finally {
  await browser.close();
  await origin.stop();
}
