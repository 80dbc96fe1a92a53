/**
 * `<holoquic-player>` as a media element, in headless Chromium against the real origin, the
 * real decoder and renderer: play() and the media events, seeking (forward, backward, into
 * content not fetched, past the end) showing the target's frame with one `seeked` per seek, a new
 * `src` replacing the scene and releasing the old player's workers and GPU buffers, and a bad
 * `src` reported with its `MediaError` code. Content: the demo scene's segments under a 10-s pass
 * (e2e/lib/seekScene.ts).
 */
import type { Worker } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Browser, launch, until as waitUntil } from './lib/browser';
import { type Origin, spkiHash, startOrigin } from './lib/processes';
import { type SeekContent, seekContentRoot } from './lib/seekScene';

let content: SeekContent;
let origin: Origin;
let browser: Browser;
/** Every worker the page started, and whether it has closed. */
const workers = new Map<Worker, { closed: boolean }>();

function until<T>(what: string, probe: () => Promise<T | null | undefined | false>, timeoutMs = 60_000): Promise<T> {
  return waitUntil(browser, what, probe, timeoutMs);
}

interface Recorded { type: string; at: number; currentTime: number; detail: unknown }
type Page = Window & { rec: Recorded[]; el: HTMLElementTagNameMap['holoquic-player'] };

beforeAll(async () => {
  content = seekContentRoot(10);
  origin = await startOrigin(content.root);
  browser = await launch({ spki: await spkiHash('127.0.0.1', origin.quicPort) });
  browser.page.on('worker', (w) => {
    const entry = { closed: false };
    workers.set(w, entry);
    w.on('close', () => (entry.closed = true));
  });
  await browser.page.setViewportSize({ width: 800, height: 600 });
  await browser.page.goto(`${origin.httpBase}/embed.html`);
  // The page's own element goes; ours is created paused, its events recorded from the start.
  await browser.page.evaluate(() => {
    const w = window as unknown as Page;
    document.querySelector('holoquic-player')?.remove();
    w.rec = [];
    const el = document.createElement('holoquic-player');
    el.setAttribute('src', '/content/long/manifest.mpd');
    el.setAttribute('mode', 'qr');
    el.setAttribute('loop', '');
    el.style.height = '360px';
    const types = ['loadedmetadata', 'play', 'playing', 'pause', 'waiting', 'seeking', 'seeked', 'timeupdate', 'ended', 'error', 'qualitychange', 'transportchange'];
    for (const type of types) {
      el.addEventListener(type, (e) => w.rec.push({ type, at: performance.now(), currentTime: el.currentTime, detail: (e as CustomEvent).detail }));
    }
    document.body.append(el);
    w.el = el;
  });
});

afterAll(async () => {
  await browser?.close();
  await origin?.stop();
  content?.remove();
});

const count = (type: string) => browser.page.evaluate((t) => (window as unknown as Page).rec.filter((r) => r.type === t).length, type);
const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Seeks to `target` and waits for its `seeked`; returns what the element reports then, and one second later. */
async function seekTo(target: number) {
  const before = await count('seeked');
  const setAt = await browser.page.evaluate((t) => {
    const w = window as unknown as Page;
    w.el.currentTime = t;
    return performance.now();
  }, target);
  await until(`seeked after currentTime = ${target}`, async () => (await count('seeked')) > before);
  // Drawn: the renderer's first draw after the seek finished.
  await until('a draw after seeked', () => browser.page.evaluate((since) => (window as unknown as Page).el.renderer!.stats().lastDrawAt > since, setAt), 10_000);
  const now = await browser.page.evaluate(() => {
    const el = (window as unknown as Page).el;
    const stats = el.getStats()!;
    return { currentTime: el.currentTime, seeking: el.seeking, objects: stats.objects.map((o) => ({ segment: o.segment, frameIndex: o.frameIndex })) };
  });
  await pause(1000);
  return { ...now, seeked: (await count('seeked')) - before };
}

