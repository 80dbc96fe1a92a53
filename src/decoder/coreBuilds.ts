/**
 * Where the two builds of the vpcc core module are: the one definition of their URLs, for the
 * decode worker and for the one-decoder benchmark's worker (e2e/pages/decoder-bench-worker.ts).
 *
 * The files are emitted as assets by Vite and loaded at run time (no bundling of the emscripten
 * loader): the module from its URL, the wasm (and the threaded build's thread worker script)
 * through locateFile; coreModule.ts picks the build. (The HEVC module's URLs come with each
 * request: the main thread's bundle places those files, hevcLocation.ts.)
 */
import type { CoreModuleFiles } from './coreModule';

export const coreBuilds: { single: CoreModuleFiles; threaded: CoreModuleFiles } = {
  single: {
    moduleUrl: new URL('../../wasm/build-wasm/vpcc.mjs', import.meta.url).href,
    wasmUrl: new URL('../../wasm/build-wasm/vpcc.wasm', import.meta.url).href,
  },
  // Never inlined (`?no-inline`): fetched only where threads are allowed, and a thread worker
  // cannot start from a data: URL.
  threaded: {
    moduleUrl: new URL('../../wasm/build-wasm/vpcc-mt.mjs?no-inline', import.meta.url).href,
    wasmUrl: new URL('../../wasm/build-wasm/vpcc-mt.wasm?no-inline', import.meta.url).href,
    threadWorkerUrl: new URL('../../wasm/build-wasm/vpcc-mt.worker.js?no-inline', import.meta.url).href,
  },
};
