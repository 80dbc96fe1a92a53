/**
 * The playout loop (docs/player.md → "Playout"): it keeps the content clock and nothing else.
 * For every 1-s segment it asks the planner for the segment's requests (plan.ts), starts a task
 * per object (segmentRequests.ts, objectTask.ts), lets the segment gate wait for its reliable
 * objects — freezing while they are late (segmentGate.ts) — and shows it at its playout time,
 * re-showing the last frame of a datagram object that could not be recovered in time. While
 * requests are in flight the link watch and the abandonment rule run (inFlightWatch.ts). Link
 * estimates: src/link/estimates.ts. Its configuration: playoutConfig.ts; planning and issuing a
 * segment's requests, on which transport and when: segmentIssuer.ts; showing a segment and
 * recording its outcomes: segmentShow.ts.
 *
 * Segment k plays at P(k) = start + k·D + (time spent frozen or paused before it). Its requests
 * are issued when the playhead is `ceil(bufferTarget / D)` segments before it, with the deadline
 * P(k); the first segment is requested at the lowest quality and playback starts when it is ready.
 * The buffer target grows on a volatile link (`BufferTarget`).
 *
 * A seek (`seek()`) moves the played position: what the new position will not play is cancelled
 * (requests and decodes, `SegmentRequests.keepOnly`), the segment holding the target is fetched
 * like the first one, and once its objects are in, the content clock restarts at the target and
 * the segment is shown from the target's frame on. At the end of a pass (pass.ts) playback goes on into the
 * next pass when looping, or stands at the end until a seek.
 */
import type { QoeSegment, QoeStarved, QoeTotals } from '../model/qoe';
import { raceAbort } from './clock';
import { BufferTarget, volatileTargetS } from './bufferTarget';
import { ContentClock } from './contentClock';
import { DecodeCostModel } from './decodeBudget';
import type { LinkSnapshot } from '../model/link';
import { FreezeTracker } from './freezes';
import { LinkEstimates } from '../link/estimates';
import { SegmentRecords } from './objectTask';
import { PassTimeline, passSegments } from './pass';
import { lateUpgradesApply } from './plan';
import type { DeliveryPolicy } from './policy';
import { DEFAULT_BUFFER_TARGET_S, type PlayoutConfig } from './playoutConfig';
import { replacedWhenGivenUp } from './abandon';
import { watchAbandonment, watchLink, type WatchEnv } from './inFlightWatch';
import { type UpgradeWatchEnv, watchUpgrades } from './upgradeWatch';
import { type EdgeEnv, LiveEdge, waitAtLiveEdge } from './liveEdge';
import { type GateEnv, untilSegmentPlays } from './segmentGate';
import { SegmentRequests } from './segmentRequests';
import { SegmentIssuer } from './segmentIssuer';
import { sampleSegment, showSegment, type ShowEnv } from './segmentShow';
import { type PipelineEnv, watchPipeline } from './pipelineAhead';

// The configuration and its default buffer target live in playoutConfig.ts; importers of the
// session find them here too.
export { DEFAULT_BUFFER_TARGET_S, type PlayoutConfig } from './playoutConfig';

/** The reason a wait is interrupted by a seek (close() interrupts with its own). */
const SEEK = new Error('seek');

export class PlayoutSession {
  private readonly freezes = new FreezeTracker();
  private readonly bufferTarget: BufferTarget;
  private readonly link = new LinkEstimates();
  private readonly tasks: SegmentRequests;
  private readonly lastQuality = new Map<string, number>();
  private readonly decodeCost = new DecodeCostModel();
  private readonly records: SegmentRecords;
  /** Records of shown segments still waiting for their tasks to settle. */
  private readonly recording = new Set<Promise<void>>();
  /** Plans and issues segments' requests, with the delivery policy in force (segmentIssuer.ts). */
  private readonly issuer: SegmentIssuer;
  private origin = 0;
  private readonly content: ContentClock;
  private readonly stop = new AbortController();
  /** Aborted by a seek (and by close()): every wait of the loop ends, and playback goes on from the seek's target. */
  private interrupt = new AbortController();
  /** The pass being played, looping, and a seek under way (pass.ts). */
  private readonly timeline: PassTimeline;
  private readonly gate: GateEnv;
  private readonly watchEnv: WatchEnv;
  private readonly upgradeEnv: UpgradeWatchEnv;
  /** Where a growing scene's published seconds end (liveEdge.ts). */
  private readonly edge = new LiveEdge();
  private readonly edgeEnv: EdgeEnv;
  private readonly showEnv: ShowEnv;
  private readonly pipelineEnv: PipelineEnv;
  private startupS = NaN;

