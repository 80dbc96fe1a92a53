import { describe, expect, it } from 'vitest';
import type { SceneModel } from '../model/scene';
import { playOn, scene as testScene, ScriptedLink } from '../testing/scriptedLink';
import { VirtualClock } from './clock';
import type { PlayoutSession } from './playout';
import type { PlayoutEvent } from './playoutEvents';
import { growScene } from './sceneGrowth';

/** A stage of a growing two-object scene: `seconds` published at the lowest `rungs` qualities. */
function stage(seconds: number, rungs: number, growing = true): SceneModel {
  const s = testScene(2);
  s.passDuration = seconds;
  for (const o of s.objects) {
    o.loopSegments = seconds;
    o.representations = o.representations.slice(0, rungs);
  }
  if (growing) s.updatePeriodS = 2;
  return s;
}

/**
 * Plays a growing scene on a virtual clock over a fast link; at each `[time, stage]` of `growth`
 * the newer manifest extends the scene, as the player does when it re-reads the manifest.
 */
async function playGrowing(first: SceneModel, growth: Array<[number, SceneModel]>, durationS: number, loop = true) {
  const clock = new VirtualClock();
  const link = new ScriptedLink(clock, () => 40e6);
  const events: Array<PlayoutEvent & { at: number }> = [];
  const session = await playOn(clock, link, durationS, { scene: first, loop, onEvent: (e) => events.push({ ...e, at: clock.now() }) }, (s: PlayoutSession) => {
    for (const [at, next] of growth) {
      void clock.sleep(at).then(() => {
        growScene(first, next);
        s.sceneGrew();
      });
    }
  });
  return { session, events, link };
}

const shown = (events: PlayoutEvent[]) => events.flatMap((e) => (e.type === 'segment' ? [e] : []));

describe('a growing scene: playback waits at the live edge, then goes on', () => {
  it('stands at the end of what is published without freezing or looping, and plays the new seconds at new qualities', async () => {
    // 3 s at quality 0 published; at 8 s the packer has all 10 s; at 9 s two rungs.
    const { session, events } = await playGrowing(stage(3, 1), [[8, stage(10, 1)], [9, stage(10, 3)]], 14);
    const edge = events.filter((e) => e.type === 'live-edge');
    expect(edge.map((e) => e.type === 'live-edge' && e.waiting)).toEqual([true, false]);
    // It waited from about when segment 3 was due until the scene grew at 8 s.
    expect(edge[0].at).toBeGreaterThan(3);
    expect(edge[0].at).toBeLessThan(5);
    expect(edge[1].at).toBeGreaterThanOrEqual(8);
    expect(events.some((e) => e.type === 'looped' || e.type === 'ended')).toBe(false);
    // Not a freeze: nothing was late.
    expect(session.freezeSummary().count).toBe(0);
    const segments = shown(events);
    // Timeline segments in order, without a gap or a repeat: 0 1 2, then 3 … after the wait.
    expect(segments.map((s) => s.index)).toEqual(segments.map((_, i) => i));
    expect(segments.length).toBeGreaterThanOrEqual(9);
    // Segment 3 was shown only once the scene had grown past it.
    expect(events.find((e) => e.type === 'segment' && e.index === 3)!.at).toBeGreaterThanOrEqual(8);
    // The new rungs are taken into the ABR on a fast link.
    const late = segments.filter((s) => s.index >= 6).flatMap((s) => Object.values(s.qualities));
    expect(Math.max(...late)).toBe(2);
    expect(session.passS).toBe(10);
  });

  it('that grows ahead of playback never waits', async () => {
    const { events } = await playGrowing(stage(3, 1), [[1, stage(10, 2)]], 8);
    expect(events.filter((e) => e.type === 'live-edge')).toEqual([]);
    expect(shown(events).map((s) => s.index)).toEqual(shown(events).map((_, i) => i));
  });

  it('once final without more seconds, ends or loops as any scene does', async () => {
    const ends = await playGrowing(stage(3, 1), [[6, stage(3, 2, false)]], 10, false);
    expect(ends.events.filter((e) => e.type === 'live-edge').map((e) => e.type === 'live-edge' && e.waiting)).toEqual([true, false]);
    expect(ends.events.filter((e) => e.type === 'ended')).toHaveLength(1);

    const loops = await playGrowing(stage(3, 1), [[6, stage(3, 2, false)]], 10, true);
    expect(loops.events.filter((e) => e.type === 'looped').length).toBeGreaterThanOrEqual(1);
    expect(loops.events.some((e) => e.type === 'ended')).toBe(false);
  });

  it('a seek while waiting at the edge goes where it is asked', async () => {
    const clock = new VirtualClock();
    const link = new ScriptedLink(clock, () => 40e6);
    const events: PlayoutEvent[] = [];
    const first = stage(3, 1);
    await playOn(clock, link, 9, { scene: first, onEvent: (e) => events.push(e) }, (s) => {
      void clock.sleep(5).then(() => s.seek(1));
    });
    const seeked = events.find((e) => e.type === 'seeked');
    expect(seeked?.type === 'seeked' && seeked.index).toBe(1);
    // Back at the edge after the seek's seconds played again: waiting a second time.
    expect(events.filter((e) => e.type === 'live-edge' && e.waiting)).toHaveLength(2);
  });
});
