/**
 * `<holoquic-player>`: the player and its renderer as one custom element, for embedding, with
 * the API of a media element where one applies (docs/embedding.md).
 *
 * ```html
 * <holoquic-player src="https://origin.example:4433/content/demo/manifest.mpd" mode="qpr-fec" autoplay></holoquic-player>
 * ```
 *
 * Attributes: attributes.ts (which act on the running player, which build a new one); the
 * control bar: controls.ts (`controls`); pausing while unseen: hiddenPause.ts (`when-hidden`);
 * how the player and the renderer are built: elementSetup.ts (`render`, `splat`, `reconstruction`).
 *
 * Media API: `currentTime` (setting it seeks), `duration` (one pass of the scene; a growing
 * scene's grows, with `durationchange`), `seekable`, `paused`, `ended`, `loop`, `seeking`,
 * `buffered`, `readyState`, `error` (`MediaError`-like), `play()` returning a promise, `pause()`;
 * media events and the player's own (mediaEvents.ts), typed by `HoloquicPlayerEventMap`
 * (mediaTypes.ts). Also `load`, `setMode`, `setPoseSource`, `getStats`, `qoe`, `xrModes`,
 * `enterXR`, `close`, `maxQuality`.
 */
import type { SceneModel } from '../model/scene';
import type { Player } from '../player/player';
import { PLAYER_ERROR, type PlayerState } from '../player/report';
import { PLAYER_MODES, type PlayerMode } from '../model/modes';
import type { QoeLog } from '../model/qoe';
import type { SceneRenderer } from '../render/sceneRenderer';
import type { XRMode } from '../render/xr';
import type { PoseSource } from '../model/pose';
import { applyLiveAttribute, LIVE_ATTRIBUTES, loopAttribute, maxQualityAttribute, RELOAD_ATTRIBUTES } from './attributes';
import { PlayerControls } from './controls';
import { controlsShown } from './controlsLogic';
import { type BuiltPlayer, buildPlayer, connectView, type HoloquicPlayerOptions, type HoloquicStats, openView } from './elementSetup';
import { HiddenPause } from './hiddenPause';
import { MediaEvents } from './mediaEvents';
import { bufferedRanges, HoloquicTimeRanges, type MediaSnapshot, readyStateOf, snapshotOf } from './mediaState';
import { HoloquicMediaError, type HoloquicPlayerEventMap, type ReadyState } from './mediaTypes';

export { PLAYER_EVENTS } from './mediaEvents';
export { HoloquicMediaError, READY_STATE, type HoloquicPlayerEventMap, type ReadyState } from './mediaTypes';
export type { HoloquicTimeRanges } from './mediaState';
export type { HoloquicPlayerOptions, HoloquicStats } from './elementSetup';

export class HoloquicPlayerElement extends HTMLElement {
  static readonly observedAttributes = [...LIVE_ATTRIBUTES, ...RELOAD_ATTRIBUTES];

  /** Options set in code; they win over attributes. */
  options: HoloquicPlayerOptions = {};
  private playerInstance: Player | null = null;
  /** Counts close() calls: a load that began before the last one draws nothing. */
  private closings = 0;
  private view: SceneRenderer | null = null;
  private decoder: BuiltPlayer['decoder'] = null;
  private reconstruction: BuiltPlayer['reconstruction'] = null;
  private poseOverride: PoseSource | null = null;
  private loading: Promise<SceneModel> | null = null;
  /** Why the element could not even create its player (bad attributes, no src). */
  private setupError: HoloquicMediaError | null = null;
  /** `currentTime` set before the player exists: where it starts. */
  private pendingPosition: number | null = null;
  /** The viewer wants playback (`!paused`): set by play(), cleared by pause() and at the end. */
  private wantsPlay = false;
  private readonly media = new MediaEvents(this, () => this.currentTime, () => this.onPassEnded());
  private readonly viewHost: HTMLDivElement;
  private readonly controls: PlayerControls;
  /** Pauses while nobody can see the element, resumes when seen again (hiddenPause.ts). */
  private readonly hiddenPause = new HiddenPause({
    player: () => this.playerInstance,
    xrVisibility: () => this.view?.xrVisibility ?? null,
    playsWhenHidden: () => this.getAttribute('when-hidden') === 'play',
  });

