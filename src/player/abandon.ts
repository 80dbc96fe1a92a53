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
 * lowest quality, one at a time, until it would not be.
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
 * Keys of the objects to give up for the lowest quality now. `inFlight` is in the order the
 * origin serves the requests (urgency, then request order); only segments due within `horizonS`
 * of `nowS` are judged (earlier, the rate has time to recover and the plan to adapt). An object
 * is given up only if its replacement would be ready sooner than the rest of it.
 */
export function objectsToAbandon(inFlight: readonly InFlightObject[], nowS: number, rateBps: number, horizonS: number): number[] {
  if (!(rateBps > 0)) return [];
  const items = inFlight.map((o) => ({ ...o }));
  const chosen: number[] = [];
  for (;;) {
    const lateDeadline = firstLateDeadline(items, nowS, rateBps, horizonS);
    if (lateDeadline === null) return chosen;
    // The replacement must be ready sooner than the rest of the object would be.
    const saves = (o: InFlightObject) => o.quality > 0 && readyAfterS(o.lowestBytes, o.lowestDecodeS, rateBps) < readyAfterS(o.remainingBytes, o.decodeS, rateBps);
    // Any object due no later than the late segment delays it (it is served first or shares its deadline).
    const candidates = items.filter((o) => o.deadlineS <= lateDeadline && saves(o));
    if (candidates.length === 0) return chosen;
    const victim = candidates.reduce((a, b) => (b.visibleArea < a.visibleArea ? b : a));
    chosen.push(victim.key);
    victim.quality = 0;
    victim.remainingBytes = victim.lowestBytes;
    victim.decodeS = victim.lowestDecodeS;
  }
}

function readyAfterS(bytes: number, decodeS: number, rateBps: number): number {
  return (8 * bytes) / rateBps + decodeS;
}

/** The deadline of the first segment due within the horizon that would be ready after it, or null. */
function firstLateDeadline(items: readonly InFlightObject[], nowS: number, rateBps: number, horizonS: number): number | null {
  let bytes = 0;
  for (const o of items) {
    bytes += o.remainingBytes;
    const readyS = nowS + (8 * bytes) / rateBps + o.decodeS;
    if (o.deadlineS - nowS <= horizonS && readyS > o.deadlineS) return o.deadlineS;
  }
  return null;
}
