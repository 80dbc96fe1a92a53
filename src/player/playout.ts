/**
 * The playout loop (docs/player.md → "Playout"): for every 1-s segment, predict the viewport at
 * its playout time, rank the objects, let the delivery policy choose quality and delivery per
 * object, request them with urgency and deadline, decode what arrives, and show each segment at
 * its playout time — stalling (a freeze) only for reliable objects that are not there yet, and
 * re-showing the last frame of a datagram object that could not be recovered in time. A reliable
 * request that would make its segment late is given up for the lowest quality (abandon.ts).
 *
 * Segment k plays at P(k) = start + k·D + (time spent frozen or paused before it). Its requests
 * are issued when the playhead is `ceil(bufferTarget / D)` segments before it, with the deadline
 * P(k); the first segment is requested at the lowest quality and playback starts when it is ready.
 * The buffer target grows on a volatile link (`BufferTarget`).
 */
import type { ObjectResult, ObjectTransport, TransportState } from '../transport/types';
import type { QoeSegment } from '../model/qoe';
import type { Clock } from './clock';
import { type InFlightObject, objectsToAbandon } from './abandon';
import { BufferTarget, volatileTargetS } from './bufferTarget';
import { LinkWatch } from './linkWatch';
import { DECODE_HEADROOM, DecodeCostModel, fitDecodeBudget } from './decodeBudget';
import type { DecodedSegment, SegmentDecoder } from '../model/decoder';
import type { LossModel } from './fecModel';
import { type FreezeCause, FreezeTracker } from './freezes';
import { segmentPath } from './mpd';
import { type SceneModel, type SceneObject } from '../model/scene';
import type { DeliveryPolicy, ObjectPlan, PlanObject } from './policy';
import type { PlanDelivery } from '../model/modes';
import { rankObjects } from '../viewport/ranking';
import { type ViewportModel } from '../model/pose';
import { RttEstimator } from '../transport/rtt';
import { ThroughputEstimator } from './throughput';

/**
 * RFC 9218 urgency of a request, from its delivery, its rank (the policy's urgency) and whether
 * an earlier segment is still arriving ("behind"). Four bands, most urgent first:
 *   0–2 reliable objects of the earliest segment in flight, by rank;
 *   3   reliable objects of a segment requested behind an unfinished one;
 *   4–6 datagram objects of the earliest segment in flight, by rank;
 *   7   datagram objects of a segment requested behind.
 * A later segment must not overtake an earlier one (its most visible object would take the link
 * from the earlier segment's last ones: the startup freezes of the first QoE runs), except that
 * a reliable object always goes before a datagram object: a missing reliable object freezes
 * playback, a missing datagram object only keeps its last frame. (With one band for a whole
 * segment behind, the next segment's visible objects waited for the earlier segment's datagram
 * objects still being sent until their deadline, and froze on a dip of the 5G trace.)
 * Equal urgencies are served in request order, which is rank order.
 */
export function requestUrgency(delivery: PlanDelivery, rank: number, behind: boolean): number {
  const inBand = Math.min(2, Math.max(0, rank));
  if (delivery === 'reliable') return behind ? 3 : inBand;
  return behind ? 7 : 4 + inBand;
}

export interface PlayoutConfig {
  scene: SceneModel;
  /** Origin path of the manifest's directory, e.g. `/content/demo/` (segment paths are relative to it). */
  contentBase: string;
  /** WebTransport for the QUIC modes; HTTP/2 for `h2` and as the fallback when WebTransport is absent. */
  transports: { webtransport?: ObjectTransport; http2: ObjectTransport };
  decoder: SegmentDecoder;
  viewport: ViewportModel;
  policy: DeliveryPolicy;
  clock: Clock;
  /** Seconds of content requested ahead of the playhead on a steady link (default `DEFAULT_BUFFER_TARGET_S`). */
  bufferTargetS?: number;
  /** Seconds requested ahead after the link starved (default twice `bufferTargetS`; equal to it for a fixed target). */
  volatileBufferTargetS?: number;
  /** Stop after this many seconds from `run()` (default: never). */
  durationS?: number;
  /** A reliable object later than this stalls no longer: it is given up and the segment plays. */
  maxStallS?: number;
  /** Called when segment k starts playing, with the frames to show per object (null = keep the last). */
  onSegment?: (k: number, shown: ReadonlyMap<string, ShownObject | null>) => void;
  onEvent?: (event: PlayoutEvent) => void;
  /** Called when the requests of a segment are planned (one entry per object, most visible first). */
  onPlan?: (plans: ReadonlyArray<PlannedObject>) => void;
}

