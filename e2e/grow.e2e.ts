/**
 * A growing scene (docs/mpd.md → "A growing scene") followed by `<holoquic-player>` in real
 * headless Chromium against the real origin and decoder: the scene's first manifest is dynamic
 * and names 1 s at the lowest quality; playback reaches its end and waits there (`waiting`, no
 * `ended`, no loop, not a freeze); the test then publishes the grown, final manifest (4 s, two
 * qualities) by rename, as the packer does; the element re-reads it (revalidating its copy),
 * `duration` and `seekable` grow with a `durationchange`, playback goes on past the old end and
 * the new quality gets used — with the manifest read over HTTP/2, then over HTTP/3.
 * Content: the packed demo's segment files, copied as the seconds of the grown scene.
 */
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Browser, launch, until } from './lib/browser';
import { demoContentRoot } from './lib/content';
import { type Origin, spkiHash, startOrigin } from './lib/processes';

const MANIFEST = '/content/grow/manifest.mpd';
const GROWN_SECONDS = 4;

/**
 * The `grow` scene: every demo object's one segment file copied as seconds 0 … GROWN_SECONDS − 1
 * of qualities 0 and 1, and `stage(seconds, rungs, final)` the manifest of a stage naming the
 * first `seconds` at the lowest `rungs` qualities — dynamic, re-read every second, until final.
 */
function growScene(root: string) {
  const demo = join(demoContentRoot(), 'demo');
  const packed = readFileSync(join(demo, 'manifest.mpd'), 'utf8');
  const objects = [...packed.matchAll(/hq:objectId="([^"]+)"/g)].map((m) => m[1]);
  for (const object of objects) {
    for (const q of ['0', '1']) {
      mkdirSync(join(root, 'grow', object, q), { recursive: true });
      for (let s = 0; s < GROWN_SECONDS; s++) {
        copyFileSync(join(demo, object, q, 'seg-00000.v3c'), join(root, 'grow', object, q, `seg-${String(s).padStart(5, '0')}.v3c`));
      }
    }
  }
  return (seconds: number, rungs: number, final: boolean): string => {
    let mpd = packed
      .replace(/mediaPresentationDuration="[^"]*"/, `mediaPresentationDuration="PT${seconds}S"`)
      .replaceAll(/hq:loopSegments="\d+"/g, `hq:loopSegments="${seconds}"`)
      .replace(/hq:scene="[^"]*"/, 'hq:scene="grow"')
      // Only the rungs published: Representations `rungs` and above go.
      .replaceAll(/\s*<Representation id="(\d+)"[\s\S]*?\/>/g, (rep, id: string) => (Number(id) < rungs ? rep : ''));
    if (!final) mpd = mpd.replace('type="static"', 'type="dynamic" minimumUpdatePeriod="PT1S" availabilityStartTime="2026-01-01T00:00:00Z"');
    return mpd;
  };
}

/** Publishes `text` as the scene's manifest the way the packer does: a new file renamed over the old. */
function publish(root: string, text: string): void {
  const path = join(root, 'grow', 'manifest.mpd');
  writeFileSync(`${path}.tmp`, text);
  renameSync(`${path}.tmp`, path);
}

interface Recorded { type: string; currentTime: number; detail: unknown }
type Page = Window & { rec: Recorded[]; el: HTMLElementTagNameMap['holoquic-player'] };

let root: string;
let stage: ReturnType<typeof growScene>;
let origin: Origin;

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'holoquic-grow-'));
  stage = growScene(root);
  origin = await startOrigin(root);
}, 120_000);

afterAll(async () => {
  await origin?.stop();
  rmSync(root, { recursive: true, force: true });
});

const protocols = [
  { name: 'HTTP/2', protocol: 'h2', quic: false },
  { name: 'HTTP/3', protocol: 'h3', quic: true },
];

