/**
 * `adaptive` delivery: per object, the delivery from a few stated signals, then the qualities of
 * all objects together, to maximise the expected displayed quality without freezes (the
 * reference paper's future work).
 *
 * The delivery of each object has one reason (docs/player.md, "How `adaptive` decides"):
 *  - out of view (`inView`): FEC datagrams, the lowest quality unless the objects in view leave
 *    capacity (`spendSpare`). Nothing the viewer is not predicted to see is worth a freeze (a late
 *    reliable object holds the whole scene) or a rung taken from an object in view; but the
 *    prediction is for 2–3 s ahead and often wrong, so what is left over goes to them.
 *  - in view and a retransmission fits before the deadline (`retransmissionFits`:
 *    RETRANSMIT_ROUND_TRIPS × RTT within the time the deadline leaves after the segment's
 *    transfer window): reliable. The transport then repairs every loss in time, so the object
 *    is shown whole, and it pays no repair up front — only the bytes, which the throughput
 *    estimate (goodput, retransmissions already netted out) was measured in.
 *  - in view but no retransmission fits: FEC datagrams (a late reliable object would freeze).
 *  - out of view, a retransmission fits, and repair on demand would make a datagram object wait
 *    long (`repairWaitCostly`: a long round trip and heavy loss): a reliable stream at its lowest
 *    rung, as in `qr`, when the link carries the lowest rungs of every object in view and of it —
 *    but one playback does not wait for (`holdsPlayback: false`), served after every object it
 *    does wait for: it is shown if it has arrived, like a datagram object.
 *  - in view, a retransmission fits, but the link cannot carry even the lowest rungs of every
 *    in-view object (`carriedReliably`, in rank order): the ones it cannot carry go as FEC
 *    datagrams, which are never waited for — in a trough a reliable object that cannot arrive
 *    is a freeze (`qr` froze exactly there).
 * The repair sent up front (`repairTarget`) is planned for the measured loss and burst length
 * (fecModel.ts's planning range): when a round trip fits, repair on demand makes up the rest, so
 * up-front repair only saves that round trip — 70 % for an object in view, none for one out of
 * view (nobody sees its round trip) — else for 99 %.
 *
 * Qualities: one multiple-choice knapsack (mck.ts) over every object's rungs in its delivery,
 * value = visibility × [u(q) · P(shown) + u_stale · (1 − P(shown))] (u = BOLA's log utility,
 * u_stale half the utility of the quality shown last; P(shown) = 1 when reliable, else the
 * recovery probability of its planned symbols), cost = its bits (datagrams: source and repair
 * symbols and their framing). The capacity is `planningShare` (0.85, or 0.95 on a steady link
 * with a full buffer) × throughput × one segment duration, or less when the deadline is nearer:
 * segments are requested once per segment duration, so planning with the whole time to a
 * deadline would commit the same seconds to two segments.
 * Every object is fetched, at least at its lowest rung, as every fixed mode fetches every object:
 * a skipped object is demand the congestion controller never sees (docs/results.md, "Goodput at
 * 50 ms one way", second pass). Without a throughput measurement yet, every object starts at the
 * lowest quality, the most visible half reliably — and all of the first segment: playback starts
 * only once each of its objects is there or past its deadline (segmentGate.ts), so a datagram
 * buys it no freedom from waiting, only a slower recovery from loss. (A loss burst on the new
 * connection left an out-of-view datagram object of segment 0 in repair for 1.5–1.9 s where `qr`
 * retransmitted in time: startup took 2.2–3.2 s instead of ~1, and the stall read as a starved
 * link doubled the buffer target for the rest of the run — docs/results.md, "Datagrams behind
 * the object in view".)
 *
 * Until 2026-11-27 the rule charged a reliable object 1.3 × its bits / (1 − loss) plus one round
 * trip of capacity per segment, and let datagram options compete with it: FEC datagrams won for
 * objects in view even without loss, and the budget went to repair instead of quality
 * (docs/results.md, "`adaptive` by stated signals").
 */
import { logUtility } from './knapsack';
import { planningLoss, recoveryProbability, TARGET_SUCCESS } from './fecModel';
import { type LossModel } from '../model/link';
import { solveMultipleChoice } from './mck';
import { type DeliveryPolicy, type ObjectPlan, type PlanInput, type PlanObject, QPR_FEC_TARGET, SYMBOL_BYTES } from './policy';
import { SAFETY } from './rules';

/**
 * Round trips the last lost packet of a reliable object needs before its retransmission has
 * arrived: about one to notice the loss (QUIC's packet or time threshold, or a probe timeout
 * for a lost tail), one for the resent packet, and one more in case a burst takes that too.
 */