describe('<holoquic-player> as a media element', () => {
  it('plays: loadedmetadata with the pass as duration, play() resolves on playing, timeupdate about 4 Hz', async () => {
    const started = await browser.page.evaluate(async () => {
      const el = (window as unknown as Page).el;
      const pausedBefore = el.paused;
      await el.play();
      return { pausedBefore, paused: el.paused, duration: el.duration };
    });
    expect(started).toEqual({ pausedBefore: true, paused: false, duration: 10 });
    const t0 = await count('timeupdate');
    await pause(2000);
    const ticks = (await count('timeupdate')) - t0;
    expect(ticks).toBeGreaterThanOrEqual(3);
    expect(ticks).toBeLessThanOrEqual(10);
    const state = await browser.page.evaluate(() => {
      const w = window as unknown as Page;
      const b = w.el.buffered;
      return {
        order: w.rec.map((r) => r.type).filter((t) => ['loadedmetadata', 'play', 'playing'].includes(t)).slice(0, 3),
        readyState: w.el.readyState, currentTime: w.el.currentTime,
        buffered: Array.from({ length: b.length }, (_, i) => [b.start(i), b.end(i)]),
        transport: w.rec.find((r) => r.type === 'transportchange')?.detail,
      };
    });
    expect(state.order).toEqual(['play', 'loadedmetadata', 'playing']);
    expect(state.readyState).toBeGreaterThanOrEqual(3);
    expect(state.buffered.some(([s, e]) => s <= state.currentTime && state.currentTime <= e)).toBe(true);
    expect(state.transport).toMatchObject({ transport: 'webtransport', state: 'connected' });
  });

  it('seeks forward, backward and into content not fetched: the frame shown is the target\'s, one seeked each', async () => {
    await browser.page.evaluate(() => (window as unknown as Page).el.pause());
    for (const target of [6.5, 2.25, 9.1, 0.4]) {
      const got = await seekTo(target);
      expect(got.seeked, `seeked events for ${target}`).toBe(1);
      expect(got.seeking).toBe(false);
      expect(got.currentTime).toBeCloseTo(target, 6);
      const segment = Math.floor(target);
      const frame = Math.floor((target - segment) * 30 + 1e-9);
      for (const o of got.objects) expect(o, `target ${target}`).toEqual({ segment, frameIndex: frame });
    }
    // Seeking while playing: content moves on from the target.
    await browser.page.evaluate(() => (window as unknown as Page).el.play());
    const got = await seekTo(4.5);
    expect(got.seeked).toBe(1);
    const after = await browser.page.evaluate(() => (window as unknown as Page).el.currentTime);
    expect(after).toBeGreaterThan(4.5);
    expect(after).toBeLessThan(8);
  });

  it('past the end without loop: clamps to the end, shows the last frame, ends paused; play() starts the pass again', async () => {
    // `loop` reflects a boolean attribute, as <video>'s: false removes it.
    const attribute = await browser.page.evaluate(() => {
      const el = (window as unknown as Page).el;
      el.loop = false;
      return el.hasAttribute('loop');
    });
    expect(attribute).toBe(false);
    const endedBefore = await count('ended');
    const got = await seekTo(25);
    expect(got.seeked).toBe(1);
    expect(got.currentTime).toBe(10);
    for (const o of got.objects) expect(o).toEqual({ segment: 9, frameIndex: 29 });
    await until('ended', async () => (await count('ended')) > endedBefore, 10_000);
    const ended = await browser.page.evaluate(() => {
      const el = (window as unknown as Page).el;
      return { ended: el.ended, paused: el.paused, currentTime: el.currentTime };
    });
    expect(ended).toEqual({ ended: true, paused: true, currentTime: 10 });
    const replay = await browser.page.evaluate(async () => {
      const el = (window as unknown as Page).el;
      await el.play();
      return { ended: el.ended, currentTime: el.currentTime };
    });
    expect(replay.ended).toBe(false);
    expect(replay.currentTime).toBeLessThan(2);
    await browser.page.evaluate(() => {
      (window as unknown as Page).el.loop = true;
    });
  });

  it('a new src plays the new scene and releases the old player: its workers closed, its GPU buffers freed', async () => {
    const old = await browser.page.evaluate(() => {
      const w = window as unknown as Page & { oldView: unknown; oldPlayer: unknown };
      w.oldView = w.el.renderer;
      w.oldPlayer = w.el.player;
      return { geometries: w.el.renderer!.stats().geometries };
    });
    expect(old.geometries).toBeGreaterThan(0);
    const before = [...workers].filter(([, s]) => !s.closed).map(([w]) => w);
    expect(before.length).toBeGreaterThan(0);
    await browser.page.evaluate(() => {
      (window as unknown as Page).el.src = '/content/demo/manifest.mpd';
    });
    await until('the new scene plays and draws', () => browser.page.evaluate(() => {
      const el = (window as unknown as Page).el;
      const stats = el.getStats();
      return el.duration === 1 && el.state === 'playing' && !!stats && stats.objects.every((o) => o.points > 0) && (stats.render?.pointsDrawn ?? 0) > 0;
    }));
    const released = await browser.page.evaluate(() => {
      const w = window as unknown as Page & { oldView: NonNullable<Page['el']['renderer']>; oldPlayer: NonNullable<Page['el']['player']> };
      const gpu = w.oldView.stats();
      return { state: w.oldPlayer.state, geometries: gpu.geometries, textures: gpu.textures, newPlayer: w.el.player !== w.oldPlayer };
    });
    expect(released).toEqual({ state: 'ended', geometries: 0, textures: 0, newPlayer: true });
    await until('the old workers closed', async () => before.every((w) => workers.get(w)!.closed), 10_000);
    const live = [...workers.values()].filter((s) => !s.closed).length;
    expect(live).toBe(before.length);
  });

  it('a bad src fails with an error event and the MediaError code; play() rejects', async () => {
    const outcomes = await browser.page.evaluate(async () => {
      const attempt = async (src: string) => {
        const el = document.createElement('holoquic-player');
        el.setAttribute('src', src);
        el.setAttribute('render', 'off');
        const errors: Array<{ code: number; message: string }> = [];
        el.addEventListener('error', (e) => errors.push(e.detail));
        document.body.append(el);
        const rejection = await el.play().then(() => 'resolved', (e: DOMException) => e.name);
        const result = { errors, rejection, code: el.error?.code ?? null, state: el.state };
        el.remove();
        return result;
      };
      return { missing: await attempt('/content/no-such-scene/manifest.mpd'), notManifest: await attempt('/embed.html') };
    });
    for (const o of Object.values(outcomes)) {
      expect(o.errors).toHaveLength(1);
      expect(o.errors[0].code).toBe(4);
      expect(o.code).toBe(4);
      expect(o.rejection).toBe('NotSupportedError');
      expect(o.state).toBe('failed');
    }
    expect(outcomes.missing.errors[0].message).toMatch(/HTTP 404/);
  });
});
