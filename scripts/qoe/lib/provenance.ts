/**
 * Which code a QoE run measured. The player under test is the built app (`dist/`), not the
 * checkout: with `--no-build` the checkout may have moved on since the app was built, and a run
 * labelled with the checkout's commit would pool two versions under one name. So a build leaves a
 * stamp beside the app naming the commit it was built from, and a run without a build reports that.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';

/** The stamp file in the built app's directory. */
export const BUILD_STAMP = 'holoquic-build.txt';

/** The checkout's commit (short), marked when tracked files differ from it. */
export function checkoutCommit(root: string): string {
  const head = spawnSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: root, encoding: 'utf8' }).stdout?.trim() || 'unknown';
  const dirty = spawnSync('git', ['status', '--porcelain', '--untracked-files=no'], { cwd: root, encoding: 'utf8' }).stdout?.trim() !== '';
  return `${head}${dirty ? ' (with uncommitted changes)' : ''}`;
}

/** Records that the app in `distDir` was just built from `commit`. */
export function stampBuild(distDir: string, commit: string): void {
  writeFileSync(join(distDir, BUILD_STAMP), `${commit}\n`);
}

/**
 * The code a run measures: `commit` when the runner has just built the app from it, else the
 * commit the app's stamp names — or, for an app built without a stamp, the checkout's commit
 * marked as unverified.
 */
export function measuredCommit(distDir: string, checkout: string, built: boolean): string {
  if (built) return checkout;
  const stamp = join(distDir, BUILD_STAMP);
  if (!existsSync(stamp)) return `${checkout} (app built earlier from an unrecorded commit)`;
  return readFileSync(stamp, 'utf8').trim() || `${checkout} (app built earlier from an unrecorded commit)`;
}
