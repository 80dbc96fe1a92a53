/**
 * `<holoquic-player>`'s attributes: which exist, how each is read into player options, and what
 * changing one does to a loaded element — applied to the running player (`LIVE_ATTRIBUTES`), or
 * the player replaced by one built from the new values (`RELOAD_ATTRIBUTES`; `src` starts the new
 * scene from 0, the others keep the position).
 */
import { PLAYER_MODES, type PlayerMode } from '../model/modes';
import type { Player } from '../player/player';
import type { PlayerOptions } from '../player/options';
import { SPLAT_SHAPES, type SplatShape } from '../render/pointMaterial';
import type { SceneRenderer } from '../render/sceneRenderer';
import { reliableCountFromDegree } from '../player/policy';

/** Applied to the running player and renderer as they change. */
export const LIVE_ATTRIBUTES = ['mode', 'splat', 'loop', 'abr', 'k', 'reliability', 'max-quality', 'controls', 'autoplay', 'when-hidden'] as const;
/** Read when the player is built: a change builds a new one (the old one closed, its workers and GPU buffers released). */
export const RELOAD_ATTRIBUTES = ['src', 'origin', 'buffer', 'volatile-buffer', 'stall-timeout', 'duration', 'render', 'reconstruction', 'qoe-kept'] as const;

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
  const wholeNumber = (name: string): number | undefined => {
    const value = number(name);
    if (value !== undefined && !Number.isSafeInteger(value)) throw new AttributeError(`attribute ${name}="${get(name)}" is not a whole number`);
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
    maxQuality: maxQualityAttribute(get('max-quality')),
    qoeSegmentsKept: wholeNumber('qoe-kept'),
  };
}

/**
 * Hands live attribute `name`'s value (read by `get`) to the running player and renderer. A value
 * they cannot use is ignored (at load it fails the element). Delivery options set in code
 * (`options`) win over the `abr`, `k` and `reliability` attributes, as they do at load.
 */
export function applyLiveAttribute(
  name: string, get: (name: string) => string | null, options: Pick<PlayerOptions, 'abr' | 'reliableCount' | 'reliability'>,
  player: Player | null, view: SceneRenderer | null,
): void {
  const value = get(name);
  try {
    if (name === 'splat' && value && view && SPLAT_SHAPES.includes(value as SplatShape)) view.setSplat(value as SplatShape);
    if (!player) return;
    if (name === 'mode' && value && PLAYER_MODES.includes(value as PlayerMode)) player.setMode(value as PlayerMode);
    if (name === 'loop') player.loop = loopAttribute(value);
    if (name === 'max-quality') player.maxQuality = maxQualityAttribute(value);
    if (name === 'abr' || name === 'k' || name === 'reliability') {
      const k = get('k');
      player.setDelivery({
        abr: options.abr ?? get('abr') ?? undefined,
        reliableCount: options.reliableCount ?? (k === null || k === '' ? undefined : Number(k)),
        reliability: options.reliability ?? reliabilityAttribute(get('reliability')),
      });
    }
  } catch {
    // An invalid value on a running player is ignored.
  }
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

/** `max-quality`: the highest ladder index fetched (0 = lowest); absent, empty or `auto`: no cap. */
export function maxQualityAttribute(text: string | null): number | null {
  if (text === null || text === '' || text === 'auto') return null;
  const cap = Number(text);
  if (!Number.isInteger(cap) || cap < 0) throw new AttributeError(`attribute max-quality="${text}" is not auto or a whole number ≥ 0`);
  return cap;
}

/** `loop` is a boolean attribute, as `<video>`'s: present (any value) loops, absent ends at the end of the pass. */
export function loopAttribute(text: string | null): boolean {
  return text !== null;
}
