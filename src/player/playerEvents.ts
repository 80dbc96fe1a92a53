/**
 * What the `Player` (player.ts) tells its listeners of the playout loop: each event of the loop
 * (playoutEvents.ts) as one of the Player's own DOM events, and each QoE record streamed out.
 */
import type { QoeSegment } from '../model/qoe';
import type { PlayoutEvent } from './playoutEvents';

/** What the relay does to the player: its events, and the two loop events that change its state. */
export interface PlayerEventTarget {
  emit(type: string, detail: unknown): void;
  /** The end of a pass without looping: paused at the last frame, as a media element is. */
  passEnded(): void;
  /** The playout loop ended on an error of its own. */
  failed(error: Error): void;
}

/** Hands one playout event on as the Player's (`segment`, `seeked`, `freeze`, `liveedge`, …). */
export function relayPlayoutEvent(event: PlayoutEvent, to: PlayerEventTarget): void {
  if (event.type === 'segment') to.emit('segment', { index: event.index, qualities: event.qualities });
  else if (event.type === 'seeked') to.emit('seeked', { positionS: event.positionS, index: event.index });
  else if (event.type === 'looped') to.emit('looped', { index: event.index });
  // play() then starts the pass again.
  else if (event.type === 'ended') to.passEnded();
  else if (event.type === 'freeze-start' || event.type === 'freeze-end') to.emit('freeze', event);
  // The playout loop ended on an error of its own (not network or decode trouble, which it
  // survives): playback is over, and a log cut short must not read as a finished run.
  else if (event.type === 'error') to.failed(new Error(`playback stopped: ${event.message}`));
  else if (event.type === 'started') to.emit('started', event);
  else if (event.type === 'abandoned') to.emit('abandoned', event);
  else if (event.type === 'live-edge') to.emit('liveedge', { waiting: event.waiting });
}

/**
 * A QoE record just written, already on the log's time base: to the `onQoeSegment` sink and as
 * a `qoesegment` event, so a host can keep every record of a long run while the player keeps
 * only the most recent (`qoeSegmentsKept`).
 */
export function publishQoeRecord(record: QoeSegment, sink: ((record: QoeSegment) => void) | undefined, to: Pick<PlayerEventTarget, 'emit'>): void {
  try {
    sink?.(record);
  } catch (e) {
    // The host's sink failing must not stop playback (as a throwing event listener does not).
    console.error('onQoeSegment threw', e);
  }
  to.emit('qoesegment', record);
}