  constructor(private readonly cfg: PlayoutConfig) {
    this.records = new SegmentRecords(cfg.qoeSegmentsKept, cfg.bufferTargetS ?? DEFAULT_BUFFER_TARGET_S);
    this.timeline = new PassTimeline(passSegments(cfg.scene), cfg.scene.segmentDuration, cfg.loop ?? true);
    this.timeline.grow(passSegments(cfg.scene), cfg.scene.updatePeriodS !== undefined);
    this.content = new ContentClock(cfg.clock, cfg.scene.segmentDuration);
    this.tasks = new SegmentRequests({
      clock: cfg.clock, decoder: cfg.decoder, decodeCost: this.decodeCost, link: this.link,
      contentBase: cfg.contentBase, segmentDurationS: cfg.scene.segmentDuration, stopped: this.stop.signal, fallback: cfg.transports.http2,
      carrier: () => this.issuer.carrier(),
      // A segment whose transfers are over gives the throughput estimate its sample now, not at
      // its playout — once playback has begun: the startup's segments go at the lowest rungs, so
      // that the buffer fills fast (segmentShow.ts → `sampleSegment`).
      onTransferEnd: (task) => {
        if (this.content.started && this.tasks.transfersOver(task.index)) sampleSegment(this.showEnv, task.index);
      },
    }, cfg.transports);
    this.gate = {
      clock: cfg.clock, tasks: this.tasks, freezes: this.freezes, content: this.content, stopped: this.stop.signal,
      maxStallS: cfg.maxStallS ?? 10, sessionDown: () => cfg.transports.webtransport?.state === 'reconnecting',
      originS: () => this.origin, onEvent: cfg.onEvent,
    };
    this.issuer = new SegmentIssuer({
      cfg, tasks: this.tasks, link: this.link, content: this.content, timeline: this.timeline, decodeCost: this.decodeCost,
      lastQuality: this.lastQuality, stopped: this.stop.signal, sessionDown: this.gate.sessionDown,
      bufferedS: () => this.bufferedS(), bufferTargetS: () => this.bufferTargetS,
      linkVolatile: () => this.bufferTarget.volatileAt(this.cfg.clock.now()),
    });
    this.watchEnv = {
      clock: cfg.clock, scene: cfg.scene, tasks: this.tasks, link: this.link, content: this.content,
      decodeCost: this.decodeCost, sessionDown: this.gate.sessionDown,
      // Only once playing: before the first frame the requests race the connection's own start
      // (a loss before any round trip was measured waits out TCP's 1-s initial retransmission
      // timeout), which says nothing about where the viewer is (bufferTarget.ts).
      observeLink: (now, window) => {
        if (this.content.started) this.bufferTarget.observe(now, window);
      },
      abandon: (task) => {
        const replaced = replacedWhenGivenUp(task);
        cfg.onEvent?.({ type: 'abandoned', objectId: task.object.id, index: task.index, fromQuality: task.plan.quality, replaced });
        if (replaced) this.tasks.replace(task, this.bufferTargetS);
        else this.tasks.drop(task);
      },
    };
    this.upgradeEnv = {
      clock: cfg.clock, scene: cfg.scene, viewport: cfg.viewport, tasks: this.tasks, link: this.link, content: this.content,
      decodeCost: this.decodeCost, sessionDown: this.gate.sessionDown,
      active: () => !!cfg.lateUpgrades && lateUpgradesApply(this.issuer.policy.mode, this.issuer.webTransportUsable()),
      planContext: (k, deadlineS) => this.issuer.planContext(k, deadlineS),
      upgrade: (k, requests) => this.tasks.addUpgrades(k, requests, this.bufferTargetS),
    };
    this.edgeEnv = {
      clock: cfg.clock, content: this.content, timeline: this.timeline, gate: this.gate, edge: this.edge,
      originS: () => this.origin, onEvent: cfg.onEvent,
      requested: (k) => this.tasks.has(k), request: (k, deadline) => this.issuer.request(k, deadline),
      standingDeadlineS: () => this.standingDeadlineS(),
    };
    this.showEnv = {
      cfg, tasks: this.tasks, link: this.link, lastQuality: this.lastQuality, records: this.records, recording: this.recording,
      originS: () => this.origin, carrier: () => this.issuer.carrier(),
    };
    // Bit/s of the whole scene at its lowest rungs.
    const sceneFloorBps = cfg.scene.objects.reduce((sum, o) => sum + Math.min(...o.representations.map((r) => r.bandwidth)), 0);
    this.pipelineEnv = {
      clock: cfg.clock, nextSegment: () => this.issuer.pipelinedSegment(), request: (j) => this.issuer.request(j, this.content.playoutTime(j)),
      state: () => ({
        owedBytes: this.tasks.owedBytes(), rateBps: this.link.throughputBps(), rttS: this.network().rttS,
        nextBytes: (sceneFloorBps * cfg.scene.segmentDuration) / 8,
      }),
    };
    const baseS = cfg.bufferTargetS ?? DEFAULT_BUFFER_TARGET_S;
    this.bufferTarget = new BufferTarget({
      baseS, volatileS: volatileTargetS(baseS, cfg.volatileBufferTargetS),
      sceneFloorBps,
    });
  }