export const RETRANSMIT_ROUND_TRIPS = 3;
/**
 * Weight of an object predicted out of view: small, only so that among its options the
 * better-protected one wins when the capacity allows (the prediction may be wrong).
 */
const OUT_OF_VIEW_WEIGHT = 1e-3;
/** Datagram bytes on the wire per symbol byte (QUIC + datagram headers). */
const DATAGRAM_FRAMING = 1.04;

export interface Candidate {
  cost: number;
  value: number;
  plan: ObjectPlan;
}

/** Signal: the object is predicted to cover some of the screen at the segment's playout. */
export function inView(object: PlanObject): boolean {
  return object.visibleArea > 0;
}

/**
 * Signal: a lost packet sent at the end of the segment's transfer window is retransmitted and
 * arrives before the deadline — RETRANSMIT_ROUND_TRIPS × RTT ≤ time to deadline − window.
 */
export function retransmissionFits(rttS: number, timeToDeadlineS: number, windowS: number): boolean {
  return RETRANSMIT_ROUND_TRIPS * Math.max(0, rttS) <= timeToDeadlineS - windowS;
}

/**
 * Signal: the in-view objects (most visible first) whose lowest rungs the capacity carries
 * reliably, counting the lowest rungs of those before them (reliable objects are served first);
 * with `outOfViewToo`, then the objects out of view likewise, in rank order.
 */
export function carriedReliably(objects: readonly PlanObject[], capacityBits: number, segmentDurationS: number, outOfViewToo = false): Set<string> {
  const carried = new Set<string>();
  let used = 0;
  const byRank = [...objects].sort((a, b) => a.rank - b.rank);
  const candidates = [...byRank.filter(inView), ...(outOfViewToo ? byRank.filter((o) => !inView(o)) : [])];
  for (const o of candidates) {
    used += o.bitrates[0] * segmentDurationS;
    if (used > capacityBits) break;
    carried.add(o.objectId);
  }
  return carried;
}

/**
 * Round trips a datagram object short of symbols waits beyond its transfer when repair comes on
 * demand: the client's repair timer (1.5 round trips after the origin's SENT, datagramObject.ts)
 * and the repair request's round trip.
 */
export const REPAIR_ROUND_TRIPS = 2.5;
/** Share of a segment duration above which the expected repair wait counts as costly. */
const COSTLY_REPAIR_SHARE = 0.1;

/**
 * Signal: the expected wait for repair on demand of a lowest-rung object sent as plain datagrams
 * — the chance that some of its `symbols` is lost, times REPAIR_ROUND_TRIPS × the path's round
 * trip — exceeds a tenth of a segment. The path's minimum round trip, not the smoothed one: what
 * a cellular path adds for good, not the queueing that comes and goes (at 10 ms one way the
 * smoothed RTT reads 35–90 ms in the QoE runs, the minimum ~22).
 *
 * Why: a reliable stream retransmits as soon as the sender sees a loss, while it sends on; a
 * datagram object asks for its repair only after its timer and waits a round trip more, with
 * nothing else owed to it. At a 100-ms round trip and 5 % loss (nine in ten objects short of a
 * symbol) that is ~0.23 s per object: on the LTE trace `qpr` and `adaptive`, whose objects out of
 * view go that way, took 0.7–1.3 s per segment against `qr`'s 0.5–0.9 while carrying less, read
 * the link 12–20 % lower after the outage and showed less (docs/results.md, thirteenth pass). At
 * the reference matrix's 20 ms (0.045 s at 5 %) or with little loss the wait is small, and
 * datagrams cost nothing measurable.
 */
export function repairWaitCostly(rttS: number, loss: LossModel, symbols: number, segmentDurationS: number): boolean {
  const shortOfSymbol = 1 - Math.pow(1 - Math.min(1, Math.max(0, loss.rate)), Math.max(1, symbols));
  return shortOfSymbol * REPAIR_ROUND_TRIPS * Math.max(0, rttS) > COSTLY_REPAIR_SHARE * segmentDurationS;
}

/**
 * Share of the throughput estimate a segment is planned with while the link is steady
 * (`planningShare`): the estimate is then about the whole link, not an optimistic mean.
 */
export const STEADY_SHARE = 0.95;

