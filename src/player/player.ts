/**
 * `Player`: the one object an application talks to. It loads a scene (origin configuration, MPD)
 * and connects the transports (sceneLoad.ts), and runs the playout loop (playout.ts) with the
 * delivery policy of the chosen mode, the viewport model fed by a pose source (poseFeed.ts), and a
 * segment decoder. It answers the renderer's one question — which frame of each object to draw
 * now (framesOnScreen.ts) — and reports its state, stats and QoE log (report.ts) and the loop's
 * events (playerEvents.ts). Its options and their checks: options.ts.
 *
 * Media time: `currentTime` is the position within one pass of the scene (`duration`, the MPD's
 * `mediaPresentationDuration`, src/player/pass.ts); setting it seeks. At the end of a pass the
 * player loops into the next (`loop`, the default) or ends there, paused at the last frame;
 * play() from the end starts the pass again.
 */
import { PLAYER_MODES, type PlanDelivery, type PlayerMode } from '../model/modes';
import type { PoseSource, ViewportModel } from '../model/pose';
import type { QoeLog } from '../model/qoe';
import type { SceneModel } from '../model/scene';
import type { Transports } from '../transport/connect';
import type { TransportState } from '../transport/types';
import { AdaptivePolicy } from './adaptive';
import { realClock } from './clock';
import { type CurrentFrame, FramesOnScreen } from './framesOnScreen';
import { followGrowingScene, type ManifestWatch } from './manifestWatch';
import { checkedQualityCap, checkOptions, DEFAULT_MODE, type PlayerOptions } from './options';
import { passSegments } from './pass';
import { DEFAULT_BUFFER_TARGET_S, PlayoutSession } from './playout';
import { type PlayerEventTarget, publishQoeRecord, relayPlayoutEvent } from './playerEvents';
import { type DeliveryPolicy, FixedModePolicy, reliableCountFromDegree } from './policy';
import { PLAYER_ERROR, playerStats, type PlayerErrorCode, type PlayerState, type PlayerStats, qoeLog, recordOnLogTimeBase } from './report';
import { abrRule, knapsackRule } from './rules';
import { CodedError, connectScene, prefetchSceneConfig, readManifest } from './sceneLoad';
import { PoseFeed, type Projection } from './poseFeed';

export class Player extends EventTarget {
  private currentState: PlayerState = 'idle';
  private failure: string | null = null;
  private failureCode: PlayerErrorCode | null = null;
  /** Where playback starts when currentTime is set before play() (media seconds). */
  private startPositionS: number | null = null;
  private looping: boolean;
  private qualityCap: number | null;
  /** run() of the playout loop has returned: playback cannot go on (closed, duration over, failed). */
  private finished = false;
  private sceneModel: SceneModel | null = null;
  private transports: Transports | null = null;
  private session: PlayoutSession | null = null;
  /** The viewer's poses and projection, into the scene's viewport model (poseFeed.ts). */
  private readonly poses = new PoseFeed();
  private mode: PlayerMode;
  private loadedAt = NaN;
  private startedAtIso = '';
  private endedAtS = NaN;
  private readonly frames = new FramesOnScreen();
  private readonly lastPlan = new Map<string, { rank: number; visibleArea: number; delivery: PlanDelivery }>();
  private contentBase = '/';
  /** close() was called: nothing may start after it, even a load() still under way. */
  private closed = false;
  /** Re-reads a growing scene's manifest (manifestWatch.ts); null for a final one. */
  private watch: ManifestWatch | null = null;
  /** Where the playout loop's events land (playerEvents.ts). */
  private readonly events: PlayerEventTarget = {
    emit: (type, detail) => this.emit(type, detail),
    passEnded: () => {
      this.session?.pause();
      this.setState('ended');
    },
    failed: (e) => this.fail(e),
  };

  constructor(private options: PlayerOptions) {
    super();
    checkOptions(options);
    this.mode = options.mode ?? DEFAULT_MODE;
    this.looping = options.loop ?? true;
    this.qualityCap = checkedQualityCap(options.maxQuality ?? null);
  }

  get state(): PlayerState {
    return this.currentState;
  }