/** Seconds between two checks of the abandonment rule (abandon.ts). */
const ABANDON_CHECK_S = 0.1;

export interface PlannedObject {
  segment: number;
  objectId: string;
  quality: number;
  delivery: PlanDelivery;
  rank: number;
  visibleArea: number;
}

export interface ShownObject {
  quality: number;
  decoded: DecodedSegment;
}

export type PlayoutEvent =
  | { type: 'started'; startupS: number }
  | { type: 'freeze-start'; atS: number; cause: FreezeCause }
  | { type: 'freeze-end'; atS: number; durationS: number }
  | { type: 'segment'; index: number; qualities: Record<string, number> }
  | { type: 'abandoned'; objectId: string; index: number; fromQuality: number }
  | { type: 'error'; message: string };

/** One request of one object for one segment, from plan to decode. */
interface ObjectTask {
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
  /** Playback froze waiting for it: whenever it is shown, it was not on time. */
  heldPlayback: boolean;
  /** Its frames were handed to the renderer when its segment played. */
  shown: boolean;
  recorded: boolean;
  /** Settles when the bytes arrived (or failed) and were decoded (or failed); never rejects. */
  done: Promise<void>;
  settled: boolean;
  /** Order of creation: equal urgencies are served in request order. */
  sequence: number;
}

const DEFAULT_RTT_S = 0.05;
/** Seconds of content requested ahead of the playhead unless configured (docs/player.md → Playout). */
export const DEFAULT_BUFFER_TARGET_S = 2;

export class PlayoutSession {
  private readonly freezes = new FreezeTracker();
  private readonly bufferTarget: BufferTarget;
  private readonly link = new LinkWatch();
  /** Object bytes received so far, over every request (the link watch's running total). */
  private receivedBytes = 0;
  private taskSequence = 0;
  private readonly throughput = new ThroughputEstimator(5);
  private readonly tasks = new Map<number, ObjectTask[]>();
  private readonly lastQuality = new Map<string, number>();
  private readonly decodeCost = new DecodeCostModel();
  private readonly records: QoeSegment[] = [];
  /** Records of shown segments still waiting for their tasks to settle. */
  private readonly recording = new Set<Promise<void>>();
  private loss: LossModel = { rate: 0, meanBurst: 1 };
  private lossWeight = 0;
  private readonly rtt = new RttEstimator(16, DEFAULT_RTT_S * 1000);
  private policy: DeliveryPolicy;
  private origin = 0;
  private playStart = NaN;
  /** Seconds added to every later playout time by freezes and pauses. */
  private shift = 0;
  private pauseGate: { promise: Promise<void>; release: () => void } | null = null;
  private readonly stop = new AbortController();
  private startupS = NaN;
  /**
   * Why the content clock stands still (a pause, a freeze, or both at once) and since when: the
   * time is added to `shift` once when the last reason ends, so an overlap is not counted twice.
   */
  private readonly halts = new Set<'pause' | 'freeze'>();
  private haltedSince = NaN;

  constructor(private readonly cfg: PlayoutConfig) {
    this.policy = cfg.policy;
    const baseS = cfg.bufferTargetS ?? DEFAULT_BUFFER_TARGET_S;
    this.bufferTarget = new BufferTarget({
      baseS, volatileS: volatileTargetS(baseS, cfg.volatileBufferTargetS),
      sceneFloorBps: cfg.scene.objects.reduce((sum, o) => sum + Math.min(...o.representations.map((r) => r.bandwidth)), 0),
    });
  }

