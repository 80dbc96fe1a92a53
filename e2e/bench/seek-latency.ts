/**
 * Seek latency of `<holoquic-player>` (docs/benchmarks.md "Seek latency"): the real origin, the
 * demo scene's segments under a 10-s pass (e2e/lib/seekScene.ts), headless Chromium drawing with
 * SwiftShader. Each seek sets `currentTime` to a seeded random target while playing and measures
 * until the renderer's first draw after `seeked` — the target's frame on screen.
 *
 *   npx tsx e2e/bench/seek-latency.ts [--seeks 30] [--mode qr|h2]
 */
import { parseArgs } from 'node:util';
import { launch } from '../lib/browser';
import { spkiHash, startOrigin } from '../lib/processes';
import { seekContentRoot } from '../lib/seekScene';

const { values } = parseArgs({ options: { seeks: { type: 'string', default: '30' }, mode: { type: 'string', default: 'qr' } } });
const seeks = Number(values.seeks);

const content = seekContentRoot(10);
const origin = await startOrigin(content.root);
const browser = await launch({ spki: await spkiHash('127.0.0.1', origin.quicPort) });
try {
  await browser.page.setViewportSize({ width: 960, height: 540 });
  await browser.page.goto(`${origin.httpBase}/embed.html`);
  // Page code as text: the bundler's helpers for named functions do not exist in the page.
  const result = await browser.page.evaluate(`(async () => {
    document.querySelector('holoquic-player')?.remove();
    const el = document.createElement('holoquic-player');
    el.setAttribute('src', '/content/long/manifest.mpd');
    el.setAttribute('mode', ${JSON.stringify(values.mode)});
    el.setAttribute('loop', '');
    el.style.height = '540px';
    document.body.append(el);
    await el.play();
    await new Promise((r) => setTimeout(r, 3000));
    let seed = 7;
    const random = () => (seed = (seed * 16807) % 2147483647) / 2147483647;
    const out = [];
    for (let i = 0; i < ${seeks}; i++) {
      const target = Math.round(random() * 9.9 * 100) / 100;
      const from = el.currentTime;
      const setAt = performance.now();
      const seekedAt = await new Promise((resolve) => {
        el.addEventListener('seeked', () => resolve(performance.now()), { once: true });
        el.currentTime = target;
      });
      const drawnAt = await new Promise((resolve) => {
        const poll = setInterval(() => {
          const at = el.renderer.stats().lastDrawAt;
          if (at >= seekedAt) { clearInterval(poll); resolve(at); }
        }, 2);
      });
      out.push({ from, target, seekedMs: seekedAt - setAt, drawnMs: drawnAt - setAt, transport: el.getStats().transport });
      await new Promise((r) => setTimeout(r, 1500));
    }
    return out;
  })()`) as Array<{ from: number; target: number; seekedMs: number; drawnMs: number; transport: string }>;
  const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(p * xs.length))];
  const drawn = result.map((r) => r.drawnMs);
  const seeked = result.map((r) => r.seekedMs);
  console.log(`mode ${values.mode}, transport ${result[0]?.transport}, ${result.length} seeks while playing`);
  console.log(`set currentTime → first frame of the target drawn: median ${pct(drawn, 0.5).toFixed(0)} ms, p95 ${pct(drawn, 0.95).toFixed(0)} ms`);
  console.log(`set currentTime → seeked: median ${pct(seeked, 0.5).toFixed(0)} ms, p95 ${pct(seeked, 0.95).toFixed(0)} ms`);
} finally {
  await browser.close();
  await origin.stop();
  content.remove();
}
