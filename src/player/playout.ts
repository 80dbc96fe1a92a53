/**
 * The playout loop (docs/player.md → "Playout"): it keeps the content clock and nothing else.
 * For every 1-s segment it asks the planner for the segment's requests (plan.ts), starts a task
 * per object (objectTask.ts), waits for the segment's reliable objects — freezing while they are
 * late — and shows it at its playout time, re-showing the last frame of a datagram object that
 * could not be recovered in time. Every 0.1 s the in-flight quality rules (quality.ts) may give
 * a late reliable request up for the lowest quality. Link estimates: src/link/estimates.ts.
 *
 * Segment k plays at P(k) = start + k·D + (time spent frozen or paused before it). Its requests
 * are issued when the playhead is `ceil(bufferTarget / D)` segments before it, with the deadline
 * P(k); the first segment is requested at the lowest quality and playback starts when it is ready.
 * The buffer target grows on a volatile link (`BufferTarget`).
 */
import type { ObjectTransport } from '../transport/types';
import type { QoeSegment } from '../model/qoe';
import type { Clock } from './clock';
import { BufferTarget, volatileTargetS } from './bufferTarget';
import { ContentClock } from './contentClock';
import { DecodeCostModel } from './decodeBudget';
import type { DecodedSegment, SegmentDecoder } from '../model/decoder';
import type { LinkSnapshot } from '../model/link';
import type { PlanDelivery } from '../model/modes';
import type { ViewportModel } from '../model/pose';
import type { SceneModel } from '../model/scene';
import { type FreezeCause, FreezeTracker } from './freezes';
import { LinkEstimates } from '../link/estimates';
import { inFlight, type ObjectTask, owedObjects, segmentRecord, startObjectTask, type TaskEnv } from './objectTask';
import { planSegment, type PlannedRequest, transportKind } from './plan';
import type { DeliveryPolicy } from './policy';
import { requestsToAbandon } from './quality';

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

/** Seconds of content requested ahead of the playhead unless configured (docs/player.md → Playout). */
export const DEFAULT_BUFFER_TARGET_S = 2;

export class PlayoutSession {
  private readonly freezes = new FreezeTracker();
  private readonly bufferTarget: BufferTarget;
  private readonly link = new LinkEstimates();
  private taskSequence = 0;
  private readonly tasks = new Map<number, ObjectTask[]>();
  private readonly lastQuality = new Map<string, number>();
  private readonly decodeCost = new DecodeCostModel();
  private readonly records: QoeSegment[] = [];
  /** Records of shown segments still waiting for their tasks to settle. */
  private readonly recording = new Set<Promise<void>>();
  private policy: DeliveryPolicy;
  private origin = 0;
  private readonly content: ContentClock;
  private readonly stop = new AbortController();
  private startupS = NaN;
  private readonly taskEnv: TaskEnv;

  constructor(private readonly cfg: PlayoutConfig) {
    this.policy = cfg.policy;
    this.content = new ContentClock(cfg.clock, cfg.scene.segmentDuration);
    this.taskEnv = {
      clock: cfg.clock, decoder: cfg.decoder, decodeCost: this.decodeCost, link: this.link,
      contentBase: cfg.contentBase, stopped: this.stop.signal,
    };
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
    this.content.pause();
  }

  resume(): void {
    this.content.resume();
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
    if (!this.content.started) return 0;
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
    return this.content.playedS();
  }

  /** Current throughput estimate (bit/s) and loss/RTT measurements. */
  network(): LinkSnapshot {
    return this.link.snapshot(this.carrier());
  }

