/**
 * Abandonment: which in-flight reliable requests to give up for the lowest quality so that the
 * segments due soon are ready in time (docs/player.md → "Abandonment").
 *
 * Judging each request alone, once, shortly before its deadline (dash.js's rule, this player's
 * until 28dd54b) misses two things the QoE logs showed freezing playback: the requests queued
 * behind it for the same deadline (abandoning the rank-0 object at the last check left too little
 * time for the rank-1 object still waiting behind it), and decoding (a top-quality object that
 * arrived a quarter second before its deadline still took ~0.3 s to decode). This rule projects
 * when each segment will be *ready* — the link delivering every reliable byte still owed in the
 * order the origin serves them, then the last object decoding — and while a segment due soon
 * would be late, gives the least visible of its (or an earlier segment's) objects up for the
 * lowest quality, one at a time, until it would not be. An object predicted out of view is given
 * up with no replacement at all (`replacedWhenGivenUp`): the segment then plays with that object
 * as it last was, which nobody is looking at — no freeze of the whole scene for it, and its
 * bytes go to what is seen. Until 2026-11-27 it too was only replaceable by its lowest quality,
 * so at the lowest rungs nothing could be given up: in the driving trace's trough (0.6–3 Mbit/s
 * for 5 s, every object at its lowest rung) `h2` froze in 12 of 15 runs, its objects out of view
 * sharing the link with the one in view (docs/results.md, "`h2` on a quieter machine").
 *
 * How the link is divided among the requests matters (`Serving`). The QUIC origin serves them one
 * after another by urgency; over HTTP/2 the origin (hyper) interleaves every open response frame
 * by frame, so each gets an equal share, a replacement included, and the bytes of a given-up
 * response already in the TCP connection still arrive. Judged as if served in order, an HTTP/2
 * object most of which had arrived was given up for a replacement that then shared the link
 * with everything else and came late (QoE logs of `h2`, docs/results.md → "The HTTP/2 freezes
 * attributed").
 *
 * Pure: the playout loop supplies the requests, the link rate and the decode-time model.
 */

/** A reliable request whose bytes are still arriving. */
export interface InFlightObject {
  /** The caller's handle, returned when the object is to be given up. */
  key: number;
  /** When its segment must be ready to play (seconds, the caller's clock). */
  deadlineS: number;
  quality: number;
  /** Bytes still to arrive (the whole object while its size is unknown). */
  remainingBytes: number;
  /** Bytes of the lowest quality's object (what a replacement would cost). */
  lowestBytes: number;
  /** Predicted decode time at its quality and at the lowest quality (seconds; 0 when unknown). */
  decodeS: number;
  lowestDecodeS: number;
  /** Predicted visible share: the least visible object is given up first. */
  visibleArea: number;
}

/**
 * How the origin divides the link among the requests in flight.
 *
 * - `in-order` (the QUIC origin): one after another, by urgency, then request order.
 * - `shared` (HTTP/2): every open response gets an equal share at once; giving one up still costs
 *   `drainBytes` of it (what the connection already holds: the origin's unsent limit plus what
 *   is in the network), which arrive before the link is free for anything else.
 */
export type Serving = { kind: 'in-order' } | { kind: 'shared'; drainBytes: number };

export const IN_ORDER: Serving = { kind: 'in-order' };

/**
 * Whether an object given up is asked for again at the lowest quality (predicted in view), or
 * dropped (out of view: the segment plays without a new frame of it).
 */
export function replacedWhenGivenUp(o: Pick<InFlightObject, 'visibleArea'>): boolean {
  return o.visibleArea > 0;
}

/**
 * Keys of the objects to give up for the lowest quality now. `inFlight` is in the order the
 * origin serves the requests (urgency, then request order; with `shared` serving the order does
 * not matter); only segments due within `horizonS` of `nowS` are judged (earlier, the rate has
 * time to recover and the plan to adapt). An object is given up only if that makes it ready
 * sooner (its replacement, or nothing if it is out of view) than the rest of it would be. A
 * replacement is a new request: its first byte comes `requestS` (the path's round trip) after it
 * is asked for, besides the bytes before it.
 */
