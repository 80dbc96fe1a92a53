/**
 * The live edge of a growing scene (docs/player.md → "A growing scene"): where the seconds
 * published so far end. The playout loop waits there, its content clock standing (not a freeze:
 * nothing is late, there is nothing yet to fetch), until a newer manifest names what comes next
 * or says the scene is final; `LiveEdge` is how the manifest's growth reaches that wait.
 */
import { type Clock, raceAbort } from './clock';
import type { ContentClock } from './contentClock';
import type { PassTimeline } from './pass';
import type { PlayoutEvent } from './playoutEvents';
import { type GateEnv, untilSegmentPlays } from './segmentGate';

export class LiveEdge {
  private waiters: Array<() => void> = [];
  /** Whether playback stands at the edge now. */
  waiting = false;

  /** The scene grew or became final: whatever waits looks again. */
  moved(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const wake of waiters) wake();
  }

  /** Resolves at the next `moved()`. */
  next(): Promise<void> {
    return new Promise((resolve) => this.waiters.push(resolve));
  }
}

/** What the wait at the edge uses of the playout loop. */
export interface EdgeEnv {
  clock: Clock;
  content: ContentClock;
  timeline: PassTimeline;
  gate: GateEnv;
  edge: LiveEdge;
  /** When run() began (the events' time base). */
  originS(): number;
  onEvent?: (event: PlayoutEvent) => void;
  /** Segment k has requests (issued ahead, before the scene grew past it). */
  requested(k: number): boolean;
  /** Issues segment k's requests with the deadline `deadlineS` (session clock). */
  request(k: number, deadlineS: number): void;
  /** The deadline a segment fetched while the clock stands gets (as a seek's target does). */
  standingDeadlineS(): number;
}

/**
 * Playback stands at segment `k`'s playout time and segment k is not published yet: the content
 * clock halts ('edge') until a newer manifest names it — then it is fetched and settled like a
 * seek's target, and the clock goes on with it — or says the scene is final (the caller then ends
 * or loops the pass as for any scene). Ends early at `end` (session clock) or when `signal` aborts
 * (a seek, close()), rejecting with its reason.
 */
export async function waitAtLiveEdge(env: EdgeEnv, k: number, end: number, signal: AbortSignal): Promise<void> {
  const { clock, content, timeline, edge } = env;
  const published = () => timeline.segments > k;
  if (published() || !timeline.grows) return;
  content.halt('edge');
  edge.waiting = true;
  env.onEvent?.({ type: 'live-edge', waiting: true, atS: clock.now() - env.originS() });
  try {
    while (!published() && timeline.grows && clock.now() < end) {
      const limit = Number.isFinite(end) ? [clock.sleep(end - clock.now(), signal)] : [];
      await raceAbort(Promise.race([edge.next(), ...limit]), signal);
    }
    if (published() && clock.now() < end) {
      if (!env.requested(k)) env.request(k, env.standingDeadlineS());
      await untilSegmentPlays(env.gate, k, end, false, signal);
    }
  } finally {
    edge.waiting = false;
    content.unhalt('edge');
    env.onEvent?.({ type: 'live-edge', waiting: false, atS: clock.now() - env.originS() });
  }
}
