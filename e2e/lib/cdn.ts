/**
 * A CDN stand-in for end-to-end tests: a static HTTP server on another port of 127.0.0.1 (so
 * another origin than the page's) that allows any origin, as CDNs do, and records every request
 * with the `Origin` header it came with — what tests read to see which files a page fetched.
 */
import { createReadStream, statSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { extname, join, normalize } from 'node:path';

const CONTENT_TYPES: Record<string, string> = {
  '.js': 'text/javascript', '.mjs': 'text/javascript', '.json': 'application/json', '.map': 'application/json', '.wasm': 'application/wasm',
  '.txt': 'text/plain',
};

export interface Cdn {
  base: string;
  /** Every request: its path and the Origin header it came with (CORS-mode fetches carry one). */
  requests: { path: string; origin: string | undefined }[];
  server: Server;
  close(): Promise<void>;
}

/** A static server for `mounts` (URL prefix → directory) that allows any origin. */
export function startCdn(mounts: Record<string, string>): Promise<Cdn> {
  const requests: Cdn['requests'] = [];
  const server = createServer((request, response) => {
    const path = decodeURIComponent(new URL(request.url ?? '/', 'http://cdn').pathname);
    requests.push({ path, origin: request.headers.origin });
    response.setHeader('Access-Control-Allow-Origin', '*');
    const mount = Object.keys(mounts).find((prefix) => path.startsWith(prefix));
    const file = mount ? normalize(join(mounts[mount], path.slice(mount.length))) : null;
    if (!mount || !file || !file.startsWith(mounts[mount]) || !statSync(file, { throwIfNoEntry: false })?.isFile()) {
      response.writeHead(404).end();
      return;
    }
    response.writeHead(200, { 'Content-Type': CONTENT_TYPES[extname(file)] ?? 'application/octet-stream' });
    createReadStream(file).pipe(response);
  });
  return new Promise((done) => server.listen(0, '127.0.0.1', () => {
    done({
      base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, requests, server,
      close: () => new Promise((closed) => server.close(() => closed())),
    });
  }));
}

/**
 * A page on the origin that loads `<holoquic-player>` from the CDN: an import map sends the
 * library's `three` imports to the CDN too, as a page without a bundler must. `attributes` go
 * on the element (src, mode, …).
 */
export function cdnPlayerPage(cdn: string, attributes: string): string {
  const importMap = { imports: { three: `${cdn}/three/build/three.module.js`, 'three/': `${cdn}/three/` } };
  return `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" /><title>page on the origin, player from a CDN</title>
    <script type="importmap">${JSON.stringify(importMap)}</script>
  </head>
  <body>
    <holoquic-player ${attributes} autoplay style="display:block;width:640px;height:360px"></holoquic-player>
    <script type="module" src="${cdn}/holoquic/holoquic-player.js"></script>
  </body>
</html>
`;
}