  get error(): string | null {
    return this.failure;
  }

  /** The failure's code (`PLAYER_ERROR`), null while there is none. */
  get errorCode(): PlayerErrorCode | null {
    return this.failureCode;
  }

  /** Seconds of one pass (NaN before the scene is loaded). */
  get duration(): number {
    const scene = this.sceneModel;
    return scene ? passSegments(scene) * scene.segmentDuration : NaN;
  }

  /** Seconds into the pass (the target at once while seeking); setting it seeks. */
  get currentTime(): number {
    if (this.session) return this.session.mediaPositionS();
    return this.startPositionS ?? 0;
  }

  set currentTime(seconds: number) {
    this.seek(seconds);
  }

  /** A seek is under way: the target's frame is not shown yet. */
  get seeking(): boolean {
    return this.session?.seeking ?? this.startPositionS !== null;
  }

  get loop(): boolean {
    return this.looping;
  }

  set loop(loop: boolean) {
    this.looping = loop;
    this.session?.setLoop(loop);
  }

  /**
   * The highest quality (ladder index, 0 = lowest) objects are fetched at, from the next segment
   * planned; null lets the ABR choose freely. A planning-time quality rule (quality.ts,
   * `quality-cap`): the decode budget and abandonment may still go lower.
   */
  get maxQuality(): number | null {
    return this.qualityCap;
  }

  set maxQuality(cap: number | null) {
    this.qualityCap = checkedQualityCap(cap);
  }

  /**
   * Moves playback to `seconds` into the pass (clamped to [0, duration]; at the end a looping
   * scene restarts, one that does not ends). Emits `seeking` now and `seeked` once the target's
   * frame is shown; a later seek supersedes one still under way (one `seeked`, for the later).
   * Paused or ended playback stays paused, showing the target. Before play(), it is where play() starts.
   */
  seek(seconds: number): void {
    if (this.closed || this.currentState === 'failed' || this.finished) return;
    if (!Number.isFinite(seconds)) throw new TypeError(`cannot seek to ${seconds}`);
    this.emit('seeking', { positionS: seconds });
    if (this.currentState === 'ended') this.setState('paused');
    if (this.session) this.session.seek(seconds);
    else this.startPositionS = Math.max(0, seconds);
  }

  /** A frame has been shown (it stays shown while seeking, until the target's replaces it). */
  get hasFrame(): boolean {
    return this.frames.hasFrame;
  }

  /** Seconds ahead of the current position whose objects are decoded (0 before playback). */
  bufferedAheadS(): number {
    return this.session?.bufferedS() ?? 0;
  }

  /** The buffer the player fills now (seconds; it grows on a volatile link). */
  bufferTargetS(): number {
    return this.session?.bufferTargetS ?? this.options.bufferTargetS ?? DEFAULT_BUFFER_TARGET_S;
  }
  get scene(): SceneModel | null {
    return this.sceneModel;
  }

  /** Reads the origin configuration and the manifest and connects the transports (sceneLoad.ts). */
  async load(): Promise<SceneModel> {
    if (this.sceneModel) return this.sceneModel;
    this.setState('loading');
    this.loadedAt = realClock.now();
    this.startedAtIso = new Date().toISOString();
    try {
      const originConfig = prefetchSceneConfig(this.options);
      const manifest = await readManifest(this.options);
      const { scene } = manifest;
      this.contentBase = manifest.contentBase;
      if (this.closed) throw new CodedError('the player was closed while loading', PLAYER_ERROR.ABORTED);
      this.transports = await connectScene(this.options, manifest, originConfig);
      if (this.closed) {
        this.transports.webtransport?.close();
        this.transports.http2.close();
        throw new CodedError('the player was closed while loading', PLAYER_ERROR.ABORTED);
      }
      this.transports.webtransport?.onStateChange((s: TransportState) => this.emit('transportstate', { state: s }));
      this.sceneModel = scene;
      if (this.options.viewport) this.poses.attach(this.options.viewport(scene));
      this.watchManifest(manifest.url, manifest.text, scene);
      this.setState('ready');
      return scene;
    } catch (e) {
      if (!this.closed) this.fail(e, PLAYER_ERROR.SRC_NOT_SUPPORTED);
      throw e;
    }
  }

