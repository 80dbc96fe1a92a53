/**
 * Requesting the next segment before the link runs dry (docs/player.md → "Playout"): the rule
 * that keeps one round trip of bytes outstanding across segments, and the watch that applies it.
 *
 * The playout loop asks for a segment when the playhead is a buffer target before it, every
 * object at once. On a 100-ms path each such busy period begins with a request that needs a round
 * trip before its first byte: if the previous segment's bytes have all arrived by then, the link
 * idles that round trip, the congestion controller sees an application-limited sender, and a
 * 550-kB segment at 20 Mbit/s moves at 0.76 × the link's rate however well the transport does
 * (docs/results.md → "Goodput at 50 ms one way, second pass"). So while bytes are still arriving
 * and what is left of them would drain within one round trip (the bandwidth-delay product, plus
 * the watch's own period so that a short path is not missed between two looks), the segment after
 * the buffer target's last one is asked for now: its first bytes then follow the last ones of the
 * segment before without a gap. Never further than that one segment (the viewport is predicted
 * for it a segment earlier than usual, and a deeper buffer is the buffer target's decision), never
 * on an idle link (a full buffer: the usual schedule decides), and never over HTTP/2, where a
 * segment is requested only after the ones before it have arrived (segmentTurn.ts).
 */
import type { Clock } from './clock';
import { DEFAULT_IN_FLIGHT_BYTES } from '../transport/budget';

/** Seconds between two looks at the bytes still owed. */
export const PIPELINE_CHECK_S = 0.05;

/** What the rule reads at one look. */
export interface PipelineState {
  /** Bytes the requests in flight still owe (estimated from the rung's size until the response says). */
  owedBytes: number;
  /** The ABR's throughput estimate (bit/s), null before the first measured segment. */
  rateBps: number | null;
  /** The path's round trip (seconds): what the next request waits before its first byte. */
  rttS: number;
  /** Bytes the next segment's requests are expected to bring. */
  nextBytes: number;
  /** The client's cap on object bytes being received at once (transport/budget.ts). */
  inFlightCapBytes?: number;
}

/**
 * Bytes the link carries in one round trip plus one look's period at `rateBps`: what must still be
 * owed when the next request leaves for the link not to wait. 0 when either is unknown.
 */
export function pipelineLeadBytes(rateBps: number | null, rttS: number, checkS = PIPELINE_CHECK_S): number {
  if (rateBps === null || !(rateBps > 0) || !Number.isFinite(rateBps) || !(rttS > 0) || !Number.isFinite(rttS)) return 0;
  return (rateBps * (rttS + Math.max(0, checkS))) / 8;
}

/**
 * Whether the next segment should be requested now: bytes are still arriving, fewer than the
 * lead (`pipelineLeadBytes`), and the next segment's bytes fit the in-flight cap beside them.
 */
export function requestNextNow(state: PipelineState): boolean {
  const cap = state.inFlightCapBytes ?? DEFAULT_IN_FLIGHT_BYTES;
  if (!(state.owedBytes > 0)) return false;
  if (state.owedBytes + Math.max(0, state.nextBytes) > cap) return false;
  return state.owedBytes < pipelineLeadBytes(state.rateBps, state.rttS);
}

/** What the watch reads, and what it acts through (the playout session). */
export interface PipelineEnv {
  clock: Clock;
  /** The segment one past the buffer target's horizon, when it may be asked for now (null: not now). */
  nextSegment(): number | null;
  /** The rule's inputs for asking for segment `j`. */
  state(j: number): PipelineState;
  /** Plans and issues segment `j`'s requests. */
  request(j: number): void;
}

/** Applies the rule every `PIPELINE_CHECK_S` until `signal` aborts. */
export async function watchPipeline(env: PipelineEnv, signal: AbortSignal): Promise<void> {
  while (!signal.aborted) {
    const j = env.nextSegment();
    if (j !== null && requestNextNow(env.state(j))) env.request(j);
    try {
      await env.clock.sleep(PIPELINE_CHECK_S, signal);
    } catch {
      return;
    }
  }
}
