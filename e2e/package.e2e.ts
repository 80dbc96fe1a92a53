/**
 * The npm package as a web developer gets it: `npm pack` (which builds the library through
 * `prepack`), the tarball installed offline into a fresh Vite app next to the app's own three.js,
 * the app type-checked against the installed declarations (strictly, library files included) and
 * built with `vite build`, and the built page playing the demo scene from the real origin. The
 * page also checks that the element draws with the app's three.js (one copy of it, not a second
 * one inside the package).
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Browser, launch, until } from './lib/browser';
import { demoContentRoot } from './lib/content';
import { DIST, type Origin, ROOT, spkiHash, startOrigin } from './lib/processes';

// The app's build goes under the origin's web root, so one origin serves page and content.
const APP_PATH = 'package-e2e';
const APP_OUT = resolve(DIST, APP_PATH);

const APP_MAIN = `import { type HoloquicStats, HoloquicPlayerElement, PLAYER_MODES } from 'holoquic';
import { PerspectiveCamera, WebGLRenderer } from 'three';

// Typed through the package's declarations: the tag map, the element class, the stats.
const element: HoloquicPlayerElement | null = document.querySelector('holoquic-player');
if (!element) throw new Error('no <holoquic-player>');

function report(): { state: string; error: string | null; objects: number; decoded: number; drawn: number; appThree: boolean } {
  const stats: HoloquicStats | null = element!.getStats();
  const view = element!.renderer;
  return {
    state: element!.state,
    error: element!.error?.message ?? null,
    objects: stats?.objects.length ?? 0,
    decoded: stats?.objects.filter((o) => o.points > 0).length ?? 0,
    drawn: stats?.render?.pointsDrawn ?? 0,
    // The element's renderer and camera are instances of the app's three.js classes.
    appThree: view !== null && view.renderer instanceof WebGLRenderer && view.camera instanceof PerspectiveCamera,
  };
}
(window as unknown as { holoquicApp: unknown }).holoquicApp = { report, modes: PLAYER_MODES.length, registered: customElements.get('holoquic-player') === HoloquicPlayerElement };
`;

const APP_HTML = `<!doctype html>
<html lang="en">
  <head><meta charset="utf-8" /><title>an app that installed holoquic</title></head>
  <body>
    <holoquic-player src="/content/demo/manifest.mpd" mode="qpr-fec" autoplay style="display:block;width:640px;height:360px"></holoquic-player>
    <script type="module" src="./main.ts"></script>
  </body>
</html>
`;

const APP_TSCONFIG = {
  compilerOptions: {
    target: 'ES2022', module: 'ESNext', moduleResolution: 'Bundler', lib: ['ES2022', 'DOM', 'DOM.Iterable'],
    strict: true, noEmit: true, isolatedModules: true,
    // The package's .d.ts files are checked too: they must compile in someone else's project.
    skipLibCheck: false,
    types: [],
  },
  include: ['main.ts'],
};

let work: string;
let app: string;
let tarball: string;
/** How three.js and @types/three got into the app: from npm's cache, or linked from this repository. */
let threeSource: 'npm cache' | 'linked';
let origin: Origin;
let browser: Browser;

function run(command: string, args: string[], cwd: string): string {
  const result = spawnSync(command, args, { cwd, encoding: 'utf8', maxBuffer: 64 << 20 });
  if (result.status !== 0) throw new Error(`${command} ${args.join(' ')} failed (${result.status}):\n${result.stdout}\n${result.stderr}`);
  return result.stdout;
}

/**
 * Installs the tarball offline, with three and @types/three (and what @types/three needs) at the
 * versions this repository locks. With no network npm cannot read package metadata, but it finds
 * the tarballs it has cached by their registry URLs, so those are named. Where the cache lacks
 * one, the package goes in alone (its peers unresolved) and this repository's copies of three and
 * @types/three are linked into the app.
 */
function installPackage(appDir: string, packageTarball: string): 'npm cache' | 'linked' {
  const lock = JSON.parse(readFileSync(resolve(ROOT, 'package-lock.json'), 'utf8')).packages as Record<string, { version: string; dependencies?: Record<string, string> }>;
  const wanted = new Set<string>();
  const queue = ['three', '@types/three'];
  while (queue.length > 0) {
    const name = queue.shift()!;
    if (wanted.has(name)) continue;
    wanted.add(name);
    queue.push(...Object.keys(lock[`node_modules/${name}`]?.dependencies ?? {}));
  }
  const urls = [...wanted].map((name) => `https://registry.npmjs.org/${name}/-/${name.split('/').pop()}-${lock[`node_modules/${name}`].version}.tgz`);
  const offline = ['install', '--offline', '--no-audit', '--no-fund'];
  if (spawnSync('npm', [...offline, packageTarball, ...urls], { cwd: appDir, encoding: 'utf8' }).status === 0) return 'npm cache';
  run('npm', [...offline, '--legacy-peer-deps', packageTarball], appDir);
  for (const name of ['three', '@types/three']) {
    mkdirSync(resolve(appDir, 'node_modules', name, '..'), { recursive: true });
    symlinkSync(resolve(ROOT, 'node_modules', name), resolve(appDir, 'node_modules', name), 'dir');
  }
  return 'linked';
}

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'holoquic-package-e2e-'));
  // prepack builds dist-lib/ (vite library build + declarations) before packing.
  run('npm', ['pack', '--pack-destination', work], ROOT);
  tarball = join(work, readdirSync(work).find((f) => f.endsWith('.tgz'))!);

  app = join(work, 'app');
  mkdirSync(app);
  writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'consumer-app', private: true, type: 'module' }, null, 2));
  writeFileSync(join(app, 'index.html'), APP_HTML);
  writeFileSync(join(app, 'main.ts'), APP_MAIN);
  writeFileSync(join(app, 'tsconfig.json'), JSON.stringify(APP_TSCONFIG, null, 2));
  threeSource = installPackage(app, tarball);
  // The app's toolchain is this repository's TypeScript and Vite, run in the app's directory.
  run(resolve(ROOT, 'node_modules/.bin/tsc'), ['-p', 'tsconfig.json'], app);
  run(resolve(ROOT, 'node_modules/.bin/vite'), ['build', '--base', `/${APP_PATH}/`, '--outDir', APP_OUT, '--emptyOutDir'], app);

  origin = await startOrigin(demoContentRoot());
  browser = await launch({ spki: await spkiHash('127.0.0.1', origin.quicPort) });
  await browser.page.goto(`${origin.httpBase}/${APP_PATH}/index.html`);
}, 400_000);