  constructor() {
    super();
    const root = this.attachShadow({ mode: 'open' });
    this.viewHost = document.createElement('div');
    this.viewHost.className = 'view';
    root.append(this.viewHost);
    // Entering XR failing is not playback failing: reported as an error event, the player plays on.
    this.controls = new PlayerControls(this, root, (message) => this.media.dispatch('error', { message, code: PLAYER_ERROR.ABORTED }));
  }

  /** The underlying player (null before `load()`). */
  get player(): Player | null {
    return this.playerInstance;
  }

  /** The renderer (null before `load()` and with `render="off"`). */
  get renderer(): SceneRenderer | null {
    return this.view;
  }

  get state(): PlayerState {
    return this.setupError ? 'failed' : (this.playerInstance?.state ?? 'idle');
  }

  /** Why playback failed, `MediaError`-like (`code`, `message`); null while nothing failed. */
  get error(): HoloquicMediaError | null {
    if (this.setupError) return this.setupError;
    const player = this.playerInstance;
    return player?.error ? new HoloquicMediaError(player.errorCode ?? PLAYER_ERROR.DECODE, player.error) : null;
  }

  /** The manifest URL (the `src` attribute): setting it loads that scene and releases the current one. */
  get src(): string {
    return this.getAttribute('src') ?? '';
  }

  set src(url: string) {
    this.setAttribute('src', url);
  }

  /** Seconds into the pass; setting it seeks (before loading: where playback starts). */
  get currentTime(): number {
    return this.playerInstance?.currentTime ?? this.pendingPosition ?? 0;
  }

  set currentTime(seconds: number) {
    if (!Number.isFinite(seconds)) throw new TypeError(`currentTime must be a finite number, got ${seconds}`);
    if (this.playerInstance) this.playerInstance.seek(seconds);
    else this.pendingPosition = Math.max(0, seconds);
  }

  /** Seconds of one pass of the scene (`MPD@mediaPresentationDuration`); NaN before the scene is loaded. */
  get duration(): number {
    return this.playerInstance?.duration ?? NaN;
  }

  /**
   * The range a seek may go to: the whole pass, `[0, duration]` (a growing scene's grows with
   * it); empty before the scene is loaded.
   */
  get seekable(): HoloquicTimeRanges {
    const duration = this.duration;
    return new HoloquicTimeRanges(Number.isFinite(duration) ? [[0, duration]] : []);
  }

  get paused(): boolean {
    return !this.wantsPlay;
  }

  get ended(): boolean {
    return this.state === 'ended';
  }

  get seeking(): boolean {
    return this.playerInstance?.seeking ?? false;
  }

  /**
   * The highest quality (ladder index, 0 = lowest) fetched from the next segment on; null lets the
   * player choose (the controls' quality menu; reflects `max-quality`, absent or `auto` = null).
   */
  get maxQuality(): number | null {
    try {
      return maxQualityAttribute(this.getAttribute('max-quality'));
    } catch {
      return this.playerInstance?.maxQuality ?? null;
    }
  }

  set maxQuality(cap: number | null) {
    if (cap !== null && !(Number.isInteger(cap) && cap >= 0)) throw new TypeError(`maxQuality must be null or a whole number ≥ 0, got ${cap}`);
    this.setAttribute('max-quality', cap === null ? 'auto' : String(cap));
  }

  /** At the end of a pass, go on into the next or end there (default); reflects the boolean `loop` attribute, as `<video>`'s does. */
  get loop(): boolean {
    return loopAttribute(this.getAttribute('loop'));
  }

  set loop(loop: boolean) {
    this.toggleAttribute('loop', loop);
  }

  /** The decoded content around the position, in seconds of the pass. */
  get buffered(): HoloquicTimeRanges {
    return bufferedRanges(this.snapshot());
  }

  get readyState(): ReadyState {
    return readyStateOf(this.snapshot());
  }

  connectedCallback(): void {
    document.addEventListener('visibilitychange', this.hiddenPause.update);
    this.controls.setShown(controlsShown(this.getAttribute('controls')));
    if (this.autoplays()) void this.play().catch(() => undefined);
  }

  disconnectedCallback(): void {
    document.removeEventListener('visibilitychange', this.hiddenPause.update);
    this.close();
    this.controls.stop();
  }

