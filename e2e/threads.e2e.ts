/**
 * Which core decoder module the player runs, in real headless Chromium against the real origin:
 * served with `--cross-origin-isolate` (COOP + COEP) the page is cross-origin isolated and the
 * decode workers run the threaded build (vpcc-mt, several threads); without it they fall back to
 * the single-threaded build. Both decode the demo's segments to the native decoder's checksums.
 */
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { DecoderTestResult } from './pages/decoder';
import { type Browser, launch } from './lib/browser';
import { demoContentRoot } from './lib/content';
import { type Origin, requireBuilt, ROOT, startOrigin } from './lib/processes';

const VPCC_DECODE = resolve(ROOT, 'wasm/build-native/vpcc-decode');

let origin: Origin | undefined;
let browser: Browser | undefined;

afterEach(async () => {
  await browser?.close();
  await origin?.stop();
  browser = origin = undefined;
});

/** The first segment of the demo's first object at its top quality (the most points). */
function topSegment(content: string): string {
  const scene = join(content, 'demo');
  const object = readdirSync(scene, { withFileTypes: true }).find((e) => e.isDirectory())!.name;
  const top = readdirSync(join(scene, object)).filter((q) => /^\d+$/.test(q)).sort((a, b) => +b - +a)[0];
  return join(scene, object, top, 'seg-00000.v3c');
}

function nativeMd5(file: string): string[] {
  const run = spawnSync(VPCC_DECODE, [file], { encoding: 'utf8' });
  if (run.status !== 0) throw new Error(`vpcc-decode ${file} failed: ${run.stderr}`);
  return [...run.stdout.matchAll(/post-processed md5 ([0-9a-f]{32})/g)].map((m) => m[1]);
}

async function decodeOnOrigin(extraArgs: string[]): Promise<{ result: DecoderTestResult; want: string[]; path: string }> {
  requireBuilt(VPCC_DECODE);
  const content = demoContentRoot();
  origin = await startOrigin(content, extraArgs);
  browser = await launch();
  await browser.page.goto(`${origin.httpBase}/e2e/pages/decoder.html`);
  await browser.page.waitForFunction(() => 'holoquicDecoderTest' in window);
  const file = topSegment(content);
  const path = `/content/${relative(content, file)}`;
  const result = await browser.page.evaluate((p) => window.holoquicDecoderTest.decode(p), path);
  expect(result.error, `${result.error}\n${browser.log.slice(-10).join('\n')}`).toBeUndefined();
  const frameMs = result.frameMs!.reduce((a, b) => a + b, 0) / result.frameMs!.length;
  // For docs/benchmarks.md (never asserted).
  console.log(`${relative(content, file)}, ${result.core?.kind} (${result.core?.threads} thread(s)): ~${Math.round(result.points![0] / 1000)} k points, ` +
    `reconstruction + copy ${frameMs.toFixed(1)} ms/frame`);
  return { result, want: nativeMd5(file), path };
}

describe('core module choice', () => {
  it('a cross-origin isolated page decodes with the threaded build, bit-exactly', async () => {
    const { result, want, path } = await decodeOnOrigin(['--cross-origin-isolate']);
    expect(result.crossOriginIsolated).toBe(true);
    expect(result.core?.kind, result.core?.fallbackReason).toBe('threaded');
    expect(result.core!.threads).toBeGreaterThan(1);
    expect(result.md5).toEqual(want);
    // Bad input is an error with the codec's message (not an exception escaping the module),
    // and the worker decodes the next segment as before.
    const corrupt = await browser!.page.evaluate((p) => window.holoquicDecoderTest.decode(p, { corruptAt: [0, 1, 2] }), path);
    expect(corrupt.error).toMatch(/vpcc: invalid bitstream: \S+/);
    const again = await browser!.page.evaluate((p) => window.holoquicDecoderTest.decode(p), path);
    expect(again.core?.kind).toBe('threaded');
    expect(again.md5).toEqual(want);
  });

  it('a page that is not isolated falls back to the single-threaded build, bit-exactly', async () => {
    const { result, want } = await decodeOnOrigin([]);
    expect(result.crossOriginIsolated).toBe(false);
    expect(result.core?.kind).toBe('single');
    expect(result.core?.threads).toBe(1);
    expect(result.core?.fallbackReason).toMatch(/not cross-origin isolated/);
    expect(result.md5).toEqual(want);
  });
});