export function objectsToAbandon(
  inFlight: readonly InFlightObject[], nowS: number, rateBps: number, horizonS: number, serving: Serving = IN_ORDER, requestS = 0,
): number[] {
  if (!(rateBps > 0)) return [];
  const items: Item[] = inFlight.map((o) => ({ ...o, givenUp: false, waitS: 0 }));
  const request = Math.max(0, requestS);
  const chosen: number[] = [];
  // Bytes a replacement costs beyond its own: over HTTP/2 the given-up response's bytes already sent.
  const drain = serving.kind === 'shared' ? Math.max(0, serving.drainBytes) : 0;
  // What is left of an object once given up: over HTTP/2 what the connection holds of it, and
  // its replacement if it has one.
  const afterGivingUp = (o: InFlightObject) => replacedWhenGivenUp(o)
    ? { bytes: o.lowestBytes + Math.min(drain, o.remainingBytes), decodeS: o.lowestDecodeS, waitS: request }
    : { bytes: Math.min(drain, o.remainingBytes), decodeS: 0, waitS: 0 };
  // Giving up must make the object ready sooner than the rest of it would be (a replacement is
  // a lower quality: none for one already at the lowest).
  const saves = (o: Item) => {
    if (o.givenUp || (o.quality === 0 && replacedWhenGivenUp(o))) return false;
    const after = afterGivingUp(o);
    return after.waitS + readyAfterS(after.bytes, after.decodeS, rateBps) < readyAfterS(o.remainingBytes, o.decodeS, rateBps);
  };
  for (;;) {
    // The late segments in order: the first that giving up can make sooner gets its victim. One
    // that nothing can help (its last bytes are fewer than a replacement's) still freezes playback,
    // and the segments behind it are judged against deadlines moved by that freeze — not left
    // unjudged until its bytes are in.
    const victim = firstVictim(items, lateDeadlines(items, nowS, rateBps, horizonS, serving), saves);
    if (victim === null) return chosen;
    chosen.push(victim.key);
    const after = afterGivingUp(victim);
    victim.givenUp = true;
    victim.quality = 0;
    victim.remainingBytes = after.bytes;
    victim.decodeS = after.decodeS;
    victim.waitS = after.waitS;
  }
}

/**
 * The least visible object that giving up makes ready sooner, due no later than the first of
 * `late` that has one (any such object delays it: it is served first or shares its deadline).
 */
function firstVictim(items: Item[], late: readonly number[], saves: (o: Item) => boolean): Item | null {
  for (const deadline of late) {
    const candidates = items.filter((o) => o.deadlineS <= deadline && saves(o));
    if (candidates.length > 0) return candidates.reduce((a, b) => (b.visibleArea < a.visibleArea ? b : a));
  }
  return null;
}

/** An object as the rule goes: given up already or not, and the round trip its replacement waits first. */
type Item = InFlightObject & { givenUp: boolean; waitS: number };

/** Playback waits for it: not once dropped (though over HTTP/2 the bytes the connection holds of it still take the link). */
function awaited(o: Item): boolean {
  return !o.givenUp || replacedWhenGivenUp(o);
}

function readyAfterS(bytes: number, decodeS: number, rateBps: number): number {
  return (8 * bytes) / rateBps + decodeS;
}

/**
 * The deadlines of the segments due within the horizon that would be ready after them, earliest
 * first. Playback waits for a late segment, so every later segment's deadline moves by the longest
 * such wait before it (a projected freeze): a segment is late only if it would be ready after its
 * deadline so moved.
 */
function lateDeadlines(items: readonly Item[], nowS: number, rateBps: number, horizonS: number, serving: Serving): number[] {
  const arrivals = serving.kind === 'shared' ? sharedArrivalsS(items, rateBps) : inOrderArrivalsS(items, rateBps);
  // When each segment (by its deadline) would be ready: its last awaited object decoded.
  const readyAt = new Map<number, number>();
  items.forEach((o, i) => {
    if (!awaited(o) || o.deadlineS - nowS > horizonS) return;
    // A replacement's round trip passes while the link carries the bytes before it.
    const ready = nowS + Math.max(arrivals[i], o.waitS + (8 * o.remainingBytes) / rateBps) + o.decodeS;
    readyAt.set(o.deadlineS, Math.max(readyAt.get(o.deadlineS) ?? -Infinity, ready));
  });
  const late: number[] = [];
  let frozenS = 0;
  for (const deadline of [...readyAt.keys()].sort((a, b) => a - b)) {
    const overS = readyAt.get(deadline)! - deadline;
    if (overS > frozenS) late.push(deadline);
    frozenS = Math.max(frozenS, overS);
  }
  return late;
}

/** Seconds from now until each object's last byte, served one after another in the given order. */
function inOrderArrivalsS(items: readonly InFlightObject[], rateBps: number): number[] {
  let bytes = 0;
  return items.map((o) => {
    bytes += o.remainingBytes;
    return (8 * bytes) / rateBps;
  });
}

/**
 * Seconds from now until each object's last byte when every open response gets an equal share
 * of the link (processor sharing): the smallest remainder finishes first, at n times its own
 * time; the others then share among one fewer.
 */
export function sharedArrivalsS(items: readonly Pick<InFlightObject, 'remainingBytes'>[], rateBps: number): number[] {
  const order = items.map((o, i) => ({ bytes: Math.max(0, o.remainingBytes), i })).sort((a, b) => a.bytes - b.bytes);
  const out = new Array<number>(items.length);
  let elapsedS = 0;
  let served = 0;
  order.forEach(({ bytes, i }, rank) => {
    elapsedS += ((bytes - served) * 8 * (order.length - rank)) / rateBps;
    served = bytes;
    out[i] = elapsedS;
  });
  return out;
}