  attributeChangedCallback(name: string, old: string | null, value: string | null): void {
    if (old === value) return;
    if ((RELOAD_ATTRIBUTES as readonly string[]).includes(name)) {
      if (this.playerInstance || this.loading || this.setupError) this.reload(name === 'src');
      return;
    }
    const player = this.playerInstance;
    applyLiveAttribute(name, (n) => this.getAttribute(n), this.options, player, this.view);
    if (name === 'controls' && this.isConnected) this.controls.setShown(controlsShown(value));
    if (name === 'autoplay' && this.isConnected && this.autoplays() && !player && !this.loading) void this.play().catch(() => undefined);
    if (name === 'when-hidden') this.hiddenPause.update();
  }

  /** Creates the player from the attributes and options, loads the scene and sets up the view. */
  load(): Promise<SceneModel> {
    this.loading ??= this.createAndLoad();
    return this.loading;
  }

  /**
   * Starts (loading first if needed), resumes, or after the end of a pass starts it again. The
   * promise resolves when content moves and rejects as `HTMLMediaElement.play()`'s does: an
   * `AbortError` when pause() or a new `src` comes first, a `NotSupportedError` when the scene
   * cannot be loaded, a `NetworkError` when the origin cannot be reached.
   */
  play(): Promise<void> {
    this.hiddenPause.viewerActed();
    const failure = this.error;
    if (failure) return Promise.reject(new DOMException(failure.message, failure.code === PLAYER_ERROR.NETWORK ? 'NetworkError' : 'NotSupportedError'));
    if (!this.wantsPlay) {
      this.wantsPlay = true;
      this.media.timed('play');
    }
    const playing = this.media.whenPlaying(this.playerInstance);
    void this.load().then(() => {
      if (this.wantsPlay) this.playerInstance?.play();
    }, () => undefined);
    return playing;
  }

  pause(): void {
    // The viewer's own pause: showing the page again does not undo it.
    this.hiddenPause.viewerActed();
    this.playerInstance?.pause();
    if (!this.wantsPlay) return;
    this.wantsPlay = false;
    this.media.timed('pause');
    this.media.rejectPlays(PLAYER_ERROR.ABORTED, 'play() was interrupted by pause()');
  }

  setMode(mode: PlayerMode): void {
    if (!PLAYER_MODES.includes(mode)) throw new Error(`unknown mode "${mode}" (${PLAYER_MODES.join(', ')})`);
    // The attribute is the one source: attributeChangedCallback hands it to a running player.
    this.setAttribute('mode', mode);
  }

  /**
   * Where the viewer's head pose comes from. Default (null): the camera the element draws with —
   * orbit/fly on a screen, the headset in WebXR. A recorded trace replaces it for experiments.
   */
  setPoseSource(source: PoseSource | null): void {
    this.poseOverride = source;
    this.applyPoseSource();
  }

  getStats(): HoloquicStats | null {
    const player = this.playerInstance;
    if (!player) return null;
    return { ...player.getStats(), render: this.view?.stats() ?? null, decoder: this.decoder?.stats() ?? null, reconstruction: this.reconstruction };
  }

  qoe(): QoeLog | null {
    return this.playerInstance?.qoe() ?? null;
  }

  /** Immersive modes offered here (for custom buttons; the element shows its own unless `controls="off"`). */
  async xrModes(): Promise<XRMode[]> {
    return this.view ? this.view.supportedXRModes() : [];
  }

  enterXR(mode: XRMode): Promise<void> {
    if (!this.view) return Promise.reject(new Error('nothing is drawn (render="off" or not loaded)'));
    return this.view.enterXR(mode);
  }

  /** Stops playback, the renderer and the decoder workers. The QoE log stays readable. */
  close(): void {
    // A load still under way sees the player closed and stops; connecting the element again
    // (it was moved in the document) starts afresh.
    this.loading = null;
    this.closings++;
    this.media.release();
    this.playerInstance?.close();
    this.view?.dispose();
    this.view = null;
    this.decoder?.close();
    this.decoder = null;
    this.controls.setView(null);
    this.controls.refresh();
  }

  /**
   * A load-time attribute changed: the current player is closed (its workers and GPU buffers
   * released) and a new one built from the attributes, playing if the old one was meant to.
   * A new `src` starts from 0; other attributes keep the position.
   */
  private reload(newSource: boolean): void {
    const position = newSource ? null : this.currentTime;
    const wanted = this.wantsPlay;
    if (newSource) this.media.rejectPlays(PLAYER_ERROR.ABORTED, 'the source changed before playback began');
    this.close();
    this.playerInstance = null;
    this.setupError = null;
    this.pendingPosition = position;
    this.wantsPlay = false;
    if (!this.isConnected) return;
    if (wanted || this.autoplays()) void this.play().catch(() => undefined);
    else void this.load().catch(() => undefined);
  }

