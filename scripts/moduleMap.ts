/**
 * The player's module map, read from the source: every non-test `.ts` file under `src/`, its
 * lines, and the relative imports it makes (type-only ones too: they are dependencies of the
 * design even when the compiler erases them). `scripts/layering.test.ts` holds the map to the
 * architecture's rules (docs/architecture.md → "The player's data path"); run this file to print
 * the folders with their lines and the arrows between them:
 *
 *   npx tsx scripts/moduleMap.ts
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export interface ModuleFile {
  /** Path from the repository root, e.g. `src/player/plan.ts`. */
  path: string;
  lines: number;
  /** Files of this repository it imports (paths from the root), in source order. */
  imports: string[];
  /** Module specifiers that name packages (`three`, `node:fs`, …). */
  packages: string[];
  source: string;
}

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** `import … from '…'`, `export … from '…'`, `import('…')` and `new URL('…', import.meta.url)` with a .ts target. */
const SPECIFIERS = /(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)['"]([^'"]+)['"]|new URL\(\s*['"]([^'"]+\.ts)['"]\s*,\s*import\.meta\.url/g;

function listTs(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const full = join(dir, name);
    if (statSync(full).isDirectory()) out.push(...listTs(full));
    else if (name.endsWith('.ts') && !name.endsWith('.test.ts') && !name.endsWith('.d.ts')) out.push(full);
  }
  return out.sort();
}

function resolveImport(fromFile: string, specifier: string): string {
  const target = resolve(dirname(fromFile), specifier);
  for (const candidate of [target, `${target}.ts`, join(target, 'index.ts')]) {
    try {
      if (statSync(candidate).isFile()) return relative(ROOT, candidate);
    } catch {
      // not this one
    }
  }
  return relative(ROOT, target);
}

/** Every product file under `dir` (default `src/`) with its imports. */
export function readModules(dir = 'src'): ModuleFile[] {
  return listTs(join(ROOT, dir)).map((full) => {
    const source = readFileSync(full, 'utf8');
    const imports: string[] = [];
    const packages: string[] = [];
    for (const m of source.matchAll(SPECIFIERS)) {
      const specifier = m[1] ?? m[2];
      if (specifier.startsWith('.')) imports.push(resolveImport(full, specifier));
      else packages.push(specifier);
    }
    return { path: relative(ROOT, full), lines: source.split('\n').length - 1, imports, packages, source };
  });
}

/** The folder a file lives in, e.g. `src/player`. */
export function folderOf(path: string): string {
  return dirname(path);
}

/** Import circles between files: each is a list of files where each imports the next, the last the first. */
export function fileCircles(modules: readonly ModuleFile[]): string[][] {
  const edges = new Map(modules.map((m) => [m.path, m.imports.filter((i) => i !== m.path)]));
  // Tarjan's strongly connected components: a component of more than one file is a circle.
  let index = 0;
  const order = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const circles: string[][] = [];
  const visit = (v: string) => {
    order.set(v, index);
    low.set(v, index++);
    stack.push(v);
    onStack.add(v);
    for (const w of edges.get(v) ?? []) {
      if (!edges.has(w)) continue;
      if (!order.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) {
        low.set(v, Math.min(low.get(v)!, order.get(w)!));
      }
    }
    if (low.get(v) === order.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1) circles.push(component.sort());
    }
  };
  for (const v of edges.keys()) if (!order.has(v)) visit(v);
  return circles;
}

/** Folder → folder import counts (within the scanned tree and out of it). */
export function folderArrows(modules: readonly ModuleFile[]): Map<string, Map<string, number>> {
  const arrows = new Map<string, Map<string, number>>();
  for (const m of modules) {
    const from = folderOf(m.path);
    for (const target of m.imports) {
      const to = folderOf(target);
      if (to === from) continue;
      const row = arrows.get(from) ?? new Map<string, number>();
      row.set(to, (row.get(to) ?? 0) + 1);
      arrows.set(from, row);
    }
  }
  return arrows;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const modules = readModules();
  const folders = new Map<string, { files: number; lines: number }>();
  for (const m of modules) {
    const f = folders.get(folderOf(m.path)) ?? { files: 0, lines: 0 };
    f.files++;
    f.lines += m.lines;
    folders.set(folderOf(m.path), f);
  }
  const arrows = folderArrows(modules);
  for (const [folder, { files, lines }] of [...folders].sort()) {
    const out = [...(arrows.get(folder) ?? new Map<string, number>())].sort().map(([to, n]) => `${to.replace(/^src\//, '')} ×${n}`);
    console.log(`${folder.padEnd(16)} ${String(files).padStart(3)} files ${String(lines).padStart(6)} lines  → ${out.join(', ') || '—'}`);
  }
  const largest = [...modules].sort((a, b) => b.lines - a.lines).slice(0, 5);
  console.log(`largest files: ${largest.map((m) => `${m.path} ${m.lines}`).join(', ')}`);
  const circles = fileCircles(modules);
  console.log(circles.length ? `import circles:\n${circles.map((c) => `  ${c.join(' ↔ ')}`).join('\n')}` : 'import circles: none');
}
