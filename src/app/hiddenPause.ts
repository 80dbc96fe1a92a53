/**
 * Pausing `<holoquic-player>` while nobody can see it, and resuming when it is seen again.
 *
 * A hidden page gets no animation frames and its timers are throttled (to once a second, then
 * once a minute): playing on would request late and freeze unseen, and the QoE log would count
 * those freezes. So the element pauses while nobody can see it — the page hidden, or, while a
 * headset presents, the headset's session hidden (taken off; the headset, not the tab, decides
 * what is seen then) — and resumes when it is seen again. The element's `paused` does not
 * change: the viewer did not pause. `when-hidden="play"` opts out.
 */
import type { Player } from '../player/player';

/** What the rule reads of the element, each time visibility may have changed. */
export interface HiddenPauseInputs {
  /** The element's player, if it has one yet. */
  player(): Player | null;
  /** The headset session's visibility while presenting; null on a screen (the page's then counts). */
  xrVisibility(): XRVisibilityState | null;
  /** The element keeps playing unseen (`when-hidden="play"`). */
  playsWhenHidden(): boolean;
}

export class HiddenPause {
  /** The element paused itself because it could not be seen: being seen again resumes it. */
  private pausedWhileHidden = false;

  constructor(private readonly inputs: HiddenPauseInputs) {}

  /**
   * Looks at visibility again and pauses or resumes. An arrow function, so it can be handed as
   * is to `visibilitychange` listeners (the document's and the XR session's).
   */
  readonly update = (): void => {
    const player = this.inputs.player();
    if (!player) return;
    const xr = this.inputs.xrVisibility();
    const unseen = !this.inputs.playsWhenHidden() && (xr !== null ? xr === 'hidden' : document.visibilityState === 'hidden');
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

  /** The viewer played or paused: being seen again must not undo (or repeat) it. */
  viewerActed(): void {
    this.pausedWhileHidden = false;
  }
}
