/**
 * One request of one object for one segment, from plan to decode: fetch it on its transport, ask
 * for it again at the lowest quality if it was lost with the session (on the session once it is
 * back, or over HTTP/2 if WebTransport has fallen back), decode what arrived, and
 * write its QoE record once its segment was shown. The playout loop starts tasks and reads them;
 * a task never touches the loop.
 */
import type { InFlightObject } from './abandon';
import type { Clock } from './clock';
import type { DecodeCostModel } from './decodeBudget';
import type { LinkEstimates } from '../link/estimates';
import { originDeadlineMs, type RttView } from '../transport/pathRtt';
import type { DecodedSegment, SegmentDecoder } from '../model/decoder';
import { QOE_SEGMENTS_KEPT, type QoeSegment } from '../model/qoe';
import { addQoeRecord, emptyQoeTotals } from '../model/qoeTotals';
import type { SceneModel, SceneObject } from '../model/scene';
import { segmentPath } from './mpd';
import type { PlannedRequest } from './plan';
import type { ObjectPlan } from './policy';
import { reRequestPlan } from './quality';
import { objectRetryDelayS } from '../transport/retry';
import type { ObjectResult, ObjectTransport, TransportState } from '../transport/types';

export interface ObjectTask {
  /** Its request was lost with the session and asked for again after the reconnect. */
  lostWithSession: boolean;
  object: SceneObject;
  index: number;
  plan: ObjectPlan;
  visibleArea: number;
  rank: number;
  requestedAt: number;
  deadline: number;
  /** The buffer target when it was requested. */
  bufferTargetS: number;
  /** The throughput estimate its plan was made with (bit/s), when there was one. */
  plannedThroughputBps?: number;
  abort: AbortController;
  receivedBytes: number;
  objectBytes: number;
  result?: ObjectResult;
  completedAt?: number;
  decoded?: DecodedSegment;
  decodeError?: string;
  /**
   * Aborted when the segment is shown: an object whose decode has not started by then can never
   * be seen, so it is not decoded (`decodeLate`) and the decoder goes on with what is still to come.
   */
  decodeWithdraw: AbortController;
  decodeLate: boolean;
  abandoned: boolean;
  /**
   * Given up without a replacement (abandon.ts: an object predicted out of view is dropped, not
   * asked for again): playback shows the object as it last was. Its record is then the
   * object-segment's outcome — one not shown on time — where a replaced request's is not.
   */
  dropped: boolean;
  /**
   * A late upgrade (lateUpgrade.ts): a higher rung over the object-segment's lowest rung,
   * requested near playout. Playback never waits for it; given up, it is not replaced.
   */
  upgrade: boolean;
  /** A late upgrade of the same object-segment was shown instead of it. */
  superseded: boolean;
  /** Visible area at the pose when its segment began to play (set when shown). */
  seenArea?: number;
  /** The goodput sample its segment gave the throughput estimate (segmentShow.ts → `sampleSegment`; bit/s; none if it gave none). */
  goodputSampleBps?: number;
  /** Playback froze waiting for it: whenever it is shown, it was not on time. */
  heldPlayback: boolean;
  /** Its frames were handed to the renderer when its segment played. */
  shown: boolean;
  recorded: boolean;
  /** Settles when the bytes arrived (or failed) and were decoded (or failed); never rejects. */
  done: Promise<void>;
  settled: boolean;
  /**
   * A datagram object whose planned symbols have all left the origin (ObjectRequest.onAllPlannedSent):
   * it waits on repair or its deadline, and no longer keeps the link busy (`owesLink`).
   */
  awaitsRepair: boolean;
  /** Order of creation: equal urgencies are served in request order. */
  sequence: number;
  /** What carries it. */
  transport: ObjectTransport;
  /** The round trip when it was requested (src/transport/pathRtt.ts), for its record. */
  rtt?: RttView;
}

/** What every task of a playout session shares. */
export interface TaskEnv {
  clock: Clock;
  decoder: SegmentDecoder;
  decodeCost: DecodeCostModel;
  link: LinkEstimates;
  /** Origin path of the manifest's directory (segment paths are relative to it). */
  contentBase: string;
  /** Seconds of content per segment: with a representation's peak bandwidth, a segment's expected size. */
  segmentDurationS: number;
  /** Aborted when playback stops. */
  stopped: AbortSignal;
  /** What asks again for a reliable object lost with a WebTransport session that then fell back (HTTP/2). */
  fallback?: ObjectTransport;
  /**
   * The transport the mode's requests travel on now (WebTransport once a session carries them
   * again, HTTP/2 in `h2` or while fallen back): where a request HTTP/2 lost is asked again.
   */
  carrier?: () => ObjectTransport;
  /**
   * The task's transfer is over (its last byte came, or it ended without more), before its decode:
   * its segment's throughput sample need not wait for playout (segmentShow.ts → `sampleSegment`).
   */
  onTransferEnd?: (task: ObjectTask) => void;
}