/**
 * Signal: the share of the throughput estimate to plan a segment with — `STEADY_SHARE` while the
 * link has not starved recently (the buffer target is at its base) and the buffer holds at least
 * the target less one segment, else the rules' `SAFETY`.
 *
 * Why: on a thin steady link the busy-time estimate reads about the link's whole rate (the walking
 * trace's first 76 s: 3.91–3.95 Mbit/s planned on 3.90 Mbit/s of packets), so 0.85 of it plans
 * ~0.9 of the payload the link carries, and the objects in view sat a rung below what fitted
 * (figure-2's rung 3 needs 3.67 Mbit/s with the others' lowest rungs; 0.85 × 3.92 is 3.33; `h2`,
 * whose estimate read 4 % higher, showed it more often — docs/results.md, sixth pass). A full
 * buffer absorbs a segment that takes 5 % longer than planned. Where the link has starved (the
 * driving trace's outages and troughs) the margin stays: there the estimate lags the link.
 */
export function planningShare(input: Pick<PlanInput, 'linkVolatile' | 'bufferS' | 'bufferTargetS' | 'segmentDurationS'>): number {
  const steady = input.linkVolatile === false && input.bufferS >= input.bufferTargetS - input.segmentDurationS;
  return steady ? STEADY_SHARE : SAFETY;
}

/**
 * Up-front repair target meaning "none": the object is sent as plain source symbols and repair
 * on demand (docs/protocol.md §3) makes up what was lost.
 */
export const ON_DEMAND_ONLY = 0;

/**
 * Signal: the probability the repair sent up front aims for, from the round-trip signal alone.
 * When no round trip fits, nothing can follow the first batch, so it is planned as the origin
 * plans it (99 %). When one fits, repair on demand completes a shortfall in time, and up-front
 * repair only saves that round trip: worth paying for an object in view (planned as `qpr-fec`
 * plans it, 70 %), not for one out of view, whose round trip nobody sees — it goes with none up
 * front, so its lowest rung costs about its bits, as in `qr`. Until 2026-11-27 objects out of view
 * had 70 % too: on the walking trace (~3.5 Mbit/s) their ~14 % repair took the in-view object's
 * upgrade (docs/results.md, "`adaptive` on a thin link").
 */
export function repairTarget(roundTripFits: boolean, visible: boolean): number {
  if (!roundTripFits) return TARGET_SUCCESS;
  return visible ? QPR_FEC_TARGET : ON_DEMAND_ONLY;
}