  /** The transport the current mode's requests travel on (plan.ts → `transportKind`). */
  private carrier(): ObjectTransport {
    const { webtransport, http2 } = this.cfg.transports;
    return transportKind(this.policy.mode, webtransport !== undefined) === 'webtransport' ? webtransport! : http2;
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
      this.content.start();
      this.startupS = this.content.startedAtS - this.origin;
      this.cfg.onEvent?.({ type: 'started', startupS: this.startupS });
      for (let k = 0; ; k++) {
        await this.content.whilePaused();
        for (let ahead = 1; ahead <= this.aheadSegments; ahead++) {
          if (!this.tasks.has(k + ahead)) this.request(k + ahead, this.content.playoutTime(k + ahead));
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
      const busy = [...this.tasks.values()].some((list) => list.some((t) => inFlight(t)));
      const now = clock.now();
      this.link.sample(now, busy);
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
      await this.content.whilePaused();
      const at = this.content.playoutTime(k);
      if (at >= end) return false;
      await clock.sleep(at - clock.now(), this.stop.signal);
      if (!this.content.paused) return true;
    }
  }

  /** Plans and issues the requests of segment `k`, due at `deadline` (session clock). */
  private request(k: number, deadline: number): void {
    const { scene, viewport, clock, decoder, transports } = this.cfg;
    const requests = planSegment({
      scene, viewport, policy: this.policy, segment: k, deadlineS: deadline, nowS: clock.now(),
      link: this.link.snapshot(this.carrier()), bufferS: this.bufferedS(), bufferTargetS: this.bufferTargetS,
      previousQuality: this.lastQuality,
      behind: [...this.tasks.entries()].some(([j, list]) => j < k && list.some((t) => !t.settled)),
      decodeParallelism: decoder.parallelism ?? 1, decodeCost: this.decodeCost,
      hasWebTransport: transports.webtransport !== undefined,
    });
    const list = requests.map((r) => this.start(r, k, deadline));
    this.tasks.set(k, list);
    this.cfg.onPlan?.(list.map((t) => ({
      segment: k, objectId: t.object.id, quality: t.plan.quality, delivery: t.plan.delivery, rank: t.rank, visibleArea: t.visibleArea,
    })));
  }

  private start(request: PlannedRequest, k: number, deadline: number): ObjectTask {
    const { webtransport, http2 } = this.cfg.transports;
    const transport: ObjectTransport = request.transport === 'webtransport' && webtransport ? webtransport : http2;
    return startObjectTask(this.taskEnv, request, transport, k, deadline, this.bufferTargetS, this.taskSequence++);
  }

  /** Cancels a reliable request and asks for its object again at the lowest quality, most urgently. */
  private abandon(task: ObjectTask): void {
    task.abandoned = true;
    task.abort.abort();
    this.cfg.onEvent?.({ type: 'abandoned', objectId: task.object.id, index: task.index, fromQuality: task.plan.quality });
    const replacement = startObjectTask(this.taskEnv, {
      object: task.object, plan: { ...task.plan, quality: 0, urgency: 0 }, transport: task.transport.kind,
      visibleArea: task.visibleArea, rank: task.rank,
    }, task.transport, task.index, task.deadline, this.bufferTargetS, this.taskSequence++);
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
      if (!this.content.started || this.content.paused || this.cfg.transports.webtransport?.state === 'reconnecting') continue;
      const rateBps = this.link.busyRateBps() ?? this.link.throughputBps();
      if (rateBps === null) continue;
      const now = clock.now();
      const pending = [...this.tasks.values()].flat()
        .filter((t) => t.plan.delivery === 'reliable' && inFlight(t))
        .sort((a, b) => (a.plan.urgency - b.plan.urgency) || (a.sequence - b.sequence));
      // Playout time now: later by the freeze under way, if any.
      const owed = owedObjects(pending, scene, this.decodeCost, (t) => this.content.playoutTime(t.index) + this.content.haltedFor(now));
      for (const key of requestsToAbandon(owed, { nowS: now, rateBps, horizonS: scene.segmentDuration })) this.abandon(pending[key]);
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
      this.content.halt('freeze');
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
      this.content.unhalt('freeze');
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
    this.link.addSegment(list.filter((t) => t.result?.stats.lastByteAt !== undefined).map((t) => ({
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
    this.records.push(segmentRecord(t, this.origin));
  }
}
