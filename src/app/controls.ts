/**
 * `<holoquic-player>`'s built-in controls, in its shadow DOM: play/pause, the timeline (buffered
 * ranges, seeking by click, drag and keys), current time and duration, the delivery mode, the
 * quality (Auto or capped at a rung), fullscreen, Enter VR / AR, a loading indicator (while
 * `waiting` or `seeking`) and an error overlay (the `MediaError`-like code and message).
 *
 * Everything is a native control — `<button>`, `<input type=range>`, `<select>` — with an
 * accessible name, so keyboards and screen readers work as they do everywhere. The bar fades out
 * while playing and comes back when the pointer moves or a control has focus. Which controls
 * exist follows the `controls` attribute (controlsLogic.ts → `controlsShown`).
 */
import { PLAYER_MODES, type PlayerMode } from '../model/modes';
import type { SceneModel } from '../model/scene';
import type { Player } from '../player/player';
import type { PlayerState } from '../player/report';
import type { SceneRenderer } from '../render/sceneRenderer';
import { bufferedGradient, capOfChoice, type ControlsShown, formatTime, qualityChoices, timelineKeyTarget, timeText } from './controlsLogic';
import { PLAYER_STYLE } from './controlsStyle';
import type { HoloquicTimeRanges } from './mediaState';
import type { HoloquicMediaError } from './mediaTypes';

/** What the controls read from and do to the element. */
export interface ControlledElement extends HTMLElement {
  readonly paused: boolean;
  currentTime: number;
  readonly duration: number;
  readonly seeking: boolean;
  readonly buffered: HoloquicTimeRanges;
  readonly error: HoloquicMediaError | null;
  readonly state: PlayerState;
  readonly player: Player | null;
  maxQuality: number | null;
  play(): Promise<void>;
  pause(): void;
  setMode(mode: PlayerMode): void;
}

/** Milliseconds without pointer movement after which the bar fades while playing. */
const IDLE_MS = 2500;
/** Milliseconds between refreshes of the time, the timeline and its buffered ranges. */
const REFRESH_MS = 250;
const ERROR_NAMES: Record<number, string> = {
  1: 'MEDIA_ERR_ABORTED', 2: 'MEDIA_ERR_NETWORK', 3: 'MEDIA_ERR_DECODE', 4: 'MEDIA_ERR_SRC_NOT_SUPPORTED',
};

export class PlayerControls {
  private shown: ControlsShown = 'xr';
  private view: SceneRenderer | null = null;
  /** Bumped whenever the XR buttons are rebuilt: an older build still awaiting the browser stops. */
  private xrBuild = 0;
  private readonly bar = element('div', { className: 'bar', role: 'group', 'aria-label': 'Player controls' });
  private readonly playButton = element('button', { className: 'play', type: 'button', 'aria-label': 'Play' });
  private readonly timeline = element('input', { className: 'timeline', type: 'range', min: '0', max: '0', step: 'any', value: '0', 'aria-label': 'Seek' });
  private readonly time = element('span', { className: 'time' });
  private readonly modeSelect = element('select', { 'aria-label': 'Delivery mode' });
  private readonly qualitySelect = element('select', { 'aria-label': 'Quality' });
  private readonly fullscreenButton = element('button', { type: 'button', 'aria-label': 'Fullscreen' });
  private readonly xr = element('div', { className: 'xr' });
  private readonly busy = element('div', { className: 'busy', role: 'status', 'aria-label': 'Loading' });
  private readonly errorBox = element('div', { className: 'error', role: 'alert' });
  /** The viewer is dragging the timeline: its value is theirs until they let go. */
  private dragging = false;
  /** Waiting for data: between `waiting` / `seeking` / a `play` not yet moving and `playing` / `seeked` / `pause`. */
  private waiting = false;
  private scene: SceneModel | null = null;
  private refreshTimer: ReturnType<typeof setInterval> | null = null;
  private readonly onFullscreenChange = (): void => this.refresh();
  private idleTimer: ReturnType<typeof setTimeout> | null = null;