  private autoplays(): boolean {
    return this.hasAttribute('autoplay') && this.getAttribute('autoplay') !== 'false';
  }

  /** The pass ended (not looping): paused at its last frame, as a media element is. */
  private onPassEnded(): void {
    if (!this.wantsPlay) return;
    this.wantsPlay = false;
    this.media.timed('pause');
  }

  private snapshot(): MediaSnapshot {
    return snapshotOf(this.playerInstance, { positionS: this.currentTime, durationS: this.duration, frozen: this.media.isFrozen, loop: this.loop });
  }

  private async createAndLoad(): Promise<SceneModel> {
    const closings = this.closings;
    const src = this.getAttribute('src');
    if (!src) throw this.failEarly('the src attribute (manifest URL) is missing');
    let built: BuiltPlayer;
    try {
      built = buildPlayer(src, (name) => this.getAttribute(name), this.options);
    } catch (e) {
      throw this.failEarly((e as Error).message);
    }
    const { player } = built;
    this.decoder = built.decoder;
    this.reconstruction = built.reconstruction;
    this.playerInstance = player;
    this.media.follow(player);
    if (this.pendingPosition !== null) player.seek(this.pendingPosition);
    this.pendingPosition = null;
    const scene = await player.load();
    // close() during the load closed the player and dropped this load: draw nothing.
    if (this.closings !== closings) throw new Error('<holoquic-player>: closed while loading');
    this.media.loaded(player);
    if (this.getAttribute('render') !== 'off') {
      try {
        this.view = openView(this.viewHost, this.getAttribute('splat'));
      } catch (e) {
        player.close();
        throw this.failEarly((e as Error).message);
      }
      connectView(this.view, player, scene, this.hiddenPause.update);
      this.controls.setView(this.view);
    }
    this.applyPoseSource();
    return scene;
  }

  private applyPoseSource(): void {
    this.playerInstance?.setPoseSource(this.poseOverride ?? this.view?.poseSource ?? null);
  }

  /** An error before the player exists (the source or an attribute): dispatched like the player's own and thrown to the caller. */
  private failEarly(message: string): Error {
    this.setupError = new HoloquicMediaError(PLAYER_ERROR.SRC_NOT_SUPPORTED, message);
    this.wantsPlay = false;
    this.media.dispatch('error', { message, code: PLAYER_ERROR.SRC_NOT_SUPPORTED });
    this.media.rejectPlays(PLAYER_ERROR.SRC_NOT_SUPPORTED, message);
    return new Error(`<holoquic-player>: ${message}`);
  }
}

/** `addEventListener` typed by the element's event map (`HoloquicPlayerEventMap`), then every element's. */
export interface HoloquicPlayerElement {
  addEventListener<K extends keyof HoloquicPlayerEventMap>(type: K, listener: (this: HoloquicPlayerElement, ev: HoloquicPlayerEventMap[K]) => unknown, options?: boolean | AddEventListenerOptions): void;
  addEventListener<K extends keyof HTMLElementEventMap>(type: K, listener: (this: HoloquicPlayerElement, ev: HTMLElementEventMap[K]) => unknown, options?: boolean | AddEventListenerOptions): void;
  addEventListener(type: string, listener: EventListenerOrEventListenerObject, options?: boolean | AddEventListenerOptions): void;
  removeEventListener<K extends keyof HoloquicPlayerEventMap>(type: K, listener: (this: HoloquicPlayerElement, ev: HoloquicPlayerEventMap[K]) => unknown, options?: boolean | EventListenerOptions): void;
  removeEventListener<K extends keyof HTMLElementEventMap>(type: K, listener: (this: HoloquicPlayerElement, ev: HTMLElementEventMap[K]) => unknown, options?: boolean | EventListenerOptions): void;
  removeEventListener(type: string, listener: EventListenerOrEventListenerObject, options?: boolean | EventListenerOptions): void;
}

/** Registers `<holoquic-player>` (once; a second copy of the library does not throw). */
export function defineHoloquicPlayer(name = 'holoquic-player'): void {
  if (!customElements.get(name)) customElements.define(name, HoloquicPlayerElement);
}

declare global {
  interface HTMLElementTagNameMap {
    'holoquic-player': HoloquicPlayerElement;
  }
}
