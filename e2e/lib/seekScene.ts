/**
 * Content for seeking tests: the packed demo scene as `demo` (a 1-s pass) and as `long`, the
 * same segment files under a manifest whose pass lasts `passS` seconds — every object keeps its
 * one file (`hq:loopSegments="1"`), so timeline segment k of `long` is file 0 and which segment
 * is shown is read from the player's stats, not from the picture.
 */
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { demoContentRoot } from './content';

export interface SeekContent {
  /** Content root for `startOrigin`. */
  root: string;
  remove(): void;
}

export function seekContentRoot(passS = 10): SeekContent {
  const root = mkdtempSync(join(tmpdir(), 'holoquic-seek-'));
  const demo = join(demoContentRoot(), 'demo');
  // Copies, not links: the origin serves nothing that resolves outside its content root.
  cpSync(demo, join(root, 'demo'), { recursive: true });
  cpSync(demo, join(root, 'long'), { recursive: true });
  const manifest = readFileSync(join(demo, 'manifest.mpd'), 'utf8');
  if (!/hq:loopSegments="1"/.test(manifest)) throw new Error('the demo content is expected to have one segment per object');
  writeFileSync(join(root, 'long', 'manifest.mpd'), manifest.replace(/mediaPresentationDuration="[^"]*"/, `mediaPresentationDuration="PT${passS}S"`));
  return { root, remove: () => rmSync(root, { recursive: true, force: true }) };
}
