/**
 * The npm library build (`vite build --mode lib`, what `npm run build:lib` ships in dist-lib/)
 * used the way a web developer would: a plain HTML page that loads `holoquic-player.js` (and
 * three.js, the page's own, through an import map) and writes one `<holoquic-player>` tag. The
 * module must find its own workers and wasm next to it and play the real demo scene from the
 * real origin.
 */
import { spawnSync } from 'node:child_process';
import { cpSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Browser, launch } from './lib/browser';
import { demoContentRoot } from './lib/content';
import { DIST, type Origin, ROOT, spkiHash, startOrigin } from './lib/processes';

// Under the origin's web root so the same origin serves page, library and content.
const LIB_DIR = resolve(DIST, 'npm-library-e2e');

const PAGE = `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" /><title>plain page</title>
    <script type="importmap">{ "imports": { "three": "./three/build/three.module.js", "three/": "./three/" } }</script>
  </head>
  <body>
    <p>Someone's page.</p>
    <holoquic-player src="/content/demo/manifest.mpd" mode="qr" autoplay style="display:block;width:640px;height:360px"></holoquic-player>
    <script type="module" src="./holoquic-player.js"></script>
  </body>
</html>
`;

let origin: Origin;
let browser: Browser;

beforeAll(async () => {
  const built = spawnSync(resolve(ROOT, 'node_modules/.bin/vite'), ['build', '--mode', 'lib', '--outDir', LIB_DIR, '--emptyOutDir'], { cwd: ROOT, encoding: 'utf8' });
  if (built.status !== 0) throw new Error(`library build failed:\n${built.stdout}\n${built.stderr}`);
  writeFileSync(join(LIB_DIR, 'index.html'), PAGE);
  // The page serves three.js itself: the library leaves it to the host (a peer dependency).
  for (const part of ['build/three.module.js', 'build/three.core.js', 'examples/jsm/controls']) {
    cpSync(resolve(ROOT, 'node_modules/three', part), join(LIB_DIR, 'three', part), { recursive: true });
  }
  origin = await startOrigin(demoContentRoot());
  browser = await launch({ spki: await spkiHash('127.0.0.1', origin.quicPort) });
  await browser.page.goto(`${origin.httpBase}/npm-library-e2e/index.html`);
});

afterAll(async () => {
  await browser?.close();
  await origin?.stop();
  rmSync(LIB_DIR, { recursive: true, force: true });
});

describe('the npm library in a plain page', () => {
  it('registers <holoquic-player>, which plays and draws every object', async () => {
    const deadline = Date.now() + 120_000;
    let last: unknown = null;
    for (;;) {
      last = await browser.page.evaluate(() => {
        const element = document.querySelector('holoquic-player') as HTMLElementTagNameMap['holoquic-player'];
        if (!customElements.get('holoquic-player')) return { registered: false };
        const stats = element.getStats();
        return {
          registered: true, state: element.state, error: element.error,
          decoded: stats?.objects.filter((o) => o.points > 0).length ?? 0, objects: stats?.objects.length ?? 0,
          drawn: stats?.render?.pointsDrawn ?? 0,
        };
      });
      const s = last as { state?: string; decoded?: number; objects?: number; drawn?: number };
      if (s.state === 'failed') break;
      if (s.objects && s.decoded === s.objects && (s.drawn ?? 0) > 0) break;
      if (Date.now() > deadline) break;
      await new Promise((r) => setTimeout(r, 500));
    }
    const s = last as { registered: boolean; state: string; error: string | null; decoded: number; objects: number; drawn: number };
    expect(s.registered).toBe(true);
    expect(s.error, browser.log.slice(-10).join('\n')).toBeNull();
    expect(s.objects).toBeGreaterThan(1);
    expect(s.decoded, `${JSON.stringify(s)}\n${browser.log.slice(-10).join("\n")}`).toBe(s.objects);
    expect(s.drawn).toBeGreaterThan(0);
  });
});
