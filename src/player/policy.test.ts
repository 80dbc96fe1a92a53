import { describe, expect, it } from 'vitest';
import { AdaptivePolicy, carriedReliably, inView, ON_DEMAND_ONLY, planningShare, repairFor, repairTarget, repairWaitCostly, RETRANSMIT_ROUND_TRIPS, retransmissionFits, STEADY_SHARE } from './adaptive';
import { PLANNING_BURST_CAP, PLANNING_LOSS_CAP, PLANNING_LOSS_FLOOR, planningLoss, recoveryProbability } from './fecModel';
import { fecTargetFor, FixedModePolicy, type PlanInput, QPR_FEC_TARGET, reliableCountFromDegree, SYMBOL_BYTES } from './policy';
import { abrRule, hybridRule, knapsackRule, priorityGreedyRule, SAFETY } from './rules';

const LADDER = [1e6, 2e6, 4e6, 8e6, 16e6];

function input(over: Partial<PlanInput> = {}): PlanInput {
  return {
    segment: 5, segmentDurationS: 1,
    objects: ['a', 'b', 'c', 'd'].map((objectId, rank) => ({ objectId, rank, visibleArea: [0.4, 0.3, 0.1, 0.05][rank], bitrates: LADDER, previousQuality: 1 })),
    throughputBps: 30e6, loss: { rate: 0, meanBurst: 1 }, rttS: 0.02, timeToDeadlineS: 1, bufferS: 1, bufferTargetS: 1,
    ...over,
  };
}

describe('fixed modes', () => {
  it('q100-fec sends every object as a datagram with FEC the origin plans for the measured loss', () => {
    const plans = new FixedModePolicy('q100-fec', knapsackRule).plan(input({ loss: { rate: 0.02, meanBurst: 2.5 } }));
    expect(plans.map((p) => p.delivery)).toEqual(['datagram', 'datagram', 'datagram', 'datagram']);
    expect(plans[2].fec).toEqual({ kind: 'planned', lossRate: 0.02, meanBurstLength: 2.5 });
    expect(plans.map((p) => p.urgency)).toEqual([0, 1, 2, 3]);
  });

  it('plans FEC for at least the loss floor when no loss was measured yet (queue drops still happen)', () => {
    const plans = new FixedModePolicy('q100-fec', knapsackRule).plan(input({ loss: { rate: 0, meanBurst: 1 } }));
    expect(plans[3].fec).toEqual({ kind: 'planned', lossRate: PLANNING_LOSS_FLOOR, meanBurstLength: 1 });
  });

  it('plans FEC for no more than the loss cap: heavy, long-burst loss is congestion', () => {
    const plans = new FixedModePolicy('q100-fec', knapsackRule).plan(input({ loss: { rate: 0.4, meanBurst: 30 } }));
    expect(plans[3].fec).toEqual({ kind: 'planned', lossRate: PLANNING_LOSS_CAP, meanBurstLength: PLANNING_BURST_CAP });
  });

  it('qpr-fec sends the top half reliably and the rest as datagrams with the repair it planned for QPR_FEC_TARGET', () => {
    const loss = { rate: 0.05, meanBurst: 2 };
    const plans = new FixedModePolicy('qpr-fec', knapsackRule).plan(input({ loss }));
    expect(plans.map((p) => p.delivery)).toEqual(['reliable', 'reliable', 'datagram', 'datagram']);
    expect(plans.map((p) => p.urgency)).toEqual([0, 1, 2, 3]);
    expect(plans[0].fec).toEqual({ kind: 'none' });
    const explicit = new FixedModePolicy('qpr-fec', knapsackRule, undefined, QPR_FEC_TARGET).plan(input({ loss }));
    expect(plans[3].fec).toEqual(explicit[3].fec);
    expect(plans[3].fec.kind).toBe('fixed');
  });

  it('resolves the FEC target per mode: qpr-fec defaults to QPR_FEC_TARGET, q100-fec to the origin, the rest send none up front', () => {
    expect(fecTargetFor('qpr-fec')).toBe(QPR_FEC_TARGET);
    expect(fecTargetFor('qpr-fec', 0.9)).toBe(0.9);
    expect(fecTargetFor('q100-fec')).toBeUndefined();
    expect(fecTargetFor('q100-fec', 0.8)).toBe(0.8);
    for (const mode of ['h2', 'qr', 'qpr', 'adaptive'] as const) expect(fecTargetFor(mode, 0.8)).toBeUndefined();
  });

  it('with a FEC target, asks for fixed FEC planned for that probability (less repair for a lower one)', () => {
    const loss = { rate: 0.05, meanBurst: 2 };
    const plans = new FixedModePolicy('qpr-fec', knapsackRule, undefined, 0.7).plan(input({ loss }));
    const fec = plans[3].fec;
    expect(fec.kind).toBe('fixed');
    if (fec.kind !== 'fixed') return;
    // The object at its chosen quality, in symbols; the repair asked for reaches 70 %, not 99 %.
    const k = Math.ceil((LADDER[plans[3].quality] / 8) / SYMBOL_BYTES);
    const repair = Math.round(fec.overhead * k);
    expect(recoveryProbability(k, repair, loss)).toBeGreaterThanOrEqual(0.7);
    expect(recoveryProbability(k, repair, loss)).toBeLessThan(0.99);
    expect(plans[0].fec).toEqual({ kind: 'none' });
    expect(() => new FixedModePolicy('qpr-fec', knapsackRule, undefined, 1)).toThrow(/FEC target/);
  });

  it('the first segment is requested at the lowest quality', () => {
    expect(new FixedModePolicy('qr', knapsackRule).plan(input({ segment: 0 })).every((p) => p.quality === 0)).toBe(true);
  });

  it('degree of reliability Qn maps to a reliable count', () => {
    expect(reliableCountFromDegree('Q50', 4)).toBe(2);
    expect(reliableCountFromDegree('Q100', 4)).toBe(4);
    expect(() => reliableCountFromDegree('Q101', 4)).toThrow();
  });
});