  /** Switches the delivery policy (mode) from the next segment requested. */
  setPolicy(policy: DeliveryPolicy): void {
    this.policy = policy;
  }

  pause(): void {
    if (!this.pauseGate) {
      let release!: () => void;
      const promise = new Promise<void>((r) => (release = r));
      this.pauseGate = { promise, release };
      this.halt('pause');
    }
  }

  resume(): void {
    const gate = this.pauseGate;
    if (!gate) return;
    this.pauseGate = null;
    this.unhalt('pause');
    gate.release();
  }

  private halt(reason: 'pause' | 'freeze'): void {
    if (this.halts.size === 0) this.haltedSince = this.cfg.clock.now();
    this.halts.add(reason);
  }

  private unhalt(reason: 'pause' | 'freeze'): void {
    if (!this.halts.has(reason)) return;
    if (this.halts.size === 1) this.shift += this.haltedFor(this.cfg.clock.now());
    this.halts.delete(reason);
    if (this.halts.size === 0) this.haltedSince = NaN;
  }

  /** Seconds the content clock has stood still in the current halt (none before playback began). */
  private haltedFor(now: number): number {
    if (this.halts.size === 0 || !Number.isFinite(this.playStart)) return 0;
    return Math.max(0, now - Math.max(this.haltedSince, this.playStart));
  }

  /** Ends playback at the next opportunity; `run()` then resolves. */
  close(): void {
    this.stop.abort(new Error('playback stopped'));
    for (const list of this.tasks.values()) for (const t of list) t.abort.abort();
  }

  /** The buffer target now: the base, or the volatile target after the link starved (`BufferTarget`). */
  get bufferTargetS(): number {
    return this.bufferTarget.targetS(this.cfg.clock.now());
  }

  /** When run() began, on the session clock (seconds). */
  get originS(): number {
    return this.origin;
  }

  /**
   * Seconds of content ready ahead of the playhead: consecutive coming segments whose objects are
   * all settled (arrived and decoded, or given up), counted from the segment after the one playing.
   */
  bufferedS(): number {
    if (!Number.isFinite(this.playStart)) return 0;
    const d = this.cfg.scene.segmentDuration;
    const playing = Math.floor(this.playedS() / d);
    let ready = 0;
    for (let k = playing + 1; ; k++) {
      const list = this.tasks.get(k);
      if (!list || list.length === 0 || !list.every((t) => t.settled)) break;
      ready++;
    }
    const intoSegment = this.playedS() - playing * d;
    return Math.max(0, ready * d + (d - intoSegment));
  }

  /** Seconds since run() on the session clock (the QoE log's time base). */
  elapsed(): number {
    return this.cfg.clock.now() - this.origin;
  }

  /** Object-segment records so far (the QoE log's `segments`). */
  segmentRecords(): readonly QoeSegment[] {
    return this.records;
  }

  freezeSummary() {
    return this.freezes.summary(this.cfg.clock.now() * 1000);
  }

  get startup(): number {
    return this.startupS;
  }

  /** Seconds of content played so far (excluding freezes and pauses). */
  playedS(): number {
    if (!Number.isFinite(this.playStart)) return 0;
    const now = this.cfg.clock.now();
    return Math.max(0, now - this.playStart - this.shift - this.haltedFor(now));
  }

  /** Current throughput estimate (bit/s) and loss/RTT measurements. */
  network(): { throughputBps: number | null; loss: LossModel; rttS: number } {
    return { throughputBps: this.throughput.estimate(), loss: this.loss, rttS: this.rtt.ms / 1000 };
  }

  private playoutTime(k: number): number {
    return this.playStart + k * this.cfg.scene.segmentDuration + this.shift;
  }

  private get aheadSegments(): number {
    return Math.max(1, Math.ceil(this.bufferTargetS / this.cfg.scene.segmentDuration));
  }

