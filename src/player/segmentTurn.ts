/**
 * Segments in turn over HTTP/2: a segment's requests wait until the segments before it have
 * arrived (docs/player.md → "Playout").
 *
 * The QUIC origin serves requests by urgency, so a prefetched segment never delays the one due
 * before it. The HTTPS origin cannot: hyper interleaves every open HTTP/2 response frame by
 * frame, so requests for the next two segments made together share the link with the one due
 * first, it arrives up to three times later, and its objects complete together at the end and
 * then queue for the decoder. In the `h2` QoE logs this froze playback right after startup (three
 * segments requested at once, the first due in 0.9 s) and wherever the buffer target grew.
 * Asking for a segment only once the bytes of those before it are in gives each segment the whole
 * link, as the QUIC origin's order does, for one round trip of idle link per segment; a segment
 * due within one segment duration is asked for anyway.
 */
import type { Clock } from './clock';
import type { SegmentRequests } from './segmentRequests';

/** Seconds between two looks at whether the segments before have arrived. */
const TURN_POLL_S = 0.01;

export interface TurnEnv {
  clock: Clock;
  tasks: SegmentRequests;
  segmentDurationS: number;
  /** Segment j's playout time now (a freeze moves it). */
  playoutTime(j: number): number;
  /** Issues segment j's requests, due at `deadline`. */
  request(j: number, deadline: number): void;
}

/**
 * Requests segment `j` once no earlier segment still owes bytes, or once it is due within one
 * segment duration; holds its place meanwhile (`SegmentRequests.reserve`). Gives up when a seek
 * dropped the place or `signal` aborts.
 */
export async function requestInTurn(env: TurnEnv, j: number, signal: AbortSignal): Promise<void> {
  const { clock, tasks } = env;
  tasks.reserve(j);
  while (!signal.aborted && tasks.isReserved(j)) {
    if (!tasks.owedBefore(j) || env.playoutTime(j) - clock.now() <= env.segmentDurationS) {
      env.request(j, env.playoutTime(j));
      return;
    }
    try {
      await clock.sleep(TURN_POLL_S, signal);
    } catch {
      return;
    }
  }
}
