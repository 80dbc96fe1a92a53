/**
 * `<holoquic-player>`: the player and its renderer as one custom element, for embedding.
 *
 * ```html
 * <holoquic-player src="https://origin.example:4433/content/demo/manifest.mpd" mode="qpr-fec" autoplay></holoquic-player>
 * ```
 *
 * Attributes (read when loading): `src` (manifest URL), `origin` (origin base URL, default the
 * manifest's), `mode`, `abr`, `k` (objects sent reliably), `buffer` (target seconds on a steady link),
 * `volatile-buffer` (target after the link starved, default twice `buffer`), `stall-timeout`
 * (seconds without a byte before a stalled session is replaced, default 2, 0 = never), `duration`
 * (stop after so many seconds), `autoplay`, `render="off"` (decode without drawing: experiments),
 * `splat` (`square` | `round` | `sphere`), `controls="off"` (no Enter-VR/AR buttons),
 * `when-hidden="play"` (keep playing while unseen; by default the element pauses while the page —
 * or, in WebXR, the headset's session — is hidden, and resumes when it is seen again),
 * `reconstruction="cpu"` (reconstruct points in the decode workers even where the GPU could: by
 * default a frame that needs no post-processing is reconstructed in the vertex shader).
 *
 * The typed API (`load`, `play`, `pause`, `setMode`, `setPoseSource`, `getStats`, `qoe`,
 * `close`) forwards to the `Player`; the player's events (`statechange`, `segment`, `freeze`,
 * `error`, `modechange`, …) are re-dispatched on the element as the same `CustomEvent`s.
 */
import { createDecoderPool, type DecoderPoolStats } from '../decoder';
import type { SceneModel } from '../model/scene';
import { Player, type PlayerOptions } from '../player/player';
import { type PlayerStats, type PlayerState } from '../player/report';
import { PLAYER_MODES, type PlayerMode } from '../model/modes';
import type { QoeLog } from '../model/qoe';
import { SPLAT_SHAPES, type SplatShape } from '../render/pointMaterial';
import { type RenderStats, SceneRenderer } from '../render/sceneRenderer';
import type { XRMode } from '../render/xr';
import type { PoseSource } from '../model/pose';
import { createViewportModel } from '../viewport/visibility';

/** Player options an embedding page may set in code (attributes cover the common ones). */
export type HoloquicPlayerOptions = Partial<Omit<PlayerOptions, 'manifestUrl'>>;

export interface HoloquicStats extends PlayerStats {
  /** Null when the element does not draw (`render="off"`) or has not loaded. */
  render: RenderStats | null;
  /** The element's decode worker pool (null when the page supplied its own decoder). */
  decoder: DecoderPoolStats | null;
}

/** Events the element dispatches (all `CustomEvent`s with the player's detail). */
export const PLAYER_EVENTS = ['statechange', 'segment', 'freeze', 'error', 'modechange', 'started', 'abandoned', 'transportstate'] as const;

const STYLE = `
:host { display: block; position: relative; overflow: hidden; background: #101318; min-height: 150px; }
.view { position: absolute; inset: 0; }
.xr { position: absolute; bottom: 12px; left: 50%; transform: translateX(-50%); display: flex; gap: 8px; }
.xr button { font: 600 13px system-ui, sans-serif; padding: 8px 14px; border-radius: 6px; border: 1px solid #fff8;
  background: #0009; color: #fff; cursor: pointer; }
.xr button:hover { background: #000c; }
`;

export class HoloquicPlayerElement extends HTMLElement {
  static readonly observedAttributes = ['mode', 'splat'];

