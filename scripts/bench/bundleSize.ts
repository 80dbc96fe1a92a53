/**
 * What a page downloads of the npm library, with and without the optional HEVC module: every
 * file of a library build (`vite build --mode lib`) with its raw and gzip size (zlib level 6,
 * `gzip`'s default), then the core — `holoquic-player.js`, the decode worker (the core wasm
 * inlined) and the FEC worker — and the HEVC module (`vpcc-hevc-*.mjs` + `.wasm`) added up.
 * Source maps and the licence file are listed but never downloaded by the player.
 *
 *   npx tsx scripts/bench/bundleSize.ts [LIBRARY_DIR]   (default: builds into a temporary directory)
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { gzipSync } from 'node:zlib';

const ROOT = resolve(import.meta.dirname, '../..');

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? files(path) : [path];
  });
}

const given = process.argv[2];
const dir = given ? resolve(given) : mkdtempSync(join(tmpdir(), 'holoquic-bundle-size-'));
try {
  if (!given) {
    const built = spawnSync(join(ROOT, 'node_modules/.bin/vite'), ['build', '--mode', 'lib', '--outDir', dir, '--emptyOutDir', '--logLevel', 'error'], { cwd: ROOT, encoding: 'utf8' });
    if (built.status !== 0) throw new Error(`library build failed:\n${built.stdout}\n${built.stderr}`);
  }
  const sizes = files(dir).map((path) => {
    const bytes = readFileSync(path);
    return { file: relative(dir, path), raw: bytes.length, gzip: gzipSync(bytes, { level: 6 }).length };
  }).sort((a, b) => a.file.localeCompare(b.file));
  const sum = (pattern: RegExp) => sizes.filter((s) => pattern.test(s.file)).reduce((t, s) => ({ raw: t.raw + s.raw, gzip: t.gzip + s.gzip, n: t.n + 1 }), { raw: 0, gzip: 0, n: 0 });
  const line = (name: string, raw: number, gzip: number) => console.log(`| ${name} | ${raw.toLocaleString('en')} | ${gzip.toLocaleString('en')} |`);
  console.log('| file | raw bytes | gzip bytes |\n|---|---|---|');
  for (const s of sizes) line(`\`${s.file}\``, s.raw, s.gzip);
  const core = sum(/^(holoquic-player\.js|assets\/holoquic-(decode|fec)-worker-[\w-]+\.js)$/);
  const hevc = sum(/^assets\/vpcc-hevc-[\w-]+\.(mjs|wasm)$/);
  if (core.n !== 3) throw new Error(`expected the core module and two workers, found ${core.n} files`);
  line('**core: JS + decode worker (core wasm inside) + FEC worker**', core.raw, core.gzip);
  line('**the HEVC module: .mjs + .wasm**', hevc.raw, hevc.gzip);
  line('**core with the HEVC module**', core.raw + hevc.raw, core.gzip + hevc.gzip);
} finally {
  if (!given) rmSync(dir, { recursive: true, force: true });
}
