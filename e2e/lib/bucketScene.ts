/**
 * Scenes in a bucket for end-to-end tests and benchmarks: a longer scene stretched from the packed
 * demo, and publishing a scene with the real `holoquic-publish`.
 *
 * The packed demo has one segment per object and rung, which the manifest loops; an origin's cache
 * then holds the whole scene after a second of play. Packing more costs about a minute of CPU per
 * second of content, so `stretchedDemo` writes a scene of `seconds` distinct segment files (each a
 * copy of the demo's one, under its own name) at the rungs asked for: to an origin and its store
 * every segment is a new object, as in a real scene, while the decoder sees real V-PCC.
 */
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { demoContentRoot } from './content';
import { requireBuilt, ROOT } from './processes';
import { BUCKET, type Seaweed } from './seaweed';

export const PUBLISH_BIN = resolve(ROOT, 'server/target/release/holoquic-publish');

/**
 * Writes the demo as `seconds` one-second segments per object at the rungs `rungs` (indexes into
 * its ladder, lowest first) into `dir` (manifest at `dir/manifest.mpd`); returns `dir`.
 */
export function stretchedDemo(dir: string, seconds: number, rungs: number[] = [0]): string {
  const demo = join(demoContentRoot(), 'demo');
  let manifest = readFileSync(join(demo, 'manifest.mpd'), 'utf8');
  const kept = new Set(rungs.map(String));
  manifest = manifest
    .replace(/<Representation id="([^"]+)"[^>]*\/>\s*/g, (whole, id: string) => (kept.has(id) ? whole : ''))
    .replace(/mediaPresentationDuration="[^"]*"/, `mediaPresentationDuration="PT${seconds}S"`)
    .replace(/hq:loopSegments="\d+"/g, `hq:loopSegments="${seconds}"`)
    .replace(/hq:playMode="\w+"/g, 'hq:playMode="loop"');
  if ((manifest.match(/<Representation /g) ?? []).length === 0) throw new Error(`no rung ${rungs} in the demo`);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'manifest.mpd'), manifest);
  for (const object of manifest.matchAll(/<BaseURL>([^<]+)\/<\/BaseURL>/g)) {
    for (const rung of kept) {
      const to = join(dir, object[1], rung);
      mkdirSync(to, { recursive: true });
      const from = join(demo, object[1], rung, 'seg-00000.v3c');
      for (let n = 0; n < seconds; n++) copyFileSync(from, join(to, `seg-${String(n).padStart(5, '0')}.v3c`));
    }
  }
  return dir;
}

/**
 * Publishes the scene in `dir` to `s3://BUCKET/content/<name>` of `store` (served by an origin with
 * `--content s3://BUCKET/content` as `/content/<name>/manifest.mpd`); returns its generation.
 */
export function publish(store: Seaweed, dir: string, name: string): string {
  requireBuilt(PUBLISH_BIN);
  const run = spawnSync(PUBLISH_BIN, [dir, `s3://${BUCKET}/content/${name}`, ...store.flags], {
    encoding: 'utf8', timeout: 60_000,
  });
  const generation = /generation (g-[0-9a-f]+)/.exec(run.stdout)?.[1];
  if (run.status !== 0 || !generation) throw new Error(`holoquic-publish failed (${run.status ?? run.signal}):\n${run.stdout}\n${run.stderr}`);
  return generation;
}

/** The `--content` value of an origin serving `store`'s scenes under `/content/`. */
export const BUCKET_CONTENT = `s3://${BUCKET}/content`;
