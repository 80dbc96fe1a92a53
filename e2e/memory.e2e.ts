/**
 * Long-run memory: the demo app drawing the real demo scene for a while must not grow — the JS
 * heap after garbage collection and three's live geometry/texture counts stay flat once playback
 * has warmed up (fixed GPU pools, no per-frame allocation that survives a GC). The decode and FEC
 * workers' wasm memory is sampled from the element's stats too.
 *
 * CI runs 60 s; `HOLOQUIC_MEMORY_S=1800 npx vitest run --config e2e/vitest.config.ts e2e/memory.e2e.ts`
 * is the 30-minute soak whose numbers are in docs/benchmarks.md. Samples are printed.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CDPSession } from 'playwright-core';
import { type Browser, launch } from './lib/browser';
import { demoContentRoot } from './lib/content';
import { type Origin, spkiHash, startOrigin } from './lib/processes';

const RUN_S = Number(process.env.HOLOQUIC_MEMORY_S ?? 60);
const WARMUP_S = Math.min(20, RUN_S / 3);
const SAMPLE_S = Math.max(5, RUN_S / 20);

interface Sample {
  atS: number;
  heapMB: number;
  /** ArrayBuffer backing stores (decoded frames live there, outside the JS heap). */
  buffersMB: number;
  geometries: number;
  textures: number;
  playedS: number;
  /** Wasm memory of the decode workers (summed) and of the FEC worker, MB. */
  decodeWorkersMB: number;
  fecWorkerMB: number;
}

let origin: Origin;
let browser: Browser;
let cdp: CDPSession;

async function sample(startedAt: number): Promise<Sample> {
  await cdp.send('HeapProfiler.collectGarbage');
  const heap = await cdp.send('Runtime.getHeapUsage');
  const page = await browser.page.evaluate(() => {
    const stats = document.querySelector('holoquic-player')!.getStats()!;
    return {
      geometries: stats.render!.geometries, textures: stats.render!.textures, playedS: stats.playedS, state: stats.state,
      decodeWorkersBytes: stats.decoder?.workerMemoryBytes ?? 0, fecWorkerBytes: stats.fecWorkerMemoryBytes ?? 0,
    };
  });
  if (page.state === 'failed' || page.state === 'ended') throw new Error(`player ${page.state}\n${browser.log.slice(-10).join('\n')}`);
  return { atS: (Date.now() - startedAt) / 1000, heapMB: heap.usedSize / 2 ** 20, buffersMB: heap.backingStorageSize / 2 ** 20, geometries: page.geometries, textures: page.textures, playedS: page.playedS, decodeWorkersMB: page.decodeWorkersBytes / 2 ** 20, fecWorkerMB: page.fecWorkerBytes / 2 ** 20 };
}

beforeAll(async () => {
  origin = await startOrigin(demoContentRoot());
  browser = await launch({ spki: await spkiHash('127.0.0.1', origin.quicPort) });
  await browser.page.setViewportSize({ width: 960, height: 540 });
  cdp = await browser.context.newCDPSession(browser.page);
  const query = new URLSearchParams({ origin: origin.httpsBase, manifest: '/content/demo/manifest.mpd', mode: 'qpr-fec', autoplay: '1' });
  await browser.page.goto(`${origin.httpBase}/?${query}`);
});

afterAll(async () => {
  await browser?.close();
  await origin?.stop();
});

describe(`memory over ${RUN_S} s of playback`, () => {
  it('keeps the heap and the live GPU buffers and textures flat', { timeout: (RUN_S + 180) * 1000 }, async () => {
    const startedAt = Date.now();
    const samples: Sample[] = [];
    while ((Date.now() - startedAt) / 1000 < RUN_S) {
      await new Promise((r) => setTimeout(r, SAMPLE_S * 1000));
      samples.push(await sample(startedAt));
    }
    console.log(['at s | heap MB | array buffers MB | geometries | textures | played s | decode workers MB | FEC worker MB', ...samples.map((s) => `${s.atS.toFixed(0)} | ${s.heapMB.toFixed(1)} | ${s.buffersMB.toFixed(1)} | ${s.geometries} | ${s.textures} | ${s.playedS.toFixed(1)} | ${s.decodeWorkersMB.toFixed(0)} | ${s.fecWorkerMB.toFixed(0)}`)].join('\n'));
    const warm = samples.filter((s) => s.atS >= WARMUP_S);
    expect(warm.length).toBeGreaterThanOrEqual(2);
    // It played: the content clock moved over the run.
    expect(warm[warm.length - 1].playedS).toBeGreaterThan(warm[0].playedS);
    // GPU resources: the same live counts from warm-up to the end.
    expect(new Set(warm.map((s) => s.geometries)).size, 'geometry count changed').toBe(1);
    expect(new Set(warm.map((s) => s.textures)).size, 'texture count changed').toBe(1);
    // JS heap after GC: flat, give or take a quarter.
    const heapBase = Math.max(...warm.slice(0, 2).map((s) => s.heapMB));
    const heapEnd = Math.min(...warm.slice(-2).map((s) => s.heapMB));
    expect(heapEnd, `JS heap grew from ${heapBase.toFixed(1)} to ${heapEnd.toFixed(1)} MB`).toBeLessThan(heapBase * 1.25 + 2);
    // Decoded frames (array buffers) may legitimately grow when the ABR raises quality, but never
    // beyond what the player holds: the shown segment, the two of the 2-s buffer and one more
    // arriving, each at the top quality of every object (30 frames × 9 bytes per point).
    const topPoints = await browser.page.evaluate(() => document.querySelector('holoquic-player')!.player!.scene!.objects
      .reduce((sum, o) => sum + Math.max(...o.representations.map((r) => r.pointsPerFrame)), 0));
    const heldMB = (4 * topPoints * 30 * 9) / 2 ** 20;
    const buffersEnd = Math.min(...warm.slice(-2).map((s) => s.buffersMB));
    expect(buffersEnd, `array buffers ${buffersEnd.toFixed(1)} MB, more than 4 top-quality segments (${heldMB.toFixed(1)} MB)`).toBeLessThan(heldMB + 8);
    // The workers' wasm memory is reported (the stats the long-play benchmark reads): the decode
    // workers decoded segments and the FEC worker datagram objects (`qpr-fec`). Wasm memory never
    // shrinks and grows as the ABR climbs, so its growth after warm-up is the benchmark's figure
    // (docs/benchmarks.md → "Memory over a long session"), printed here, not asserted.
    const last = warm[warm.length - 1];
    expect(last.decodeWorkersMB, 'decode workers reported no wasm memory').toBeGreaterThan(0);
    expect(last.fecWorkerMB, 'the FEC worker reported no wasm memory').toBeGreaterThan(0);
    const growth = (key: 'heapMB' | 'decodeWorkersMB' | 'fecWorkerMB') => `${key} ${warm[0][key].toFixed(1)} → ${last[key].toFixed(1)} (${(100 * (last[key] / warm[0][key] - 1)).toFixed(1)} %)`;
    console.log(`after warm-up (${warm[0].atS.toFixed(0)} s → ${last.atS.toFixed(0)} s): ${growth('heapMB')}, ${growth('decodeWorkersMB')}, ${growth('fecWorkerMB')}`);
  });
});