  /** Plays until the duration ends or close() is called. Never rejects for network or decode trouble. */
  async run(): Promise<void> {
    const { clock } = this.cfg;
    this.origin = clock.now();
    const end = this.cfg.durationS === undefined ? Infinity : this.origin + this.cfg.durationS;
    const watch = new AbortController();
    try {
      // Startup: segment 0 at the lowest quality; playback starts once its reliable objects are in.
      void this.watchLink(watch.signal);
      void this.watchSegments(watch.signal);
      this.request(0, this.origin + Math.max(4, 2 * this.bufferTargetS));
      await this.waitForSegment(0, end, false);
      if (this.stop.signal.aborted || clock.now() >= end) return;
      this.playStart = clock.now();
      this.startupS = this.playStart - this.origin;
      this.cfg.onEvent?.({ type: 'started', startupS: this.startupS });
      for (let k = 0; ; k++) {
        if (this.pauseGate) await this.pauseGate.promise;
        for (let ahead = 1; ahead <= this.aheadSegments; ahead++) {
          if (!this.tasks.has(k + ahead)) this.request(k + ahead, this.playoutTime(k + ahead));
        }
        if (!(await this.untilPlayoutTime(k, end))) break;
        await this.waitForSegment(k, end, true);
        if (this.stop.signal.aborted || clock.now() >= end) break;
        this.show(k);
        this.tasks.delete(k);
      }
    } catch (e) {
      if (!this.stop.signal.aborted) this.cfg.onEvent?.({ type: 'error', message: e instanceof Error ? e.message : String(e) });
    } finally {
      watch.abort();
      // A freeze still open when playback ends counts up to now. Segments that never reached
      // their playout time are not outcomes: their requests are cancelled, not recorded.
      this.freezes.end(clock.now() * 1000);
      for (const list of this.tasks.values()) for (const t of list) if (!t.settled) t.abort.abort();
      this.tasks.clear();
      // The last shown segments' records are written when their stopped requests and running
      // decodes settle: wait for them (briefly), so the log is whole when playback has ended.
      if (this.recording.size > 0) await Promise.race([Promise.all(this.recording), clock.sleep(2)]);
    }
  }

  /** Samples the link for the buffer target every quarter second until `signal` (the end of run()). */
  private async watchLink(signal: AbortSignal): Promise<void> {
    const { clock } = this.cfg;
    while (!signal.aborted) {
      // Bytes still expected: a request in flight (decoding is not the link's time).
      const busy = [...this.tasks.values()].some((list) => list.some((t) => this.inFlight(t)));
      const now = clock.now();
      this.link.sample(now, this.receivedBytes, busy);
      this.bufferTarget.observe(now, this.link.busyRateBps());
      try {
        await clock.sleep(0.25, signal);
      } catch {
        return;
      }
    }
  }

  /**
   * Sleeps until segment k's playout time; a pause meanwhile moves that time, so after a resume
   * it is computed again. False when playback ends first.
   */
  private async untilPlayoutTime(k: number, end: number): Promise<boolean> {
    const { clock } = this.cfg;
    for (;;) {
      if (this.pauseGate) await this.pauseGate.promise;
      const at = this.playoutTime(k);
      if (at >= end) return false;
      await clock.sleep(at - clock.now(), this.stop.signal);
      if (!this.pauseGate) return true;
    }
  }