describe('ABR rules', () => {
  const objects = input().objects.map((o) => ({ ...o }));
  it('all rules start at the lowest quality without a measurement', () => {
    for (const rule of [priorityGreedyRule, hybridRule, knapsackRule]) {
      const allocation = rule.allocate({ objects, throughputBps: null, bufferS: 1, bufferTargetS: 1 });
      expect(objects.map((o) => allocation.get(o.objectId))).toEqual([0, 0, 0, 0]);
    }
  });
  it('hybrid is more cautious with an empty buffer than with a full one', () => {
    const sum = (bufferS: number) => [...hybridRule.allocate({ objects, throughputBps: 30e6, bufferS, bufferTargetS: 1 }).values()].reduce((a, b) => a + b, 0);
    expect(sum(0)).toBeLessThan(sum(1));
  });
  it('rules are found by name', () => {
    expect(abrRule('hybrid')).toBe(hybridRule);
    expect(() => abrRule('nope')).toThrow(/unknown ABR rule/);
  });
});

describe('adaptive', () => {
  /** A segment as the playout loop requests it with the 2-s buffer: about 2.5 s before it plays. */
  const requested = (over: Partial<PlanInput> = {}) => input({ timeToDeadlineS: 2.5, bufferS: 2, bufferTargetS: 2, ...over });
  const DEMO = [509000, 691664, 1814648, 2619168, 4127072];
  const demoObjects = (areas: number[]) => input().objects.map((o, i) => ({ ...o, bitrates: DEMO, visibleArea: areas[i] }));

  it('signal inView: some predicted visible area', () => {
    const [a] = input().objects;
    expect(inView(a)).toBe(true);
    expect(inView({ ...a, visibleArea: 0 })).toBe(false);
  });

  it('signal retransmissionFits: RETRANSMIT_ROUND_TRIPS round trips within the time the deadline leaves after the transfer window', () => {
    expect(RETRANSMIT_ROUND_TRIPS).toBe(3);
    expect(retransmissionFits(0.02, 2.5, 1)).toBe(true);
    expect(retransmissionFits(0.5, 2.5, 1)).toBe(true);
    expect(retransmissionFits(0.51, 2.5, 1)).toBe(false);
    expect(retransmissionFits(0.02, 1, 1)).toBe(false);
  });

  it('signal carriedReliably: in-view objects in rank order while their lowest rungs fit the capacity', () => {
    const objects = demoObjects([0.25, 0.15, 0.05, 0]);
    expect([...carriedReliably(objects, 2e6, 1)]).toEqual(['a', 'b', 'c']);
    expect([...carriedReliably(objects, 1.2e6, 1)]).toEqual(['a', 'b']);
    expect([...carriedReliably(objects, 0.4e6, 1)]).toEqual([]);
  });

  it('signal repairWaitCostly: the chance an object is short of a symbol × REPAIR_ROUND_TRIPS path round trips above a tenth of a segment', () => {
    const loss = (rate: number) => ({ rate, meanBurst: 2 });
    // A lowest rung of ~42 symbols: at 5 % loss 88 % of objects need repair.
    expect(repairWaitCostly(0.1, loss(0.05), 42, 1)).toBe(true); // 0.22 s
    expect(repairWaitCostly(0.022, loss(0.05), 42, 1)).toBe(false); // 0.05 s: the reference matrix's path
    expect(repairWaitCostly(0.1, loss(0.005), 42, 1)).toBe(false); // 0.05 s
    expect(repairWaitCostly(0.1, loss(0), 42, 1)).toBe(false);
    expect(repairWaitCostly(0.1, loss(0.05), 42, 4)).toBe(false); // a 4-s segment absorbs it
  });

  it('signal carriedReliably with objects out of view: after every object in view, in rank order', () => {
    const objects = demoObjects([0.25, 0, 0.05, 0]);
    expect([...carriedReliably(objects, 2.1e6, 1, true)]).toEqual(['a', 'c', 'b', 'd']);
    expect([...carriedReliably(objects, 1.6e6, 1, true)]).toEqual(['a', 'c', 'b']);
    expect([...carriedReliably(objects, 1.6e6, 1)]).toEqual(['a', 'c']);
  });

  it('sends objects out of view as reliable streams playback does not wait for, at their lowest rung, when repair on demand would make them wait long and the link carries them', () => {
    // The LTE trace at 50 ms one way and 5 %: a 100-ms path. Out of view, the lowest rung as in qr.
    const objects = demoObjects([0.25, 0.15, 0, 0]);
    const lossy = { rate: 0.05, meanBurst: 2 };
    const at = (over: Partial<PlanInput>) => new AdaptivePolicy().plan(requested({ objects, throughputBps: 4e6, loss: lossy, rttS: 0.12, minRttS: 0.1, ...over }));
    const long = at({});
    expect(long.map((p) => p.delivery)).toEqual(['reliable', 'reliable', 'reliable', 'reliable']);
    expect(long.slice(2).map((p) => [p.quality, p.fec.kind, p.holdsPlayback])).toEqual([[0, 'none', false], [0, 'none', false]]);
    // The objects in view hold playback as ever.
    expect(long.slice(0, 2).every((p) => p.holdsPlayback === undefined)).toBe(true);
    // Capacity the objects in view leave raises them as datagrams, as any object out of view.
    const spare = at({ throughputBps: 40e6 });
    expect(spare.slice(2).every((p) => p.delivery === 'datagram' && p.quality > 0)).toBe(true);
    // A short path (queueing only in the smoothed RTT), little loss, or no retransmission in time: datagrams, as before.
    expect(at({ minRttS: 0.022 }).slice(2).map((p) => p.delivery)).toEqual(['datagram', 'datagram']);
    expect(at({ loss: { rate: 0.005, meanBurst: 2 } }).slice(2).map((p) => p.delivery)).toEqual(['datagram', 'datagram']);
    expect(at({ timeToDeadlineS: 1.2 }).every((p) => p.delivery === 'datagram')).toBe(true);
    // A link that cannot carry their lowest rungs after the objects in view's: datagrams.
    expect(at({ throughputBps: 1.5e6 }).slice(2).map((p) => p.delivery)).toEqual(['datagram', 'datagram']);
  });

  it('signal planningShare: STEADY_SHARE on a link that has not starved with a full buffer, else SAFETY', () => {
    expect(STEADY_SHARE).toBe(0.95);
    const at = (over: Partial<PlanInput>) => planningShare(requested({ linkVolatile: false, ...over }));
    expect(at({})).toBe(STEADY_SHARE);
    expect(at({ bufferS: 1 })).toBe(STEADY_SHARE);
    expect(at({ bufferS: 0.9 })).toBe(SAFETY);
    expect(at({ linkVolatile: true, bufferS: 4, bufferTargetS: 4 })).toBe(SAFETY);
    expect(at({ linkVolatile: undefined })).toBe(SAFETY);
  });

  it('on a steady thin link with a full buffer plans the object in view the rung that fits 0.95 of the estimate', () => {
    // As on the walking trace's thin part: one object in view, whose rung 3 (2.62 Mbit/s) beside
    // the other three's lowest rungs as datagrams (1.62 with symbols and framing) needs 4.24:
    // above 0.85 × 4.6 = 3.91, within 0.95 × 4.6 = 4.37.
    const objects = demoObjects([0.3, 0, 0, 0]);
    const plan = (over: Partial<PlanInput>) => new AdaptivePolicy().plan(requested({ objects, throughputBps: 4.6e6, ...over }))[0].quality;
    expect(plan({ linkVolatile: false })).toBe(3);
    expect(plan({ linkVolatile: true })).toBe(2);
    expect(plan({ linkVolatile: false, bufferS: 0.5 })).toBe(2);
  });

  it('signal repairTarget: none up front out of view and qpr-fec\'s target in view when repair on demand can follow, else the origin\'s', () => {
    expect(repairTarget(true, true)).toBe(QPR_FEC_TARGET);
    expect(repairTarget(true, false)).toBe(ON_DEMAND_ONLY);
    expect(repairTarget(false, true)).toBe(0.99);
    expect(repairTarget(false, false)).toBe(0.99);
  });

  it('on a thin link gives the object in view qr\'s rung: the objects out of view cost about their bits, not 70 % repair', () => {
    // The walking trace's case (~4 Mbit/s, 5 % loss, one object in view): with 70 % repair on the
    // three objects out of view their lowest rungs cost ~1.2 × their bits and the object in view
    // stayed a rung below qr's.
    const objects = demoObjects([0.3, 0, 0, 0]);
    const inputs = requested({ objects, throughputBps: 4.1e6, loss: { rate: 0.05, meanBurst: 2 }, rttS: 0.05, minRttS: 0.022 });
    const a = new AdaptivePolicy().plan(inputs);
    const qr = new FixedModePolicy('qr', knapsackRule).plan(inputs);
    expect(a[0].quality).toBe(qr[0].quality);
    expect(a[0].quality).toBe(2);
    expect(a.slice(1).every((p) => p.delivery === 'datagram' && p.quality === 0 && p.fec.kind === 'none')).toBe(true);
  });

  it('sends all of the first segment reliably (playback waits for it whole), later ones without an estimate half and half', () => {
    const first = new AdaptivePolicy().plan(input({ segment: 0, throughputBps: null, loss: { rate: 0.02, meanBurst: 2 } }));
    expect(first.map((p) => [p.delivery, p.quality, p.fec.kind])).toEqual(Array(4).fill(['reliable', 0, 'none']));
    const next = new AdaptivePolicy().plan(input({ segment: 2, throughputBps: null, loss: { rate: 0.02, meanBurst: 2 } }));
    expect(next.map((p) => p.delivery)).toEqual(['reliable', 'reliable', 'datagram', 'datagram']);
  });

  it('sends objects in view reliably, without repair, when a retransmission fits — with or without loss', () => {
    for (const loss of [{ rate: 0, meanBurst: 1 }, { rate: 0.05, meanBurst: 2.6 }]) {
      const plans = new AdaptivePolicy().plan(requested({ objects: demoObjects([0.25, 0.15, 0.05, 0]), throughputBps: 10e6, loss, rttS: 0.1, minRttS: 0.022 }));
      expect(plans.map((p) => p.delivery), String(loss.rate)).toEqual(['reliable', 'reliable', 'reliable', 'datagram']);
      expect(plans.slice(0, 3).every((p) => p.fec.kind === 'none')).toBe(true);
    }
  });

  it('gives the objects in view the qualities qr gives them: a reliable object costs its bits, as in qr', () => {
    // qr spends the same SAFETY × throughput, on bits alone; adaptive's only extra is the object out
    // of view (its lowest rung's framing), so at these rates it matches qr object for object.
    const objects = demoObjects([0.25, 0.15, 0.05, 0]);
    for (const throughputBps of [7e6, 10e6, 14e6]) {
      const a = new AdaptivePolicy().plan(requested({ objects, throughputBps }));
      const qr = new FixedModePolicy('qr', knapsackRule).plan(requested({ objects, throughputBps }));
      expect(a.slice(0, 3).map((p) => p.quality), String(throughputBps)).toEqual(qr.slice(0, 3).map((p) => p.quality));
    }
  });

  it('sends objects in view as datagrams with repair for 99 % when no retransmission fits before the deadline', () => {
    const loss = { rate: 0.05, meanBurst: 2 };
    const plans = new AdaptivePolicy().plan(requested({ objects: demoObjects([0.25, 0.15, 0.05, 0]), throughputBps: 10e6, loss, rttS: 0.6 }));
    expect(plans.every((p) => p.delivery === 'datagram')).toBe(true);
    const planned = planningLoss(loss);
    for (const p of plans) {
      if (p.fec.kind !== 'fixed') throw new Error('expected fixed FEC');
      const k = Math.max(1, Math.ceil(DEMO[p.quality] / 8 / SYMBOL_BYTES));
      expect(p.fec.overhead * k).toBe(repairFor(k, planned, 0.99));
    }
  });

  it('sends objects out of view with no repair up front when repair on demand can follow, with repair for 99 % when it cannot', () => {
    const loss = { rate: 0.05, meanBurst: 2 };
    const objects = demoObjects([0.25, 0.15, 0.05, 0]);
    const out = new AdaptivePolicy().plan(requested({ objects, throughputBps: 1e9, loss }))[3];
    expect(out.delivery).toBe('datagram');
    expect(out.fec).toEqual({ kind: 'none' });
    const late = new AdaptivePolicy().plan(requested({ objects, throughputBps: 1e9, loss, rttS: 0.6 }))[3];
    const k = Math.ceil(DEMO[late.quality] / 8 / SYMBOL_BYTES);
    expect(late.fec).toEqual({ kind: 'fixed', overhead: repairFor(k, planningLoss(loss), 0.99) / k });
  });

  it('plans the repair of objects in view that go as datagrams for 70 % when repair on demand can follow', () => {
    // 1.5 Mbit/s carries the lowest rungs of two objects reliably; the third in view goes as datagrams.
    const loss = { rate: 0.05, meanBurst: 2 };
    const third = new AdaptivePolicy().plan(requested({ objects: demoObjects([0.25, 0.15, 0.05, 0]), throughputBps: 1.5e6, loss }))[2];
    expect(third.delivery).toBe('datagram');
    const k = Math.ceil(DEMO[third.quality] / 8 / SYMBOL_BYTES);
    expect(third.fec).toEqual({ kind: 'fixed', overhead: repairFor(k, planningLoss(loss), QPR_FEC_TARGET) / k });
  });

  it('in a trough sends reliably only the in-view objects whose lowest rungs the link carries; the rest as datagrams', () => {
    // 1.5 Mbit/s: 85 % of it carries the lowest rungs of the two most visible objects, not a third.
    const plans = new AdaptivePolicy().plan(requested({ objects: demoObjects([0.25, 0.15, 0.05, 0.02]), throughputBps: 1.5e6, loss: { rate: 0.05, meanBurst: 2 } }));
    expect(plans.map((p) => p.delivery)).toEqual(['reliable', 'reliable', 'datagram', 'datagram']);
    expect(plans.every((p) => p.quality === 0)).toBe(true);
  });

  it('spends what the objects in view leave on the objects out of view, as datagrams, never taking from an object in view', () => {
    // One object in view, three out (the driving trace's usual scene at 8–12 Mbit/s).
    const objects = demoObjects([0.3, 0, 0, 0]);
    const cost = (p: { quality: number }) => DEMO[p.quality] * 1.04;
    for (const throughputBps of [4.1e6, 8e6, 12e6, 30e6]) {
      const inputs = requested({ objects, throughputBps, loss: { rate: 0.02, meanBurst: 2 } });
      const a = new AdaptivePolicy().plan(inputs);
      const qr = new FixedModePolicy('qr', knapsackRule).plan(inputs);
      expect(a[0].quality, String(throughputBps)).toBe(qr[0].quality);
      const out = a.slice(1);
      expect(out.every((p) => p.delivery === 'datagram' && p.fec.kind === 'none')).toBe(true);
      // Alike: nothing tells them apart, so their rungs differ by at most one.
      expect(Math.max(...out.map((p) => p.quality)) - Math.min(...out.map((p) => p.quality))).toBeLessThanOrEqual(1);
      expect(DEMO[a[0].quality] + out.reduce((sum, p) => sum + cost(p), 0)).toBeLessThanOrEqual(SAFETY * throughputBps);
    }
    // With room to spare they rise above their lowest rung; on a thin link they keep it.
    const rich = new AdaptivePolicy().plan(requested({ objects, throughputBps: 12e6 }));
    expect(rich[0].quality).toBe(DEMO.length - 1);
    expect(Math.min(...rich.slice(1).map((p) => p.quality))).toBeGreaterThan(0);
    const thin = new AdaptivePolicy().plan(requested({ objects, throughputBps: 4.1e6 }));
    expect(thin.slice(1).every((p) => p.quality === 0)).toBe(true);
  });

  it('stays within the capacity the deadline leaves', () => {
    const plans = new AdaptivePolicy().plan(input({ throughputBps: 8e6 }));
    const bits = plans.reduce((s, p) => s + LADDER[p.quality], 0);
    expect(bits).toBeLessThanOrEqual(8e6);
  });

  it('a deadline beyond one segment does not let a segment use more than a segment of throughput', () => {
    const plans = new AdaptivePolicy().plan(requested({ throughputBps: 8e6 }));
    const bits = plans.reduce((s, p) => s + LADDER[p.quality], 0);
    expect(bits).toBeLessThanOrEqual(SAFETY * 8e6);
  });

  it('fetches every object, at its lowest quality, when even the lowest qualities do not fit', () => {
    // Four objects of 1 Mbit/s at the lowest quality, 3 Mbit/s of link: every fixed mode still
    // fetches all four, and so does adaptive (the origin sends the most visible first).
    const plans = new AdaptivePolicy().plan(requested({ throughputBps: 3e6, loss: { rate: 0.05, meanBurst: 2 }, rttS: 0.1 }));
    expect(plans.map((p) => p.delivery)).toEqual(['reliable', 'reliable', 'datagram', 'datagram']);
    expect(plans.every((p) => p.quality === 0)).toBe(true);
    expect(plans.map((p) => p.urgency)).toEqual([0, 1, 2, 3]);
  });

  it('repairFor reaches its target probability with the fewest symbols', () => {
    const loss = { rate: 0.02, meanBurst: 2 };
    const r = repairFor(200, loss, 0.99);
    expect(recoveryProbability(200, r, loss)).toBeGreaterThanOrEqual(0.99);
    expect(recoveryProbability(200, r - 1, loss)).toBeLessThan(0.99);
    expect(repairFor(200, { rate: 0, meanBurst: 1 }, 0.99)).toBe(0);
  });
});