  /**
   * The scene model (shared with the player, which extended it in place from a newer manifest:
   * sceneGrowth.ts) names more seconds or qualities, or is final now: the pass takes its new
   * length, planning its new rungs from the next segment, and playback waiting at the live edge
   * goes on.
   */
  sceneGrew(): void {
    this.timeline.grow(passSegments(this.cfg.scene), this.cfg.scene.updatePeriodS !== undefined);
    this.edge.moved();
  }

  /** Playback stands at the end of what a growing scene has published, waiting for more. */
  get waitingAtLiveEdge(): boolean {
    return this.edge.waiting;
  }

  /** Switches the delivery policy (mode) from the next segment requested. */
  setPolicy(policy: DeliveryPolicy): void {
    this.issuer.policy = policy;
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
    this.interrupt.abort(this.stop.signal.reason);
    this.tasks.abortAll();
  }

  /**
   * Seeks to `mediaS` seconds into the pass being played (clamped to it, pass.ts → `seekLanding`).
   * What the new position will not play is cancelled at once; the loop then fetches the target's
   * segment, restarts the content clock there and reports `seeked` when it is shown. A seek
   * before playback began sets where it begins. A later seek supersedes one still under way.
   */
  seek(mediaS: number): void {
    if (this.stop.signal.aborted) return;
    const landing = this.timeline.seek(mediaS, this.playedS());
    this.tasks.keepOnly(landing.segment, this.issuer.aheadSegments);
    if (this.content.started) this.content.seek(landing.timelineS);
    const interrupted = this.interrupt;
    this.interrupt = new AbortController();
    interrupted.abort(SEEK);
  }

  /** Whether a seek is under way (its target's segment not shown yet). */
  get seeking(): boolean {
    return this.timeline.seekTarget !== null;
  }

  /** Looping at the end of a pass on or off, from now on. */
  setLoop(loop: boolean): void {
    this.timeline.setLoop(loop, this.playedS());
  }

  /** Seconds into the pass being played (pass.ts): what a page shows as the current time. */
  mediaPositionS(): number {
    return this.timeline.mediaPositionS(this.playedS());
  }

  /** Length of a pass in seconds (a whole number of segments). */
  get passS(): number {
    return this.timeline.passS;
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
    const ready = this.tasks.readyFrom(playing + 1);
    const intoSegment = this.playedS() - playing * d;
    return Math.max(0, ready * d + (d - intoSegment));
  }

  /** Seconds since run() on the session clock (the QoE log's time base). */
  elapsed(): number {
    return this.cfg.clock.now() - this.origin;
  }

  /** Object-segment records so far, the most recent ones (the QoE log's `segments`). */
  segmentRecords(): readonly QoeSegment[] {
    return this.records.list;
  }

  /** The starved windows that began a run of them, on the records' time base (the QoE log's `starved`). */
  starvedWindows(): QoeStarved[] {
    return this.bufferTarget.starved.map((w) => ({ ...w, atS: w.atS - this.origin }));
  }

  /** Older records dropped to keep memory bounded (the QoE log's `segmentsDropped`). */
  segmentRecordsDropped(): number {
    return this.records.dropped;
  }

  /** Running totals over every record written, dropped ones included (the QoE log's `totals`). */
  segmentTotals(): Readonly<QoeTotals> {
    return this.records.totals;
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
    return this.link.snapshot(this.issuer.carrier());
  }