  /** Options set in code; they win over attributes. */
  options: HoloquicPlayerOptions = {};
  private playerInstance: Player | null = null;
  /** Counts close() calls: a load that began before the last one draws nothing. */
  private closings = 0;
  private view: SceneRenderer | null = null;
  private decoder: ReturnType<typeof createDecoderPool> | null = null;
  private poseOverride: PoseSource | null = null;
  private loading: Promise<SceneModel> | null = null;
  /** Why the element could not even create its player (bad attributes). */
  private setupError: string | null = null;
  private readonly viewHost: HTMLDivElement;
  private readonly xrBar: HTMLDivElement;
  /** The element paused itself because it could not be seen: being seen again resumes it. */
  private pausedWhileHidden = false;
  /**
   * A hidden page gets no animation frames and its timers are throttled (to once a second, then
   * once a minute): playing on would request late and freeze unseen, and the QoE log would count
   * those freezes. So the element pauses while nobody can see it — the page hidden, or, while a
   * headset presents, the headset's session hidden (taken off; the headset, not the tab, decides
   * what is seen then) — and resumes when it is seen again.
   */
  private readonly onVisibilityChange = (): void => {
    const player = this.playerInstance;
    if (!player || this.getAttribute('when-hidden') === 'play') return;
    const xr = this.view?.xrVisibility ?? null;
    const unseen = xr !== null ? xr === 'hidden' : document.visibilityState === 'hidden';
    if (unseen) {
      if (player.state === 'playing') {
        player.pause();
        this.pausedWhileHidden = true;
      }
    } else if (this.pausedWhileHidden) {
      this.pausedWhileHidden = false;
      if (player.state === 'paused') player.play();
    }
  };

