/**
 * Showing a segment at its playout time: which decoded rung of each object the renderer gets,
 * what the viewer saw of each, the segment's deliveries for the throughput estimate, stopping
 * what can no longer be shown, and the QoE records written as the segment's tasks settle.
 */
import type { QoeSegment } from '../model/qoe';
import type { LinkEstimates } from '../link/estimates';
import type { DeliverySample } from '../link/throughput';
import type { ObjectTransport } from '../transport/types';
import { type ObjectTask, segmentRecord, type SegmentRecords } from './objectTask';
import type { PlayoutConfig } from './playoutConfig';
import type { ShownObject } from './playoutEvents';
import type { SegmentRequests } from './segmentRequests';

/** What showing a segment reads and writes (the playout session's own state). */
export interface ShowEnv {
  cfg: PlayoutConfig;
  tasks: SegmentRequests;
  link: LinkEstimates;
  /** The quality last shown per object (the planner's previous choice). */
  lastQuality: Map<string, number>;
  records: SegmentRecords;
  /** Records of shown segments still waiting for their tasks to settle. */
  recording: Set<Promise<void>>;
  /** The session's start on its clock: records count from it. */
  originS(): number;
  /** The transport the current mode's requests travel on. */
  carrier(): ObjectTransport;
}

/** Segment k starts playing: hand the renderer what is ready, record outcomes. */
export function showSegment(env: ShowEnv, k: number): void {
  const list = env.tasks.of(k);
  const shown = new Map<string, ShownObject | null>();
  const qualities: Record<string, number> = {};
  for (const object of env.cfg.scene.objects) {
    const ready = list.filter((t) => t.object.id === object.id && !t.abandoned && t.settled && t.decoded);
    const best = ready.sort((a, b) => b.plan.quality - a.plan.quality)[0];
    shown.set(object.id, best ? { quality: best.plan.quality, decoded: best.decoded! } : null);
    if (best) {
      env.lastQuality.set(object.id, best.plan.quality);
      qualities[object.id] = best.plan.quality;
    }
  }
  // What each object covers at the pose now, when its segment begins to play: what is seen.
  const nowMs = env.cfg.clock.now() * 1000;
  const seen = new Map(env.cfg.scene.objects.map((o) => [o.id, env.cfg.viewport.visibleArea(o.id, nowMs)]));
  for (const t of list) {
    t.shown = !!t.decoded && shown.get(t.object.id)?.decoded === t.decoded;
    t.seenArea = seen.get(t.object.id);
  }
  // A late upgrade shown replaces its lower rung: that one is no outcome of its own (model/qoeTotals.ts).
  for (const t of list) t.superseded = !t.upgrade && !t.shown && list.some((u) => u.upgrade && u.shown && u.object.id === t.object.id);
  // Its sample, if its transfers had not all ended before it played (`sampleSegment`).
  sampleSegment(env, k);
  env.cfg.onSegment?.(k, shown);
  env.cfg.onEvent?.({ type: 'segment', index: k, qualities });
  // What has not arrived by now can never be shown: stop its request (the transport then stops
  // the origin sending it, and a reliable one lost with the session is not asked for again) and
  // withdraw its decode.
  for (const t of list) {
    if (t.settled) continue;
    t.abort.abort();
    t.decodeWithdraw.abort();
  }
  // Records are written when the tasks are complete (a decode already running still counts).
  for (const t of list) {
    const written = t.done.then(() => record(env, t));
    env.recording.add(written);
    void written.then(() => env.recording.delete(written));
  }
}

/**
 * Segment k's deliveries give the throughput estimate their one sample (link/throughput.ts): as
 * soon as its transfers are over, or when it plays with some still owed (those then count for
 * what they received; what is stopped at playout adds nothing), whichever comes first.
 *
 * Why as soon as the transfers are over: a segment is asked for a buffer ahead of its playout
 * (2 s, 4 s once the link has starved) and its transfer takes a fraction of that; sampled only
 * when it played, the estimate the next segments were planned with was the link of 2–5 s
 * before. On the LTE trace at 50 ms one way every mode planned 1.5–1.9 Mbit/s for 5 s after its
 * deliveries had read 3.6–6.3 (docs/results.md, seventeenth pass), and on the 5G driving
 * trace the segments asked for at its deep trough were planned on an estimate that had not seen
 * the trough.
 */
export function sampleSegment(env: Pick<ShowEnv, 'tasks' | 'link' | 'carrier'>, k: number): void {
  if (!env.tasks.claimSample(k)) return;
  const list = env.tasks.of(k);
  const sampleBps = env.link.addSegment(list.filter(finished).map(deliverySample), env.carrier());
  // Kept in the segment's records, for offline reading of why an estimate moved.
  if (sampleBps !== null) for (const t of list) t.goodputSampleBps = sampleBps;
}

function record(env: ShowEnv, t: ObjectTask): void {
  if (t.recorded) return;
  t.recorded = true;
  const written: QoeSegment = segmentRecord(t, env.originS());
  env.records.add(written);
  env.cfg.onRecord?.(written);
}

/** Whether the task's transfer is over (its last byte came, or it ended without more). */
function finished(t: ObjectTask): boolean {
  return t.result?.stats.lastByteAt !== undefined;
}

/** A finished task's transfer, for the throughput estimate. */
function deliverySample(t: ObjectTask): DeliverySample {
  const stats = t.result!.stats;
  return { receivedBytes: stats.receivedBytes, startMs: stats.requestedAt, endMs: stats.lastByteAt!, waits: stats.repairWaits };
}
