/**
 * `Player`: the one object an application talks to. It loads a scene (origin configuration, MPD),
 * connects the transports, and runs the playout loop (playout.ts) with the delivery policy of the
 * chosen mode, the viewport model fed by a pose source, and a segment decoder. It answers the
 * renderer's one question — which frame of each object to draw now — and keeps the QoE log.
 *
 * Content time: the renderer asks many times per content frame (display rate ≠ 30 fps); the
 * answer is derived from the playout loop's played-seconds clock, which stands still during
 * freezes and pauses, so objects stand still too.
 *
 * Media time: `currentTime` is the position within one pass of the scene (`duration`, the MPD's
 * `mediaPresentationDuration`, src/player/pass.ts); setting it seeks. At the end of a pass the
 * player loops into the next (`loop`, the default) or ends there, paused at the last frame;
 * play() from the end starts the pass again.
 */
import type { DecodedFrame } from '../model/frames';
import type { SegmentDecoder } from '../model/decoder';
import { PLAYER_MODES, type PlanDelivery, type PlayerMode } from '../model/modes';
import type { PoseDrivenViewport, PoseSource, ViewportModel } from '../model/pose';
import type { QoeLog } from '../model/qoe';
import type { SceneModel } from '../model/scene';
import { connectTransports, type Transports } from '../transport/connect';
import { fetchWithRetry } from '../transport/retry';
import type { TransportState } from '../transport/types';
import { AdaptivePolicy } from './adaptive';
import { checkBufferTargets, volatileTargetS } from './bufferTarget';
import { realClock } from './clock';
import { parseManifest } from './mpd';
import { passSegments } from './pass';
import { DEFAULT_BUFFER_TARGET_S, PlayoutSession } from './playout';
import { type PlayoutEvent, type ShownObject } from './playoutEvents';
import { type DeliveryPolicy, FixedModePolicy, reliableCountFromDegree } from './policy';
import { type ObjectPlayback, playerStats, type PlayerState, type PlayerStats, qoeLog } from './report';
import { abrRule, knapsackRule } from './rules';

export interface PlayerOptions {
  /** URL of the scene's manifest.mpd (absolute, or relative to the page). */
  manifestUrl: string;
  /** Origin base URL whose /config.json describes the WebTransport endpoint; default: the manifest's origin. */
  origin?: string;
  /** WebTransport session URL overriding the origin's configuration (e.g. through a relay). */
  webtransportUrl?: string;
  mode?: PlayerMode;
  /** ABR rule name (`knapsack`, `priority-greedy`, `hybrid`); ignored by `adaptive`. */
  abr?: string;
  /** Objects sent reliably in `qpr` / `qpr-fec` (default: half, rounded up). */
  reliableCount?: number;
  /** The same as a degree of reliability `Q0` … `Q100` (share of objects sent reliably); wins over `reliableCount`. */
  reliability?: string;
  /** Seconds of content requested ahead of the playhead on a steady link (default `DEFAULT_BUFFER_TARGET_S`, 2). */
  bufferTargetS?: number;
  /** Seconds requested ahead after the link starved (default twice `bufferTargetS`; set it equal for a fixed target). */
  volatileBufferTargetS?: number;
  /**
   * Seconds requests may wait without a byte before the WebTransport session is replaced by a new
   * one (default 2, `DEFAULT_STALL_TIMEOUT_MS`; 0 = never; docs/player.md → "Stalled sessions").
   */
  stallTimeoutS?: number;
  /**
   * `qpr-fec` / `q100-fec`: the recovery probability the repair sent up front must reach, planned
   * by the player and asked for as fixed FEC (default 0.7 for `qpr-fec`, `QPR_FEC_TARGET`; for
   * `q100-fec` the origin plans for 99 %). Repair on demand makes up the rest while the deadline allows.
   */
  fecTarget?: number;
  /** Stop after this many seconds of wall time from play() (default: never). */
  durationS?: number;
  /** At the end of a pass go on into the next (default true) or end there (`loop` below). */
  loop?: boolean;
  /** The highest ladder index (0 = lowest) any object is fetched at; default: none (`maxQuality` below). */
  maxQuality?: number | null;
  decoder: SegmentDecoder;
  /** Builds the viewport model once the scene is known; without it every object counts as equally visible. */
  viewport?: (scene: SceneModel) => PoseDrivenViewport;
}

/** What the renderer draws for one object now. */
export interface CurrentFrame {
  frame: DecodedFrame;
  quality: number;
  /** Index of the frame within its segment. */
  frameIndex: number;
  /** The segment's index on the timeline (pass.ts: segment k of pass p is p · segments per pass + k). */
  segment: number;
  /** True when the object's latest segment did not arrive in time and its last frame is held. */
  stale: boolean;
}

const DEFAULT_MODE: PlayerMode = 'qpr-fec';

/**
 * Why playback failed, as `MediaError.code` numbers it: 1 aborted, 2 network (the origin or its
 * transports unreachable), 3 decode (the playback pipeline stopped), 4 source not supported (the
 * manifest could not be fetched or read, or the options are invalid).
 */
