/**
 * The round-trip check of the QoE goals (issue 35, goal 3), computed from the measured cells: a
 * longer one-way delay should cost the player little of what the link gives it. For every cell
 * measured at more than one delay, each longer delay is compared with the shortest (same trace,
 * buffer, loss and mode): the object bytes delivered per second should be at least
 * `ROUND_TRIP_GOAL` × those at the shortest delay. Beside it, busy goodput — which counts the
 * request round trip every busy period begins with, so it falls with the delay at one segment a
 * second whatever the transport does (docs/results.md, "Goodput at 50 ms one way") — and visible
 * quality, what the viewer saw.
 */
import { type Cell, compareModes, type Stat } from './aggregate';
import { markdownTable } from './markdown';
import { EPSILON } from './stats';

/** The share of the shortest delay's delivered rate a longer delay should keep. */
export const ROUND_TRIP_GOAL = 0.8;

export interface RoundTripRow {
  trace: string;
  /** The player's buffer target, null for its default. */
  bufferS: number | null;
  lossPct: number;
  mode: string;
  /** The shortest delay measured for this trace, buffer, loss and mode, and the longer one compared with it. */
  referenceDelayMs: number;
  delayMs: number;
  /** Longer ÷ shorter of the means; NaN where either has no usable run. */
  delivered: number;
  busyGoodput: number;
  visibleQuality: number;
  /** delivered ≥ ROUND_TRIP_GOAL; null when the ratio is unknown. */
  holds: boolean | null;
  /** Why the verdict is weaker than it looks (one run, failed runs). */
  notes: string[];
}

const ratio = (longer: Stat, shorter: Stat) =>
  longer.n > 0 && shorter.n > 0 && shorter.mean > 0 ? longer.mean / shorter.mean : NaN;

/** The check for every cell measured at two or more delays, in the cells' order. */
export function checkRoundTrip(cells: readonly Cell[]): RoundTripRow[] {
  const groups = new Map<string, Cell[]>();
  for (const c of cells) {
    // Only runs through the same bottleneck queue compare (a queue of fixed ms is fewer round trips at a longer delay).
    const key = JSON.stringify([c.trace, c.bufferS, c.queueRtts, c.lossPct, c.mode]);
    groups.set(key, [...(groups.get(key) ?? []), c]);
  }
  const rows: RoundTripRow[] = [];
  for (const group of groups.values()) {
    const [reference, ...longer] = [...group].sort((a, b) => a.delayMs - b.delayMs);
    for (const c of longer) {
      const delivered = ratio(c.deliveredMbps, reference.deliveredMbps);
      const notes: string[] = [];
      for (const cell of [reference, c]) {
        if (cell.failed) notes.push(`${cell.failed} of ${cell.runs} runs at ${cell.delayMs} ms failed`);
        if (cell.deliveredMbps.n === 1) notes.push(`one run at ${cell.delayMs} ms`);
      }
      rows.push({
        trace: c.trace, bufferS: c.bufferS, lossPct: c.lossPct, mode: c.mode, referenceDelayMs: reference.delayMs, delayMs: c.delayMs,
        delivered, busyGoodput: ratio(c.busyGoodputMbps, reference.busyGoodputMbps), visibleQuality: ratio(c.meanVisibleQuality, reference.meanVisibleQuality),
        holds: Number.isFinite(delivered) ? delivered >= ROUND_TRIP_GOAL - EPSILON : null, notes,
      });
    }
  }
  return rows.sort((a, b) => a.trace.localeCompare(b.trace) || (b.bufferS ?? Infinity) - (a.bufferS ?? Infinity) ||
    a.lossPct - b.lossPct || compareModes(a.mode, b.mode) || a.delayMs - b.delayMs);
}

const times = (x: number) => (Number.isFinite(x) ? `${x.toFixed(2)} ×` : '–');

/** Header and rows of the round-trip table. */
export function roundTripTable(rows: readonly RoundTripRow[]): { headers: string[]; rows: string[][] } {
  const headers = ['trace', 'buffer', 'loss', 'mode', 'delay', 'delivered', 'busy goodput', 'visible quality', `holds (delivered ≥ ${ROUND_TRIP_GOAL} ×)`];
  const body = rows.map((r) => [
    r.trace, r.bufferS === null ? 'default' : `${r.bufferS} s`, `${r.lossPct} %`, r.mode, `${r.delayMs} ÷ ${r.referenceDelayMs} ms`,
    times(r.delivered), times(r.busyGoodput), times(r.visibleQuality),
    (r.holds === null ? '–' : r.holds ? 'yes' : 'NO') + (r.notes.length ? ` (${r.notes.join('; ')})` : ''),
  ]);
  return { headers, rows: body };
}

/** What the table's entries mean, for beneath it. */
export const ROUND_TRIP_LEGEND = 'Each entry is the longer one-way delay\'s mean over the shorter one\'s, same trace, buffer, loss and mode. ' +
  'Delivered: object bytes received per second of the run. Busy goodput includes the round trip each request waits before its first byte. ' +
  `The goal: a longer delay keeps at least ${ROUND_TRIP_GOAL} × the delivered rate.`;

/** The check as Markdown (`roundtrip.md` of an experiment directory); empty when no cell was measured at two delays. */
export function roundTripMarkdown(cells: readonly Cell[]): string {
  const rows = checkRoundTrip(cells);
  if (rows.length === 0) return '';
  const { headers, rows: body } = roundTripTable(rows);
  const held = rows.filter((r) => r.holds === true).length;
  return [`${held} of ${rows.length} comparisons hold.`, '', ...markdownTable(headers, body), '', ROUND_TRIP_LEGEND, ''].join('\n');
}
