/**
 * The V-PCC decoder in real headless Chromium: segments of the packed built-in demo, served by
 * the real origin, decoded by the decoder pool (wasm vpcc in workers, WebCodecs H.264). H.264
 * decoding is bit-exact, so every frame's TMC2 checksum must equal what the native decoder
 * (`vpcc-decode`, libavcodec) prints for the same file. Corrupt segments must fail with a clear
 * error and leave the pool working. A TMC2 HEVC stream goes through the optional HEVC module
 * (headless Chromium has no HEVC in WebCodecs) to TMC2's frame checksums.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DecoderTestResult, GpuCompareResult } from './pages/decoder';
import { type Browser, launch } from './lib/browser';
import { demoContentRoot } from './lib/content';
import { type Origin, requireBuilt, ROOT, startOrigin } from './lib/processes';

const VPCC_DECODE = resolve(ROOT, 'wasm/build-native/vpcc-decode');
const TMC2_STREAM = resolve(ROOT, '../shared/vpcc/synth_ai_r4/synth_ai_r4');

let content: string;
let origin: Origin;
let browser: Browser;

/** Per frame, the post-processed frame MD5 the native decoder prints. */
function nativeMd5(file: string): string[] {
  const run = spawnSync(VPCC_DECODE, [file], { encoding: 'utf8' });
  if (run.status !== 0) throw new Error(`vpcc-decode ${file} failed: ${run.stderr}`);
  return [...run.stdout.matchAll(/post-processed md5 ([0-9a-f]{32})/g)].map((m) => m[1]);
}

/** First segment of the lowest and the highest quality of the first object of the demo. */
function demoSegments(): string[] {
  const scene = join(content, 'demo');
  const object = readdirSync(scene, { withFileTypes: true }).find((e) => e.isDirectory())!.name;
  const qualities = readdirSync(join(scene, object)).filter((q) => /^\d+$/.test(q)).sort((a, b) => +a - +b);
  return [qualities[0], qualities[qualities.length - 1]].map((q) => join(scene, object, q, 'seg-00000.v3c')).filter(existsSync);
}

async function decodeIn(path: string, options: { corruptAt?: number[] } = {}): Promise<DecoderTestResult> {
  return browser.page.evaluate(([p, o]) => window.holoquicDecoderTest.decode(p, o), [path, options] as const);
}

beforeAll(async () => {
  requireBuilt(VPCC_DECODE);
  content = demoContentRoot();
  origin = await startOrigin(content);
  browser = await launch();
  await browser.page.goto(`${origin.httpBase}/e2e/pages/decoder.html`);
  await browser.page.waitForFunction(() => 'holoquicDecoderTest' in window);
});

afterAll(async () => {
  await browser?.close();
  await origin?.stop();
});

describe('decoding in the browser', () => {
  it('gives frames whose checksums equal the native decoder', async () => {
    const segments = demoSegments();
    expect(segments.length).toBeGreaterThan(0);
    for (const file of segments) {
      const want = nativeMd5(file);
      expect(want.length, `vpcc-decode printed no frames for ${file}`).toBeGreaterThan(0);
      const got = await decodeIn(`/content/${relative(content, file)}`);
      expect(got.error, `${got.error}\n${browser.log.slice(-10).join('\n')}`).toBeUndefined();
      expect(got.md5).toEqual(want);
      expect(got.wellFormed).toBe(true);
      expect(got.points!.every((n) => n > 0)).toBe(true);
      // For docs/benchmarks.md (never asserted).
      const frameMs = got.frameMs!.reduce((a, b) => a + b, 0) / got.frameMs!.length;
      console.log(`${relative(content, file)}: ${got.points!.length} frames, ~${Math.round(got.points![0] / 1000)} k points; ` +
        `segment ${got.decodeMs!.toFixed(0)} ms, reconstruction + copy ${frameMs.toFixed(1)} ms/frame, ` +
        `pictures into wasm ${got.pictureMs!.toFixed(0)} ms/segment`);
    }
  });

  it('rejects corrupt segments with a clear error and keeps decoding afterwards', async () => {
    const [file] = demoSegments();
    const path = `/content/${relative(content, file)}`;
    // The sample stream header and the first V3C unit's size: parsing must fail.
    const header = await decodeIn(path, { corruptAt: [0, 1, 2] });
    expect(header.error).toMatch(/vpcc: invalid bitstream: \S+/);
    // A missing segment is an error too, not a hang.
    const missing = await decodeIn('/content/demo/no-such-object/0/seg-00000.v3c');
    expect(missing.error).toMatch(/HTTP 404/);
    // And the pool still decodes a good segment identically.
    const again = await decodeIn(path);
    expect(again.error).toBeUndefined();
    expect(again.md5).toEqual(nativeMd5(file));
  });

  it('survives damage inside the coded data (error or frames, never a crash)', async () => {
    const [file] = demoSegments();
    const path = `/content/${relative(content, file)}`;
    const size = (await browser.page.evaluate((p) => fetch(p).then((r) => r.arrayBuffer()).then((b) => b.byteLength), path)) as number;
    for (const fraction of [0.1, 0.3, 0.5, 0.7, 0.9]) {
      const at = Math.floor(size * fraction);
      const result = await decodeIn(path, { corruptAt: [at, at + 1, at + 2, at + 3] });
      // An error names what was wrong; a wasm trap or abort (which the pool survives by
      // restarting the worker) is the crash this test exists to catch.
      if (result.error) expect(result.error).not.toMatch(/RuntimeError|worker restarted|unreachable|out of bounds|Aborted/i);
      else expect(result.wellFormed).toBe(true);
    }
    const after = await decodeIn(path);
    expect(after.md5).toEqual(nativeMd5(file));
  });
});