  /**
   * A growing scene's manifest is re-read until final (manifestWatch.ts); each newer one extends
   * the scene (`scenegrow`, `durationchange` when the pass grew) and wakes playback waiting at
   * the live edge. One that is not a growth of this scene is refused (`manifesterror`, not fatal).
   */
  private watchManifest(url: URL, text: string, scene: SceneModel): void {
    this.watch = followGrowingScene({
      url, text, scene, maxAtlasSamples: this.options.decoder.maxAtlasSamples,
      onGrowth: (growth) => {
        this.session?.sceneGrew();
        this.emit('scenegrow', growth);
        if (growth.durationS.after !== growth.durationS.before) this.emit('durationchange', { duration: this.duration });
      },
      onProblem: (message) => this.emit('manifesterror', { message }),
    });
  }

  /** The scene is still being packed: its manifest is re-read, and it may grow. */
  get growing(): boolean {
    return this.sceneModel?.updatePeriodS !== undefined;
  }

  /** Playback stands at the end of what a growing scene has published, waiting for more (not a freeze). */
  get waitingForContent(): boolean {
    return this.session?.waitingAtLiveEdge ?? false;
  }

  /** Starts playback (loading first if needed), resumes after pause(), or starts the pass again after it ended. */
  play(): void {
    if (this.currentState === 'ended' && this.session && !this.finished) {
      this.seek(0);
      this.session.resume();
      this.setState('playing');
      return;
    }
    if (this.currentState === 'paused') {
      this.session?.resume();
      this.setState('playing');
      return;
    }
    if (this.currentState === 'playing' || this.currentState === 'ended' || this.currentState === 'failed') return;
    void (async () => {
      try {
        await this.load();
        if (this.closed) return;
        this.start();
      } catch (e) {
        // load() records its own failures; anything after it is recorded here, or play() would
        // leave the player 'ready' with no error event. A close() meanwhile is no failure.
        if (this.currentState !== 'failed' && !this.closed) this.fail(e);
      }
    })();
  }

  pause(): void {
    if (this.currentState !== 'playing') return;
    this.session?.pause();
    this.setState('paused');
  }

  /** Stops playback and releases the transports; the QoE log stays readable. */
  close(): void {
    this.closed = true;
    this.watch?.stop();
    this.session?.close();
    this.poses.stop();
    this.transports?.webtransport?.close();
    this.transports?.http2.close();
    if (this.currentState !== 'failed' && this.currentState !== 'ended') this.finish();
  }

  /** Switches the delivery mode from the next segment requested. */
  setMode(mode: PlayerMode): void {
    if (!PLAYER_MODES.includes(mode)) throw new Error(`unknown mode "${mode}" (${PLAYER_MODES.join(', ')})`);
    this.mode = mode;
    this.session?.setPolicy(this.policy());
    this.emit('modechange', { mode });
  }

  /**
   * Changes the ABR rule and the objects sent reliably (`reliableCount`, or the degree
   * `reliability`, which wins) from the next segment requested. Undefined fields are cleared.
   */
  setDelivery(delivery: Pick<PlayerOptions, 'abr' | 'reliableCount' | 'reliability'>): void {
    if (delivery.abr !== undefined) abrRule(delivery.abr);
    if (delivery.reliability !== undefined) reliableCountFromDegree(delivery.reliability, 1);
    this.options = { ...this.options, abr: delivery.abr, reliableCount: delivery.reliableCount, reliability: delivery.reliability };
    this.session?.setPolicy(this.policy());
  }

  setPoseSource(source: PoseSource | null): void {
    this.poses.setSource(source);
  }

  /** The camera's projection, used to predict on-screen areas. */
  setViewport(projection: Projection): void {
    this.poses.setProjection(projection);
  }

  /**
   * What to draw now per object; null until the object's first segment is decoded. Called every
   * animation frame, so the map and its entries are reused: read them before the next call.
   */
  currentFrames(): ReadonlyMap<string, CurrentFrame | null> {
    return this.frames.current(this.session?.playedS() ?? 0, this.sceneModel?.objects ?? [], this.sceneModel?.segmentDuration ?? 1);
  }