  /** Plans and issues the requests of segment `k`, due at `deadline` (session clock). */
  private request(k: number, deadline: number): void {
    const { scene, viewport, clock } = this.cfg;
    const ranked = rankObjects(scene.objects.map((o) => o.id), viewport, deadline * 1000);
    const objects: PlanObject[] = ranked.map((r, rank) => {
      const object = scene.objects.find((o) => o.id === r.objectId)!;
      return {
        objectId: r.objectId, visibleArea: r.visibleArea, rank,
        bitrates: object.representations.map((rep) => rep.bandwidth),
        previousQuality: this.lastQuality.get(r.objectId) ?? -1,
      };
    });
    const networkPlans = this.policy.plan({
      segment: k, segmentDurationS: scene.segmentDuration, objects,
      throughputBps: this.throughput.estimate(), loss: this.loss, rttS: this.rtt.ms / 1000,
      timeToDeadlineS: deadline - clock.now(), bufferS: this.bufferedS(),
      bufferTargetS: this.bufferTargetS,
    });
    // Urgency bands by delivery and by whether an earlier segment is still arriving (requestUrgency).
    const behind = [...this.tasks.entries()].some(([j, list]) => j < k && list.some((t) => !t.settled));
    for (const p of networkPlans) p.urgency = requestUrgency(p.delivery, p.urgency, behind);
    const decodeCapacityMs = (this.cfg.decoder.parallelism ?? 1) * scene.segmentDuration * 1000 * DECODE_HEADROOM;
    const plans = fitDecodeBudget(networkPlans, scene.objects.map((o) => ({
      objectId: o.id, pointsPerFrame: o.representations.map((r) => r.pointsPerFrame),
    })), this.decodeCost, decodeCapacityMs);
    const list = plans.map((plan) => {
      const object = scene.objects.find((o) => o.id === plan.objectId)!;
      const r = objects.find((o) => o.objectId === plan.objectId)!;
      return this.start(object, k, plan, r.visibleArea, r.rank, deadline);
    });
    this.tasks.set(k, list);
    this.cfg.onPlan?.(list.map((t) => ({
      segment: k, objectId: t.object.id, quality: t.plan.quality, delivery: t.plan.delivery, rank: t.rank, visibleArea: t.visibleArea,
    })));
  }

  /** Whether the task's bytes are still expected from the link (decoding is not the link's time). */
  private inFlight(t: ObjectTask): boolean {
    return !t.settled && !t.abandoned && t.completedAt === undefined && t.plan.delivery !== 'skip';
  }

  private transportFor(plan: ObjectPlan): { transport: ObjectTransport; plan: ObjectPlan } {
    const { webtransport, http2 } = this.cfg.transports;
    if (plan.delivery === 'skip') return { transport: webtransport ?? http2, plan };
    if (this.policy.mode === 'h2' || !webtransport) {
      return { transport: http2, plan: { ...plan, delivery: 'reliable', fec: { kind: 'none' } } };
    }
    return { transport: webtransport, plan };
  }

  private start(object: SceneObject, index: number, requested: ObjectPlan, visibleArea: number, rank: number, deadline: number): ObjectTask {
    const { clock } = this.cfg;
    const { transport, plan } = this.transportFor(requested);
    let quality = Math.min(plan.quality, object.representations.length - 1);
    const pathOf = (q: number) => this.cfg.contentBase + segmentPath(object, object.representations[q].id, index);
    let path = pathOf(quality);
    const task: ObjectTask = {
      object, index, plan: { ...plan, quality }, visibleArea, rank, lostWithSession: false,
      requestedAt: clock.now(), deadline, bufferTargetS: this.bufferTargetS, abort: new AbortController(),
      decodeWithdraw: new AbortController(), decodeLate: false,
      receivedBytes: 0, objectBytes: 0, abandoned: false, heldPlayback: false, shown: false, recorded: false,
      settled: false, done: Promise.resolve(), sequence: this.taskSequence++,
    };
    if (plan.delivery === 'skip') {
      task.settled = true;
      return task;
    }
    const delivery = plan.delivery;
    const timeLeftMs = Math.max(1, (deadline - clock.now()) * 1000);
    task.done = (async () => {
      try {
        for (;;) {
          task.result = await transport.fetchObject({
            path, delivery, urgency: plan.urgency, fec: plan.fec, signal: task.abort.signal,
            // Reliable objects may stall playback, so the origin keeps sending them past the deadline.
            deadlineMs: delivery === 'datagram' ? Math.round(timeLeftMs) : undefined,
            onProgress: (received, total) => {
              this.receivedBytes += Math.max(0, received - task.receivedBytes);
              task.receivedBytes = received;
              task.objectBytes = total;
            },
          });
          // A reliable object lost with the session is asked for again once the session is back,
          // so playback waits for it (an outage freeze) instead of skipping it — at the lowest
          // quality, which arrives soonest: the session went down with the link in trouble (or was
          // replaced for stalling) or the origin gone, and its deadline may be near or past.
          if (task.result.bytes || delivery !== 'reliable' || task.result.status !== 0) break;
          if (!(await this.sessionRestored(transport, task.abort.signal))) break;
          task.lostWithSession = true;
          quality = 0;
          path = pathOf(0);
          task.plan = { ...task.plan, quality: 0 };
          task.receivedBytes = 0;
          task.objectBytes = 0;
        }
        task.completedAt = clock.now();
        this.learn(task.result);
        if (task.result.bytes && !task.abandoned) {
          const signal = task.decodeWithdraw.signal;
          try {
            if (signal.aborted) throw signal.reason;
            task.decoded = await this.cfg.decoder.decode({ objectId: object.id, segment: index, quality, bytes: task.result.bytes, signal });
            this.decodeCost.observe(object.representations[quality].pointsPerFrame, task.decoded.decodeMs);
          } catch (e) {
            if (signal.aborted) task.decodeLate = true;
            else task.decodeError = e instanceof Error ? e.message : String(e);
          }
        }
      } catch (e) {
        task.result = { status: 0, bytes: null, stats: { delivery, transport: transport.kind, objectBytes: 0, receivedBytes: 0, requestedAt: 0, recovered: false }, error: e instanceof Error ? e.message : String(e) };
      } finally {
        task.settled = true;
      }
    })();
    return task;
  }