describe('GPU reconstruction', () => {
  it('the vertex-shader reconstruction gives the same points as the CPU path, read back by transform feedback', async () => {
    const segments = demoSegments();
    expect(segments.length).toBeGreaterThan(0);
    for (const file of segments) {
      const path = `/content/${relative(content, file)}`;
      const result = (await browser.page.evaluate(([p]) => window.holoquicDecoderTest.gpuCompare(p, { frames: 3 }), [path] as const)) as GpuCompareResult;
      expect(result.error, `${result.error}\n${browser.log.slice(-10).join('\n')}`).toBeUndefined();
      expect(result.frames!.length).toBe(3);
      for (const [f, d] of result.frames!.entries()) {
        const where = `${relative(content, file)} frame ${f}: ${JSON.stringify(d)}`;
        expect(d.countA, where).toBeGreaterThan(0);
        expect(d.countB, where).toBe(d.countA);
        expect(d.positionMismatches, where).toBe(0);
        // The shader computes in float where the CPU uses double: a colour may round one step apart.
        expect(d.maxColorDiff, where).toBeLessThanOrEqual(1);
        expect(d.exactColorShare, where).toBeGreaterThan(0.99);
      }
      // For docs/benchmarks.md (never asserted).
      const mean = (v: number[]) => v.reduce((a, b) => a + b, 0) / v.length;
      console.log(`${relative(content, file)}: ${result.frames![0].countA} points; GPU reconstruction + readback ` +
        `${mean(result.frames!.map((d) => d.gpuMs)).toFixed(1)} ms/frame (software GL), CPU reconstruction ` +
        `${mean(result.cpuFrameMs!).toFixed(1)} ms/frame; exact colours ${(100 * mean(result.frames!.map((d) => d.exactColorShare))).toFixed(3)} %`);
    }
  });
});

describe('HEVC (TMC2 conformance stream)', () => {
  it.skipIf(!existsSync(`${TMC2_STREAM}.bin`))('headless Chromium decodes HEVC with the optional HEVC module (libde265), bit-exactly', async () => {
    // Served to the page by Playwright (the stream is test material outside the content root).
    await browser.page.route('**/tmc2-stream.bin', (route) => route.fulfill({ body: readFileSync(`${TMC2_STREAM}.bin`) }));
    const result = await decodeIn('/tmc2-stream.bin');
    console.log(`TMC2 HEVC stream in this browser: decoded by ${result.videoDecoder}, ${result.pictureMs?.toFixed(0)} ms of video for ${result.points?.length} frames`);
    expect(result.error).toBeUndefined();
    // Headless Chromium has no HEVC in WebCodecs: this is the optional HEVC module (libde265) at work.
    expect(result.videoDecoder).toBe('hevc-module');
    const log = readFileSync(`${TMC2_STREAM}_dec_rec_pcframe_log.txt`, 'utf8');
    const expected = [...log.matchAll(/MD5 checksum\s*=\s*([0-9a-f]{32})/g)].map((m) => m[1]);
    expect(expected.length).toBeGreaterThan(0);
    expect(result.md5).toEqual(expected);
  });
});
