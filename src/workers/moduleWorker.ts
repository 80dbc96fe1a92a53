/**
 * Starting a module worker whose script may live on another origin. The decode and FEC stages
 * both start their workers here, so the library works when a page imports it from a CDN.
 *
 * A browser starts a worker only from a script of the page's own origin: `new Worker(url)` with
 * a URL on another origin throws a SecurityError, even when that server allows CORS. A module
 * worker made from a `blob:` URL belongs to the page's origin, though, and a module may import
 * a script from anywhere that allows CORS. So for a script on another origin the worker starts
 * from a one-line blob module that imports the real script by its absolute URL; the real
 * script's `import.meta.url` is still its own address, so everything it locates relative to
 * itself (the wasm it carries, other assets) resolves where it was served from.
 */

/**
 * A module worker running `scriptUrl` (absolute, or relative to the page): directly when the
 * script is on the page's origin (or is a `blob:` / `data:` URL already), else through a blob
 * module that imports it. A script that cannot load fails the worker with an `error` event in
 * both cases, as a plain `new Worker` does.
 */
export function startModuleWorker(scriptUrl: string | URL, options: { name?: string } = {}): Worker {
  const pageUrl = globalThis.location?.href;
  const url = new URL(scriptUrl, pageUrl);
  const workerOptions: WorkerOptions = { type: 'module', name: options.name };
  if (!needsBootstrap(url, pageUrl)) return new Worker(url, workerOptions);
  const bootstrap = URL.createObjectURL(new Blob([bootstrapSource(url.href)], { type: 'text/javascript' }));
  const worker = new Worker(bootstrap, workerOptions);
  // The blob revokes itself once it has run; this covers a script that never loaded.
  worker.addEventListener('error', () => URL.revokeObjectURL(bootstrap), { once: true });
  return worker;
}

/** Whether a worker script at `url` must be started through a same-origin blob module. */
export function needsBootstrap(url: URL, pageUrl: string | undefined): boolean {
  if (url.protocol === 'blob:' || url.protocol === 'data:') return false;
  if (pageUrl === undefined) return false;
  return url.origin !== new URL(pageUrl).origin;
}

/**
 * The blob module's source: a static import (so a script that fails to load fails the worker
 * with an `error` event the caller sees) and then releasing its own blob URL.
 */
export function bootstrapSource(absoluteScriptUrl: string): string {
  return `import ${JSON.stringify(absoluteScriptUrl)};\nURL.revokeObjectURL(import.meta.url);\n`;
}
