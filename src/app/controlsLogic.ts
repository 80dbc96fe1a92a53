/**
 * What the element's built-in controls decide, without the DOM: which controls the `controls`
 * attribute asks for, how a time reads, where a key on the timeline seeks to, how the buffered
 * ranges paint the timeline, and the entries of the quality menu. Pure, so unit-tested.
 */
import type { SceneModel } from '../model/scene';

/**
 * What the `controls` attribute shows. Absent: only the Enter VR / AR buttons (what the element
 * always showed); present (`controls`, `controls=""`, any other value): the whole control bar;
 * `controls="off"` or `"false"`: nothing.
 */
export type ControlsShown = 'xr' | 'full' | 'none';

export function controlsShown(attribute: string | null): ControlsShown {
  if (attribute === null) return 'xr';
  return attribute === 'off' || attribute === 'false' ? 'none' : 'full';
}

/** Seconds as `m:ss` (`h:mm:ss` from an hour on); `-:--` when unknown. Whole seconds, rounded down. */
export function formatTime(seconds: number): string {
  if (!Number.isFinite(seconds) || seconds < 0) return '-:--';
  const whole = Math.floor(seconds + 1e-6);
  const h = Math.floor(whole / 3600);
  const m = Math.floor((whole % 3600) / 60);
  const s = String(whole % 60).padStart(2, '0');
  return h > 0 ? `${h}:${String(m).padStart(2, '0')}:${s}` : `${m}:${s}`;
}

/** What a screen reader says for the timeline's value: "0:12 of 0:30". */
export function timeText(currentS: number, durationS: number): string {
  return `${formatTime(currentS)} of ${formatTime(durationS)}`;
}

/** Seconds an arrow key moves the timeline (as media players commonly do). */
export const KEY_STEP_S = 5;

/**
 * Where a key pressed on the focused timeline seeks to, or null for a key it leaves alone: left /
 * down back `KEY_STEP_S`, right / up forward, PageDown / PageUp two steps, Home the start, End the end;
 * clamped to [0, duration].
 */
export function timelineKeyTarget(key: string, currentS: number, durationS: number): number | null {
  if (!Number.isFinite(durationS) || durationS <= 0) return null;
  const moves: Record<string, number> = {
    ArrowLeft: -KEY_STEP_S, ArrowDown: -KEY_STEP_S, ArrowRight: KEY_STEP_S, ArrowUp: KEY_STEP_S,
    PageDown: -2 * KEY_STEP_S, PageUp: 2 * KEY_STEP_S,
  };
  let target: number;
  if (key === 'Home') target = 0;
  else if (key === 'End') target = durationS;
  else if (key in moves) target = currentS + moves[key];
  else return null;
  return Math.min(durationS, Math.max(0, target));
}

/**
 * The timeline track's background: buffered ranges in `buffered`, the rest in `rest`, as a CSS
 * `linear-gradient` with hard stops at each range's ends (percent of the duration).
 */
export function bufferedGradient(ranges: ReadonlyArray<readonly [number, number]>, durationS: number, buffered: string, rest: string): string {
  if (!(durationS > 0) || ranges.length === 0) return rest;
  const pct = (s: number) => `${((Math.min(durationS, Math.max(0, s)) / durationS) * 100).toFixed(2)}%`;
  const stops: string[] = [];
  let at = 0;
  for (const [start, end] of [...ranges].sort((a, b) => a[0] - b[0])) {
    if (end <= start) continue;
    stops.push(`${rest} ${pct(at)}`, `${rest} ${pct(start)}`, `${buffered} ${pct(start)}`, `${buffered} ${pct(end)}`);
    at = end;
  }
  stops.push(`${rest} ${pct(at)}`, `${rest} 100%`);
  return `linear-gradient(to right, ${stops.join(', ')})`;
}

/** One entry of the quality menu: `value` is `'auto'` or a ladder index. */
export interface QualityChoice {
  value: string;
  label: string;
}

/**
 * The quality menu for `scene`: Auto (the player chooses), then one cap per rung of the longest
 * ladder, highest first, each labelled with its rung and, where every object has that rung, the
 * scene's points per frame at it.
 */
export function qualityChoices(scene: SceneModel | null): QualityChoice[] {
  const choices: QualityChoice[] = [{ value: 'auto', label: 'Auto' }];
  if (!scene) return choices;
  const rungs = Math.max(0, ...scene.objects.map((o) => o.representations.length));
  for (let i = rungs - 1; i >= 0; i--) {
    const everyObject = scene.objects.every((o) => o.representations.length > i);
    const points = everyObject ? scene.objects.reduce((sum, o) => sum + o.representations[i].pointsPerFrame, 0) : 0;
    const rung = i === rungs - 1 ? ' (highest)' : i === 0 ? ' (lowest)' : '';
    choices.push({ value: String(i), label: `Up to ${i + 1}${rung}${points > 0 ? ` · ${compactCount(points)} points` : ''}` });
  }
  return choices;
}

/** 1234567 → "1.2 M", 45600 → "46 k". */
export function compactCount(n: number): string {
  if (n >= 1e6) return `${(n / 1e6).toFixed(1)} M`;
  if (n >= 1e3) return `${Math.round(n / 1e3)} k`;
  return String(Math.round(n));
}

/** The quality cap a menu value stands for (null: Auto). */
export function capOfChoice(value: string): number | null {
  const cap = Number(value);
  return value === 'auto' || !Number.isInteger(cap) || cap < 0 ? null : cap;
}
