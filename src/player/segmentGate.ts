/**
 * The segment gate: when segment k may play. Playback waits for every reliable object of the
 * segment to settle — a freeze, with its cause, while it is playing — and gives up on one after
 * `maxStallS`; datagram objects never hold playback (they show their last frame), nor do reliable
 * ones planned not to (`ObjectPlan.holdsPlayback`, segmentRequests.ts → `awaited`). The first
 * segment of a run or of a seek also gives its datagram objects until their deadline.
 */
import type { Clock } from './clock';
import type { ContentClock } from './contentClock';
import type { FreezeCause, FreezeTracker } from './freezes';
import type { PlayoutEvent } from './playoutEvents';
import type { SegmentRequests } from './segmentRequests';

/** What the gate reads and reports to. */
export interface GateEnv {
  clock: Clock;
  tasks: SegmentRequests;
  freezes: FreezeTracker;
  content: ContentClock;
  /** Aborted when playback stops. */
  stopped: AbortSignal;
  /** Seconds a reliable object may hold playback before it is given up. */
  maxStallS: number;
  /** The WebTransport session is down and being restored (an outage, not an underrun). */
  sessionDown(): boolean;
  /** When the run began, on the session clock (event times count from it). */
  originS(): number;
  onEvent?: (event: PlayoutEvent) => void;
}

/**
 * Waits until segment k can play: every reliable object settled (freezing while playback waits,
 * if `playing`), datagram objects until the playout time at most. A seek ends the wait (and the
 * freeze: the seek's own wait is not one).
 */
export async function untilSegmentPlays(env: GateEnv, k: number, end: number, playing: boolean, signal: AbortSignal): Promise<void> {
  const { clock } = env;
  const pending = () => env.tasks.awaited(k);
  if (pending().length === 0) {
    if (!playing) await settleUntil(env, k, end, signal);
    return;
  }
  const began = clock.now();
  // An outage freeze: the session is down, or what playback waits for was lost with it (the
  // session may be back before the freeze even starts, while the requests are asked again).
  const outage = () => env.sessionDown() || pending().some((t) => t.lostWithSession);
  if (playing) {
    for (const t of pending()) t.heldPlayback = true;
    const decoding = pending().every((t) => t.result?.bytes);
    const cause: FreezeCause = outage() ? 'outage' : decoding ? 'decode' : 'underrun';
    env.freezes.begin(cause, began * 1000);
    env.content.halt('freeze');
    env.onEvent?.({ type: 'freeze-start', atS: began - env.originS(), cause });
  }
  const giveUp = Math.min(end, began + env.maxStallS);
  try {
    while (pending().length > 0 && clock.now() < giveUp && !env.stopped.aborted) {
      if (playing && outage()) env.freezes.setCause('outage');
      const waits = pending().map((t) => t.done);
      await Promise.race([Promise.all(waits), clock.sleep(Math.min(0.05, giveUp - clock.now()), signal)]);
    }
    if (!playing) await settleUntil(env, k, end, signal);
  } finally {
    if (playing) {
      const now = clock.now();
      env.freezes.end(now * 1000);
      env.content.unhalt('freeze');
      env.onEvent?.({ type: 'freeze-end', atS: now - env.originS(), durationS: now - began });
    }
  }
}

/** The first segment (startup, a seek) only: also give its datagram objects until their deadline. */
async function settleUntil(env: GateEnv, k: number, end: number, signal: AbortSignal): Promise<void> {
  const { clock } = env;
  const list = env.tasks.of(k);
  const deadline = Math.min(end, ...list.map((t) => t.deadline));
  while (list.some((t) => !t.settled && !t.abandoned) && clock.now() < deadline && !env.stopped.aborted) {
    await Promise.race([Promise.all(list.map((t) => t.done)), clock.sleep(Math.min(0.05, deadline - clock.now()), signal)]);
  }
}