  constructor() {
    super();
    const root = this.attachShadow({ mode: 'open' });
    const style = document.createElement('style');
    style.textContent = STYLE;
    this.viewHost = document.createElement('div');
    this.viewHost.className = 'view';
    this.xrBar = document.createElement('div');
    this.xrBar.className = 'xr';
    root.append(style, this.viewHost, this.xrBar);
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

  get error(): string | null {
    return this.setupError ?? this.playerInstance?.error ?? null;
  }

  connectedCallback(): void {
    document.addEventListener('visibilitychange', this.onVisibilityChange);
    if (this.hasAttribute('autoplay') && this.getAttribute('autoplay') !== 'false') this.play();
  }

  disconnectedCallback(): void {
    document.removeEventListener('visibilitychange', this.onVisibilityChange);
    this.close();
  }

  attributeChangedCallback(name: string, _old: string | null, value: string | null): void {
    if (name === 'mode' && value && this.playerInstance && PLAYER_MODES.includes(value as PlayerMode)) this.playerInstance.setMode(value as PlayerMode);
    if (name === 'splat' && value && this.view && SPLAT_SHAPES.includes(value as SplatShape)) this.view.setSplat(value as SplatShape);
  }

  /** Creates the player from the attributes and options, loads the scene and sets up the view. */
  load(): Promise<SceneModel> {
    this.loading ??= this.createAndLoad();
    return this.loading;
  }

  /** Starts (loading first if needed) or resumes playback. Failures surface as `error` events and `state`. */
  play(): void {
    this.pausedWhileHidden = false;
    void this.load().then(() => this.playerInstance?.play(), () => undefined);
  }

  pause(): void {
    // The viewer's own pause: showing the page again does not undo it.
    this.pausedWhileHidden = false;
    this.playerInstance?.pause();
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
    return { ...player.getStats(), render: this.view?.stats() ?? null, decoder: this.decoder?.stats() ?? null };
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
    this.playerInstance?.close();
    this.view?.dispose();
    this.view = null;
    this.decoder?.close();
    this.decoder = null;
    this.xrBar.replaceChildren();
  }

  private async createAndLoad(): Promise<SceneModel> {
    const closings = this.closings;
    const src = this.getAttribute('src');
    if (!src) throw this.failEarly('the src attribute (manifest URL) is missing');
    // Options set in code win over attributes, but an option left undefined does not erase one.
    const options = { ...this.attributeOptions(), ...definedOnly(this.options) };
    let player: Player;
    try {
      // Drawn frames the GPU can reconstruct exactly stay pictures + atlas ('auto'); without
      // drawing (experiments) or on request the workers reconstruct points.
      const gpu = this.getAttribute('render') !== 'off' && this.getAttribute('reconstruction') !== 'cpu';
      this.decoder = options.decoder ? null : createDecoderPool({ output: gpu ? 'auto' : 'points' });
      player = new Player({ viewport: defaultViewport, ...options, manifestUrl: src, decoder: options.decoder ?? this.decoder! });
    } catch (e) {
      throw this.failEarly(e instanceof Error ? e.message : String(e));
    }
    this.playerInstance = player;
    for (const type of PLAYER_EVENTS) {
      player.addEventListener(type, (e) => this.dispatchEvent(new CustomEvent(type, { detail: (e as CustomEvent).detail })));
    }
    const scene = await player.load();
    // close() during the load closed the player and dropped this load: draw nothing.
    if (this.closings !== closings) throw new Error('<holoquic-player>: closed while loading');
    if (this.getAttribute('render') !== 'off') {
      const splat = this.getAttribute('splat');
      try {
        this.view = new SceneRenderer(this.viewHost, { splat: SPLAT_SHAPES.includes(splat as SplatShape) ? (splat as SplatShape) : undefined });
      } catch (e) {
        player.close();
        throw this.failEarly(`cannot draw (WebGL2 unavailable?): ${e instanceof Error ? e.message : String(e)}`);
      }
      this.view.setScene(scene);
      this.view.setFrameSource(() => player.currentFrames());
      this.view.onProjectionChange((p) => player.setViewport(p));
      this.view.onXRVisibilityChange(this.onVisibilityChange);
      this.view.start();
      if (this.getAttribute('controls') !== 'off') void this.addXRButtons();
    }
    this.applyPoseSource();
    return scene;
  }

  private attributeOptions(): Omit<PlayerOptions, 'manifestUrl' | 'decoder'> {
    const number = (name: string): number | undefined => {
      const text = this.getAttribute(name);
      if (text === null || text === '') return undefined;
      const value = Number(text);
      if (!Number.isFinite(value) || value < 0) throw this.failEarly(`attribute ${name}="${text}" is not a non-negative number`);
      return value;
    };
    const positive = (name: string): number | undefined => {
      const value = number(name);
      if (value === 0) throw this.failEarly(`attribute ${name}="0" must be positive`);
      return value;
    };
    const mode = this.getAttribute('mode') ?? undefined;
    if (mode !== undefined && !PLAYER_MODES.includes(mode as PlayerMode)) throw this.failEarly(`attribute mode="${mode}" is not one of ${PLAYER_MODES.join(', ')}`);
    return {
      origin: this.getAttribute('origin') ?? undefined,
      mode: mode as PlayerMode | undefined,
      abr: this.getAttribute('abr') ?? undefined,
      reliableCount: number('k'),
      bufferTargetS: positive('buffer'),
      volatileBufferTargetS: positive('volatile-buffer'),
      stallTimeoutS: number('stall-timeout'),
      durationS: number('duration'),
    };
  }

  private applyPoseSource(): void {
    this.playerInstance?.setPoseSource(this.poseOverride ?? this.view?.poseSource ?? null);
  }

  private async addXRButtons(): Promise<void> {
    const view = this.view;
    if (!view) return;
    for (const mode of await view.supportedXRModes()) {
      const button = document.createElement('button');
      button.textContent = mode === 'immersive-vr' ? 'Enter VR' : 'Enter AR';
      button.addEventListener('click', () => {
        view.enterXR(mode).catch((e: unknown) => this.dispatchEvent(new CustomEvent('error', { detail: { message: `${mode}: ${e instanceof Error ? e.message : String(e)}` } })));
      });
      this.xrBar.append(button);
    }
  }

  /** An error before the player exists: dispatched like the player's own and thrown to the caller. */
  private failEarly(message: string): Error {
    this.setupError = message;
    this.dispatchEvent(new CustomEvent('error', { detail: { message } }));
    return new Error(`<holoquic-player>: ${message}`);
  }
}

function definedOnly<T extends object>(options: T): Partial<T> {
  return Object.fromEntries(Object.entries(options).filter(([, v]) => v !== undefined)) as Partial<T>;
}

/**
 * The viewport model the element gives its player: predicted head pose → ray-cast visible screen
 * fraction per object (src/viewport/visibility.ts), so the ranking follows the viewer.
 */
function defaultViewport(scene: SceneModel) {
  return Object.assign(createViewportModel(scene), { predictorName: 'default' });
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
