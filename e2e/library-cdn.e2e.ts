/**
 * The npm library loaded the way a CDN serves it: the page is on the origin, while
 * `holoquic-player.js`, its workers and three.js come from a second origin (another port on
 * 127.0.0.1) that allows CORS. A browser refuses `new Worker(url)` for a script on another
 * origin, so this is what the blob-module bootstrap of src/workers/moduleWorker.ts is for: every
 * object must be decoded (both workers running from the second origin) and drawn.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Browser, launch, until } from './lib/browser';
import { type Cdn, cdnPlayerPage, startCdn } from './lib/cdn';
import { demoContentRoot } from './lib/content';
import { DIST, type Origin, ROOT, spkiHash, startOrigin } from './lib/processes';

const PAGE_DIR = resolve(DIST, 'cdn-library-e2e');

let libDir: string;
let cdn: Cdn;
let origin: Origin;
let browser: Browser;

beforeAll(async () => {
  libDir = mkdtempSync(join(tmpdir(), 'holoquic-cdn-lib-'));
  const built = spawnSync(resolve(ROOT, 'node_modules/.bin/vite'), ['build', '--mode', 'lib', '--outDir', libDir, '--emptyOutDir'], { cwd: ROOT, encoding: 'utf8' });
  if (built.status !== 0) throw new Error(`library build failed:\n${built.stdout}\n${built.stderr}`);
  cdn = await startCdn({ '/holoquic/': libDir, '/three/': resolve(ROOT, 'node_modules/three') });
  origin = await startOrigin(demoContentRoot());
  mkdirSync(PAGE_DIR, { recursive: true });
  writeFileSync(join(PAGE_DIR, 'index.html'), cdnPlayerPage(cdn.base, 'src="/content/demo/manifest.mpd" mode="q100-fec"'));
  browser = await launch({ spki: await spkiHash('127.0.0.1', origin.quicPort) });
  await browser.page.goto(`${origin.httpBase}/cdn-library-e2e/index.html`);
});

afterAll(async () => {
  await browser?.close();
  await origin?.stop();
  await cdn?.close();
  rmSync(PAGE_DIR, { recursive: true, force: true });
  if (libDir) rmSync(libDir, { recursive: true, force: true });
});

describe('the npm library served from another origin (CDN-style, CORS)', () => {
  it('starts its decode and FEC workers from that origin and plays every object over WebTransport', async () => {
    expect(new URL(cdn.base).origin).not.toBe(new URL(origin.httpBase).origin);
    const state = await until(browser, 'every object decoded and drawn', async () => {
      const s = await browser.page.evaluate(() => {
        const element = document.querySelector('holoquic-player') as HTMLElementTagNameMap['holoquic-player'] | null;
        if (!element || !customElements.get('holoquic-player')) return null;
        const stats = element.getStats();
        return {
          state: element.state, error: element.error?.message ?? null, transport: stats?.transport ?? null,
          objects: stats?.objects.length ?? 0, decoded: stats?.objects.filter((o) => o.points > 0).length ?? 0,
          drawn: stats?.render?.pointsDrawn ?? 0,
        };
      });
      if (s?.state === 'failed') throw new Error(`the element failed: ${s.error}\n${browser.log.slice(-10).join('\n')}`);
      return s && s.objects > 1 && s.decoded === s.objects && s.drawn > 0 ? s : null;
    });
    expect(state.error).toBeNull();
    // q100-fec sends every object as RaptorQ datagrams: all decoded means the FEC worker ran too.
    expect(state.transport).toBe('webtransport');

    const pageOrigin = new URL(origin.httpBase).origin;
    const fetched = (pattern: RegExp) => cdn.requests.filter((r) => pattern.test(r.path));
    expect(fetched(/^\/holoquic\/holoquic-player\.js$/).length).toBeGreaterThan(0);
    for (const worker of [/^\/holoquic\/assets\/holoquic-decode-worker-[\w-]+\.js$/, /^\/holoquic\/assets\/holoquic-fec-worker-[\w-]+\.js$/]) {
      const requests = fetched(worker);
      expect(requests.length, `${worker} never fetched from the CDN: ${JSON.stringify(cdn.requests.map((r) => r.path))}`).toBeGreaterThan(0);
      // Fetched as a CORS module import by the page's origin (the blob bootstrap), not as a same-origin worker script.
      expect(requests.every((r) => r.origin === pageOrigin)).toBe(true);
    }
    expect(fetched(/^\/three\/build\/three\.module\.js$/).length).toBeGreaterThan(0);
  });
});