  /** Cancels a reliable request and asks for its object again at the lowest quality, most urgently. */
  private abandon(task: ObjectTask): void {
    task.abandoned = true;
    task.abort.abort();
    this.cfg.onEvent?.({ type: 'abandoned', objectId: task.object.id, index: task.index, fromQuality: task.plan.quality });
    const replacement = this.start(task.object, task.index, { ...task.plan, quality: 0, urgency: 0 }, task.visibleArea, task.rank, task.deadline);
    const list = this.tasks.get(task.index);
    if (list) list.push(replacement);
  }

  /**
   * The abandonment rule (abandon.ts), every `ABANDON_CHECK_S` while playing: not while
   * paused (nothing is due) or while the session is down (the requests are asked again anyway).
   * The rate is the link's over its last window while busy, else the ABR's estimate.
   */
  private async watchSegments(signal: AbortSignal): Promise<void> {
    const { clock, scene } = this.cfg;
    while (!signal.aborted) {
      try {
        await clock.sleep(ABANDON_CHECK_S, signal);
      } catch {
        return;
      }
      if (!Number.isFinite(this.playStart) || this.pauseGate || this.cfg.transports.webtransport?.state === 'reconnecting') continue;
      const rateBps = this.link.busyRateBps() ?? this.throughput.estimate();
      if (rateBps === null) continue;
      const now = clock.now();
      const pending = [...this.tasks.values()].flat()
        .filter((t) => t.plan.delivery === 'reliable' && this.inFlight(t))
        .sort((a, b) => (a.plan.urgency - b.plan.urgency) || (a.sequence - b.sequence));
      const bytesOf = (o: SceneObject, q: number) => (o.representations[q].avgBandwidth * scene.segmentDuration) / 8;
      const decodeS = (o: SceneObject, q: number) => (this.decodeCost.estimateMs(o.representations[q].pointsPerFrame) ?? 0) / 1000;
      const inFlight: InFlightObject[] = pending.map((t, key) => ({
        key,
        // Playout time now: later by the freeze under way, if any.
        deadlineS: this.playoutTime(t.index) + this.haltedFor(now),
        quality: t.plan.quality,
        remainingBytes: t.objectBytes > 0 ? t.objectBytes - t.receivedBytes : bytesOf(t.object, t.plan.quality),
        lowestBytes: bytesOf(t.object, 0),
        decodeS: decodeS(t.object, t.plan.quality),
        lowestDecodeS: decodeS(t.object, 0),
        visibleArea: t.visibleArea,
      }));
      for (const key of objectsToAbandon(inFlight, now, rateBps, scene.segmentDuration)) this.abandon(pending[key]);
    }
  }