describe.each(protocols)('<holoquic-player> follows a growing scene, its manifest read over $name', ({ protocol, quic }) => {
  let browser: Browser;

  beforeAll(async () => {
    publish(root, stage(1, 1, false));
    const spki = await spkiHash('127.0.0.1', origin.quicPort);
    browser = await launch({ spki, forceQuic: quic ? `127.0.0.1:${origin.quicPort}` : undefined });
    await browser.page.goto(`${origin.httpsBase}/embed.html`);
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
  });

  it('waits at the end of what is published, then grows its duration and uses the new quality', async () => {
    const page = browser.page;
    await page.evaluate((src) => {
      const w = window as unknown as Page;
      document.querySelector('holoquic-player')?.remove();
      w.rec = [];
      const el = document.createElement('holoquic-player');
      el.setAttribute('src', src);
      el.setAttribute('mode', 'qr');
      // Looping is asked for: a growing scene still waits at its end rather than loop.
      el.setAttribute('loop', '');
      el.setAttribute('autoplay', '');
      el.style.height = '360px';
      for (const type of ['durationchange', 'waiting', 'playing', 'liveedge', 'scenegrow', 'ended', 'seeked', 'segment', 'error', 'manifesterror']) {
        el.addEventListener(type, (e) => w.rec.push({ type, currentTime: el.currentTime, detail: (e as CustomEvent).detail }));
      }
      document.body.append(el);
      w.el = el;
    }, MANIFEST);
    const events = () => page.evaluate(() => (window as unknown as Page).rec.map((r) => ({ ...r, detail: JSON.parse(JSON.stringify(r.detail ?? null)) })));
    const failed = async () => (await events()).find((e) => e.type === 'error')?.detail;

    // Stage 1: one second, then the wait at its end.
    const atEdge = await until(browser, 'playback waiting at the end of the first stage', async () => {
      const error = await failed();
      if (error) throw new Error(`the element failed: ${JSON.stringify(error)}\n${browser.log.slice(-10).join('\n')}`);
      return page.evaluate(() => {
        const el = (window as unknown as Page).el;
        const stats = el.getStats();
        return stats?.waitingForContent ? { duration: el.duration, readyState: el.readyState, growing: stats.growing, paused: el.paused } : null;
      });
    }, 90_000);
    expect(atEdge).toEqual({ duration: 1, readyState: 2, growing: true, paused: false });
    // Standing there a while: no loop, no end, no freeze.
    await new Promise((r) => setTimeout(r, 2500));
    const waited = await events();
    expect(waited.filter((e) => e.type === 'segment').map((e) => (e.detail as { index: number }).index)).toEqual([0]);
    expect(waited.filter((e) => ['ended', 'seeked'].includes(e.type))).toEqual([]);
    expect(waited.filter((e) => e.type === 'liveedge').map((e) => e.detail)).toEqual([{ waiting: true }]);
    expect(waited.at(-1)?.type === 'waiting' || waited.some((e) => e.type === 'waiting' && e.currentTime >= 0.9)).toBe(true);

    // The packer publishes the grown, final scene.
    publish(root, stage(GROWN_SECONDS, 2, true));
    const grown = await until(browser, 'segments past the first stage at the new quality', async () => {
      const list = await events();
      const error = list.find((e) => e.type === 'error');
      if (error) throw new Error(`the element failed: ${JSON.stringify(error.detail)}`);
      const upper = list.some((e) => e.type === 'segment' && Object.values((e.detail as { qualities: Record<string, number> }).qualities).includes(1));
      return upper ? list : null;
    }, 90_000);
    const state = await page.evaluate(() => {
      const el = (window as unknown as Page).el;
      const stats = el.getStats()!;
      return { duration: el.duration, seekable: [el.seekable.start(0), el.seekable.end(0)], growing: stats.growing, error: el.error?.message ?? null };
    });
    expect(state).toEqual({ duration: GROWN_SECONDS, seekable: [0, GROWN_SECONDS], growing: false, error: null });
    expect(grown.filter((e) => e.type === 'durationchange').map((e) => e.detail)).toEqual([{ duration: GROWN_SECONDS }]);
    expect(grown.filter((e) => e.type === 'manifesterror')).toEqual([]);
    const edge = grown.filter((e) => e.type === 'liveedge').map((e) => e.detail);
    expect(edge.slice(0, 2)).toEqual([{ waiting: true }, { waiting: false }]);
    // Played on from the old end: segment 1 came after the wait, and `playing` with it.
    const types = grown.map((e) => e.type);
    const resumed = types.indexOf('liveedge', types.indexOf('liveedge') + 1);
    expect(types.slice(resumed)).toContain('playing');
    const indices = grown.filter((e) => e.type === 'segment').map((e) => (e.detail as { index: number }).index);
    expect(indices.length).toBeGreaterThanOrEqual(2);
    expect(indices).toEqual(indices.map((_, i) => i));
    const qualities = grown.filter((e) => e.type === 'scenegrow').map((e) => Object.values((e.detail as { addedRungs: Record<string, string[]> }).addedRungs));
    expect(qualities[0].every((added) => added.join() === '1')).toBe(true);

    // The manifest was re-read on the protocol named, and the unchanged reads revalidated the
    // browser's copy (a 304: headers on the wire, the cached body handed on).
    const reads = await page.evaluate((path) => performance.getEntriesByType('resource')
      .filter((e) => new URL(e.name).pathname === path)
      .map((e) => {
        const t = e as PerformanceResourceTiming;
        return { protocol: t.nextHopProtocol, transfer: t.transferSize, body: t.encodedBodySize };
      }), MANIFEST);
    expect(reads.length).toBeGreaterThanOrEqual(3);
    expect(reads.every((r) => r.protocol === protocol), JSON.stringify(reads)).toBe(true);
    expect(reads.some((r) => r.transfer > 0 && r.transfer < r.body), JSON.stringify(reads)).toBe(true);
  }, 180_000);
});
