/**
 * The element's events: the player's own re-dispatched on the element, and the media events a
 * `<video>` would fire, derived from them — `playing` when content moves (startup done, a freeze
 * over, a seek done while playing), `waiting` when it stands still for want of data, `seeking` /
 * `seeked` (a loop into the next pass counts as a seek to 0, as `<video loop>`'s does),
 * `timeupdate` about 4 times a second while the position moves, `ended`, `error` with its code,
 * `durationchange` when a growing scene's pass grows, `waiting` at its live edge too,
 * `qualitychange` and `transportchange`. It also keeps the promises `play()` returned until
 * playback moves (resolved) or cannot (rejected as `HTMLMediaElement.play()`'s are).
 */
import type { Player } from '../player/player';
import { type PlayerErrorCode, PLAYER_ERROR } from '../player/report';
import type { TransportState } from '../transport/types';
import type { HoloquicPlayerEventMap } from './mediaTypes';

/** Seconds between `timeupdate` events while playing (HTMLMediaElement fires them every 15–250 ms). */
const TIMEUPDATE_S = 0.25;

/** The player's events the element re-dispatches with the same detail. */
export const PLAYER_EVENTS = ['statechange', 'segment', 'freeze', 'modechange', 'started', 'abandoned', 'transportstate', 'scenegrow', 'liveedge', 'manifesterror', 'qoesegment'] as const;

/** The `DOMException` name `play()` rejects with for each error code. */
const PLAY_REJECTION: Record<PlayerErrorCode, string> = {
  [PLAYER_ERROR.ABORTED]: 'AbortError',
  [PLAYER_ERROR.NETWORK]: 'NetworkError',
  [PLAYER_ERROR.DECODE]: 'EncodingError',
  [PLAYER_ERROR.SRC_NOT_SUPPORTED]: 'NotSupportedError',
};

export class MediaEvents {
  private frozen = false;
  /** Standing at the end of what a growing scene has published (a wait for data, not a freeze). */
  private atLiveEdge = false;
  private started = false;
  private qualities = '';
  private transport = '';
  private transportState: TransportState | null = null;
  private timer: ReturnType<typeof setInterval> | null = null;
  private lastTime = NaN;
  private plays: Array<{ resolve: () => void; reject: (e: DOMException) => void }> = [];
  private detach: (() => void) | null = null;

  /**
   * `target` is the element; `currentTime` reads its position; `playing` says whether the viewer
   * wants playback (the element's `!paused`), `onEnded` is told when a pass ended.
   */
  constructor(
    private readonly target: EventTarget,
    private readonly currentTime: () => number,
    private readonly onEnded: () => void,
  ) {}

  /** Whether content is moving: playing, started, neither frozen nor seeking. */
  moving(player: Player | null): boolean {
    return !!player && player.state === 'playing' && this.started && !this.frozen && !this.atLiveEdge && !player.seeking;
  }

  /** Content stands still for want of data: frozen, or at a growing scene's live edge. */
  get isFrozen(): boolean {
    return this.frozen || this.atLiveEdge;
  }

  dispatch<K extends keyof HoloquicPlayerEventMap>(type: K, detail: HoloquicPlayerEventMap[K]['detail']): void {
    this.target.dispatchEvent(new CustomEvent(type, { detail }));
  }

  /** Dispatches a media event whose detail is the current time. */
  timed(type: 'play' | 'playing' | 'pause' | 'waiting' | 'seeking' | 'seeked' | 'timeupdate' | 'ended'): void {
    this.dispatch(type, { currentTime: this.currentTime() });
  }