/** Whether the task's bytes are still expected from the link (decoding is not the link's time). */
export function inFlight(t: ObjectTask): boolean {
  return !t.settled && !t.abandoned && t.completedAt === undefined && t.plan.delivery !== 'skip';
}

/**
 * Whether the link owes the task bytes of its own transfer: in flight, and not a datagram object
 * that only waits on repair. That wait is the protocol's — the repair timer, a request, a SENT
 * on a stream that may itself wait out a retransmission — with almost nothing arriving: counted
 * as the link's, it read as a starved link on a 40-Mbit/s path (0.8 s, the walking trace at 2 %,
 * reference matrix shard 3, docs/results.md) and grew the buffer target there.
 */
export function owesLink(t: ObjectTask): boolean {
  return inFlight(t) && !t.awaitsRepair;
}

/** Starts fetching (and then decoding) one planned request of segment `index`, due at `deadline`. */
export function startObjectTask(
  env: TaskEnv, request: PlannedRequest, firstTransport: ObjectTransport,
  index: number, deadline: number, bufferTargetS: number, sequence: number,
): ObjectTask {
  const { clock } = env;
  const { object, plan } = request;
  let transport = firstTransport;
  let quality = plan.quality;
  const pathOf = (q: number) => env.contentBase + segmentPath(object, object.representations[q].id, index);
  let path = pathOf(quality);
  const task: ObjectTask = {
    object, index, plan, visibleArea: request.visibleArea, rank: request.rank, lostWithSession: false,
    requestedAt: clock.now(), deadline, bufferTargetS, plannedThroughputBps: request.plannedThroughputBps, abort: new AbortController(),
    decodeWithdraw: new AbortController(), decodeLate: false,
    receivedBytes: 0, objectBytes: 0, abandoned: false, dropped: false, upgrade: request.upgrade ?? false, superseded: false, heldPlayback: false, shown: false, recorded: false,
    settled: false, awaitsRepair: false, done: Promise.resolve(), sequence, transport,
  };
  if (plan.delivery === 'skip') {
    task.settled = true;
    return task;
  }
  const delivery = plan.delivery;
  task.rtt = firstTransport.linkEstimate().rtt;
  // The origin stops sending a datagram object at this deadline: what it would send later arrives too late.
  const datagramDeadlineMs = originDeadlineMs((deadline - clock.now()) * 1000, task.rtt?.rttS ?? 0);
  task.done = (async () => {
    let attempt = 0;
    try {
      for (;;) {
        task.result = await transport.fetchObject({
          path, delivery, urgency: plan.urgency, fec: plan.fec, signal: task.abort.signal,
          // The transport refuses an object far larger than this (src/transport/limits.ts).
          expectedBytes: (object.representations[quality].bandwidth * env.segmentDurationS) / 8,
          // Reliable objects may stall playback, so the origin keeps sending them past the deadline.
          deadlineMs: delivery === 'datagram' ? datagramDeadlineMs : undefined,
          onProgress: (received, total) => {
            env.link.addBytes(received - task.receivedBytes, clock.now());
            task.receivedBytes = received;
            task.objectBytes = total;
          },
          onAllPlannedSent: () => {
            task.awaitsRepair = true;
          },
        });
        // Over HTTP/2 a transient answer (502/504 from what is behind the origin) is asked for
        // again, a bounded number of times, while the answer can still arrive in time.
        if (!task.result.bytes && delivery === 'reliable' && transport.kind === 'http2' && task.result.status !== 0) {
          const rate = env.link.throughputBps();
          const transferS = rate ? (object.representations[quality].bandwidth * env.segmentDurationS) / rate : 0;
          const delayS = objectRetryDelayS(task.result.status, ++attempt, clock.now(), task.deadline, transport.linkEstimate().rttS, transferS);
          if (delayS !== null && (await sleepUnlessAborted(clock, delayS, task.abort.signal))) {
            task.receivedBytes = 0;
            task.objectBytes = 0;
            continue;
          }
        }
        // A reliable object lost with the session is asked for again once a path is back, so
        // playback waits for it (an outage freeze) instead of skipping it, at the quality the
        // session-restore rule says (quality.ts: the lowest).
        if (task.result.bytes || delivery !== 'reliable' || task.result.status !== 0) break;
        const next = await pathBack(env, transport, task.abort.signal);
        if (!next) break;
        transport = next;
        task.transport = next;
        task.lostWithSession = true;
        task.plan = reRequestPlan(task.plan);
        quality = task.plan.quality;
        path = pathOf(quality);
        task.receivedBytes = 0;
        task.objectBytes = 0;
      }
      task.completedAt = clock.now();
      env.onTransferEnd?.(task);
      if (task.result.bytes && !task.abandoned) {
        const signal = task.decodeWithdraw.signal;
        try {
          if (signal.aborted) throw signal.reason;
          // Due at the segment's deadline: after an outage, when a backlog arrives at once, the
          // decoder starts the segment due first rather than the one that arrived first.
          task.decoded = await env.decoder.decode({
            objectId: object.id, segment: index, quality, bytes: task.result.bytes,
            v3cLevelIdc: object.representations[quality].v3cLevelIdc, signal, dueAt: task.deadline,
          });
          env.decodeCost.observe(object.representations[quality].pointsPerFrame, task.decoded.decodeMs);
        } catch (e) {
          if (signal.aborted) task.decodeLate = true;
          else task.decodeError = e instanceof Error ? e.message : String(e);
        }
      }
    } catch (e) {
      task.result = { status: 0, bytes: null, stats: { delivery, transport: transport.kind, objectBytes: 0, receivedBytes: 0, requestedAt: 0, recovered: false }, error: e instanceof Error ? e.message : String(e) };
    } finally {
      task.settled = true;
      // A transfer that ended in an error: over too.
      if (task.completedAt === undefined) env.onTransferEnd?.(task);
    }
  })();
  return task;
}

