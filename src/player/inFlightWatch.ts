/**
 * The two periodic checks while requests are in flight: every 50 ms the link watch samples the
 * bytes received (for the buffer target, bufferTarget.ts), and every 0.1 s the
 * in-flight quality rules (quality.ts → abandonment) judge the reliable requests still owing
 * bytes. Both run from the start of a playout run to its end.
 */
import type { Clock } from './clock';
import type { ContentClock } from './contentClock';
import type { DecodeCostModel } from './decodeBudget';
import type { LinkEstimates } from '../link/estimates';
import type { BusyWindow } from '../link/linkWatch';
import type { SceneModel } from '../model/scene';
import { IN_ORDER, type Serving } from './abandon';
import { type ObjectTask, owedObjects } from './objectTask';
import { requestsToAbandon } from './quality';
import { HTTP2_ORIGIN_UNSENT_BYTES } from '../transport/http2';
import type { SegmentRequests } from './segmentRequests';

/**
 * Seconds between two link samples: fine, so that a starved window can begin soon after a request
 * does. With quarter-second samples the first window of a request made 0.15 s into a 1-s outage
 * began up to 0.25 s later and reached past the outage's end, into the bytes the link had held
 * back, and the outage went unseen (playout.test.ts). Whether that is why the 5G driving trace's
 * outage at 33 s went unseen in some QoE runs is not shown: those runs' requests came at about
 * the same times as those of runs that saw it (docs/results.md, pass of 2026-11-28).
 */
const LINK_SAMPLE_S = 0.05;
/** Seconds between two checks of the abandonment rule (abandon.ts). */
const ABANDON_CHECK_S = 0.1;

/** What the watches read, and what they act through. */
export interface WatchEnv {
  clock: Clock;
  scene: SceneModel;
  tasks: SegmentRequests;
  link: LinkEstimates;
  content: ContentClock;
  decodeCost: DecodeCostModel;
  /** The WebTransport session is down and being restored. */
  sessionDown(): boolean;
  /** A link sample for the buffer target: now, and the last busy window (null when the link was idle in it). */
  observeLink(nowS: number, window: BusyWindow | null): void;
  /** Gives a reliable request up for the lowest quality (the loop reports it and replaces it). */
  abandon(task: ObjectTask): void;
}

/** Samples the link until `signal` aborts. */
export async function watchLink(env: WatchEnv, signal: AbortSignal): Promise<void> {
  const { clock, link } = env;
  while (!signal.aborted) {
    // Bytes still expected: a request in flight (decoding is not the link's time).
    const now = clock.now();
    link.sample(now, env.tasks.linkBusy());
    env.observeLink(now, link.busyWindow());
    try {
      await clock.sleep(LINK_SAMPLE_S, signal);
    } catch {
      return;
    }
  }
}

/**
 * The abandonment rule until `signal` aborts, while playing: not while paused (nothing is due)
 * or while the session is down (the requests are asked again anyway). The rate is the link's
 * over its last window while busy, else the ABR's estimate.
 */
export async function watchAbandonment(env: WatchEnv, signal: AbortSignal): Promise<void> {
  const { clock, scene, content } = env;
  while (!signal.aborted) {
    try {
      await clock.sleep(ABANDON_CHECK_S, signal);
    } catch {
      return;
    }
    if (!content.started || content.paused || env.sessionDown()) continue;
    const rateBps = env.link.busyRateBps() ?? env.link.throughputBps();
    if (rateBps === null) continue;
    const now = clock.now();
    const pending = env.tasks.owedReliable();
    // Playout time now: later by the freeze under way, if any. A late upgrade (lateUpgrade.ts) is
    // never late for playback nor given up here: its bytes only take the link before what follows it.
    const owed = owedObjects(pending, scene, env.decodeCost, (t) => (t.upgrade ? Infinity : content.playoutTime(t.index) + content.haltedFor(now)));
    const rttS = pathRttS(pending);
    const state = { nowS: now, rateBps, horizonS: scene.segmentDuration, serving: servingOf(pending, rateBps, rttS), requestS: rttS };
    for (const key of requestsToAbandon(owed, state)) env.abandon(pending[key]);
  }
}

/**
 * How the link is divided among `pending` (abandon.ts → `Serving`): shared when they all travel
 * over HTTP/2 (the origin interleaves every open response); a given-up response then still
 * delivers what the connection holds of it — the origin's unsent limit plus a round trip of the
 * link's bytes in flight (`rttS`: `pathRttS`).
 */
export function servingOf(pending: readonly ObjectTask[], rateBps: number, rttS: number): Serving {
  if (pending.length === 0 || pending.some((t) => t.transport.kind !== 'http2')) return IN_ORDER;
  const inNetwork = (rateBps * rttS) / 8;
  return { kind: 'shared', drainBytes: HTTP2_ORIGIN_UNSENT_BYTES + inNetwork };
}

/**
 * The path's round trip as the requests' transport measures it (seconds; 0 when unknown): the
 * smallest seen, since response times (over HTTP/2 especially) include waiting behind other
 * responses.
 */
export function pathRttS(pending: readonly ObjectTask[]): number {
  if (pending.length === 0) return 0;
  const { rttS: smoothed, rtt } = pending[0].transport.linkEstimate();
  const rttS = Math.min(smoothed, rtt?.minRttS ?? smoothed);
  return Number.isFinite(rttS) && rttS > 0 ? rttS : 0;
}
