/**
 * The core module choice (coreModule.ts): threads only where the scope is cross-origin isolated,
 * and the single-threaded build when the threaded one cannot start. The builds here are tiny ES
 * modules standing in for the emscripten factories (the real ones run in e2e/threads.e2e.ts).
 */
import { describe, expect, it } from 'vitest';
import { loadCoreModule, threadsAllowed } from './coreModule';

/** A module whose default export is a factory giving an object with `_vpcc_threads` = `threads`, or failing. */
function factoryModule(result: { threads: number } | { error: string }): string {
  const body = 'threads' in result
    ? `export default async (options) => ({ _vpcc_threads: () => ${result.threads}, options });`
    : `export default async () => { throw new Error(${JSON.stringify(result.error)}); };`;
  return `data:text/javascript,${encodeURIComponent(body)}`;
}

const files = (moduleUrl: string) => ({ moduleUrl, wasmUrl: 'x.wasm', threadWorkerUrl: 'x.worker.js' });

describe('core module choice', () => {
  it('allows threads only in a cross-origin isolated scope', () => {
    expect(threadsAllowed({ crossOriginIsolated: true })).toBe(true);
    expect(threadsAllowed({ crossOriginIsolated: false })).toBe(false);
    expect(threadsAllowed({})).toBe(false);
  });

  it('loads the threaded build when isolated, the single one otherwise', async () => {
    const builds = { threaded: files(factoryModule({ threads: 3 })), single: files(factoryModule({ threads: 1 })) };
    const isolated = await loadCoreModule({ crossOriginIsolated: true }, builds);
    expect(isolated.info).toEqual({ kind: 'threaded', threads: 3 });
    const plain = await loadCoreModule({ crossOriginIsolated: false }, builds);
    expect(plain.info.kind).toBe('single');
    expect(plain.info.threads).toBe(1);
    expect(plain.info.fallbackReason).toMatch(/not cross-origin isolated/);
  });

  it('falls back to the single-threaded build when the threaded one fails to start', async () => {
    const builds = { threaded: files(factoryModule({ error: 'no workers' })), single: files(factoryModule({ threads: 1 })) };
    const loaded = await loadCoreModule({ crossOriginIsolated: true }, builds);
    expect(loaded.info.kind).toBe('single');
    expect(loaded.info.fallbackReason).toMatch(/threaded build did not start: no workers/);
  });
});
