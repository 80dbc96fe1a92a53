/**
 * Seeking and the end of a pass in the playout loop, on the virtual clock over a scripted link
 * (scene: 2 objects, 1-s segments, a 10-s pass).
 */
import { describe, expect, it } from 'vitest';
import { playOn, ScriptedLink } from '../testing/scriptedLink';
import { VirtualClock } from './clock';
import type { PlayoutConfig, PlayoutSession } from './playout';
import { type PlayoutEvent } from './playoutEvents';

interface Run {
  session: PlayoutSession;
  link: ScriptedLink;
  clock: VirtualClock;
  events: PlayoutEvent[];
  /** Segments shown, in order, with the session clock and played position when shown. */
  shown: Array<{ k: number; at: number; played: number }>;
}

/** Plays `durationS` on the virtual clock, running `script(run)` first to schedule seeks and pauses. */
async function play(durationS: number, script: (run: Run) => void, options: Partial<PlayoutConfig> & { rate?: (t: number) => number } = {}): Promise<Run> {
  const clock = new VirtualClock();
  const link = new ScriptedLink(clock, options.rate ?? (() => 40e6));
  const events: PlayoutEvent[] = [];
  const shown: Run['shown'] = [];
  let run!: Run;
  await playOn(clock, link, durationS, {
    ...options,
    onEvent: (e) => events.push(e),
    onSegment: (k) => shown.push({ k, at: clock.now(), played: run.session.playedS() }),
  }, (session) => {
    run = { session, link, clock, events, shown };
    script(run);
  });
  return run;
}

/** Calls `f` at `t` seconds on the virtual clock. */
function at(clock: VirtualClock, t: number, f: () => void): void {
  void clock.sleep(t).then(f);
}

const segmentOf = (path: string) => Number(/seg-(\d+)/.exec(path)![1]);
const ofType = <T extends PlayoutEvent['type']>(events: PlayoutEvent[], type: T) =>
  events.filter((e): e is Extract<PlayoutEvent, { type: T }> => e.type === type);

