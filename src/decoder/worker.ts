/**
 * The decode worker: hosts one instance of the vpcc core wasm module and decodes the segments
 * the pool sends, one at a time; the optional HEVC module joins it the first time a segment has
 * HEVC that this browser's WebCodecs cannot decode.
 */
import type { FromWorker, ToWorker } from './protocol';
import { atlasFrameBuffers } from './atlasFrame';
import { isAtlasFrame } from '../model/frames';
import { decodeSegment, type VideoDecoders } from './segment';
import { loadHevcModule, type HevcDecoder, type HevcModuleLocation } from './hevc';
import { isOutOfMemory, VpccDecoder, wasmMemoryBytes } from './vpcc';
import { type CoreModuleInfo, loadCoreModule } from './coreModule';
import { coreBuilds as builds } from './coreBuilds';

class ModuleLoadError extends Error {}

const scope = self as unknown as DedicatedWorkerGlobalScope;

const decoderReady: Promise<{ decoder: VpccDecoder; core: CoreModuleInfo }> = (async () => {
  try {
    const { module, info } = await loadCoreModule(scope, builds);
    return { decoder: new VpccDecoder(module), core: info };
  } catch (e) {
    throw new ModuleLoadError(`cannot load the vpcc wasm module (${builds.single.moduleUrl}): ${e instanceof Error ? e.message : String(e)}`);
  }
})();
// Reported with the first request (each request awaits it); not an unhandled rejection here.
decoderReady.catch(() => {});

/**
 * The HEVC module, loaded once on first need from where the request says; a module that cannot
 * load fails the segments that need it (the worker stays usable for the others).
 */
let hevcReady: Promise<HevcDecoder> | undefined;
/** The HEVC module once it loaded (for the memory report). */
let hevcLoaded: HevcDecoder | undefined;
function videoDecoders(location: HevcModuleLocation | undefined): VideoDecoders {
  if (!location) return {};
  const hevc = () => (hevcReady ??= loadHevcModule(location).then((d) => (hevcLoaded = d), (e: unknown) => {
    throw new Error(`cannot load the optional HEVC module (${location.moduleUrl}), which this segment's HEVC video needs here: ${e instanceof Error ? e.message : String(e)}`);
  }));
  return { hevc };
}

let queue: Promise<void> = Promise.resolve();
let coreModule: VpccDecoder['module'] | undefined;

/** The wasm memory this worker holds now (bytes): the core module's and the HEVC module's. */
function memoryBytes(): number {
  return (coreModule ? wasmMemoryBytes(coreModule) : 0) + (hevcLoaded ? wasmMemoryBytes(hevcLoaded.module) : 0);
}

scope.onmessage = (event: MessageEvent<ToWorker>) => {
  const request = event.data;
  // One segment at a time: the pool never sends more, but be safe with the shared wasm decoder.
  queue = queue.then(async () => {
    let reply: FromWorker;
    const transfer: Transferable[] = [];
    try {
      const { decoder, core } = await decoderReady;
      coreModule = decoder.module;
      const result = await decodeSegment(decoder, request.bytes, { md5: request.md5, output: request.output, postProcess: request.postProcess, maxAtlasSize: request.maxAtlasSize, v3cLevelIdc: request.v3cLevelIdc }, videoDecoders(request.hevcModule));
      reply = { type: 'decoded', id: request.id, memoryBytes: memoryBytes(), frames: result.frames, atlasFrames: result.atlasFrames, md5: result.md5, timing: { ...result.timing, core } };
      for (const f of result.frames) {
        if (isAtlasFrame(f)) transfer.push(...atlasFrameBuffers(f));
        else transfer.push(f.positions.buffer, f.colors.buffer);
      }
      for (const f of result.atlasFrames ?? []) transfer.push(...atlasFrameBuffers(f));
    } catch (e) {
      reply = { type: 'failed', id: request.id, memoryBytes: memoryBytes(), message: e instanceof Error ? e.message : String(e), worker: workerStateAfter(e) };
    }
    scope.postMessage(reply, transfer);
  });
};

/**
 * Whether an error leaves this worker unusable. A trap (out-of-bounds access, unreachable) or an
 * emscripten abort — both surface as WebAssembly.RuntimeError — can leave the C++ heap half
 * updated, so the pool replaces the worker; so does running out of memory, since the grown wasm
 * heap would stay with the worker. A decode error the codec reported is just an answer.
 */
function workerStateAfter(e: unknown): 'unloadable' | 'crashed' | undefined {
  if (e instanceof ModuleLoadError) return 'unloadable';
  if (e instanceof WebAssembly.RuntimeError || isOutOfMemory(e)) return 'crashed';
  return undefined;
}