  /** Plays until the duration ends or close() is called. Never rejects for network or decode trouble. */
  async run(): Promise<void> {
    const { clock } = this.cfg;
    this.origin = clock.now();
    const end = this.cfg.durationS === undefined ? Infinity : this.origin + this.cfg.durationS;
    const watch = new AbortController();
    try {
      void watchLink(this.watchEnv, watch.signal);
      void watchAbandonment(this.watchEnv, watch.signal);
      if (this.cfg.lateUpgrades) void watchUpgrades(this.upgradeEnv, watch.signal);
      if (this.cfg.pipelineAhead) void watchPipeline(this.pipelineEnv, watch.signal);
      for (;;) {
        const signal = this.interrupt.signal;
        try {
          if (!(await this.playFrom(end, signal))) break;
          // The end of a pass without looping: the last frame stays, the clock stands, until a seek.
          this.content.halt('end');
          this.cfg.onEvent?.({ type: 'ended', atS: clock.now() - this.origin });
          await raceAbort(new Promise<never>(() => {}), signal);
        } catch (e) {
          if (e !== SEEK || this.stop.signal.aborted) throw e;
        }
      }
    } catch (e) {
      if (!this.stop.signal.aborted) this.cfg.onEvent?.({ type: 'error', message: e instanceof Error ? e.message : String(e) });
    } finally {
      watch.abort();
      // A freeze still open when playback ends counts up to now. Segments that never reached
      // their playout time are not outcomes: their requests are cancelled, not recorded.
      this.freezes.end(clock.now() * 1000);
      this.tasks.abortAll(true);
      this.tasks.clear();
      // The last shown segments' records are written when their stopped requests and running
      // decodes settle: wait for them (briefly), so the log is whole when playback has ended.
      if (this.recording.size > 0) await Promise.race([Promise.all(this.recording), clock.sleep(2)]);
    }
  }

  /**
   * Plays from the start, or from where the latest seek lands: its first segment is fetched and
   * settled like startup's (lowest quality at the start, every object in or its deadline passed),
   * then the content clock runs from the position and segments play one after another. Resolves
   * true at the end of a pass when not looping, false when playback stops; a seek interrupts it
   * (rejects with `SEEK`).
   */
  private async playFrom(end: number, signal: AbortSignal): Promise<boolean> {
    const { clock } = this.cfg;
    const seek = this.timeline.seekTarget;
    const first = seek?.segment ?? 0;
    const { issuer } = this;
    issuer.horizonFrom = null;
    const fresh = !this.content.started;
    if (!this.tasks.has(first)) issuer.request(first, (fresh ? this.origin : clock.now()) + Math.max(4, 2 * this.bufferTargetS));
    await untilSegmentPlays(this.gate, first, end, false, signal);
    if (this.stop.signal.aborted || clock.now() >= end) return false;
    if (fresh) {
      this.content.start(seek?.timelineS ?? 0);
      this.startupS = this.content.startedAtS - this.origin;
      this.cfg.onEvent?.({ type: 'started', startupS: this.startupS });
    } else {
      this.content.unhalt('seek');
    }
    const { timeline } = this;
    for (let k = first; ; k++) {
      // The end of what a growing scene has published: wait there for more (liveEdge.ts).
      if (k > first && timeline.grows && k >= timeline.segments) {
        if (!(await this.untilPlayoutTime(k, end, signal))) return false;
        await waitAtLiveEdge(this.edgeEnv, k, end, signal);
        if (this.stop.signal.aborted || clock.now() >= end) return false;
      }
      if (k > first && !timeline.loop && timeline.startsPass(k)) return this.untilPlayoutTime(k, end, signal);
      // The target of a seek is shown at once, paused or not: it is what the seek waits for.
      const seekTarget = seek !== null && k === first;
      if (!seekTarget) await raceAbort(this.content.whilePaused(), signal);
      for (let ahead = 1; ahead <= issuer.aheadSegments; ahead++) {
        const j = k + ahead;
        if (!timeline.loop && !timeline.samePass(j, k)) break;
        if (!this.tasks.has(j)) issuer.requestAhead(j);
      }
      issuer.horizonFrom = seekTarget ? null : k;
      if (!seekTarget) {
        if (!(await this.untilPlayoutTime(k, end, signal))) return false;
        await untilSegmentPlays(this.gate, k, end, true, signal);
      }
      if (this.stop.signal.aborted || clock.now() >= end) return false;
      showSegment(this.showEnv, k);
      this.tasks.delete(k);
      if (seekTarget) {
        timeline.seekDone();
        this.cfg.onEvent?.({ type: 'seeked', positionS: this.mediaPositionS(), index: k });
      } else if (k > 0 && timeline.startsPass(k)) {
        this.cfg.onEvent?.({ type: 'looped', index: k });
      }
    }
  }

  /**
   * Sleeps until segment k's playout time; a pause meanwhile moves that time, so after a resume
   * it is computed again. False when playback ends first.
   */
  private async untilPlayoutTime(k: number, end: number, signal: AbortSignal): Promise<boolean> {
    const { clock } = this.cfg;
    for (;;) {
      await raceAbort(this.content.whilePaused(), signal);
      const at = this.content.playoutTime(k);
      if (at >= end) return false;
      await clock.sleep(at - clock.now(), signal);
      if (!this.content.paused) return true;
    }
  }

  /** The deadline of a segment fetched while the clock stands (at startup, after a seek or at the live edge). */
  private standingDeadlineS(): number {
    return this.cfg.clock.now() + Math.max(4, 2 * this.bufferTargetS);
  }

}