  /** `onXRError` reports a failed Enter VR / AR (the element dispatches it as an `error` event; playback goes on). */
  constructor(private readonly el: ControlledElement, root: ShadowRoot, private readonly onXRError: (message: string) => void) {
    const style = document.createElement('style');
    style.textContent = PLAYER_STYLE;
    for (const mode of PLAYER_MODES) this.modeSelect.append(new Option(mode, mode));
    const grow = element('div', { className: 'grow' });
    grow.append(this.timeline);
    this.bar.append(this.playButton, grow, this.time, this.modeSelect, this.qualitySelect, this.fullscreenButton);
    this.fullscreenButton.hidden = !document.fullscreenEnabled;
    this.busy.hidden = true;
    this.errorBox.hidden = true;
    root.append(style, this.busy, this.errorBox, this.bar, this.xr);
    this.listen();
    this.setShown('xr');
  }

  /** Applies the `controls` attribute's choice. */
  setShown(shown: ControlsShown): void {
    this.shown = shown;
    const full = shown === 'full';
    this.bar.hidden = !full;
    // The XR buttons sit in the bar, or on their own at the bottom without it.
    if (full) this.bar.append(this.xr);
    else this.bar.after(this.xr);
    this.xr.classList.toggle('alone', !full);
    this.xr.hidden = shown === 'none';
    if (full && this.el.isConnected) this.startRefreshing();
    else this.stopRefreshing();
    this.refresh();
    this.rebuildXRButtons();
  }

  /** The renderer whose XR modes the Enter VR / AR buttons offer (null: none, e.g. closed). */
  setView(view: SceneRenderer | null): void {
    this.view = view;
    this.rebuildXRButtons();
  }

  /** The element left the document: no timers. */
  stop(): void {
    this.stopRefreshing();
    if (this.idleTimer !== null) clearTimeout(this.idleTimer);
    this.idleTimer = null;
  }

  /** Reads everything the bar shows from the element. */
  refresh(): void {
    const el = this.el;
    // A failed element offers Play (disabled): nothing plays, whatever play() asked for.
    const offerPlay = el.paused || el.state === 'failed';
    this.playButton.setAttribute('aria-label', offerPlay ? 'Play' : 'Pause');
    this.playButton.textContent = offerPlay ? '▶' : '❚❚';
    this.playButton.disabled = el.state === 'failed';
    const duration = el.duration;
    const known = Number.isFinite(duration) && duration > 0;
    this.timeline.disabled = !known;
    this.timeline.max = known ? String(duration) : '0';
    const shownTime = this.dragging ? Number(this.timeline.value) : el.currentTime;
    if (!this.dragging) this.timeline.value = String(Math.min(el.currentTime, known ? duration : 0));
    this.timeline.setAttribute('aria-valuetext', timeText(shownTime, duration));
    this.time.textContent = `${formatTime(shownTime)} / ${formatTime(duration)}`;
    const b = el.buffered;
    const ranges = Array.from({ length: b.length }, (_, i) => [b.start(i), b.end(i)] as const);
    this.timeline.style.setProperty('--track', bufferedGradient(ranges, duration, '#fff9', '#fff3'));
    this.refreshMenus();
    const error = el.error;
    this.errorBox.hidden = this.shown !== 'full' || !error;
    if (error) this.showError(error);
    this.busy.hidden = this.shown !== 'full' || !!error || !(el.state === 'loading' || el.seeking || this.waiting);
    this.fullscreenButton.setAttribute('aria-label', document.fullscreenElement === el ? 'Exit fullscreen' : 'Fullscreen');
    this.fullscreenButton.textContent = document.fullscreenElement === el ? '⤡' : '⤢';
  }

  private refreshMenus(): void {
    const player = this.el.player;
    const scene = player?.scene ?? null;
    if (scene !== this.scene) {
      this.scene = scene;
      this.qualitySelect.replaceChildren(...qualityChoices(scene).map((c) => new Option(c.label, c.value)));
      if (player) this.modeSelect.value = player.getStats().mode;
    }
    // The highest rung stands for a cap above the ladder; an open menu is left to the viewer.
    const cap = this.el.maxQuality;
    const highest = this.qualitySelect.options.length - 2;
    if (this.el.shadowRoot?.activeElement !== this.qualitySelect) {
      this.qualitySelect.value = cap === null || highest < 0 ? 'auto' : String(Math.min(cap, highest));
    }
  }

  private showError(error: HoloquicMediaError): void {
    const title = `Cannot play (error ${error.code}, ${ERROR_NAMES[error.code] ?? 'unknown'})`;
    if (this.errorBox.firstElementChild?.textContent === title && this.errorBox.lastElementChild?.textContent === error.message) return;
    const strong = element('strong', {});
    strong.textContent = title;
    const message = element('p', {});
    message.textContent = error.message;
    this.errorBox.replaceChildren(strong, message);
  }