  /** Follows `player` (and stops following the previous one). */
  follow(player: Player): void {
    this.release();
    const listeners: Array<[string, (e: Event) => void]> = [];
    const on = (type: string, f: (detail: never) => void) => listeners.push([type, (e) => f((e as CustomEvent).detail as never)]);
    for (const type of PLAYER_EVENTS) on(type, (detail) => this.target.dispatchEvent(new CustomEvent(type, { detail })));
    on('statechange', () => this.onState(player));
    on('started', () => {
      this.started = true;
      this.nowMoving(player);
    });
    on('freeze', (detail: { type: string }) => {
      this.frozen = detail.type === 'freeze-start';
      if (this.frozen) this.timed('waiting');
      else this.nowMoving(player);
    });
    on('liveedge', (detail: { waiting: boolean }) => {
      this.atLiveEdge = detail.waiting;
      if (detail.waiting) this.timed('waiting');
      else this.nowMoving(player);
    });
    on('durationchange', (detail: { duration: number }) => this.dispatch('durationchange', detail));
    on('seeking', () => {
      this.timed('seeking');
      if (player.state === 'playing' && this.started) this.timed('waiting');
    });
    on('seeked', () => {
      this.timed('timeupdate');
      this.timed('seeked');
      this.nowMoving(player);
    });
    on('looped', () => {
      this.timed('seeking');
      this.timed('timeupdate');
      this.timed('seeked');
    });
    on('segment', (detail: { qualities: Record<string, number> }) => {
      const key = JSON.stringify(detail.qualities);
      if (key !== this.qualities && Object.keys(detail.qualities).length > 0) {
        this.qualities = key;
        this.dispatch('qualitychange', { qualities: detail.qualities });
      }
    });
    on('transportstate', (detail: { state: TransportState }) => {
      this.transportState = detail.state;
      this.checkTransport(player);
    });
    on('modechange', () => this.checkTransport(player));
    on('error', (detail: { message: string; code: PlayerErrorCode }) => {
      this.stopTimer();
      this.dispatch('error', detail);
      this.rejectPlays(detail.code, detail.message);
    });
    for (const [type, f] of listeners) player.addEventListener(type, f);
    this.detach = () => {
      for (const [type, f] of listeners) player.removeEventListener(type, f);
    };
  }

  /** The scene is loaded: `loadedmetadata`, and the transport chosen. */
  loaded(player: Player): void {
    this.dispatch('loadedmetadata', { duration: player.duration });
    this.transportState = player.getStats().transport === 'webtransport' ? 'connected' : null;
    this.checkTransport(player);
  }

  /** A promise for `play()`: resolved once content moves, rejected if it cannot. */
  whenPlaying(player: Player | null): Promise<void> {
    if (this.moving(player)) return Promise.resolve();
    return new Promise((resolve, reject) => this.plays.push({ resolve, reject }));
  }

  /** Rejects the pending `play()` promises (a pause, a new source, an error). */
  rejectPlays(code: PlayerErrorCode, message: string): void {
    const plays = this.plays;
    this.plays = [];
    for (const p of plays) p.reject(new DOMException(message, PLAY_REJECTION[code]));
  }

  /** Stops following the player: no more events from it, no timer; pending plays stay pending. */
  release(): void {
    this.detach?.();
    this.detach = null;
    this.stopTimer();
    this.frozen = false;
    this.atLiveEdge = false;
    this.started = false;
    this.qualities = '';
    this.transport = '';
    this.transportState = null;
  }

  private onState(player: Player): void {
    const state = player.state;
    if (state === 'playing') this.nowMoving(player);
    else this.stopTimer();
    if (state === 'paused') this.timed('timeupdate');
    if (state === 'ended') {
      this.onEnded();
      this.timed('timeupdate');
      this.timed('ended');
    }
  }

  /** Content moves again: `playing`, the pending plays resolved, `timeupdate` ticking. */
  private nowMoving(player: Player): void {
    if (!this.moving(player)) return;
    this.timed('playing');
    const plays = this.plays;
    this.plays = [];
    for (const p of plays) p.resolve();
    if (this.timer !== null) return;
    this.timer = setInterval(() => {
      const t = this.currentTime();
      if (t === this.lastTime) return;
      this.lastTime = t;
      this.timed('timeupdate');
    }, TIMEUPDATE_S * 1000);
  }

  private stopTimer(): void {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
  }

  private checkTransport(player: Player): void {
    const stats = player.getStats();
    const detail = { transport: stats.transport, state: stats.transport === 'http2' ? null : this.transportState, fallbackReason: stats.fallbackReason };
    const key = JSON.stringify(detail);
    if (key === this.transport) return;
    this.transport = key;
    this.dispatch('transportchange', detail);
  }
}