describe('seeking in the playout loop', () => {
  it('forward into content not yet fetched: cancels the buffer, fetches the target, restarts the clock there', async () => {
    let requestsBefore = 0;
    let positionRightAfter = NaN;
    const { events, shown, link, session } = await play(9, (r) => at(r.clock, 3.3, () => {
      requestsBefore = r.link.requests.length;
      r.session.seek(7.5);
      positionRightAfter = r.session.mediaPositionS();
    }));
    // currentTime reads the target at once, like a media element's.
    expect(positionRightAfter).toBe(7.5);
    const seeked = ofType(events, 'seeked');
    expect(seeked).toEqual([{ type: 'seeked', positionS: 7.5, index: 7 }]);
    // Segment 7 is shown next, with the played position at the target: the frame shown is the
    // target's (frame 15 of 30 in segment 7).
    const afterSeek = shown.filter((s) => s.at >= 3.3);
    expect(afterSeek[0]).toMatchObject({ k: 7, played: 7.5 });
    expect(afterSeek.map((s) => s.k).slice(0, 3)).toEqual([7, 8, 9]);
    // What was buffered ahead of the old position (segments 4, 5) was cancelled, not played.
    const ahead = link.requests.slice(0, requestsBefore).filter((q) => segmentOf(q.path) > 3);
    expect(ahead.length).toBeGreaterThan(0);
    expect(ahead.every((q) => q.signal?.aborted)).toBe(true);
    expect(shown.map((s) => s.k)).not.toContain(4);
    // The segment 7 request came after the seek; segment 8 is played at P(8) = seek end + 0.5 s.
    expect(link.requests.slice(requestsBefore).some((q) => segmentOf(q.path) === 7)).toBe(true);
    const at8 = afterSeek.find((s) => s.k === 8)!;
    expect(at8.at - afterSeek[0].at).toBeCloseTo(0.5, 6);
    // The wait after a seek is not a freeze; the records keep the timeline's indices.
    expect(session.freezeSummary().count).toBe(0);
    expect(session.segmentRecords().filter((r) => r.object === 'o0').map((r) => r.index)).toEqual(expect.arrayContaining([0, 1, 2, 3, 7, 8]));
  });

  it('backward: plays the earlier segments again, their records on the timeline twice', async () => {
    const { events, shown, session } = await play(9, (r) => at(r.clock, 5.5, () => r.session.seek(1.25)));
    expect(ofType(events, 'seeked')).toEqual([{ type: 'seeked', positionS: 1.25, index: 1 }]);
    const afterSeek = shown.filter((s) => s.at >= 5.5);
    expect(afterSeek[0]).toMatchObject({ k: 1, played: 1.25 });
    expect(afterSeek.map((s) => s.k).slice(0, 3)).toEqual([1, 2, 3]);
    const o0 = session.segmentRecords().filter((r) => r.object === 'o0').map((r) => r.index);
    expect(o0.filter((i) => i === 2)).toHaveLength(2);
  });

  it('within the buffer: keeps the decoded segment and shows it at once, without asking again', async () => {
    let requestsBefore = 0;
    const { events, shown, link } = await play(8, (r) => at(r.clock, 3.2, () => {
      requestsBefore = r.link.requests.length;
      r.session.seek(4.5);
    }));
    expect(link.requests.slice(0, requestsBefore).some((q) => segmentOf(q.path) === 4)).toBe(true);
    expect(link.requests.slice(requestsBefore).some((q) => segmentOf(q.path) === 4)).toBe(false);
    expect(ofType(events, 'seeked')).toHaveLength(1);
    const target = shown.find((s) => s.at >= 3.2)!;
    expect(target).toMatchObject({ k: 4, played: 4.5 });
    expect(target.at).toBeCloseTo(3.2, 6);
  });

  it('past the end without looping: clamps to the end, shows the last segment, then ends', async () => {
    let requestsBefore = 0;
    const { events, shown, link, session } = await play(8, (r) => at(r.clock, 2.5, () => {
      requestsBefore = r.link.requests.length;
      r.session.seek(25);
    }), { loop: false });
    expect(ofType(events, 'seeked')).toEqual([{ type: 'seeked', positionS: 10, index: 9 }]);
    expect(shown.filter((s) => s.at >= 2.5).map((s) => s.k)).toEqual([9]);
    expect(ofType(events, 'ended')).toHaveLength(1);
    expect(session.mediaPositionS()).toBe(10);
    // Nothing past the pass is asked for.
    expect(link.requests.slice(requestsBefore).every((q) => segmentOf(q.path) === 9)).toBe(true);
  });

  it('past the end when looping: restarts at the start of the next pass', async () => {
    const { events, shown } = await play(8, (r) => at(r.clock, 2.5, () => r.session.seek(25)));
    expect(ofType(events, 'seeked')).toEqual([{ type: 'seeked', positionS: 0, index: 10 }]);
    expect(shown.filter((s) => s.at >= 2.5).map((s) => s.k).slice(0, 2)).toEqual([10, 11]);
  });

  it('while paused: shows the target frame and stays paused until resumed', async () => {
    const played: number[] = [];
    const { events, shown, session } = await play(12, (r) => {
      at(r.clock, 2.5, () => r.session.pause());
      at(r.clock, 3, () => r.session.seek(6.5));
      at(r.clock, 5, () => played.push(r.session.playedS()));
      at(r.clock, 6, () => r.session.resume());
      at(r.clock, 7, () => played.push(r.session.playedS()));
    });
    const seeked = ofType(events, 'seeked');
    expect(seeked).toEqual([{ type: 'seeked', positionS: 6.5, index: 6 }]);
    const target = shown.find((s) => s.at >= 3)!;
    expect(target.k).toBe(6);
    expect(target.at).toBeLessThan(5);
    // Still paused at 5 s: the position stood at the target; one second after the resume it moved on by one.
    expect(played[0]).toBeCloseTo(6.5, 6);
    expect(played[1]).toBeCloseTo(7.5, 6);
    expect(shown.filter((s) => s.at >= 3 && s.at < 6).map((s) => s.k)).toEqual([6]);
    expect(session.freezeSummary().count).toBe(0);
  });

  it('during a freeze: ends the freeze at the seek and plays from the target', async () => {
    // The link stops from 2 s to 5.5 s: a freeze once the buffer is spent; the viewer seeks at 5 s.
    const rate = (t: number) => (t >= 2 && t < 5 ? 0 : 40e6);
    const { events, shown, session } = await play(10, (r) => at(r.clock, 5, () => r.session.seek(1)), { rate, bufferTargetS: 1, volatileBufferTargetS: 1 });
    const starts = ofType(events, 'freeze-start');
    const ends = ofType(events, 'freeze-end');
    expect(starts).toHaveLength(1);
    expect(ends).toHaveLength(1);
    expect(starts[0].atS).toBeLessThan(5);
    expect(ends[0].atS).toBeCloseTo(5, 6);
    expect(session.freezeSummary().count).toBe(1);
    expect(ofType(events, 'seeked')).toEqual([{ type: 'seeked', positionS: 1, index: 1 }]);
    expect(shown.filter((s) => s.at >= 5).map((s) => s.k).slice(0, 3)).toEqual([1, 2, 3]);
    // The content clock ran again after the seek.
    expect(session.playedS()).toBeGreaterThan(4);
  });

  it('a second seek before the first is shown supersedes it: one seeked, at the second target', async () => {
    const { events, shown, link } = await play(6, (r) => {
      at(r.clock, 3, () => r.session.seek(7.25));
      at(r.clock, 3.01, () => r.session.seek(2.75));
    });
    expect(ofType(events, 'seeked')).toEqual([{ type: 'seeked', positionS: 2.75, index: 2 }]);
    const afterSeek = shown.filter((s) => s.at >= 3);
    expect(afterSeek[0]).toMatchObject({ k: 2, played: 2.75 });
    expect(afterSeek.map((s) => s.k).slice(0, 3)).toEqual([2, 3, 4]);
    // The first seek's request was cancelled by the second.
    const first = link.requests.filter((q) => segmentOf(q.path) === 7);
    expect(first.length).toBeGreaterThan(0);
    expect(first.every((q) => q.signal?.aborted)).toBe(true);
  });

  it('a seek before playback began sets where it begins', async () => {
    let session!: PlayoutSession;
    const { events, shown } = await play(5, (r) => {
      session = r.session;
      r.session.seek(3.5);
    });
    expect(ofType(events, 'started')).toHaveLength(1);
    expect(ofType(events, 'seeked')).toEqual([{ type: 'seeked', positionS: 3.5, index: 3 }]);
    expect(shown[0]).toMatchObject({ k: 3, played: 3.5 });
    expect(session.segmentRecords().every((r) => r.index >= 3)).toBe(true);
  });
});