/** Smallest repair count whose recovery probability reaches `target` (≤ 2K). */
export function repairFor(k: number, loss: LossModel, target: number): number {
  if (loss.rate <= 0) return 0;
  let lo = 0, hi = 2 * k;
  if (recoveryProbability(k, hi, loss) < target) return hi;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (recoveryProbability(k, mid, loss) >= target) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

export class AdaptivePolicy implements DeliveryPolicy {
  readonly mode = 'adaptive' as const;

  plan(input: PlanInput): ObjectPlan[] {
    const { objects } = input;
    // Repair is planned for the measured loss and burst length within fecModel.ts's range.
    const loss = planningLoss(input.loss);
    if (input.throughputBps === null || input.segment === 0) {
      const half = Math.ceil(objects.length / 2);
      const reliable = (o: PlanObject) => input.segment === 0 || o.rank < half;
      return objects.map((o) => ({
        objectId: o.objectId, quality: 0, urgency: Math.min(7, o.rank),
        delivery: reliable(o) ? 'reliable' : 'datagram',
        fec: reliable(o) ? { kind: 'none' } : { kind: 'planned', lossRate: loss.rate, meanBurstLength: loss.meanBurst },
      }));
    }
    const windowS = Math.max(0, Math.min(input.timeToDeadlineS, input.segmentDurationS));
    const capacity = planningShare(input) * input.throughputBps * windowS;
    const roundTripFits = retransmissionFits(input.rttS, input.timeToDeadlineS, windowS);
    // Objects out of view go reliably too when a retransmission fits and repair on demand would cost them more.
    const lowestSymbols = Math.min(...objects.map((o) => sourceSymbols(o.bitrates[0] * input.segmentDurationS)));
    // The loss measured, not the planning floor (fecModel.ts): the wait is for losses that happen.
    const outOfViewToo = repairWaitCostly(input.minRttS ?? input.rttS, input.loss, lowestSymbols, input.segmentDurationS);
    const reliable = roundTripFits ? carriedReliably(objects, capacity, input.segmentDurationS, outOfViewToo) : new Set<string>();
    const groups = objects.map((o) => options(o, reliable.has(o.objectId), input.segmentDurationS, loss, repairTarget(roundTripFits, inView(o))));
    const chosen = solveMultipleChoice(groups, capacity).map((pick, i) => groups[i][pick]);
    return spendSpare(objects, chosen, capacity - chosen.reduce((sum, c) => sum + c.cost, 0), input.segmentDurationS, loss, repairTarget(roundTripFits, false));
  }
}

/**
 * Signal: the capacity the objects in view left unused (`spare`, bits) raises the objects
 * predicted out of view above their lowest rung, all alike (the prediction says nothing about
 * which of them the viewer will turn to), as datagrams that are never waited for.
 *
 * Why: the prediction is for a pose 2–3 s ahead, and in the QoE runs a quarter to a third of the
 * area viewers saw at playout was on objects predicted out of view — shown at their lowest rung,
 * they cost 1.0–1.3 of the 1.2–1.5 points of quality lost on what was seen (seen quality, driving
 * trace, docs/results.md, pass of 2026-11-28). Only capacity nothing in view wants is spent: the
 * in-view objects' plan is the knapsack's above, unchanged, and the upgrades go at the datagram
 * urgencies, served after every reliable object (plan.ts), and are the first the decode budget
 * steps down.
 */
export function spendSpare(objects: readonly PlanObject[], chosen: readonly Candidate[], spare: number, segmentDurationS: number, loss: LossModel, target: number): ObjectPlan[] {
  // Objects out of view: datagrams, and the reliable streams playback does not wait for (their
  // upgrade goes as datagrams like the others'; without spare they keep their cheaper repair).
  const out = objects.map((o, i) => (inView(o) || !(chosen[i].plan.delivery === 'datagram' || chosen[i].plan.holdsPlayback === false) ? -1 : i)).filter((i) => i >= 0);
  if (!(spare > 0) || out.length === 0) return chosen.map((c) => c.plan);
  const groups = out.map((i) => datagramRungs(objects[i], objects[i].bitrates.length, SPARE_WEIGHT, segmentDurationS, loss, target));
  const budget = spare + out.reduce((sum, i) => sum + chosen[i].cost, 0);
  const picks = solveMultipleChoice(groups, budget);
  const plans = chosen.map((c) => c.plan);
  out.forEach((i, g) => {
    if (groups[g][picks[g]].plan.quality <= chosen[i].plan.quality) return;
    plans[i] = groups[g][picks[g]].plan;
  });
  return plans;
}

/** Weight of each object out of view in the spare-capacity knapsack: equal, since nothing ranks them. */
const SPARE_WEIGHT = 1;

/** One object's options: its rungs (only the lowest when out of view) in the delivery chosen for it. */
function options(o: PlanObject, reliable: boolean, segmentDurationS: number, loss: LossModel, target: number): Candidate[] {
  const urgency = Math.min(7, o.rank);
  const visible = inView(o);
  const weight = visible ? o.visibleArea : OUT_OF_VIEW_WEIGHT;
  const rungs = visible ? o.bitrates.length : 1;
  if (!reliable) return datagramRungs(o, rungs, weight, segmentDurationS, loss, target);
  return Array.from({ length: rungs }, (_, q) => ({
    cost: o.bitrates[q] * segmentDurationS,
    value: weight * logUtility(o.bitrates, q),
    // Out of view, reliable only for its cheaper repair (`repairWaitCostly`): never waited for.
    plan: { objectId: o.objectId, quality: q, delivery: 'reliable' as const, fec: { kind: 'none' as const }, urgency, ...(visible ? {} : { holdsPlayback: false as const }) },
  }));
}

/** Source symbols of an object of `bits` (at least one). */
function sourceSymbols(bits: number): number {
  return Math.max(1, Math.ceil(bits / 8 / SYMBOL_BYTES));
}

/** An object's lowest `rungs` rungs as FEC datagrams with repair for `target`, worth `weight` × expected utility. */
function datagramRungs(o: PlanObject, rungs: number, weight: number, segmentDurationS: number, loss: LossModel, target: number): Candidate[] {
  const urgency = Math.min(7, o.rank);
  const stale = o.previousQuality >= 0 ? 0.5 * logUtility(o.bitrates, o.previousQuality) : 0;
  const candidates: Candidate[] = [];
  for (let q = 0; q < rungs; q++) {
    const bits = o.bitrates[q] * segmentDurationS;
    const u = logUtility(o.bitrates, q);
    const k = sourceSymbols(bits);
    const r = repairFor(k, loss, target);
    const shown = recoveryProbability(k, r, loss);
    candidates.push({
      cost: (k + r) * SYMBOL_BYTES * 8 * DATAGRAM_FRAMING,
      value: weight * (u * shown + stale * (1 - shown)),
      plan: { objectId: o.objectId, quality: q, delivery: 'datagram', fec: r === 0 ? { kind: 'none' } : { kind: 'fixed', overhead: r / k }, urgency },
    });
  }
  return candidates;
}
