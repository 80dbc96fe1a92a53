import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { Pose } from '../model/pose';
import { TracePoseSource, type ReplayClock } from './traceSource';
import { POSE_DIR } from '../../scripts/viewport/traces';

/** A clock that only moves when the test advances it, firing due timers in order. */
class ManualClock implements ReplayClock {
  private ms = 0;
  private timers: { at: number; fn: () => void; id: number }[] = [];
  private nextId = 0;

  now(): number {
    return this.ms;
  }

  after(ms: number, fn: () => void): () => void {
    const id = this.nextId++;
    this.timers.push({ at: this.ms + Math.max(0, ms), fn, id });
    return () => {
      this.timers = this.timers.filter((t) => t.id !== id);
    };
  }

  advance(ms: number): void {
    const end = this.ms + ms;
    for (;;) {
      this.timers.sort((a, b) => a.at - b.at);
      const next = this.timers[0];
      if (!next || next.at > end) break;
      this.timers.shift();
      this.ms = next.at;
      next.fn();
    }
    this.ms = end;
  }

  get pending(): number {
    return this.timers.length;
  }
}

const pose = (t: number, x: number): Pose => ({ t, position: [x, 1.6, 0], orientation: [0, 0, 0, 1] });
const TRACE = [pose(10, 0), pose(10.1, 1), pose(10.25, 2), pose(10.3, 3)];

describe('TracePoseSource', () => {
  it('emits each pose when its trace time has elapsed since start, with its own time', () => {
    const clock = new ManualClock();
    const got: { at: number; pose: Pose }[] = [];
    new TracePoseSource(TRACE, { clock }).start((p) => got.push({ at: clock.now(), pose: p }));
    expect(got.map((g) => g.pose.t)).toEqual([10]);
    clock.advance(99);
    expect(got).toHaveLength(1);
    clock.advance(1);
    clock.advance(500);
    expect(got.map((g) => +g.at.toFixed(6))).toEqual([0, 100, 250, 300]);
    expect(got.map((g) => g.pose)).toEqual(TRACE);
    expect(clock.pending).toBe(0); // not looping: nothing left scheduled
  });

  it('catches up after a late timer without skipping poses', () => {
    const clock = new ManualClock();
    const got: number[] = [];
    const source = new TracePoseSource(TRACE, { clock });
    source.start((p) => got.push(p.position[0]));
    // Jump past several due times inside one timer callback's lateness.
    clock.advance(280);
    expect(got).toEqual([0, 1, 2]);
  });

  it('loops with increasing times, one mean interval between passes', () => {
    const clock = new ManualClock();
    const times: number[] = [];
    new TracePoseSource(TRACE, { clock, loop: true }).start((p) => times.push(p.t));
    clock.advance(1000);
    // Span 0.3 s over 3 intervals: period 0.4 s, so pass 2 starts at 10.4 s.
    expect(times.slice(0, 6).map((t) => +t.toFixed(9))).toEqual([10, 10.1, 10.25, 10.3, 10.4, 10.5]);
    for (let i = 1; i < times.length; i++) expect(times[i]).toBeGreaterThan(times[i - 1]);
    expect(times).toHaveLength(4 * 2 + 2); // passes from 0, 400, 800 ms; the third reaches 900 ms by 1000 ms
  });

  it('stops emitting, and cancels its timer, when stopped (also from inside emit)', () => {
    const clock = new ManualClock();
    const got: number[] = [];
    const stop = new TracePoseSource(TRACE, { clock, loop: true }).start((p) => got.push(p.t));
    clock.advance(150);
    stop();
    expect(clock.pending).toBe(0);
    clock.advance(1000);
    expect(got).toEqual([10, 10.1]);

    const early: number[] = [];
    let stopSelf: () => void = () => {};
    stopSelf = new TracePoseSource(TRACE, { clock }).start((p) => {
      early.push(p.t);
      if (early.length === 2) stopSelf();
    });
    clock.advance(1000);
    expect(early).toEqual([10, 10.1]);
  });

  it('rejects empty and unordered traces; parses CSV in either convention', () => {
    expect(() => new TracePoseSource([])).toThrow(/no poses/);
    expect(() => new TracePoseSource([pose(1, 0), pose(1, 1)])).toThrow(/pose 1 at 1 s is not after 1 s/);
    const csv = 't_seconds,x,y,z,qx,qy,qz,qw\n0,1,2,3,0,0,0,1\n0.1,1,2,4,0,0,0,1\n';
    const clock = new ManualClock();
    const got: Pose[] = [];
    TracePoseSource.fromCsv(csv, { convention: 'unity-left-handed', clock }).start((p) => got.push(p));
    clock.advance(100);
    expect(got.map((p) => p.position[2])).toEqual([-3, -4]);
    expect(() => TracePoseSource.fromCsv('0,1,2\n', { convention: 'right-handed', source: 'x.csv' })).toThrow(/^x\.csv:1/);
  });

  it('replays a real HHI trace in order at its native rate', () => {
    const file = POSE_DIR + '/hhi_hololens/hololens_trace_01.csv';
    const clock = new ManualClock();
    const real = TracePoseSource.fromCsv(readFileSync(file, 'utf8'), { convention: 'unity-left-handed', clock });
    let n = 0;
    let last = -Infinity;
    real.start((p) => {
      expect(p.t).toBeGreaterThan(last);
      last = p.t;
      n++;
    });
    clock.advance(10_000);
    // About 60 Hz: 10 s of replay gives roughly 600 poses.
    expect(n).toBeGreaterThan(500);
    expect(n).toBeLessThan(700);
  });
});
