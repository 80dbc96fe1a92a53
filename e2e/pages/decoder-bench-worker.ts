/**
 * The one-decoder benchmark's worker (decoder-bench.html, e2e/bench/one-decoder.ts): one core
 * module instance, picked as the player's decode worker picks it (coreModule.ts: the threaded
 * build on a cross-origin isolated page, else the single-threaded one), reconstructing the
 * frames of one segment again and again from pictures decoded beforehand, so that only
 * reconstruction and post-processing are timed (no video decoding, no copy out).
 */
import { loadCoreModule } from '../../src/decoder/coreModule';
import { coreBuilds } from '../../src/decoder/coreBuilds';
import { VpccDecoder } from '../../src/decoder/vpcc';
import { putFramePictures, unpackPictures } from '../../wasm/tests/dumped_pictures';
import type { BenchReply, BenchRequest } from './decoder-bench';

const scope = self as unknown as DedicatedWorkerGlobalScope;
const ready = loadCoreModule(scope, coreBuilds).then(({ module, info }) => ({ decoder: new VpccDecoder(module), core: info }));
ready.catch(() => {});  // (reported with the first request, which awaits it)
let frames = 0;

async function handle(request: BenchRequest): Promise<BenchReply> {
  const { decoder, core } = await ready;
  if (request.type === 'load') {
    // Every frame's pictures stay in wasm memory (never released), so a run times nothing else.
    const streams = decoder.load(new Uint8Array(request.segment));
    const pictures = unpackPictures(new Uint8Array(request.pictures));
    frames = decoder.frameCount;
    const points: number[] = [];
    for (let f = 0; f < frames; f++) {
      putFramePictures(decoder, streams, pictures, f);
      points.push(decoder.reconstruct(f).count);  // (also warms the heap up: it grows here, not in a run)
    }
    return { type: 'loaded', core, points, crossOriginIsolated: scope.crossOriginIsolated };
  }
  const frameMs: number[] = [];
  for (let r = 0; r < request.rounds; r++) {
    for (let f = 0; f < frames; f++) {
      const t0 = performance.now();
      decoder.reconstruct(f, { postProcess: request.postProcess });
      frameMs.push(performance.now() - t0);
    }
  }
  return { type: 'ran', frameMs };
}

scope.onmessage = async (event: MessageEvent<BenchRequest>) => {
  try {
    scope.postMessage(await handle(event.data));
  } catch (e) {
    scope.postMessage({ type: 'failed', message: e instanceof Error ? e.message : String(e) } satisfies BenchReply);
  }
};