  /**
   * After a request failed without a status: resolves true once `transport` is connected again
   * if the failure was the session being lost (it is reconnecting), false if it was not (still
   * connected, failed for good, or the request was cancelled).
   */
  private async sessionRestored(transport: ObjectTransport, signal: AbortSignal): Promise<boolean> {
    const { clock } = this.cfg;
    // The request's stream may fail a moment before the session reports its loss.
    try {
      await clock.sleep(0.1, signal);
    } catch {
      return false;
    }
    const state = (): TransportState => transport.state; // changes while we wait
    if (state() !== 'reconnecting' && state() !== 'connecting') return false;
    while (!signal.aborted && !this.stop.signal.aborted) {
      if (state() === 'connected') return true;
      if (state() === 'failed' || state() === 'closed') return false;
      try {
        await clock.sleep(0.05, signal);
      } catch {
        return false;
      }
    }
    return false;
  }

  /** Updates throughput, loss and RTT measurements from a finished delivery. */
  private learn(result: ObjectResult): void {
    const s = result.stats;
    if (s.firstByteAt !== undefined && s.delivery === 'reliable') {
      const ttfb = (s.firstByteAt - s.requestedAt) / 1000;
      if (ttfb > 0) this.rtt.add(ttfb * 1000);
    }
    // Loss as the transport observed it: sent − received would count the symbols still in flight
    // when the object decoded (planned repair, unneeded) as lost, which raised the next plan's
    // repair, which raised the count — up to the 2·K cap.
    if (s.delivery === 'datagram' && s.symbolsObserved && s.symbolsLost !== undefined) {
      const sent = s.symbolsObserved, lost = s.symbolsLost;
      const keep = Math.pow(0.5, sent / 5000);
      const total = this.lossWeight * keep + sent;
      this.loss = {
        rate: (this.loss.rate * this.lossWeight * keep + lost) / total,
        meanBurst: s.lossBursts && lost > 0 ? 0.7 * this.loss.meanBurst + 0.3 * Math.max(1, lost / s.lossBursts) : this.loss.meanBurst,
      };
      this.lossWeight = total;
    }
  }

  /**
   * Waits until segment k can play: every reliable object settled (freezing while playback waits,
   * if `playing`), datagram objects until the playout time at most.
   */
  private async waitForSegment(k: number, end: number, playing: boolean): Promise<void> {
    const { clock } = this.cfg;
    const pending = () => (this.tasks.get(k) ?? []).filter((t) => t.plan.delivery === 'reliable' && !t.abandoned && !t.settled);
    if (pending().length === 0) {
      if (!playing) await this.settleUntil(k, end);
      return;
    }
    const began = clock.now();
    // An outage freeze: the session is down, or what playback waits for was lost with it (the
    // session may be back before the freeze even starts, while the requests are asked again).
    const outage = () => this.cfg.transports.webtransport?.state === 'reconnecting' || pending().some((t) => t.lostWithSession);
    if (playing) {
      for (const t of pending()) t.heldPlayback = true;
      const decoding = pending().every((t) => t.result?.bytes);
      const cause: FreezeCause = outage() ? 'outage' : decoding ? 'decode' : 'underrun';
      this.freezes.begin(cause, began * 1000);
      this.halt('freeze');
      this.cfg.onEvent?.({ type: 'freeze-start', atS: began - this.origin, cause });
    }
    const giveUp = Math.min(end, began + (this.cfg.maxStallS ?? 10));
    while (pending().length > 0 && clock.now() < giveUp && !this.stop.signal.aborted) {
      if (playing && outage()) this.freezes.setCause('outage');
      const waits = pending().map((t) => t.done);
      await Promise.race([Promise.all(waits), clock.sleep(Math.min(0.05, giveUp - clock.now()), this.stop.signal)]);
    }
    if (!playing) await this.settleUntil(k, end);
    if (playing) {
      const now = clock.now();
      this.freezes.end(now * 1000);
      this.unhalt('freeze');
      this.cfg.onEvent?.({ type: 'freeze-end', atS: now - this.origin, durationS: now - began });
    }
  }