  private listen(): void {
    const el = this.el;
    this.playButton.addEventListener('click', () => {
      if (el.paused) void el.play().catch(() => undefined);
      else el.pause();
      this.refresh();
    });
    // Dragging shows the time under the thumb; letting go (or a click on the track) seeks.
    this.timeline.addEventListener('input', () => {
      this.dragging = true;
      this.refresh();
    });
    this.timeline.addEventListener('change', () => {
      this.dragging = false;
      el.currentTime = Number(this.timeline.value);
      this.refresh();
    });
    this.timeline.addEventListener('keydown', (e) => {
      const target = timelineKeyTarget(e.key, el.currentTime, el.duration);
      if (target === null) return;
      e.preventDefault();
      el.currentTime = target;
      this.timeline.value = String(target);
      this.refresh();
    });
    this.modeSelect.addEventListener('change', () => el.setMode(this.modeSelect.value as PlayerMode));
    this.qualitySelect.addEventListener('change', () => {
      el.maxQuality = capOfChoice(this.qualitySelect.value);
    });
    this.fullscreenButton.addEventListener('click', () => {
      const request = document.fullscreenElement === el ? document.exitFullscreen() : el.requestFullscreen();
      void request.catch(() => undefined);
    });
    const on = (types: string[], f: () => void) => {
      for (const type of types) el.addEventListener(type, () => {
        f();
        this.refresh();
        this.wake();
      });
    };
    on(['waiting', 'seeking'], () => (this.waiting = true));
    on(['playing', 'seeked', 'pause', 'ended', 'error'], () => (this.waiting = false));
    on(['play'], () => (this.waiting = el.state !== 'playing'));
    on(['loadedmetadata', 'statechange', 'timeupdate', 'qualitychange'], () => undefined);
    el.addEventListener('modechange', (e) => {
      this.modeSelect.value = (e as CustomEvent<{ mode: PlayerMode }>).detail.mode;
    });
    // The bar comes back on pointer movement (a tap on touch screens) and on keyboard focus.
    el.addEventListener('pointermove', () => this.wake());
    el.addEventListener('pointerdown', () => this.wake());
    this.bar.addEventListener('focusin', () => this.wake());
    this.timeline.addEventListener('pointerup', () => (this.dragging = false));
  }

  /** Shows the bar, and fades it again after `IDLE_MS` of stillness while playing. */
  private wake(): void {
    this.bar.classList.remove('idle');
    if (this.idleTimer !== null) clearTimeout(this.idleTimer);
    this.idleTimer = setTimeout(() => {
      this.idleTimer = null;
      if (!this.el.paused && !this.el.error) this.bar.classList.add('idle');
    }, IDLE_MS);
  }

  private startRefreshing(): void {
    if (this.refreshTimer !== null) return;
    this.refreshTimer = setInterval(() => this.refresh(), REFRESH_MS);
    // Only while shown and connected: a document listener would keep a removed element alive.
    document.addEventListener('fullscreenchange', this.onFullscreenChange);
  }

  private stopRefreshing(): void {
    if (this.refreshTimer !== null) clearInterval(this.refreshTimer);
    this.refreshTimer = null;
    document.removeEventListener('fullscreenchange', this.onFullscreenChange);
  }

  /** Offers an Enter VR / AR button per immersive mode the browser supports (none with `controls="off"`). */
  private rebuildXRButtons(): void {
    const build = ++this.xrBuild;
    this.xr.replaceChildren();
    const view = this.view;
    if (!view || this.shown === 'none') return;
    void view.supportedXRModes().then((modes) => {
      if (build !== this.xrBuild) return;
      for (const mode of modes) {
        const button = element('button', { type: 'button' });
        button.textContent = mode === 'immersive-vr' ? 'Enter VR' : 'Enter AR';
        button.addEventListener('click', () => {
          view.enterXR(mode).catch((e: unknown) => this.onXRError(`${mode}: ${e instanceof Error ? e.message : String(e)}`));
        });
        this.xr.append(button);
      }
    });
  }
}

/** `document.createElement` with properties and attributes (names with a dash or `role` are attributes). */
function element<K extends keyof HTMLElementTagNameMap>(tag: K, props: Record<string, string>): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(props)) {
    if (name.includes('-') || name === 'role') node.setAttribute(name, value);
    else (node as unknown as Record<string, string>)[name] = value;
  }
  return node;
}