describe('the end of a pass', () => {
  it('without looping: the last segment plays out, then the clock stands at the end until a seek', async () => {
    const positions: number[] = [];
    const { events, shown, link } = await play(20, (r) => {
      at(r.clock, 13, () => positions.push(r.session.mediaPositionS()));
      at(r.clock, 14, () => r.session.seek(0));
    }, { loop: false });
    const ended = ofType(events, 'ended');
    expect(ended).toHaveLength(1);
    expect(positions).toEqual([10]);
    expect(link.requests.filter((q) => q.signal?.aborted !== true).every((q) => segmentOf(q.path) <= 9)).toBe(true);
    // Played 0 … 9, stood still, then from 0 again after the seek.
    const ks = shown.map((s) => s.k);
    expect(ks.slice(0, 10)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(ks.slice(10, 12)).toEqual([0, 1]);
    expect(ofType(events, 'seeked')).toEqual([{ type: 'seeked', positionS: 0, index: 0 }]);
  });

  it('looping: goes on into the next pass without a stop, the position wrapping to 0', async () => {
    const positions: number[] = [];
    const { events, shown, session } = await play(14, (r) => at(r.clock, 12, () => positions.push(r.session.mediaPositionS())));
    expect(ofType(events, 'looped')).toEqual([{ type: 'looped', index: 10 }]);
    expect(ofType(events, 'ended')).toHaveLength(0);
    expect(shown.map((s) => s.k).slice(9, 12)).toEqual([9, 10, 11]);
    expect(positions[0]).toBeGreaterThan(0);
    expect(positions[0]).toBeLessThan(3);
    expect(session.freezeSummary().count).toBe(0);
  });

  it('looping turned off while playing stops at the end of the pass being played', async () => {
    const { events, shown } = await play(25, (r) => at(r.clock, 12, () => r.session.setLoop(false)));
    expect(ofType(events, 'ended')).toHaveLength(1);
    expect(Math.max(...shown.map((s) => s.k))).toBe(19);
  });
});
