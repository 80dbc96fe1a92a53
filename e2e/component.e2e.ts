/**
 * `<holoquic-player>` embedded in a plain HTML page (embed.html: an element with
 * attributes and the library module, no app code) plays the real demo scene from the real origin:
 * it loads, plays, decodes every object, draws inside its box in the page's flow, and its typed
 * API and events work (pause/play, setMode, statechange), and it pauses while the page is hidden.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Browser, launch, until as waitUntil } from './lib/browser';
import { demoContentRoot } from './lib/content';
import { type Origin, originMetric, spkiHash, startOrigin } from './lib/processes';
import { drawnIn, snapshot } from './lib/view';

let origin: Origin;
let browser: Browser;

/** Polls until `probe` gives a value (fails after 120000 ms with the browser's last log lines). */
function until<T>(what: string, probe: () => Promise<T | null | undefined | false>, timeoutMs = 120_000): Promise<T> {
  return waitUntil(browser, what, probe, timeoutMs);
}

beforeAll(async () => {
  origin = await startOrigin(demoContentRoot());
  browser = await launch({ spki: await spkiHash('127.0.0.1', origin.quicPort) });
  await browser.page.setViewportSize({ width: 1000, height: 800 });
  // Record the element's events from the start.
  await browser.page.addInitScript(() => {
    const w = window as unknown as { events: string[] };
    w.events = [];
    // Listen as soon as the parser creates the element, before the library upgrades it and autoplays.
    const observer = new MutationObserver(() => {
      const element = document.querySelector('holoquic-player');
      if (!element) return;
      observer.disconnect();
      for (const type of ['statechange', 'segment', 'modechange', 'error']) {
        element.addEventListener(type, (e) => w.events.push(`${type}:${JSON.stringify((e as CustomEvent).detail)}`));
      }
    });
    observer.observe(document, { childList: true, subtree: true });
  });
  await browser.page.goto(`${origin.httpBase}/embed.html`);
});

afterAll(async () => {
  await browser?.close();
  await origin?.stop();
});

