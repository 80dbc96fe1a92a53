/**
 * The HTTP/2 path from plain static hosting (docs/embedding.md → "Static hosting and CDNs"): the
 * page, the built player and the packed scene served by Python's `http.server` — a generic file
 * server with nothing of ours in it: no `/config.json`, no `/cert-hash`, no `/healthz` — over
 * plain HTTP on 127.0.0.1 (a secure context, so workers and WebCodecs run). A
 * `<holoquic-player mode="h2">` in real headless Chromium must decode every object with the real
 * wasm decoder and draw it, with no error, on HTTP/2 only and saying why; the server's request
 * log shows what the player asked the host for.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Browser, launch, until } from './lib/browser';
import { demoContentRoot } from './lib/content';
import { DIST, requireBuilt, type Running, start } from './lib/processes';

const MANIFEST = '/content/demo/manifest.mpd';

let site: string;
let server: Running;
let base: string;
let browser: Browser;

/**
 * The site's root: the built app's files (linked), the demo scene under `/content/`, and a page
 * made from the built embedding example with its element set to `h2`.
 */
function buildSite(): string {
  requireBuilt(resolve(DIST, 'embed.html'));
  const root = mkdtempSync(join(tmpdir(), 'holoquic-static-site-'));
  for (const entry of readdirSync(DIST)) symlinkSync(resolve(DIST, entry), join(root, entry));
  symlinkSync(demoContentRoot(), join(root, 'content'));
  const embed = readFileSync(resolve(DIST, 'embed.html'), 'utf8');
  const element = `<holoquic-player id="player" src="${MANIFEST}" mode="h2" autoplay loop style="display:block;width:640px;height:360px"></holoquic-player>`;
  const page = embed.replace(/<holoquic-player[^>]*>\s*<\/holoquic-player>/, element);
  if (page === embed) throw new Error('the built embed.html has no <holoquic-player> element to replace');
  writeFileSync(join(root, 'static-h2.html'), page);
  return root;
}

/** Every request line the server logged, as `METHOD PATH STATUS`. */
function requests(): string[] {
  return [...server.output().matchAll(/"(GET|HEAD|POST) (\S+) HTTP\/[\d.]+" (\d{3})/g)].map((m) => `${m[1]} ${m[2]} ${m[3]}`);
}

beforeAll(async () => {
  site = buildSite();
  // -u: unbuffered, so the ready line and the request log arrive while it runs.
  const started = await start('python3', ['-u', '-m', 'http.server', '0', '--bind', '127.0.0.1', '--directory', site], /Serving HTTP on \S+ port (\d+)/);
  server = started.running;
  base = `http://127.0.0.1:${started.match[1]}`;
  browser = await launch();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await server?.stop();
  if (site) rmSync(site, { recursive: true, force: true });
});

describe('<holoquic-player mode="h2"> on a generic static file server', () => {
  it('decodes and draws every object over HTTP/2 with no /config.json, /cert-hash or /healthz', async () => {
    await browser.page.goto(`${base}/static-h2.html`);
    const played = await until(browser, 'every object decoded and drawn, and 3 s played', async () => {
      const s = await browser.page.evaluate(() => {
        const element = document.querySelector('holoquic-player') as HTMLElementTagNameMap['holoquic-player'] | null;
        if (!element) return null;
        if (element.state === 'failed') return { failed: element.error?.message ?? 'no error message' };
        const stats = element.getStats();
        if (!stats) return null;
        return {
          failed: null,
          state: element.state, error: element.error?.message ?? null, transport: stats.transport, fallbackReason: stats.fallbackReason,
          objects: stats.objects.length, decoded: stats.objects.filter((o) => o.points > 0).length,
          drawn: stats.render?.pointsDrawn ?? 0, playedS: stats.playedS,
        };
      });
      if (s?.failed) throw new Error(`the element failed: ${s.failed}\n${browser.log.slice(-10).join('\n')}`);
      return s && s.objects !== undefined && s.objects > 1 && s.decoded === s.objects && s.drawn > 0 && s.playedS > 3 ? s : null;
    }, 90_000);
    expect(played.error).toBeNull();
    expect(played.state).toBe('playing');
    expect(played.transport).toBe('http2');
    // No WebTransport here, and the player says why: no /config.json and no endpoint in the manifest.
    expect(played.fallbackReason).toMatch(/config\.json: HTTP 404.*manifest lists none/);

    const log = requests();
    const segments = log.filter((r) => /^GET \/content\/demo\/figure-\d\/\d\/seg-\d{5}\.v3c 200$/.test(r));
    expect(segments.length, log.join('\n')).toBeGreaterThanOrEqual(played.objects);
    expect(log).toContain(`GET ${MANIFEST} 200`);
    // What the player asked of the host that only our origin has: /config.json once (a 404 means
    // HTTP/2 only), nothing else.
    expect(log.filter((r) => / \/config\.json /.test(r))).toEqual(['GET /config.json 404']);
    expect(log.filter((r) => /\/(healthz|cert-hash)\b/.test(r))).toEqual([]);
  }, 150_000);
});
