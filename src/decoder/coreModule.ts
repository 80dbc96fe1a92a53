/**
 * Which build of the vpcc core module a decode worker runs — the one place that decides.
 *
 * Two builds of the same C++ (wasm/CMakeLists.txt) give the same frames bit for bit:
 * - `threaded` (vpcc-mt.mjs + .wasm + .worker.js): Emscripten pthreads on shared memory, a frame's
 *   independent stages on a small fixed pool of helper threads (Web Workers the module starts);
 * - `single` (vpcc.mjs + .wasm): everything on the decode worker's own thread.
 * Shared wasm memory needs SharedArrayBuffer, which browsers give only to cross-origin isolated
 * pages (served with `Cross-Origin-Opener-Policy: same-origin` and
 * `Cross-Origin-Embedder-Policy: require-corp`; the origin sends both with
 * `--cross-origin-isolate`). So: the threaded build when the worker is cross-origin isolated and
 * SharedArrayBuffer exists, else — and whenever the threaded build fails to start (e.g. the
 * library is served from another origin, where the module cannot start its same-origin thread
 * workers) — the single-threaded one.
 */
import type { VpccModule, VpccModuleFactory } from './vpcc';

export type CoreModuleKind = 'threaded' | 'single';

/** The core module a worker runs, and with how many threads it reconstructs a frame. */
export interface CoreModuleInfo {
  kind: CoreModuleKind;
  threads: number;
  /** Why the threaded build is not used (absent when it is). */
  fallbackReason?: string;
}

/** Where one build's files are (URLs the bundler emitted). */
export interface CoreModuleFiles {
  moduleUrl: string;
  wasmUrl: string;
  /** The threaded build's script for its thread workers. */
  threadWorkerUrl?: string;
}

/** Whether a global scope may run the threaded build. */
export function threadsAllowed(scope: { crossOriginIsolated?: boolean }): boolean {
  return scope.crossOriginIsolated === true && typeof SharedArrayBuffer === 'function';
}

async function instantiate(files: CoreModuleFiles): Promise<VpccModule> {
  const factory = (await import(/* @vite-ignore */ files.moduleUrl)).default as VpccModuleFactory;
  return factory({
    locateFile: (path: string) => (path.endsWith('.worker.js') ? files.threadWorkerUrl ?? path : files.wasmUrl),
    // The thread workers import the module's script themselves.
    mainScriptUrlOrBlob: files.moduleUrl,
  });
}

/** How long the threaded build may take to start (its thread workers included). */
export const THREADED_START_TIMEOUT_MS = 20_000;

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/**
 * Loads the core module for a scope: the threaded build where allowed, falling back to the
 * single-threaded one if it cannot start. Rejects only when the single-threaded build fails.
 */
export async function loadCoreModule(
  scope: { crossOriginIsolated?: boolean },
  builds: { threaded: CoreModuleFiles; single: CoreModuleFiles },
): Promise<{ module: VpccModule; info: CoreModuleInfo }> {
  let fallbackReason = 'the page is not cross-origin isolated (no SharedArrayBuffer)';
  if (threadsAllowed(scope)) {
    try {
      // A thread worker that never loads (a blocked or missing script) leaves the factory's
      // promise pending: give up on it after a while.
      const module = await withTimeout(instantiate(builds.threaded), THREADED_START_TIMEOUT_MS);
      return { module, info: { kind: 'threaded', threads: module._vpcc_threads() } };
    } catch (e) {
      fallbackReason = `the threaded build did not start: ${e instanceof Error ? e.message : String(e)}`;
    }
  }
  const module = await instantiate(builds.single);
  return { module, info: { kind: 'single', threads: module._vpcc_threads(), fallbackReason } };
}