  /** Startup only: also give datagram objects of the first segment until their deadline. */
  private async settleUntil(k: number, end: number): Promise<void> {
    const { clock } = this.cfg;
    const list = this.tasks.get(k) ?? [];
    const deadline = Math.min(end, ...list.map((t) => t.deadline));
    while (list.some((t) => !t.settled && !t.abandoned) && clock.now() < deadline && !this.stop.signal.aborted) {
      await Promise.race([Promise.all(list.map((t) => t.done)), clock.sleep(Math.min(0.05, deadline - clock.now()), this.stop.signal)]);
    }
  }

  /** Segment k starts playing: hand the renderer what is ready, record outcomes. */
  private show(k: number): void {
    const list = this.tasks.get(k) ?? [];
    const shown = new Map<string, ShownObject | null>();
    const qualities: Record<string, number> = {};
    for (const object of this.cfg.scene.objects) {
      const ready = list.filter((t) => t.object.id === object.id && !t.abandoned && t.settled && t.decoded);
      const best = ready.sort((a, b) => b.plan.quality - a.plan.quality)[0];
      shown.set(object.id, best ? { quality: best.plan.quality, decoded: best.decoded! } : null);
      if (best) {
        this.lastQuality.set(object.id, best.plan.quality);
        qualities[object.id] = best.plan.quality;
      }
    }
    for (const t of list) t.shown = !!t.decoded && shown.get(t.object.id)?.decoded === t.decoded;
    this.throughput.addSegment(list.filter((t) => t.result?.stats.lastByteAt !== undefined).map((t) => ({
      receivedBytes: t.result!.stats.receivedBytes, startMs: t.result!.stats.requestedAt, endMs: t.result!.stats.lastByteAt!,
    })));
    this.cfg.onSegment?.(k, shown);
    this.cfg.onEvent?.({ type: 'segment', index: k, qualities });
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
      const written = t.done.then(() => this.record(t));
      this.recording.add(written);
      void written.then(() => this.recording.delete(written));
    }
  }

  private record(t: ObjectTask): void {
    if (t.recorded) return;
    t.recorded = true;
    const s = t.result?.stats;
    const rel = (ms: number | undefined) => (ms === undefined ? undefined : ms / 1000 - this.origin);
    this.records.push({
      object: t.object.id, index: t.index, quality: t.plan.quality, qualityCount: t.object.representations.length,
      bitrateBps: t.object.representations[t.plan.quality].bandwidth, delivery: t.plan.delivery,
      fec: t.plan.fec.kind, transport: s?.transport ?? 'webtransport', visibleArea: t.visibleArea, rank: t.rank,
      requestedAtS: t.requestedAt - this.origin, deadlineS: t.deadline - this.origin, bufferTargetS: t.bufferTargetS,
      firstByteAtS: rel(s?.firstByteAt), completedAtS: t.result?.bytes ? t.completedAt! - this.origin : undefined,
      objectBytes: s?.objectBytes ?? 0, receivedBytes: s?.receivedBytes ?? 0,
      symbolSize: s?.symbolSize, sourceSymbols: s?.sourceSymbols, symbolsSent: s?.symbolsSent,
      symbolsReceived: s?.symbolsReceived, symbolsOnStream: s?.symbolsOnStream, symbolsObserved: s?.symbolsObserved, symbolsLost: s?.symbolsLost,
      repairRequests: s?.repairRequests, recovered: !!t.result?.bytes, abandoned: t.abandoned, decoded: !!t.decoded, decodeMs: t.decoded?.decodeMs,
      decodeError: t.decodeError, decodeLate: t.decodeLate || undefined,
      onTime: t.shown && !t.heldPlayback,
      shownLate: (t.shown && t.heldPlayback) || undefined,
    });
  }
}
