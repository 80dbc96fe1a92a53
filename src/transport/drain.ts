/**
 * How the player learns that the origin in use drains (docs/origin.md → "Drain"): it is shutting
 * down, refuses new requests, finishes the objects it is sending, then closes the session. Three
 * signals, whichever comes first:
 *
 * - the session's `draining` promise, which a browser resolves when the origin sends
 *   DRAIN_WEBTRANSPORT_SESSION (Chromium 156 has it only behind
 *   `--enable-blink-features=WebTransportDraining` or all experimental web platform features,
 *   so it is looked for, never assumed);
 * - the origin's answer to a new request on a draining session: RESPONSE 503 with the message
 *   `DRAIN_REFUSAL_PREFIX…` (docs/protocol.md §3). It costs the request one round trip, and the
 *   session asks for it again on the next origin, so nothing is lost;
 * - the session closed cleanly by the origin (CLOSE_WEBTRANSPORT_SESSION, `closed` resolves)
 *   without our asking: our origin does that only when it drains. This is the signal when nothing
 *   was asked of the origin between its drain and its close (the player's buffer was full).
 *
 * What the session does then (webtransport.ts): opens a session to another endpoint
 * (failover.ts `drainTargets`), sends new requests there (they wait for it meanwhile), and
 * leaves the draining one open until the origin closes it, so the objects in flight on it arrive.
 * A request refused, or cut without an answer when the drained session closes (as seen for
 * requests that crossed the origin's GOAWAY), is asked again on the new session.
 */
import type { ObjectResult } from './types';

/** How the origin's 503 to a request on a draining session begins (the origin's delivery.rs). */
export const DRAIN_REFUSAL_PREFIX = 'the origin is shutting down';

/** The switch reason, in QoE and stats, of a move off a draining origin. */
export const DRAIN_REASON = 'drain';

/** Whether `result` is the origin refusing a new request because it drains. */
export function isDrainRefusal(result: ObjectResult): boolean {
  return result.status === 503 && (result.error ?? '').startsWith(DRAIN_REFUSAL_PREFIX);
}

/**
 * Calls `onDraining` once when the browser reports that the origin drains `wt` (its `draining`
 * promise resolves). Does nothing where the browser has no such promise.
 */
export function watchDraining(wt: WebTransport, onDraining: () => void): void {
  const draining = (wt as WebTransport & { draining?: Promise<unknown> }).draining;
  if (draining && typeof draining.then === 'function') draining.then(onDraining, () => undefined);
}
