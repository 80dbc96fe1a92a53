import { describe, expect, it } from 'vitest';
import { AdaptivePolicy, FREEZE_MARGIN, repairFor } from './adaptive';
import { PLANNING_BURST_CAP, PLANNING_LOSS_CAP, PLANNING_LOSS_FLOOR, recoveryProbability } from './fecModel';
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
  it('under bursty loss sends datagram objects with enough repair to be shown almost surely', () => {
    const loss = { rate: 0.05, meanBurst: 2.6 };
    const plans = new AdaptivePolicy().plan(input({ loss, rttS: 0.05 }));
    const datagrams = plans.filter((x) => x.delivery === 'datagram');
    expect(datagrams.length).toBeGreaterThan(0);
    for (const p of datagrams) {
      expect(p.fec.kind).toBe('fixed');
      if (p.fec.kind !== 'fixed') continue;
      // The object in symbols as the policy counts them; its repair meets the least of adaptive's
      // targets (90 %) under the loss it was planned for.
      const k = Math.max(1, Math.ceil(LADDER[p.quality] / 8 / SYMBOL_BYTES));
      expect(recoveryProbability(k, Math.round(p.fec.overhead * k), loss)).toBeGreaterThanOrEqual(0.9);
    }
    // The most visible object gets at least the quality of the least visible one.
    expect(plans[0].quality).toBeGreaterThanOrEqual(plans[3].quality);
  });

  it('objects out of view get the lowest quality as datagrams, however much capacity there is', () => {
    const objects = input().objects.map((o, i) => ({ ...o, visibleArea: i === 0 ? 0.5 : 0 }));
    const plans = new AdaptivePolicy().plan(input({ objects, throughputBps: 1e9, loss: { rate: 0.02, meanBurst: 2 } }));
    expect(plans[0].quality).toBe(LADDER.length - 1);
    for (const p of plans.slice(1)) {
      expect(p.quality).toBe(0);
      expect(p.delivery).toBe('datagram');
      expect(p.fec.kind).toBe('fixed');
    }
  });

  it('stays within the capacity the deadline leaves', () => {
    const plans = new AdaptivePolicy().plan(input({ throughputBps: 8e6 }));
    const bits = plans.filter((p) => p.delivery !== 'skip').reduce((s, p) => s + LADDER[p.quality], 0);
    expect(bits).toBeLessThanOrEqual(8e6);
  });

  it('a deadline beyond one segment does not let a segment use more than a segment of throughput', () => {
    const plans = new AdaptivePolicy().plan(input({ throughputBps: 8e6, timeToDeadlineS: 2, bufferS: 1 }));
    const bits = plans.filter((p) => p.delivery !== 'skip').reduce((s, p) => s + LADDER[p.quality], 0);
    expect(bits).toBeLessThanOrEqual(8e6);
  });

  it('skips nothing when the lowest qualities fit', () => {
    // Four lowest rungs: 4 × (1 Mbit + ~5 % repair + framing) ≈ 4.4 Mbit, within 85 % of 6 Mbit/s.
    for (const throughputBps of [6e6, 30e6, 1e9]) {
      const plans = new AdaptivePolicy().plan(input({ throughputBps }));
      expect(plans.every((p) => p.delivery !== 'skip'), String(throughputBps)).toBe(true);
    }
  });

  it('fetches every object, at its cheapest option, when even the lowest qualities do not fit', () => {
    // Four objects of 1 Mbit/s at the lowest quality, 3 Mbit/s of link: every fixed mode still
    // fetches all four, and so does adaptive (the origin sends the most visible first).
    const plans = new AdaptivePolicy().plan(input({ throughputBps: 3e6, loss: { rate: 0.05, meanBurst: 2 }, rttS: 0.1 }));
    expect(plans.map((p) => p.delivery)).toEqual(['datagram', 'datagram', 'datagram', 'datagram']);
    expect(plans.every((p) => p.quality === 0)).toBe(true);
    expect(plans.map((p) => p.urgency)).toEqual([0, 1, 2, 3]);
  });

  it('charges the wait for the last retransmission once per segment, not once per reliable object', () => {
    // The demo scene's ladder at 1 % loss and 4 Mbit/s: one round trip of capacity (1.3 × 4 Mbit/s
    // × 20 ms) is reserved for the segment's last retransmission, and then the two most visible
    // objects go reliably; charged per object, the second could not.
    const demo = [509000, 691664, 1814648, 2619168, 4127072];
    const objects = input().objects.map((o, i) => ({ ...o, bitrates: demo, visibleArea: [0.25, 0.15, 0.05, 0][i] }));
    const plans = new AdaptivePolicy().plan(input({ objects, throughputBps: 4e6, rttS: 0.02, loss: { rate: 0.01, meanBurst: 2 } }));
    expect(plans.map((p) => p.delivery)).toEqual(['reliable', 'reliable', 'datagram', 'datagram']);
    const reliableBits = plans.filter((p) => p.delivery === 'reliable').reduce((s, p) => s + demo[p.quality], 0);
    expect(FREEZE_MARGIN * (reliableBits / 0.99 + 4e6 * 0.02)).toBeLessThanOrEqual(SAFETY * 4e6);
  });

  it('sends nothing reliably when the retransmission wait leaves datagrams the better plan', () => {
    // The same scene at a 200-ms round trip: the wait would take 1 Mbit of the 3.4 the segment has.
    const demo = [509000, 691664, 1814648, 2619168, 4127072];
    const objects = input().objects.map((o, i) => ({ ...o, bitrates: demo, visibleArea: [0.25, 0.15, 0.05, 0][i] }));
    const plans = new AdaptivePolicy().plan(input({ objects, throughputBps: 4e6, rttS: 0.2, loss: { rate: 0.01, meanBurst: 2 } }));
    expect(plans.some((p) => p.delivery === 'reliable')).toBe(false);
    expect(plans.every((p) => p.delivery !== 'skip')).toBe(true);
  });

  it('repairFor reaches its target probability with the fewest symbols', () => {
    const loss = { rate: 0.02, meanBurst: 2 };
    const r = repairFor(200, loss, 0.99);
    expect(recoveryProbability(200, r, loss)).toBeGreaterThanOrEqual(0.99);
    expect(recoveryProbability(200, r - 1, loss)).toBeLessThan(0.99);
    expect(repairFor(200, { rate: 0, meanBurst: 1 }, 0.99)).toBe(0);
  });
});
