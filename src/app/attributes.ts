/**
 * `<holoquic-player>`'s attributes: which exist, how each is read into player options, and what
 * changing one does to a loaded element — applied to the running player (`LIVE_ATTRIBUTES`), or
 * the player replaced by one built from the new values (`RELOAD_ATTRIBUTES`; `src` starts the new
 * scene from 0, the others keep the position).
 */
import { PLAYER_MODES, type PlayerMode } from '../model/modes';
import type { PlayerOptions } from '../player/player';
import { reliableCountFromDegree } from '../player/policy';

/** Applied to the running player and renderer as they change. */
export const LIVE_ATTRIBUTES = ['mode', 'splat', 'loop', 'abr', 'k', 'reliability', 'controls', 'autoplay', 'when-hidden'] as const;
/** Read when the player is built: a change builds a new one (the old one closed, its workers and GPU buffers released). */
export const RELOAD_ATTRIBUTES = ['src', 'origin', 'buffer', 'volatile-buffer', 'stall-timeout', 'duration', 'render', 'reconstruction'] as const;

/** An attribute with a value the player cannot use; its message names it. */
export class AttributeError extends Error {}

/** Player options from the attributes (`get` reads one; null = absent). Throws `AttributeError`. */
export function optionsFromAttributes(get: (name: string) => string | null): Omit<PlayerOptions, 'manifestUrl' | 'decoder'> {
  const number = (name: string): number | undefined => {
    const text = get(name);
    if (text === null || text === '') return undefined;
    const value = Number(text);
    if (!Number.isFinite(value) || value < 0) throw new AttributeError(`attribute ${name}="${text}" is not a non-negative number`);
    return value;
  };
  const positive = (name: string): number | undefined => {
    const value = number(name);
    if (value === 0) throw new AttributeError(`attribute ${name}="0" must be positive`);
    return value;
  };
  return {
    origin: get('origin') ?? undefined,
    mode: modeAttribute(get('mode')),
    abr: get('abr') ?? undefined,
    reliableCount: number('k'),
    reliability: reliabilityAttribute(get('reliability')),
    bufferTargetS: positive('buffer'),
    volatileBufferTargetS: positive('volatile-buffer'),
    stallTimeoutS: number('stall-timeout'),
    durationS: number('duration'),
    loop: loopAttribute(get('loop')),
  };
}

export function modeAttribute(text: string | null): PlayerMode | undefined {
  if (text === null) return undefined;
  if (!PLAYER_MODES.includes(text as PlayerMode)) throw new AttributeError(`attribute mode="${text}" is not one of ${PLAYER_MODES.join(', ')}`);
  return text as PlayerMode;
}

/** `Q0` … `Q100`: the share of objects sent reliably (docs/player.md → Modes and rules). */
export function reliabilityAttribute(text: string | null): string | undefined {
  if (text === null || text === '') return undefined;
  try {
    reliableCountFromDegree(text.toUpperCase(), 1);
  } catch {
    throw new AttributeError(`attribute reliability="${text}" is not Q0 … Q100`);
  }
  return text.toUpperCase();
}

/** Looping is on unless `loop="false"`: scenes are made to loop (docs/embedding.md → "Time"). */
export function loopAttribute(text: string | null): boolean {
  return text === null || text !== 'false';
}
