/**
 * Real packed content for end-to-end tests: the built-in demo scene packed by the real packager
 * (`holoquic-pack demo`). One second per object and quality is enough — the manifest loops it —
 * and packing costs ~45 s on two cores, so every e2e file shares one copy: the CTest `pack_demo`
 * output when `scripts/test.sh cpp` already made it, else a copy packed once under `.holoquic/`.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { requireBuilt, ROOT } from './processes';

export const PACK_BIN = resolve(ROOT, 'wasm/build-native/holoquic-pack');
const CTEST_CONTENT = resolve(ROOT, 'wasm/build-native/test-content');
const E2E_CONTENT = resolve(ROOT, '.holoquic/e2e-content');

/**
 * A content root (pass it to `startOrigin`) holding the demo scene at `<root>/demo/manifest.mpd`,
 * i.e. `/content/demo/manifest.mpd` on the origin.
 */
export function demoContentRoot(): string {
  if (existsSync(join(CTEST_CONTENT, 'demo/manifest.mpd'))) return CTEST_CONTENT;
  if (existsSync(join(E2E_CONTENT, 'demo/manifest.mpd'))) return E2E_CONTENT;
  requireBuilt(PACK_BIN);
  mkdirSync(E2E_CONTENT, { recursive: true });
  rmSync(join(E2E_CONTENT, 'demo'), { recursive: true, force: true });
  const packed = spawnSync(PACK_BIN, ['demo', '--seconds', '1', '--out', join(E2E_CONTENT, 'demo')], { encoding: 'utf8' });
  if (packed.status !== 0) throw new Error(`holoquic-pack demo failed (${packed.status}):\n${packed.stdout}\n${packed.stderr}`);
  return E2E_CONTENT;
}
