/**
 * `HoloquicObject` in an application's own three.js scene (e2e/pages/host-scene.html): the page
 * has its own renderer, scene, camera and animation loop and adds the streamed demo scene as one
 * object it placed at x = 10 m. The app's loop draws the points: the object's layers hold the
 * scene's objects and draw points, pixels other than the app's background and cube appear where
 * the object is, and the player fetched and decoded every object (the pose and projection reach it).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Browser, launch, until as waitUntil } from './lib/browser';
import { demoContentRoot } from './lib/content';
import { type Origin, spkiHash, startOrigin } from './lib/processes';

let origin: Origin;
let browser: Browser;
/** Every worker the page started, and whether it has closed. */
const workers: Array<{ closed: boolean }> = [];

interface HostPage { host: { holo: import('../src/app/holoquicObject').HoloquicObject; renderer: import('three').WebGLRenderer; frames: number; failed: string } }

beforeAll(async () => {
  origin = await startOrigin(demoContentRoot());
  browser = await launch({ spki: await spkiHash('127.0.0.1', origin.quicPort) });
  browser.page.on('worker', (w) => {
    const entry = { closed: false };
    workers.push(entry);
    w.on('close', () => (entry.closed = true));
  });
  await browser.page.goto(`${origin.httpBase}/e2e/pages/host-scene.html`);
});

afterAll(async () => {
  await browser?.close();
  await origin?.stop();
});

describe('HoloquicObject in the host application\'s scene', () => {
  it('the app\'s render loop draws the streamed points where the app placed them', async () => {
    await waitUntil(browser, 'points drawn by the app\'s loop', () => browser.page.evaluate(() => {
      const { host } = window as unknown as HostPage;
      if (host.failed) throw new Error(`failed: ${host.failed}`);
      return host.holo.pointsDrawn > 0 && host.holo.player.getStats().objects.every((o) => o.points > 0);
    }), 120_000);
    const drawn = await browser.page.evaluate(() => {
      const { host } = window as unknown as HostPage;
      const gl = host.renderer.getContext();
      const w = gl.drawingBufferWidth;
      const h = gl.drawingBufferHeight;
      const pixels = new Uint8Array(w * h * 4);
      gl.readPixels(0, 0, w, h, gl.RGBA, gl.UNSIGNED_BYTE, pixels);
      let other = 0;
      for (let i = 0; i < pixels.length; i += 4) {
        const [r, g, b] = [pixels[i], pixels[i + 1], pixels[i + 2]];
        const background = r === 64 && g === 64 && b === 64;
        const cube = r === 255 && g === 0 && b === 0;
        if (!background && !cube) other++;
      }
      const group = host.holo.object3D;
      return {
        other, total: w * h, frames: host.frames,
        inScene: group.parent?.type, x: group.position.x,
        layers: group.children[0]?.children.filter((c) => c.type === 'Points').length,
        objects: host.holo.player.scene!.objects.length,
        points: host.holo.pointsDrawn,
      };
    });
    expect(drawn.inScene).toBe('Scene');
    expect(drawn.x).toBe(10);
    expect(drawn.layers).toBe(drawn.objects);
    expect(drawn.points).toBeGreaterThan(1000);
    expect(drawn.frames).toBeGreaterThan(10);
    // The dancers cover a visible share of the picture.
    expect(drawn.other, `${drawn.other} of ${drawn.total} pixels`).toBeGreaterThan(drawn.total * 0.01);
  });

  it('content moves and dispose() releases the object: workers closed, out of the scene', async () => {
    const t0 = await browser.page.evaluate(() => (window as unknown as HostPage).host.holo.player.currentTime);
    await new Promise((r) => setTimeout(r, 1500));
    const after = await browser.page.evaluate(() => {
      const { host } = window as unknown as HostPage;
      const t = host.holo.player.currentTime;
      const geometries = host.renderer.info.memory.geometries;
      host.holo.dispose();
      return { t, geometries, parent: host.holo.object3D.parent, state: host.holo.player.state, points: host.holo.pointsDrawn };
    });
    expect(after.t).not.toBe(t0);
    expect(after).toMatchObject({ parent: null, state: 'ended', points: 0 });
    expect(workers.length).toBeGreaterThan(0);
    await waitUntil(browser, 'the decode workers closed', async () => workers.every((w) => w.closed), 10_000);
  });
});