  getStats(): PlayerStats {
    return playerStats({
      state: this.currentState, mode: this.mode, session: this.session, transports: this.transports,
      objects: this.sceneModel?.objects ?? [], playback: this.frames.playback, lastPlan: this.lastPlan,
      frames: this.currentFrames(), positionS: this.currentTime, seeking: this.seeking, growing: this.growing,
    });
  }

  /** The `holoquic-qoe/1` log of this run (complete once the state is `ended`). */
  qoe(): QoeLog {
    return qoeLog({
      options: this.options, mode: this.mode, session: this.session, transports: this.transports,
      loadedAt: this.loadedAt, endedAt: Number.isFinite(this.endedAtS) ? this.endedAtS : realClock.now(),
      startedAtIso: this.startedAtIso, reliableCount: this.reliableCount(),
      predictor: this.poses.model?.predictorName ?? 'none', segmentDurationS: this.sceneModel?.segmentDuration ?? 1,
    });
  }

  private policy(): DeliveryPolicy {
    if (this.mode === 'adaptive') return new AdaptivePolicy();
    return new FixedModePolicy(this.mode, abrRule(this.options.abr ?? knapsackRule.name), this.reliableCount(), this.options.fecTarget);
  }

  private reliableCount(): number | undefined {
    const objects = this.sceneModel?.objects.length;
    if (this.options.reliability === undefined || objects === undefined) return this.options.reliableCount;
    return reliableCountFromDegree(this.options.reliability, objects);
  }

  private start(): void {
    const scene = this.sceneModel!;
    const transports = this.transports!;
    const equal: ViewportModel = { visibleArea: () => 1 };
    const session = new PlayoutSession({
      scene, contentBase: this.contentBase,
      transports: { webtransport: transports.webtransport, http2: transports.http2 },
      decoder: this.options.decoder,
      viewport: this.poses.model ?? equal,
      policy: this.policy(),
      clock: realClock,
      bufferTargetS: this.options.bufferTargetS,
      volatileBufferTargetS: this.options.volatileBufferTargetS,
      lateUpgrades: this.options.lateUpgrades,
      pipelineAhead: this.options.pipelineAhead,
      durationS: this.options.durationS,
      loop: this.looping,
      maxQuality: () => this.qualityCap,
      onSegment: (k, shown) => this.frames.show(k, shown, scene.segmentDuration),
      onPlan: (plans) => {
        for (const p of plans) this.lastPlan.set(p.objectId, { rank: p.rank, visibleArea: p.visibleArea, delivery: p.delivery });
      },
      onEvent: (event) => relayPlayoutEvent(event, this.events),
      qoeSegmentsKept: this.options.qoeSegmentsKept,
      // Streamed out on the QoE log's time base (seconds since load()).
      onRecord: (record) => publishQoeRecord(recordOnLogTimeBase(record, session.originS - this.loadedAt), this.options.onQoeSegment, this.events),
    });
    this.session = session;
    // currentTime set before play(): playback begins there (a seek the loop reports as seeked).
    if (this.startPositionS !== null) session.seek(this.startPositionS);
    this.startPositionS = null;
    this.setState('playing');
    void session.run().then(() => {
      this.finished = true;
      this.finish();
    });
  }

  private finish(): void {
    if (this.currentState === 'ended' || this.currentState === 'failed') return;
    this.endedAtS = realClock.now();
    this.poses.stop();
    this.setState('ended');
  }

  private fail(e: unknown, code: PlayerErrorCode = PLAYER_ERROR.DECODE): void {
    this.failure = e instanceof Error ? e.message : String(e);
    this.failureCode = e instanceof CodedError ? e.code : code;
    this.setState('failed');
    this.emit('error', { message: this.failure, code: this.failureCode });
  }

  private setState(state: PlayerState): void {
    if (state === this.currentState) return;
    this.currentState = state;
    this.emit('statechange', { state });
  }

  private emit(type: string, detail: unknown): void {
    this.dispatchEvent(new CustomEvent(type, { detail }));
  }
}
