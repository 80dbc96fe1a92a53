/**
 * `<holoquic-player controls>`: the built-in controls driven as a person with a keyboard, a mouse,
 * a touch screen or a screen reader would — by role and accessible name — in headless Chromium
 * against the real origin, decoder and renderer. Play / Pause moves and stops the content clock;
 * the timeline slider seeks by keys and by a click; the quality menu caps the qualities fetched;
 * the loading indicator shows while seeking; a bad `src` shows the error overlay with its code;
 * one finger orbits and two fingers zoom the camera. Content: the demo scene under a 10-s pass.
 */
import type { CDPSession } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Browser, launch, until as waitUntil } from './lib/browser';
import { type Origin, spkiHash, startOrigin } from './lib/processes';
import { type SeekContent, seekContentRoot } from './lib/seekScene';

let content: SeekContent;
let origin: Origin;
let browser: Browser;

type Page = Window & { el: HTMLElementTagNameMap['holoquic-player'] };

function until<T>(what: string, probe: () => Promise<T | null | undefined | false>, timeoutMs = 60_000): Promise<T> {
  return waitUntil(browser, what, probe, timeoutMs);
}

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));
const media = () => browser.page.evaluate(() => {
  const el = (window as unknown as Page).el;
  return { currentTime: el.currentTime, paused: el.paused, seeking: el.seeking, state: el.state };
});

beforeAll(async () => {
  content = seekContentRoot(10);
  origin = await startOrigin(content.root);
  browser = await launch({ spki: await spkiHash('127.0.0.1', origin.quicPort) });
  await browser.page.setViewportSize({ width: 900, height: 700 });
  await browser.page.goto(`${origin.httpBase}/embed.html`);
  await browser.page.evaluate(() => {
    document.querySelector('holoquic-player')?.remove();
    const el = document.createElement('holoquic-player');
    el.id = 'controlled';
    el.setAttribute('src', '/content/long/manifest.mpd');
    el.setAttribute('mode', 'qr');
    el.setAttribute('controls', '');
    el.setAttribute('loop', '');
    el.style.height = '420px';
    document.body.prepend(el);
    (window as unknown as Page).el = el;
  });
});

afterAll(async () => {
  await browser?.close();
  await origin?.stop();
  content?.remove();
});