/**
 * After a reliable request failed without a status: the transport to ask again on, or null when
 * the failure was not a lost path (the session still connected, failed for good or closed, or the
 * request cancelled). A lost WebTransport session: itself once it is connected again, or HTTP/2
 * (`env.fallback`) if it fell back. HTTP/2: half a second later (the origin may be restarting),
 * on what the mode's requests travel on then (`env.carrier`): itself, or the WebTransport session
 * a background probe opened meanwhile — HTTP/2 may be the path that is gone (the page's origin
 * killed while another origin's session works). The segment's show ends the wait by cancelling.
 */
async function pathBack(env: TaskEnv, transport: ObjectTransport, signal: AbortSignal): Promise<ObjectTransport | null> {
  const { clock } = env;
  const wait = async (s: number) => {
    try {
      await clock.sleep(s, signal);
      return !env.stopped.aborted;
    } catch {
      return false;
    }
  };
  // The request's stream may fail a moment before the session reports its loss.
  if (!(await wait(0.1))) return null;
  if (transport.kind === 'http2') return (await wait(0.5)) ? (env.carrier?.() ?? transport) : null;
  const state = (): TransportState => transport.state; // changes while we wait
  if (state() !== 'reconnecting' && state() !== 'connecting' && state() !== 'fallback') return null;
  for (;;) {
    if (state() === 'connected') return transport;
    if (state() === 'fallback') return env.fallback ?? null;
    if (state() === 'failed' || state() === 'closed') return null;
    if (!(await wait(0.05))) return null;
  }
}

/** Sleeps `s` seconds; false when `signal` aborted first. */
async function sleepUnlessAborted(clock: Clock, s: number, signal: AbortSignal): Promise<boolean> {
  try {
    await clock.sleep(s, signal);
    return !signal.aborted;
  } catch {
    return false;
  }
}

/** The task's QoE record (`originS`: when the session began, the records' time base). */
export function segmentRecord(t: ObjectTask, originS: number): QoeSegment {
  const s = t.result?.stats;
  const rel = (ms: number | undefined) => (ms === undefined ? undefined : ms / 1000 - originS);
  return {
    object: t.object.id, index: t.index, quality: t.plan.quality, qualityCount: t.object.representations.length,
    bitrateBps: t.object.representations[t.plan.quality].bandwidth, delivery: t.plan.delivery,
    ...(t.plan.holdsPlayback === false ? { holdsPlayback: false as const } : {}),
    fec: t.plan.fec.kind, transport: s?.transport ?? 'webtransport', visibleArea: t.visibleArea, rank: t.rank,
    requestedAtS: t.requestedAt - originS, deadlineS: t.deadline - originS, bufferTargetS: t.bufferTargetS,
    ...(t.plannedThroughputBps !== undefined ? { plannedThroughputBps: t.plannedThroughputBps } : {}),
    urgency: t.plan.urgency,
    firstByteAtS: rel(s?.firstByteAt), completedAtS: t.result?.bytes ? t.completedAt! - originS : undefined,
    objectBytes: s?.objectBytes ?? 0, receivedBytes: s?.receivedBytes ?? 0,
    symbolSize: s?.symbolSize, sourceSymbols: s?.sourceSymbols, symbolsSent: s?.symbolsSent,
    symbolsReceived: s?.symbolsReceived, symbolsOnStream: s?.symbolsOnStream, symbolsObserved: s?.symbolsObserved, symbolsLost: s?.symbolsLost,
    repairRequests: s?.repairRequests, recovered: !!t.result?.bytes, abandoned: t.abandoned && !t.dropped, ...(t.dropped ? { dropped: true } : {}), decoded: !!t.decoded, decodeMs: t.decoded?.decodeMs,
    decodeError: t.decodeError, decodeLate: t.decodeLate || undefined,
    ...(t.upgrade ? { upgrade: true } : {}), ...(t.superseded ? { superseded: true } : {}),
    ...(t.seenArea !== undefined ? { seenArea: t.seenArea } : {}),
    ...(t.goodputSampleBps !== undefined ? { goodputSampleBps: t.goodputSampleBps } : {}),
    onTime: t.shown && !t.heldPlayback,
    shownLate: (t.shown && t.heldPlayback) || undefined,
    ...(t.rtt ? {
      rttS: t.rtt.rttS, minRttS: t.rtt.minRttS, rttSource: t.rtt.source,
      ...(t.rtt.cwndBytes !== undefined ? { cwndBytes: t.rtt.cwndBytes, deliveryRateBps: t.rtt.deliveryRateBps } : {}),
    } : {}),
  };
}

