import { describe, expect, it } from 'vitest';
import { type InFlightObject, objectsToAbandon, sharedArrivalsS } from './abandon';

function object(key: number, o: Partial<InFlightObject>): InFlightObject {
  return { key, deadlineS: 10, quality: 4, remainingBytes: 100_000, lowestBytes: 10_000, decodeS: 0, lowestDecodeS: 0, visibleArea: 0.5, ...o };
}

describe('objectsToAbandon', () => {
  it('gives nothing up while every segment will be ready in time', () => {
    // 200 kB at 8 Mbit/s: 0.2 s, due in 0.5 s.
    const inFlight = [object(1, { remainingBytes: 100_000 }), object(2, { remainingBytes: 100_000 })];
    expect(objectsToAbandon(inFlight, 9.5, 8e6, 1)).toEqual([]);
  });

  it('without a rate says nothing', () => {
    const inFlight = [object(1, { remainingBytes: 1e9 })];
    expect(objectsToAbandon(inFlight, 9.5, 0, 1)).toEqual([]);
    expect(objectsToAbandon(inFlight, 9.5, NaN, 1)).toEqual([]);
  });

  it('leaves a segment due beyond the horizon alone, however late it looks', () => {
    const inFlight = [object(1, { deadlineS: 12, remainingBytes: 1e7 })];
    expect(objectsToAbandon(inFlight, 10, 1e6, 1)).toEqual([]);
    expect(objectsToAbandon(inFlight, 11.2, 1e6, 1)).toEqual([1]);
  });

  it('counts the object waiting behind for the same deadline (the driving trace, 5 %, qpr-fec)', () => {
    // 0.63 s before the deadline, 2.5 Mbit/s: 214 kB of the rank-0 top quality still to come, then
    // the rank-1 object's 69 kB. The rank-0 object alone would be ready by 39.45 s (0.27 s of
    // decoding): too late. Its lowest quality (56 kB) and the rank-1 object are ready by ~38.95 s.
    const inFlight = [
      object(1, { deadlineS: 39.13, remainingBytes: 214_000, lowestBytes: 56_000, decodeS: 0.27, lowestDecodeS: 0.05, visibleArea: 0.6 }),
      object(2, { deadlineS: 39.13, quality: 0, remainingBytes: 69_000, lowestBytes: 69_000, decodeS: 0.05, lowestDecodeS: 0.05, visibleArea: 0.3 }),
    ];
    expect(objectsToAbandon(inFlight, 38.5, 2.5e6, 1)).toEqual([1]);
  });

  it('counts decoding: an object that arrives in time but decodes too late is given up', () => {
    // 295 kB at 5.2 Mbit/s arrive 0.27 s before the deadline; decoding the top quality takes 0.31 s.
    const late = object(1, { deadlineS: 37.226, remainingBytes: 295_000, lowestBytes: 64_000, decodeS: 0.31, lowestDecodeS: 0.08 });
    expect(objectsToAbandon([late], 36.5, 5.2e6, 1)).toEqual([1]);
    expect(objectsToAbandon([{ ...late, decodeS: 0 }], 36.5, 5.2e6, 1)).toEqual([]);
  });

  it('drops an object out of view, even at the lowest quality, and no longer counts its readiness', () => {
    // The driving trace's trough over QUIC: 1 Mbit/s, every object at the lowest rung, due in 0.6 s.
    // 3 × 60 kB = 1.44 s: late. Nothing at the lowest rung has a replacement; the two objects out
    // of view go, and the one in view (60 kB, 0.48 s) is ready in time.
    const inFlight = [
      object(1, { quality: 0, remainingBytes: 60_000, lowestBytes: 60_000, visibleArea: 0.4 }),
      object(2, { quality: 0, remainingBytes: 60_000, lowestBytes: 60_000, visibleArea: 0 }),
      object(3, { quality: 0, remainingBytes: 60_000, lowestBytes: 60_000, visibleArea: 0 }),
    ];
    expect(objectsToAbandon(inFlight, 9.4, 1e6, 1)).toEqual([2, 3]);
    // Over HTTP/2 a dropped response still delivers what the connection holds of it (20 kB each):
    // 100 kB in all before the one in view is complete, 0.8 s — still late, and nothing else can go.
    expect(objectsToAbandon(inFlight, 9.4, 1e6, 1, { kind: 'shared', drainBytes: 20_000 })).toEqual([2, 3]);
    expect(objectsToAbandon(inFlight, 9.0, 1e6, 1, { kind: 'shared', drainBytes: 20_000 })).toEqual([2, 3]);
  });

  it('keeps an object in view at the lowest quality: it has no replacement', () => {
    const inFlight = [object(1, { quality: 0, remainingBytes: 600_000, lowestBytes: 60_000, visibleArea: 0.4 })];
    expect(objectsToAbandon(inFlight, 9.4, 1e6, 1)).toEqual([]);
  });

  it('gives up the least visible object first, and only as many as needed', () => {
    // 2 × 500 kB at 8 Mbit/s = 1 s, due in 0.8 s: one replacement (10 kB) brings it to 0.51 s.
    const inFlight = [
      object(1, { remainingBytes: 500_000, visibleArea: 0.6 }),
      object(2, { remainingBytes: 500_000, visibleArea: 0.1 }),
    ];
    expect(objectsToAbandon(inFlight, 9.2, 8e6, 1)).toEqual([2]);
  });

  it('gives up more than one when one is not enough, the least visible first', () => {
    const inFlight = [
      object(1, { remainingBytes: 500_000, visibleArea: 0.6 }),
      object(2, { remainingBytes: 500_000, visibleArea: 0.1 }),
    ];
    expect(objectsToAbandon(inFlight, 9.6, 8e6, 1)).toEqual([2, 1]);
  });

  it('keeps an object whose replacement would take longer than its rest', () => {
    // 5 kB left of the top quality; the lowest quality is 10 kB and decodes as fast.
    const inFlight = [object(1, { remainingBytes: 5_000, lowestBytes: 10_000 }), object(2, { quality: 0, remainingBytes: 2e6, lowestBytes: 2e6 })];
    expect(objectsToAbandon(inFlight, 9.5, 8e6, 1)).toEqual([]);
  });

  it('gives up an earlier segment’s object when the bytes it still owes make the next segment late', () => {
    // Segment due at 10 s is on time (0.5 s of bytes); the one due at 10.2 s behind it is not.
    const inFlight = [
      object(1, { deadlineS: 10, remainingBytes: 500_000, visibleArea: 0.2 }),
      object(2, { deadlineS: 10.2, remainingBytes: 500_000, visibleArea: 0.6 }),
    ];
    expect(objectsToAbandon(inFlight, 9.4, 8e6, 1)).toEqual([1]);
  });

  it('counts the round trip a replacement waits for its first byte (LTE, 50 ms one way)', () => {
    // An LTE QoE run (ab-lte, adaptive, repetition 11): 17 kB left of a rung-2 object (0.3 s to
    // decode), 0.17 s before its deadline, at 2.5 Mbit/s. Its rest is ready in 0.35 s; the 52-kB
    // lowest rung in 0.27 s — were its request free. It is not: 0.1 s passes before its first byte.
    const inFlight = [object(16, { deadlineS: 17.83, quality: 2, remainingBytes: 17_000, lowestBytes: 52_000, decodeS: 0.3, lowestDecodeS: 0.1, visibleArea: 0.08 })];
    expect(objectsToAbandon(inFlight, 17.66, 2.5e6, 1)).toEqual([16]);
    expect(objectsToAbandon(inFlight, 17.66, 2.5e6, 1, undefined, 0.1)).toEqual([]);
  });

  it('lets a replacement’s round trip pass while the link carries the bytes before it', () => {
    // 8 Mbit/s, 0.5 s to the deadline: two 400-kB objects (0.8 s: late). The less visible one's
    // 10-kB replacement, asked for now, has its first byte after the 0.1-s round trip — while the
    // other object's 400 kB take the link for 0.4 s anyway: the segment is ready at 0.41 s, and
    // nothing more is given up.
    const inFlight = [object(1, { remainingBytes: 400_000, visibleArea: 0.6 }), object(2, { remainingBytes: 400_000, visibleArea: 0.1 })];
    expect(objectsToAbandon(inFlight, 9.5, 8e6, 1, undefined, 0.1)).toEqual([2]);
  });

  it('judges the segment behind one that giving up cannot help, against the freeze that one causes (LTE, 50 ms, 5 %)', () => {
    // An LTE QoE run in an outage (opt-lte, adaptive, repetition 1): playback froze for segment 12,
    // whose top-quality object had ~30 kB left — fewer than its 52-kB lowest quality, so giving it
    // up saves nothing. Segment 13's rung-3 object, 235 kB still to come behind it, waited unjudged
    // until segment 12's bytes were in (0.5 s later); it was then ready 0.29 s after its deadline
    // (moved by the first freeze): a second freeze. At 0.3 Mbit/s segment 12 is ready 1.25 s from now, so
    // segment 13 is due then + 1 s; its own bytes would take 6.3 s more, its replacement 1.4 s.
    const inFlight = [
      object(12, { deadlineS: 13.76, quality: 4, remainingBytes: 30_000, lowestBytes: 52_000, decodeS: 0.45, lowestDecodeS: 0.08, visibleArea: 0.69 }),
      object(13, { deadlineS: 14.75, quality: 3, remainingBytes: 235_000, lowestBytes: 52_000, decodeS: 0.3, lowestDecodeS: 0.08, visibleArea: 0.21 }),
    ];
    expect(objectsToAbandon(inFlight, 13.76, 0.3e6, 1)).toEqual([13]);
    // Behind a freeze long enough for the rest of it, segment 13 is left alone: 0.1 s of bytes.
    expect(objectsToAbandon([inFlight[0], { ...inFlight[1], remainingBytes: 4_000 }], 13.76, 0.3e6, 1)).toEqual([]);
  });

  it('does not count a segment late for the freeze of the one before it', () => {
    // 1 Mbit/s. Segment A is 0.54 s late whatever is given up (its last 5 kB, then 0.9 s of
    // decoding; its lowest quality is 200 kB); B, ready 0.13 s after its own deadline, plays on
    // time after A's freeze: nothing of B is given up.
    const inFlight = [
      object(1, { deadlineS: 10, quality: 2, remainingBytes: 5_000, lowestBytes: 200_000, decodeS: 0.9, lowestDecodeS: 0.1 }),
      object(2, { deadlineS: 10.4, remainingBytes: 80_000, decodeS: 0.25 }),
    ];
    expect(objectsToAbandon(inFlight, 9.6, 1e6, 1)).toEqual([]);
    // Once B is later than A's freeze (0.7 s late) it is given up.
    expect(objectsToAbandon([inFlight[0], { ...inFlight[1], remainingBytes: 150_000 }], 9.6, 1e6, 1)).toEqual([2]);
  });

  describe('over HTTP/2, where the origin interleaves every open response', () => {
    const shared = (drainBytes: number) => ({ kind: 'shared' as const, drainBytes });

    it('projects arrivals by equal shares: the smallest remainder first, at n times its own time', () => {
      // 8 Mbit/s = 1 MB/s; three responses of 100, 200 and 300 kB.
      const s = sharedArrivalsS([{ remainingBytes: 300_000 }, { remainingBytes: 100_000 }, { remainingBytes: 200_000 }], 8e6);
      expect(s.map((x) => Number(x.toFixed(3)))).toEqual([0.6, 0.3, 0.5]);
    });

    it('keeps an object most of which has arrived: its replacement would share the link and the given-up bytes still drain (h2 log, driving 0 %)', () => {
      // Segment 37 of an h2 run: the top quality with 73.5 kB left of 516 kB was given up 0.4 s
      // before its deadline for the 63.6-kB lowest quality; the replacement arrived 0.9 s late.
      const inFlight = [
        object(1, { deadlineS: 40.18, remainingBytes: 73_516, lowestBytes: 63_625, decodeS: 0.1, lowestDecodeS: 0.08, visibleArea: 0.2 }),
        object(2, { deadlineS: 40.18, quality: 0, remainingBytes: 60_000, lowestBytes: 60_000, decodeS: 0.08, lowestDecodeS: 0.08, visibleArea: 0.5 }),
      ];
      // Served in order (the QUIC origin) the replacement looks cheaper by 10 kB and is chosen ...
      expect(objectsToAbandon(inFlight, 39.8, 1.2e6, 1)).toEqual([1]);
      // ... but over HTTP/2 32 kB of the given-up response still arrive: nothing is saved.
      expect(objectsToAbandon(inFlight, 39.8, 1.2e6, 1, shared(32 * 1024))).toEqual([]);
    });

    it('sees a segment late because a later segment shares the link, which in-order serving would not', () => {
      // Segment due at 10 s owes 300 kB, the next (10.9 s) 400 kB; 8 Mbit/s. In order, the first
      // is ready at 9.9 s; sharing with the second, at 10.2 s: give its top quality up.
      const inFlight = [
        object(1, { deadlineS: 10, remainingBytes: 300_000, lowestBytes: 20_000, visibleArea: 0.3 }),
        object(2, { deadlineS: 10.9, remainingBytes: 400_000, lowestBytes: 20_000, visibleArea: 0.6 }),
      ];
      expect(objectsToAbandon(inFlight, 9.6, 8e6, 1)).toEqual([]);
      expect(objectsToAbandon(inFlight, 9.6, 8e6, 1, shared(0))).toEqual([1]);
    });
  });
});