describe('<holoquic-player> in a plain page', () => {
  it('is a registered element laid out in the page flow', async () => {
    const layout = await browser.page.evaluate(() => {
      const element = document.querySelector('holoquic-player')!;
      const r = element.getBoundingClientRect();
      return { upgraded: element instanceof customElements.get('holoquic-player')!, width: r.width, height: r.height, top: r.top };
    });
    expect(layout.upgraded).toBe(true);
    expect(layout.height).toBe(480);
    expect(layout.top).toBeGreaterThan(50); // below the page's heading and paragraph
  });

  it('autoplays: decodes every object and draws it', async () => {
    await until('every object drawn', () => browser.page.evaluate(() => {
      const element = document.querySelector('holoquic-player')!;
      if (element.state === 'failed') throw new Error(`player failed: ${element.error}`);
      const stats = element.getStats();
      return !!stats && stats.objects.every((o) => o.points > 0) && (stats.render?.pointsDrawn ?? 0) > 0;
    }));
    const shot = await snapshot(browser.page);
    // The drawing buffer is the element's size, not the window's.
    expect(shot.height).toBe(480);
    expect(Object.keys(shot.boxes).length).toBeGreaterThan(0);
    for (const [id, box] of Object.entries(shot.boxes)) {
      const { drawn, area } = drawnIn(shot, box);
      expect(drawn, `${id}: ${drawn} of ${area}`).toBeGreaterThan(Math.max(50, area * 0.02));
    }
    const events = await browser.page.evaluate(() => (window as unknown as { events: string[] }).events);
    expect(events).toContain('statechange:{"state":"loading"}');
    expect(events).toContain('statechange:{"state":"playing"}');
    expect(events.some((e) => e.startsWith('segment:'))).toBe(true);
  });

  it('follows the typed API: pause stops the content clock, play resumes it, setMode switches delivery', async () => {
    const played = () => browser.page.evaluate(() => document.querySelector('holoquic-player')!.getStats()!.playedS);
    await browser.page.evaluate(() => document.querySelector('holoquic-player')!.pause());
    expect(await browser.page.evaluate(() => document.querySelector('holoquic-player')!.state)).toBe('paused');
    const pausedAt = await played();
    await new Promise((r) => setTimeout(r, 1500));
    // Not advancing (up to floating-point noise of the clock arithmetic).
    expect(await played()).toBeLessThanOrEqual(pausedAt + 1e-9);
    await browser.page.evaluate(() => {
      const element = document.querySelector('holoquic-player')!;
      element.setMode('qr');
      element.play();
    });
    await until('the content clock to move again', async () => (await played()) > pausedAt);
    const after = await browser.page.evaluate(() => ({
      mode: document.querySelector('holoquic-player')!.getStats()!.mode,
      events: (window as unknown as { events: string[] }).events,
    }));
    expect(after.mode).toBe('qr');
    expect(after.events.filter((e) => e.startsWith('modechange:'))).toEqual(['modechange:{"mode":"qr"}']);
  });

  it('pauses while the page is hidden and resumes when it is shown, but keeps the viewer\'s own pause', async () => {
    // Headless Chromium never hides its page: the test sets what the browser would report and
    // fires the same event. Everything behind it (element, player, content clock) is real.
    const setPageVisibility = (state: 'hidden' | 'visible') => browser.page.evaluate((value) => {
      Object.defineProperty(document, 'visibilityState', { value, configurable: true });
      document.dispatchEvent(new Event('visibilitychange'));
    }, state);
    const element = () => ({
      state: () => browser.page.evaluate(() => document.querySelector('holoquic-player')!.state),
      played: () => browser.page.evaluate(() => document.querySelector('holoquic-player')!.getStats()!.playedS),
    });
    expect(await element().state()).toBe('playing');

    await setPageVisibility('hidden');
    expect(await element().state()).toBe('paused');
    const hiddenAt = await element().played();
    await new Promise((r) => setTimeout(r, 1500));
    expect(await element().played()).toBeLessThanOrEqual(hiddenAt + 1e-9);
    await setPageVisibility('visible');
    expect(await element().state()).toBe('playing');
    await until('the content clock to move after the page is shown', async () => (await element().played()) > hiddenAt);

    // Paused by the viewer before the page was hidden: showing the page leaves it paused.
    await browser.page.evaluate(() => document.querySelector('holoquic-player')!.pause());
    await setPageVisibility('hidden');
    await setPageVisibility('visible');
    expect(await element().state()).toBe('paused');

    // when-hidden="play": the page's visibility does not touch playback.
    await browser.page.evaluate(() => {
      const player = document.querySelector('holoquic-player')!;
      player.setAttribute('when-hidden', 'play');
      player.play();
    });
    await until('playing again', async () => (await element().state()) === 'playing');
    await setPageVisibility('hidden');
    expect(await element().state()).toBe('playing');
    await setPageVisibility('visible');
    await browser.page.evaluate(() => document.querySelector('holoquic-player')!.removeAttribute('when-hidden'));
  });

  it('removed while it loads, it plays nothing and leaves no session open', async () => {
    const metric = (name: string) => originMetric(origin, name);
    const sessionsBefore = await metric('sessions_active');
    const outcome = await browser.page.evaluate(async () => {
      const element = document.createElement('holoquic-player');
      element.setAttribute('src', '/content/demo/manifest.mpd');
      document.body.append(element);
      const loading = element.load().then(() => null, (e: Error) => e.message);
      element.remove(); // disconnected: closed while the manifest and the session are on their way
      const rejected = await loading;
      await new Promise((r) => setTimeout(r, 1500));
      return { rejected, state: element.state, segments: element.qoe()?.segments.length ?? 0 };
    });
    expect(outcome.rejected).toMatch(/closed while loading/);
    expect(outcome.state).not.toBe('playing');
    expect(outcome.segments).toBe(0);
    // The session it may have opened is gone again (the embedded player's own stays).
    await until('the origin sees no extra session', async () => (await metric('sessions_active')) === sessionsBefore, 10_000);
  });

  it('reports bad input as an error event and the failed state, without throwing past load()', async () => {
    const outcomes = await browser.page.evaluate(async () => {
      const attempt = async (attributes: Record<string, string>) => {
        const element = document.createElement('holoquic-player');
        for (const [k, v] of Object.entries(attributes)) element.setAttribute(k, v);
        const events: string[] = [];
        element.addEventListener('error', (e) => events.push((e as unknown as CustomEvent<{ message: string }>).detail.message));
        document.body.append(element);
        const rejected = await element.load().then(() => null, (e: Error) => e.message);
        const result = { rejected, state: element.state, error: element.error, events };
        element.remove();
        return result;
      };
      return {
        noSrc: await attempt({}),
        badMode: await attempt({ src: '/content/demo/manifest.mpd', mode: 'fastest' }),
        missing: await attempt({ src: '/content/no-such-scene/manifest.mpd' }),
      };
    });
    expect(outcomes.noSrc.rejected).toMatch(/src attribute .* is missing/);
    expect(outcomes.badMode.rejected).toMatch(/mode="fastest" is not one of/);
    expect(outcomes.missing.rejected).toMatch(/HTTP 404/);
    for (const o of Object.values(outcomes)) {
      expect(o.state).toBe('failed');
      expect(o.error).toBeTruthy();
      expect(o.events.length).toBeGreaterThan(0);
    }
  });
});