/** Throws unless `kept` is a number of QoE records to keep: a whole number ≥ 0. */
export function checkQoeSegmentsKept(kept: number): void {
  if (!(Number.isSafeInteger(kept) && kept >= 0)) throw new Error(`QoE records kept must be a whole number ≥ 0, got ${kept}`);
}

/**
 * The QoE records of a playout session, bounded: a ring of the most recent `capacity`, a count of
 * the older ones dropped to make room (the QoE log's `segmentsDropped`), and running totals over
 * every record added (`totals`, model/qoeTotals.ts), so the run's summary stays exact.
 */
export class SegmentRecords {
  private readonly ring: QoeSegment[] = [];
  /** Where the next record goes once the ring is full (its oldest). */
  private next = 0;
  /** Records dropped, oldest first, to keep at most `capacity`. */
  dropped = 0;
  readonly totals = emptyQoeTotals();

  /**
   * `capacity`: records kept, a whole number ≥ 0 (0 keeps none: a host that streams the records
   * out keeps them itself). `baseBufferS`: the buffer target on a steady link (the totals'
   * `volatileFromS` counts requests above it).
   */
  constructor(readonly capacity = QOE_SEGMENTS_KEPT, private readonly baseBufferS = Infinity) {
    checkQoeSegmentsKept(capacity);
  }

  add(record: QoeSegment): void {
    addQoeRecord(this.totals, record, this.baseBufferS);
    if (this.ring.length < this.capacity) {
      this.ring.push(record);
      return;
    }
    if (this.capacity === 0) {
      this.dropped++;
      return;
    }
    this.ring[this.next] = record;
    this.next = (this.next + 1) % this.capacity;
    this.dropped++;
  }

  /** The records kept, oldest first (a new array). */
  get list(): readonly QoeSegment[] {
    return this.next === 0 ? this.ring.slice() : [...this.ring.slice(this.next), ...this.ring.slice(0, this.next)];
  }
}

/** Bytes a request still owes: what its response announced less what arrived, else its rung's expected size. */
export function owedBytes(t: ObjectTask, segmentDurationS: number): number {
  return t.objectBytes > 0 ? Math.max(0, t.objectBytes - t.receivedBytes) : (t.object.representations[t.plan.quality].avgBandwidth * segmentDurationS) / 8;
}

/**
 * Reliable tasks whose bytes are still arriving, as the abandonment rule sees them (abandon.ts);
 * `key` is the index into `tasks`, which are in the order the origin serves them.
 */
export function owedObjects(
  tasks: readonly ObjectTask[], scene: SceneModel, decodeCost: DecodeCostModel, deadlineOf: (t: ObjectTask) => number,
): InFlightObject[] {
  const bytesOf = (o: SceneObject, q: number) => (o.representations[q].avgBandwidth * scene.segmentDuration) / 8;
  const decodeS = (o: SceneObject, q: number) => (decodeCost.estimateMs(o.representations[q].pointsPerFrame) ?? 0) / 1000;
  return tasks.map((t, key) => ({
    key,
    deadlineS: deadlineOf(t),
    quality: t.plan.quality,
    remainingBytes: owedBytes(t, scene.segmentDuration),
    lowestBytes: bytesOf(t.object, 0),
    decodeS: decodeS(t.object, t.plan.quality),
    lowestDecodeS: decodeS(t.object, 0),
    visibleArea: t.visibleArea,
  }));
}
