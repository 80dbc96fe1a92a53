import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { SceneModel } from '../model/scene';
import { VirtualClock } from './clock';
import { followGrowingScene, ManifestWatch } from './manifestWatch';
import { parseManifest } from './mpd';
import type { SceneGrowth } from './sceneGrowth';

/** docs/mpd.md's example as a stage of a growing scene: `seconds` published, re-read every 2 s unless final. */
function manifest(seconds: number, final = false): string {
  const doc = readFileSync(new URL('../../docs/mpd.md', import.meta.url), 'utf8');
  const example = /## Full example\s+```xml\n([\s\S]*?)```/.exec(doc)![1];
  return example
    .replace('type="static"', final ? 'type="static"' : 'type="dynamic" minimumUpdatePeriod="PT2S"')
    .replace('mediaPresentationDuration="PT10S"', `mediaPresentationDuration="PT${seconds}S"`)
    .replace('hq:loopSegments="10"', `hq:loopSegments="${seconds}"`);
}

const url = new URL('https://origin.test/content/demo/manifest.mpd');

describe('ManifestWatch: a growing scene\'s manifest is re-read every minimumUpdatePeriod', () => {
  it('hands on each changed manifest, skips unchanged ones, and stops at the final one', async () => {
    const clock = new VirtualClock();
    // What the origin serves at each time: 3 s, then 10 s from t = 5, final from t = 9.
    const served = () => (clock.now() < 5 ? manifest(3) : clock.now() < 9 ? manifest(10) : manifest(10, true));
    const seen: Array<{ at: number; scene: SceneModel }> = [];
    const watch = new ManifestWatch({
      url, text: manifest(3), updatePeriodS: 2, clock,
      read: async () => served(), onManifest: (scene) => seen.push({ at: clock.now(), scene }), onProblem: (m) => expect.fail(m),
    });
    await clock.run(30);
    expect(seen.map((s) => [s.at, s.scene.passDuration, s.scene.updatePeriodS])).toEqual([[6, 10, 2], [10, 10, undefined]]);
    // Reads at 2 4 6 8 10, none after the final one.
    expect(watch.reads).toBe(5);
    expect(watch.changes).toBe(2);
    expect(watch.running).toBe(false);
  });

  it('after a failed read or a refused manifest it reports the problem and waits longer before trying again', async () => {
    const clock = new VirtualClock();
    const reads: number[] = [];
    const problems: string[] = [];
    const watch = new ManifestWatch({
      url, text: manifest(3), updatePeriodS: 2, clock,
      read: async () => {
        reads.push(clock.now());
        if (clock.now() < 7) throw new Error('HTTP 503');
        return manifest(5);
      },
      onManifest: () => {
        throw new Error('not a growth');
      },
      onProblem: (m) => problems.push(m),
    });
    await clock.run(24);
    watch.stop();
    await clock.run();
    // 2, then 2 + 4, then + 8 (refused), then + 16.
    expect(reads).toEqual([2, 6, 14, 30].filter((t) => t <= 24));
    expect(problems).toEqual(['HTTP 503', 'HTTP 503', 'not a growth']);
    expect(watch.running).toBe(false);
  });

  it('followGrowingScene extends the scene playing and says what grew; a final scene is not watched', async () => {
    const final = parseManifest(manifest(3, true));
    expect(followGrowingScene({ url, text: manifest(3, true), scene: final, onGrowth: () => expect.fail(), onProblem: (m) => expect.fail(m) })).toBeNull();

    const clock = new VirtualClock();
    const scene = parseManifest(manifest(3));
    const growths: SceneGrowth[] = [];
    const problems: string[] = [];
    let served = manifest(3);
    const watch = followGrowingScene({ url, text: served, scene, clock, read: async () => served, onGrowth: (g) => growths.push(g), onProblem: (m) => problems.push(m) })!;
    await clock.run(3);
    expect(growths).toEqual([]);
    served = manifest(10);
    await clock.run(5);
    expect(growths.map((g) => g.durationS)).toEqual([{ before: 3, after: 10 }]);
    expect(scene.passDuration).toBe(10);
    // A manifest of fewer seconds is not a growth: refused, the scene kept.
    served = manifest(4);
    await clock.run(7);
    expect(problems[0]).toMatch(/pass shrank from 10 s to 4 s/);
    expect(scene.passDuration).toBe(10);
    watch.stop();
    await clock.run();
  });
});