export type PlayerErrorCode = 1 | 2 | 3 | 4;
export const PLAYER_ERROR = { ABORTED: 1, NETWORK: 2, DECODE: 3, SRC_NOT_SUPPORTED: 4 } as const;

/** An error with the code it is reported under. */
class CodedError extends Error {
  constructor(message: string, readonly code: PlayerErrorCode) {
    super(message);
  }
}

/** The frame of a segment that plays at `played` seconds: frames spread evenly over the segment. */
export function frameIndexAt(playedS: number, segmentStartS: number, segmentS: number, frames: number): number {
  return Math.min(frames - 1, Math.max(0, Math.floor(((playedS - segmentStartS) / segmentS) * frames + 1e-9)));
}

/** A quality cap is null (none) or a ladder index: a whole number ≥ 0. */
function checkedQualityCap(cap: number | null): number | null {
  if (cap !== null && !(Number.isInteger(cap) && cap >= 0)) throw new Error(`maxQuality must be null or a whole number ≥ 0, got ${cap}`);
  return cap;
}

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
  private viewport: PoseDrivenViewport | null = null;
  private stopPoses: (() => void) | null = null;
  private poseSource: PoseSource | null = null;
  private projection = { fovYDeg: 60, aspect: 16 / 9 };
  private mode: PlayerMode;
  private loadedAt = NaN;
  private startedAtIso = '';
  private endedAtS = NaN;
  private readonly playback = new Map<string, ObjectPlayback>();
  private readonly frameNow = new Map<string, CurrentFrame | null>();
  private readonly lastPlan = new Map<string, { rank: number; visibleArea: number; delivery: PlanDelivery }>();
  private contentBase = '/';
  private originBase = '';
  /** close() was called: nothing may start after it, even a load() still under way. */
  private closed = false;

  constructor(private options: PlayerOptions) {
    super();
    this.mode = options.mode ?? DEFAULT_MODE;
    this.looping = options.loop ?? true;
    this.qualityCap = checkedQualityCap(options.maxQuality ?? null);
    if (!PLAYER_MODES.includes(this.mode)) throw new Error(`unknown mode "${this.mode}" (${PLAYER_MODES.join(', ')})`);
    if (options.abr !== undefined) abrRule(options.abr); // fail early on a typo
    if (options.reliability !== undefined) reliableCountFromDegree(options.reliability, 1);
    const bufferS = options.bufferTargetS ?? DEFAULT_BUFFER_TARGET_S;
    checkBufferTargets(bufferS, volatileTargetS(bufferS, options.volatileBufferTargetS));
    if (options.stallTimeoutS !== undefined && !(options.stallTimeoutS >= 0)) {
      throw new Error(`stall timeout must be 0 (never) or a positive number of seconds, got ${options.stallTimeoutS}`);
    }
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
    return this.playback.size > 0;
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

  /** Reads the origin configuration and the manifest and connects the transports. */
  async load(): Promise<SceneModel> {
    if (this.sceneModel) return this.sceneModel;
    this.setState('loading');
    this.loadedAt = realClock.now();
    this.startedAtIso = new Date().toISOString();
    try {
      const manifestUrl = new URL(this.options.manifestUrl, globalThis.location?.href);
      this.originBase = this.options.origin ?? manifestUrl.origin;
      this.contentBase = new URL('.', manifestUrl).pathname;
      const scene = await this.fetchManifest(manifestUrl);
      if (this.closed) throw new CodedError('the player was closed while loading', PLAYER_ERROR.ABORTED);
      try {
        this.transports = await connectTransports(this.originBase, {
          webtransportUrl: this.options.webtransportUrl,
          stallTimeoutMs: this.options.stallTimeoutS === undefined ? undefined : this.options.stallTimeoutS * 1000,
        });
      } catch (e) {
        throw new CodedError(e instanceof Error ? e.message : String(e), PLAYER_ERROR.NETWORK);
      }
      if (this.closed) {
        this.transports.webtransport?.close();
        this.transports.http2.close();
        throw new CodedError('the player was closed while loading', PLAYER_ERROR.ABORTED);
      }
      this.transports.webtransport?.onStateChange((s: TransportState) => this.emit('transportstate', { state: s }));
      this.sceneModel = scene;
      if (this.options.viewport) {
        this.viewport = this.options.viewport(scene);
        this.viewport.setProjection(this.projection);
        if (this.poseSource) this.setPoseSource(this.poseSource);
      }
      this.setState('ready');
      return scene;
    } catch (e) {
      if (!this.closed) this.fail(e, PLAYER_ERROR.SRC_NOT_SUPPORTED);
      throw e;
    }
  }

  /** The manifest, read into the scene model; any failure is the source's (`SRC_NOT_SUPPORTED`). */
  private async fetchManifest(url: URL): Promise<SceneModel> {
    try {
      const response = await fetchWithRetry(url, { cache: 'no-store' });
      if (!response.ok) throw new Error(`${url.href}: HTTP ${response.status}`);
      return parseManifest(await response.text());
    } catch (e) {
      throw new CodedError(e instanceof Error ? e.message : String(e), PLAYER_ERROR.SRC_NOT_SUPPORTED);
    }
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
    this.session?.close();
    this.stopPoses?.();
    this.stopPoses = null;
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
    this.stopPoses?.();
    this.stopPoses = null;
    this.poseSource = source;
    const viewport = this.viewport;
    if (source && viewport) this.stopPoses = source.start((pose) => viewport.observe(pose));
  }

  /** The camera's projection, used to predict on-screen areas. */
  setViewport(projection: { fovYDeg: number; aspect: number }): void {
    this.projection = projection;
    this.viewport?.setProjection(projection);
  }

  /**
   * What to draw now per object; null until the object's first segment is decoded. Called every
   * animation frame, so the map and its entries are reused: read them before the next call.
   */
  currentFrames(): ReadonlyMap<string, CurrentFrame | null> {
    const played = this.session?.playedS() ?? 0;
    for (const object of this.sceneModel?.objects ?? []) {
      const p = this.playback.get(object.id);
      if (!p || p.decoded.frames.length === 0) {
        this.frameNow.set(object.id, null);
        continue;
      }
      const frames = p.decoded.frames;
      const frameIndex = p.stale ? frames.length - 1 : frameIndexAt(played, p.startedAt, this.sceneModel!.segmentDuration, frames.length);
      const entry = this.frameNow.get(object.id) ?? { frame: frames[frameIndex], quality: p.quality, frameIndex, stale: p.stale, segment: p.segment };
      entry.frame = frames[frameIndex];
      entry.quality = p.quality;
      entry.frameIndex = frameIndex;
      entry.stale = p.stale;
      entry.segment = p.segment;
      this.frameNow.set(object.id, entry);
    }
    return this.frameNow;
  }

  getStats(): PlayerStats {
    return playerStats({
      state: this.currentState, mode: this.mode, session: this.session, transports: this.transports,
      objects: this.sceneModel?.objects ?? [], playback: this.playback, lastPlan: this.lastPlan,
      frames: this.currentFrames(), positionS: this.currentTime, seeking: this.seeking,
    });
  }

  /** The `holoquic-qoe/1` log of this run (complete once the state is `ended`). */
  qoe(): QoeLog {
    return qoeLog({
      options: this.options, mode: this.mode, session: this.session, transports: this.transports,
      loadedAt: this.loadedAt, endedAt: Number.isFinite(this.endedAtS) ? this.endedAtS : realClock.now(),
      startedAtIso: this.startedAtIso, reliableCount: this.reliableCount(),
      predictor: this.viewport?.predictorName ?? 'none', segmentDurationS: this.sceneModel?.segmentDuration ?? 1,
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
      viewport: this.viewport ?? equal,
      policy: this.policy(),
      clock: realClock,
      bufferTargetS: this.options.bufferTargetS,
      volatileBufferTargetS: this.options.volatileBufferTargetS,
      durationS: this.options.durationS,
      loop: this.looping,
      maxQuality: () => this.qualityCap,
      onSegment: (k, shown) => this.onSegment(k, shown),
      onPlan: (plans) => {
        for (const p of plans) this.lastPlan.set(p.objectId, { rank: p.rank, visibleArea: p.visibleArea, delivery: p.delivery });
      },
      onEvent: (event) => this.onPlayoutEvent(event),
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

  private onSegment(k: number, shown: ReadonlyMap<string, ShownObject | null>): void {
    // Frames are placed on the timeline: segment k starts at k·D, so after a seek into it the
    // frame shown is the target's, not its first.
    const startedAt = k * (this.sceneModel?.segmentDuration ?? 1);
    for (const [id, object] of shown) {
      if (object) {
        this.playback.set(id, { decoded: object.decoded, quality: object.quality, startedAt, stale: false, segment: k });
      } else {
        const held = this.playback.get(id);
        if (held) held.stale = true;
      }
    }
  }

  private onPlayoutEvent(event: PlayoutEvent): void {
    if (event.type === 'segment') this.emit('segment', { index: event.index, qualities: event.qualities });
    else if (event.type === 'seeked') this.emit('seeked', { positionS: event.positionS, index: event.index });
    else if (event.type === 'looped') this.emit('looped', { index: event.index });
    else if (event.type === 'ended') {
      // The end of a pass: paused at the last frame, as a media element is; play() starts the pass again.
      this.session?.pause();
      this.setState('ended');
    } else if (event.type === 'freeze-start' || event.type === 'freeze-end') this.emit('freeze', event);
    // The playout loop ended on an error of its own (not network or decode trouble, which it
    // survives): playback is over, and a log cut short must not read as a finished run.
    else if (event.type === 'error') this.fail(new Error(`playback stopped: ${event.message}`));
    else if (event.type === 'started') this.emit('started', event);
    else if (event.type === 'abandoned') this.emit('abandoned', event);
  }

  private finish(): void {
    if (this.currentState === 'ended' || this.currentState === 'failed') return;
    this.endedAtS = realClock.now();
    this.stopPoses?.();
    this.stopPoses = null;
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
