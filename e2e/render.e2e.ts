/**
 * The renderer end to end: the demo app in real headless Chromium (WebGL on SwiftShader) playing
 * the real packed demo scene from the real origin through the real wasm decoder. What was drawn
 * is read back from the WebGL drawing buffer and compared with where the MPD puts each object:
 * drawn pixels inside every object's projected bounding box, background everywhere else, and a
 * picture that changes as the content plays — reconstructed in the decode workers, as the element
 * chooses on a software rasteriser, and in the vertex shader when asked to.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Browser, launch, until as waitUntil } from './lib/browser';
import { demoContentRoot } from './lib/content';
import { type Origin, spkiHash, startOrigin } from './lib/processes';
import { changedPixels, drawnIn, inRect, isDrawn, snapshot } from './lib/view';

let origin: Origin;
let browser: Browser;

/** Polls until `probe` gives a value (fails after 120000 ms with the browser's last log lines). */
function until<T>(what: string, probe: () => Promise<T | null | undefined | false>, timeoutMs = 120_000): Promise<T> {
  return waitUntil(browser, what, probe, timeoutMs);
}

beforeAll(async () => {
  const content = demoContentRoot();
  origin = await startOrigin(content);
  browser = await launch({ spki: await spkiHash('127.0.0.1', origin.quicPort) });
  await browser.page.setViewportSize({ width: 960, height: 540 });
  const query = new URLSearchParams({ origin: origin.httpsBase, manifest: '/content/demo/manifest.mpd', mode: 'qr', autoplay: '1' });
  await browser.page.goto(`${origin.httpBase}/?${query}`);
  // Every object has a decoded frame on the GPU.
  await until('every object drawn', () => browser.page.evaluate(() => {
    const element = document.querySelector('holoquic-player');
    const stats = element?.getStats();
    if (stats?.state === 'failed') throw new Error(`player failed: ${stats && element?.error}`);
    return !!stats && stats.objects.length > 0 && stats.objects.every((o) => o.points > 0) && (stats.render?.pointsDrawn ?? 0) > 0;
  }));
});

afterAll(async () => {
  await browser?.close();
  await origin?.stop();
});

/**
 * Every object drawn inside its projected bounding box, background elsewhere; `gpuObjects` of
 * them reconstructed in the vertex shader.
 */
async function checkPicture(gpuObjects: (ids: string[]) => number): Promise<void> {
  const first = await snapshot(browser.page);
  const ids = Object.keys(first.boxes);
  expect(ids.length).toBeGreaterThan(1);
  const gpu = await browser.page.evaluate(() => document.querySelector('holoquic-player')?.getStats()?.render?.gpuReconstructed);
  expect(gpu).toBe(gpuObjects(ids));
  for (const id of ids) {
    const box = first.boxes[id];
    // The default camera sees every object whole.
    expect(box.x0, id).toBeGreaterThanOrEqual(0);
    expect(box.x1, id).toBeLessThanOrEqual(first.width);
    const { drawn, area } = drawnIn(first, box);
    expect(drawn, `${id}: ${drawn} of ${area} pixels drawn in its box`).toBeGreaterThan(Math.max(50, area * 0.02));
  }
  // A point is at most a few pixels wide here: outside every box (plus that margin) is background.
  let outside = 0;
  let stray = 0;
  for (let y = 0; y < first.height; y++) {
    for (let x = 0; x < first.width; x++) {
      if (ids.some((id) => inRect(first.boxes[id], x, y, 4))) continue;
      outside++;
      if (isDrawn(first, x, y)) stray++;
    }
  }
  expect(outside).toBeGreaterThan(first.width * first.height * 0.3);
  expect(stray, `${stray} drawn pixels outside every bounding box`).toBeLessThan(outside * 0.0005);
}

describe('the demo scene on screen', () => {
  it('on SwiftShader, reconstructs in the decode workers by default and draws every object inside its projected bounding box', async () => {
    // Headless Chromium draws with a software rasteriser, where the vertex-shader path is
    // 10–25× slower than the workers' (src/render/rasterizer.ts): detected, the workers reconstruct.
    const chosen = await browser.page.evaluate(() => document.querySelector('holoquic-player')?.getStats()?.reconstruction);
    expect(chosen?.path).toBe('cpu');
    expect(chosen?.renderer).toMatch(/SwiftShader/i);
    await checkPicture(() => 0);
  });

  it('with reconstruction="gpu", reconstructs every object in the vertex shader and draws the same picture', async () => {
    await browser.page.evaluate(() => document.querySelector('holoquic-player')!.setAttribute('reconstruction', 'gpu'));
    await until('every object drawn from the GPU path', () => browser.page.evaluate(() => {
      const stats = document.querySelector('holoquic-player')?.getStats();
      return !!stats && stats.objects.length > 0 && stats.reconstruction?.path === 'gpu' && stats.render?.gpuReconstructed === stats.objects.length;
    }));
    await checkPicture((ids) => ids.length);
  });

  it('changes the picture as the content plays', async () => {
    const before = await snapshot(browser.page);
    const changed = await until('a changed picture', async () => {
      const now = await snapshot(browser.page);
      const n = changedPixels(before, now);
      return n > 200 ? n : null;
    }, 60_000);
    expect(changed).toBeGreaterThan(200);
  });
});
