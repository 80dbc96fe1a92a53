/**
 * Where the optional HEVC module's files are: emitted by the bundler as separate assets (never
 * inlined: `?no-inline`), referenced from the main thread's code so that an application's own
 * bundler, building on top of the published library, copies them too. The decode workers get
 * these URLs with each request and fetch the files only when a segment needs them. The licence
 * file is never fetched; it is referenced so that it travels with the module wherever the
 * module is copied (its LGPL-3.0 and GPL-3.0 texts and where the source is).
 */
import type { HevcModuleLocation } from './hevc';

export function bundledHevcModule(): HevcModuleLocation {
  return {
    moduleUrl: new URL('../../wasm/build-wasm/vpcc-hevc.mjs?no-inline', import.meta.url).href,
    wasmUrl: new URL('../../wasm/build-wasm/vpcc-hevc.wasm?no-inline', import.meta.url).href,
    licenceUrl: new URL('../../wasm/src/hevc/vpcc-hevc.LICENSE.txt?no-inline', import.meta.url).href,
  };
}
