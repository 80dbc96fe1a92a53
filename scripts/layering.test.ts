/**
 * The player's architecture as rules the source must keep (docs/architecture.md → "The player's
 * data path"): data flows one way, shared types live in src/model, experiment tooling lives in
 * scripts/. Each rule names the files that break it.
 */
import { describe, expect, it } from 'vitest';
import { fileCircles, folderOf, readModules } from './moduleMap';

const modules = readModules();

/** What each folder of src/ may import besides itself (and packages). */
const ALLOWED: Record<string, readonly string[]> = {
  'src/model': [],
  'src/workers': [],
  'src/fec': ['src/model', 'src/workers'],
  'src/link': ['src/model', 'src/transport'],
  'src/transport': ['src/model', 'src/fec'],
  'src/viewport': ['src/model'],
  'src/decoder': ['src/model', 'src/workers'],
  'src/render': ['src/model', 'src/viewport'],
  'src/qoe': ['src/model', 'src/link'],
  'src/player': ['src/model', 'src/link', 'src/transport', 'src/viewport'],
  'src/testing': ['src/model', 'src/transport', 'src/player'],
  'src/app': ['src/model', 'src/player', 'src/viewport', 'src/decoder', 'src/render', 'src/transport', 'src/testing'],
};

describe('the player source keeps its layering', () => {
  it('finds the modules it judges', () => {
    expect(modules.length).toBeGreaterThan(50);
    expect(modules.some((m) => m.path === 'src/player/plan.ts')).toBe(true);
  });

  it('has no import circles between files', () => {
    expect(fileCircles(modules)).toEqual([]);
  });

  it('imports only along the data path (each folder from the folders below it)', () => {
    const broken: string[] = [];
    for (const m of modules) {
      const from = folderOf(m.path);
      const allowed = ALLOWED[from];
      if (!allowed) {
        broken.push(`${m.path}: folder ${from} has no place in the layering (add it to ALLOWED)`);
        continue;
      }
      for (const target of m.imports) {
        const to = folderOf(target);
        if (to !== from && !allowed.includes(to)) broken.push(`${m.path} → ${target}`);
      }
    }
    expect(broken).toEqual([]);
  });

  it('no stage below the player imports src/player', () => {
    const below = ['src/model', 'src/workers', 'src/fec', 'src/link', 'src/transport', 'src/viewport', 'src/decoder', 'src/render', 'src/qoe'];
    const broken = modules.filter((m) => below.includes(folderOf(m.path)) && m.imports.some((i) => i.startsWith('src/player/')));
    expect(broken.map((m) => m.path)).toEqual([]);
  });

  it('holds the product only: no experiment tooling (procfs, tc, Prometheus text) and nothing from scripts/ or e2e/', () => {
    const tooling = modules.filter((m) =>
      /['"`]\/proc\//.test(m.source) || /\bspawn(Sync)?\(\s*['"]tc['"]/.test(m.source) || /parsePrometheus/i.test(m.source)
      || m.imports.some((i) => i.startsWith('scripts/') || i.startsWith('e2e/')));
    expect(tooling.map((m) => m.path)).toEqual([]);
  });
});