describe('the built-in controls', () => {
  it('Play starts the content clock and Pause stops it, each button named for what it does', async () => {
    const page = browser.page;
    await page.getByRole('button', { name: 'Play' }).click();
    await until('content moving', async () => (await media()).currentTime > 0.5);
    await expect(page.getByRole('button', { name: 'Pause' }).isVisible()).resolves.toBe(true);
    await page.getByRole('button', { name: 'Pause' }).click();
    const stopped = await media();
    expect(stopped.paused).toBe(true);
    await pause(1200);
    expect((await media()).currentTime).toBeCloseTo(stopped.currentTime, 6);
    await page.getByRole('button', { name: 'Play' }).click();
    await until('content moving again', async () => (await media()).currentTime > stopped.currentTime + 0.3);
    await page.getByRole('button', { name: 'Pause' }).click();
  });

  it('the timeline slider seeks: arrows ±5 s, Home, a click on the track; it reads the time aloud', async () => {
    const page = browser.page;
    const slider = page.getByRole('slider', { name: 'Seek' });
    await slider.focus();
    await page.keyboard.press('Home');
    await until('seeked to 0', async () => { const m = await media(); return !m.seeking && m.currentTime === 0; });
    await page.keyboard.press('ArrowRight');
    await until('seeked to 5', async () => { const m = await media(); return !m.seeking && Math.abs(m.currentTime - 5) < 1e-6; });
    expect(await slider.getAttribute('aria-valuetext')).toBe('0:05 of 0:10');
    await page.keyboard.press('ArrowLeft');
    await until('seeked back to 0', async () => { const m = await media(); return !m.seeking && m.currentTime === 0; });
    // A click at 70 % of the track (the thumb's width makes it not quite 7 s).
    const box = (await slider.boundingBox())!;
    await page.mouse.click(box.x + box.width * 0.7, box.y + box.height / 2);
    await until('seeked by a click', async () => { const m = await media(); return !m.seeking && m.currentTime > 6 && m.currentTime < 8; });
    const stats = await page.evaluate(() => (window as unknown as Page).el.getStats()!.objects.map((o) => o.segment));
    expect(new Set(stats)).toEqual(new Set([Math.floor(await page.evaluate(() => (window as unknown as Page).el.currentTime))]));
  });

  it('shows the loading indicator while seeking and hides it once the target is shown', async () => {
    const busyAtSeek = await browser.page.evaluate(() => {
      const el = (window as unknown as Page).el;
      el.currentTime = 3.2;
      return !el.shadowRoot!.querySelector('[role=status]')!.hasAttribute('hidden');
    });
    expect(busyAtSeek).toBe(true);
    await until('seeked', async () => !(await media()).seeking);
    await until('indicator hidden', () => browser.page.getByRole('status', { name: 'Loading' }).isHidden());
  });

  it('the quality menu caps the qualities fetched, and Auto lifts the cap', async () => {
    const page = browser.page;
    const menu = page.getByRole('combobox', { name: 'Quality' });
    const options = await menu.locator('option').allTextContents();
    expect(options[0]).toBe('Auto');
    expect(options.length).toBeGreaterThan(2);
    await menu.selectOption('0');
    expect(await page.evaluate(() => (window as unknown as Page).el.maxQuality)).toBe(0);
    await page.getByRole('button', { name: 'Play' }).click();
    // Segments requested before the cap (up to the grown buffer target ahead) still play: wait past them.
    const from = await page.evaluate(() => (window as unknown as Page).el.getStats()!.objects[0].segment);
    await until('six segments after the cap', () => page.evaluate((k) => (window as unknown as Page).el.getStats()!.objects.every((o) => o.segment >= k + 6), from), 30_000);
    const seen: number[] = [];
    for (let i = 0; i < 6; i++) {
      seen.push(...await page.evaluate(() => (window as unknown as Page).el.getStats()!.objects.map((o) => o.quality)));
      await pause(500);
    }
    expect(Math.max(...seen), `qualities ${seen}`).toBe(0);
    await menu.selectOption('auto');
    expect(await page.evaluate(() => (window as unknown as Page).el.maxQuality)).toBeNull();
    await page.getByRole('button', { name: 'Pause' }).click();
  });

  it('delivery mode and fullscreen are named controls; Enter VR/AR only where WebXR is offered', async () => {
    const page = browser.page;
    await page.getByRole('combobox', { name: 'Delivery mode' }).selectOption('qpr-fec');
    await until('mode applied', () => page.evaluate(() => (window as unknown as Page).el.getStats()!.mode === 'qpr-fec'));
    await expect(page.getByRole('button', { name: 'Fullscreen' }).count()).resolves.toBe(1);
    const offered = await page.evaluate(() => (window as unknown as Page).el.xrModes());
    await expect(page.getByRole('button', { name: 'Enter VR' }).count()).resolves.toBe(offered.includes('immersive-vr') ? 1 : 0);
  });

  it('orbits with one finger and zooms with two on the canvas', async () => {
    const page = browser.page;
    const canvas = page.locator('#controlled canvas');
    const box = (await canvas.boundingBox())!;
    const cx = box.x + box.width / 2;
    const cy = box.y + box.height / 2;
    const camera = () => page.evaluate(() => {
      const view = (window as unknown as Page).el.renderer!;
      view.renderOnce();
      const p = view.camera.position;
      return { x: p.x, y: p.y, z: p.z, distance: Math.hypot(p.x, p.y, p.z) };
    });
    const cdp: CDPSession = await page.context().newCDPSession(page);
    const touch = async (type: 'touchStart' | 'touchMove' | 'touchEnd', points: Array<[number, number]>) => {
      await cdp.send('Input.dispatchTouchEvent', { type, touchPoints: points.map(([x, y], id) => ({ x, y, id })) });
      await pause(30);
    };
    const before = await camera();
    await touch('touchStart', [[cx, cy]]);
    for (let i = 1; i <= 10; i++) await touch('touchMove', [[cx + i * 15, cy]]);
    await touch('touchEnd', []);
    await pause(500);
    const turned = await camera();
    expect(Math.hypot(turned.x - before.x, turned.z - before.z), 'one finger turns the camera').toBeGreaterThan(0.05);
    // Two fingers spreading apart: the camera comes closer to what it looks at.
    await touch('touchStart', [[cx - 20, cy], [cx + 20, cy]]);
    for (let i = 1; i <= 10; i++) await touch('touchMove', [[cx - 20 - i * 12, cy], [cx + 20 + i * 12, cy]]);
    await touch('touchEnd', []);
    await pause(500);
    const zoomed = await camera();
    const target = await page.evaluate(() => {
      const scene = (window as unknown as Page).el.player!.scene!;
      const o = scene.objects;
      return [0, 1, 2].map((i) => (Math.min(...o.map((x) => x.bbox.min[i])) + Math.max(...o.map((x) => x.bbox.max[i]))) / 2);
    });
    const dist = (c: { x: number; y: number; z: number }) => Math.hypot(c.x - target[0], c.y - target[1], c.z - target[2]);
    expect(dist(zoomed), 'two fingers spreading zoom in').toBeLessThan(dist(turned) * 0.9);
  });

  it('a bad src shows the error overlay with its MediaError code and message', async () => {
    await browser.page.evaluate(() => {
      const el = document.createElement('holoquic-player');
      el.id = 'broken';
      el.setAttribute('src', '/content/missing/manifest.mpd');
      el.setAttribute('controls', '');
      el.style.height = '200px';
      document.body.append(el);
      void el.play().catch(() => undefined);
    });
    const alert = browser.page.locator('#broken').getByRole('alert');
    await until('the error overlay', () => alert.isVisible(), 30_000);
    const text = await alert.textContent();
    expect(text).toContain('error 4');
    expect(text).toContain('MEDIA_ERR_SRC_NOT_SUPPORTED');
    expect(text).toContain('404');
    await expect(browser.page.locator('#broken').getByRole('button', { name: 'Play' }).isDisabled()).resolves.toBe(true);
  });
});
