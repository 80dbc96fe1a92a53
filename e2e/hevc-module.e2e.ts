/**
 * The optional HEVC module (libde265, LGPL-3.0) is fetched only when a scene needs it. The npm
 * library is served from a second origin (CDN-style, CORS, as library-cdn.e2e.ts does) whose
 * request log is read: a page playing the AVC demo scene must never ask for `vpcc-hevc-*`, and a
 * page playing an HEVC scene (packed here by the real packager) must fetch the module's .mjs and
 * .wasm and play every object — headless Chromium has no HEVC in WebCodecs, so the module is
 * what decodes it.
 */
import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Browser, launch, until } from './lib/browser';
import { type Cdn, cdnPlayerPage, startCdn } from './lib/cdn';
import { demoContentRoot, PACK_BIN } from './lib/content';
import { DIST, type Origin, requireBuilt, ROOT, spkiHash, startOrigin } from './lib/processes';

const PAGE_DIR = resolve(DIST, 'hevc-module-e2e');
const HEVC_MODULE = /^\/holoquic\/assets\/vpcc-hevc-[\w-]+\.(mjs|wasm)$/;

/** Two demo figures, one low rung, one second: HEVC content that packs in seconds. */
const HEVC_SCENE = {
  codec: 'hevc',
  seconds: 1,
  ladder: [{ lod: 2, maps: 1, geometryQp: 36, attributeQp: 46 }],
  objects: [
    { id: 'figure-0', demo: { seed: 0 } },
    { id: 'figure-1', demo: { seed: 1 } },
  ],
};

let work: string;
let cdn: Cdn;
let origin: Origin;
let browser: Browser;

beforeAll(async () => {
  requireBuilt(PACK_BIN);
  work = mkdtempSync(join(tmpdir(), 'holoquic-hevc-module-'));
  const libDir = join(work, 'lib');
  const built = spawnSync(resolve(ROOT, 'node_modules/.bin/vite'), ['build', '--mode', 'lib', '--outDir', libDir, '--emptyOutDir'], { cwd: ROOT, encoding: 'utf8' });
  if (built.status !== 0) throw new Error(`library build failed:\n${built.stdout}\n${built.stderr}`);
  // One content root with both scenes (copies: the origin serves nothing outside its root).
  const content = join(work, 'content');
  cpSync(join(demoContentRoot(), 'demo'), join(content, 'demo'), { recursive: true });
  writeFileSync(join(work, 'hevc.json'), JSON.stringify(HEVC_SCENE));
  const packed = spawnSync(PACK_BIN, ['scene', join(work, 'hevc.json'), '--out', join(content, 'hevc')], { encoding: 'utf8' });
  if (packed.status !== 0) throw new Error(`holoquic-pack scene failed (${packed.status}):\n${packed.stdout}\n${packed.stderr}`);

  cdn = await startCdn({ '/holoquic/': libDir, '/three/': resolve(ROOT, 'node_modules/three') });
  origin = await startOrigin(content);
  mkdirSync(PAGE_DIR, { recursive: true });
  for (const scene of ['demo', 'hevc']) writeFileSync(join(PAGE_DIR, `${scene}.html`), cdnPlayerPage(cdn.base, `src="/content/${scene}/manifest.mpd" mode="qr"`));
  browser = await launch({ spki: await spkiHash('127.0.0.1', origin.quicPort) });
});

afterAll(async () => {
  await browser?.close();
  await origin?.stop();
  await cdn?.close();
  rmSync(PAGE_DIR, { recursive: true, force: true });
  if (work) rmSync(work, { recursive: true, force: true });
});

/** Loads a page and waits until every object of its scene is decoded and drawn; gives the CDN requests it made. */
async function play(scene: 'demo' | 'hevc'): Promise<Cdn['requests']> {
  const first = cdn.requests.length;
  await browser.page.goto(`${origin.httpBase}/hevc-module-e2e/${scene}.html`);
  await until(browser, `every object of ${scene} decoded and drawn`, async () => {
    const s = await browser.page.evaluate(() => {
      const element = document.querySelector('holoquic-player') as HTMLElementTagNameMap['holoquic-player'] | null;
      if (!element || !customElements.get('holoquic-player')) return null;
      const stats = element.getStats();
      return {
        state: element.state, error: element.error?.message ?? null, objects: stats?.objects.length ?? 0,
        decoded: stats?.objects.filter((o) => o.points > 0).length ?? 0, drawn: stats?.render?.pointsDrawn ?? 0,
      };
    });
    if (s?.state === 'failed') throw new Error(`the element failed on ${scene}: ${s.error}\n${browser.log.slice(-10).join('\n')}`);
    return s && s.objects > 1 && s.decoded === s.objects && s.drawn > 0 ? s : null;
  });
  return cdn.requests.slice(first);
}

describe('the optional HEVC module', () => {
  it('is never fetched for an AVC scene', async () => {
    const requests = await play('demo');
    expect(requests.some((r) => /holoquic-decode-worker/.test(r.path)), 'the decode worker came from the CDN').toBe(true);
    expect(requests.filter((r) => /vpcc-hevc/.test(r.path))).toEqual([]);
  });

  it('is fetched and decodes an HEVC scene where WebCodecs has no HEVC', async () => {
    const webCodecsHevc = await browser.page.evaluate(async () =>
      !!(await VideoDecoder.isConfigSupported({ codec: 'hev1.1.6.L93.B0' }).catch(() => ({ supported: false }))).supported);
    // The premise of this test: without HEVC in WebCodecs, only the module can decode the scene.
    expect(webCodecsHevc, 'this Chromium decodes HEVC in WebCodecs itself').toBe(false);
    const requests = await play('hevc');
    const fetched = requests.filter((r) => HEVC_MODULE.test(r.path));
    expect(fetched.map((r) => r.path.split('.').pop()).sort(), JSON.stringify(requests.map((r) => r.path))).toEqual(expect.arrayContaining(['mjs', 'wasm']));
    // Fetched by the page's origin through CORS (a module import and the wasm fetch of a worker).
    const pageOrigin = new URL(origin.httpBase).origin;
    expect(fetched.every((r) => r.origin === pageOrigin)).toBe(true);
    // The licence travels beside the module, but the player never needs it.
    expect(requests.some((r) => /LICENSE/.test(r.path))).toBe(false);
  });
});