afterAll(async () => {
  await browser?.close();
  await origin?.stop();
  rmSync(APP_OUT, { recursive: true, force: true });
  if (work) rmSync(work, { recursive: true, force: true });
});

describe('the npm package installed into a fresh Vite app', () => {
  it('is publishable: not private, three a peer, the library, declarations and licences inside', () => {
    const files = execFileSync('tar', ['-tzf', tarball], { encoding: 'utf8' }).split('\n');
    for (const file of ['package/LICENSE', 'package/THIRD_PARTY_NOTICES', 'package/dist-lib/holoquic-player.js', 'package/dist-lib/types/app/library.d.ts']) {
      expect(files, file).toContain(file);
    }
    expect(files.filter((f) => /^package\/dist-lib\/assets\/holoquic-(decode|fec)-worker-[\w-]+\.js$/.test(f))).toHaveLength(2);
    const manifest = JSON.parse(execFileSync('tar', ['-xzOf', tarball, 'package/package.json'], { encoding: 'utf8' }));
    expect(manifest.private).toBeUndefined();
    expect(manifest.peerDependencies.three).toBeDefined();
    expect(manifest.dependencies?.three).toBeUndefined();
    // three stays out of the bundle: the module imports it from the host.
    const library = execFileSync('tar', ['-xzOf', tarball, 'package/dist-lib/holoquic-player.js'], { encoding: 'utf8' });
    expect(library).toMatch(/^import \* as \w+ from "three";$/m);
    expect(library).not.toContain('class WebGLRenderer');
    console.log(`three.js in the app: ${threeSource}`);
    for (const field of ['repository', 'homepage', 'bugs']) expect(manifest[field], field).toBeDefined();
  });

  it('keeps the LGPL HEVC decoder out of the core: a separate module with its licence beside it', () => {
    const files = execFileSync('tar', ['-tzf', tarball], { encoding: 'utf8' }).split('\n');
    const hevc = files.filter((f) => /^package\/dist-lib\/assets\/vpcc-hevc/.test(f)).map((f) => f.replace('package/dist-lib/assets/', ''));
    expect(hevc.filter((f) => /^vpcc-hevc-[\w-]+\.mjs$/.test(f)), hevc.join(', ')).toHaveLength(1);
    expect(hevc.filter((f) => /^vpcc-hevc-[\w-]+\.wasm$/.test(f)), hevc.join(', ')).toHaveLength(1);
    expect(hevc).toContain('vpcc-hevc.LICENSE.txt');
    const licence = execFileSync('tar', ['-xzOf', tarball, 'package/dist-lib/assets/vpcc-hevc.LICENSE.txt'], { encoding: 'utf8' });
    expect(licence).toMatch(/GNU LESSER GENERAL PUBLIC LICENSE\s+Version 3/);
    expect(licence).toContain('apt-get source libde265');
    // The core wasm the decode worker carries (as a data: URL) has no libde265 in it.
    const worker = files.find((f) => /holoquic-decode-worker-[\w-]+\.js$/.test(f))!;
    const source = execFileSync('tar', ['-xzOf', tarball, worker], { encoding: 'utf8', maxBuffer: 64 << 20 });
    const core = /data:application\/wasm;base64,([A-Za-z0-9+/=]+)/.exec(source);
    expect(core, 'the core wasm inlined in the decode worker').not.toBeNull();
    expect(Buffer.from(core![1], 'base64').includes('de265')).toBe(false);
    // The app's bundler copied the module and its licence along with the library.
    const built = readdirSync(join(APP_OUT, 'assets'));
    for (const pattern of [/^vpcc-hevc-[\w-]+\.mjs$/, /^vpcc-hevc-[\w-]+\.wasm$/, /^vpcc-hevc\.LICENSE-[\w-]+\.txt$/]) {
      expect(built.some((f) => pattern.test(f)), `${pattern} in the app's build: ${built.join(', ')}`).toBe(true);
    }
  });

  it('plays the demo scene in the built app, drawn with the app\'s own three.js', async () => {
    const state = await until(browser, 'every object decoded and drawn', async () => {
      const s = await browser.page.evaluate(() => {
        const app = (window as unknown as { holoquicApp?: { report(): Record<string, unknown>; registered: boolean; modes: number } }).holoquicApp;
        return app ? { ...app.report(), registered: app.registered, modes: app.modes } : null;
      }) as { state: string; error: string | null; objects: number; decoded: number; drawn: number; appThree: boolean; registered: boolean; modes: number } | null;
      if (s?.state === 'failed') throw new Error(`the element failed: ${s.error}\n${browser.log.slice(-10).join('\n')}`);
      return s && s.objects > 1 && s.decoded === s.objects && s.drawn > 0 ? s : null;
    });
    expect(state.registered).toBe(true);
    expect(state.modes).toBeGreaterThan(1);
    expect(state.error).toBeNull();
    expect(state.appThree).toBe(true);
  });
});
