/**
 * The dominance check of the QoE goals (issue 35, goal 1), computed from the measured cells: in
 * every cell (trace × delay × buffer × loss) `adaptive` should show visible quality within the
 * 95 % confidence interval of the best fixed mode or above it, and freeze no more often than the
 * mode that froze least. One table for the HTML report and the same as Markdown for
 * docs/results.md.
 *
 * Beside it, the same comparison on seen quality (the quality shown weighted by what the viewer
 * saw at playout, docs/qoe.md), which is not part of the goal's verdict: visible quality weights
 * by the area each mode's player *predicted* when it asked, so two modes are weighted differently
 * when their predictions differ (a longer buffer target predicts further ahead), and an object
 * predicted out of view counts for nothing, however much of it the viewer then saw.
 */
import { type Cell, compareModes, type Stat } from './aggregate';
import { markdownTable } from './markdown';
import { CI_NOTE, EPSILON } from './stats';

/** The mode whose choice is checked; every other mode measured in a cell is a fixed mode. */
export const ADAPTIVE_MODE = 'adaptive';

/** Where `adaptive`'s mean visible quality lies against the best fixed mode's interval. */
export type QualityVerdict = 'above' | 'within' | 'below';

export interface DominanceRow {
  condition: string;
  lossPct: number;
  /** The cell's modes, in table order. */
  cells: Cell[];
  /** The fixed mode with the highest mean visible quality, if any fixed mode has usable runs. */
  bestFixed?: Cell;
  adaptive?: Cell;
  /** The lowest mean freeze count of the fixed modes, and which modes have it. */
  fewestFreezes?: { perRun: number; modes: string[] };
  /**
   * `above`: adaptive's mean ≥ the best fixed mode's; `within`: below it but inside its 95 %
   * interval; `below`: under its lower bound (or under its mean when it has one run and so no
   * interval). Null without both.
   */
  quality: QualityVerdict | null;
  /** Adaptive's mean freezes per run ≤ the fewest of the fixed modes. Null without both. */
  freezes: boolean | null;
  /** The same comparison on seen quality (not part of `holds`): the best fixed mode by it, and the verdict. */
  seen: { bestFixed?: Cell; quality: QualityVerdict | null };
  /** Both parts hold; null when a part is unknown, or it would hold but some of adaptive's runs failed (a failed run may have frozen). */
  holds: boolean | null;
  /** Why a verdict is weaker than it looks (one run, failed runs). */
  notes: string[];
}

const usable = (s: Stat) => s.n > 0 && Number.isFinite(s.mean);

/**
 * Where adaptive's mean of `measure` lies against the best fixed mode's (by that measure): at or
 * above its mean, inside its 95 % interval, or below (below its mean when it has no interval).
 */
function compareWithBest(adaptive: Cell | undefined, fixed: readonly Cell[], measure: (c: Cell) => Stat): { bestFixed?: Cell; quality: QualityVerdict | null; singleRun: boolean } {
  const ranked = fixed.filter((c) => usable(measure(c)));
  const bestFixed = ranked.reduce<Cell | undefined>((best, c) => (!best || measure(c).mean > measure(best).mean ? c : best), undefined);
  if (!adaptive || !usable(measure(adaptive)) || !bestFixed) return { bestFixed, quality: null, singleRun: false };
  const best = measure(bestFixed), own = measure(adaptive).mean;
  const lower = Number.isFinite(best.ci95) ? best.mean - best.ci95 : best.mean;
  const quality = own >= best.mean - EPSILON ? 'above' : own >= lower - EPSILON ? 'within' : 'below';
  return { bestFixed, quality, singleRun: !Number.isFinite(best.ci95) };
}

/** The check for every cell of the measured matrix, in the cells' order. */
export function checkDominance(cells: readonly Cell[]): DominanceRow[] {
  const groups = new Map<string, Cell[]>();
  for (const c of cells) {
    const key = JSON.stringify([c.condition, c.lossPct]);
    groups.set(key, [...(groups.get(key) ?? []), c]);
  }
  return [...groups.values()].map((group) => {
    const sorted = [...group].sort((a, b) => compareModes(a.mode, b.mode));
    const adaptive = sorted.find((c) => c.mode === ADAPTIVE_MODE && usable(c.meanVisibleQuality));
    const fixed = sorted.filter((c) => c.mode !== ADAPTIVE_MODE);
    const visible = compareWithBest(adaptive, fixed, (c) => c.meanVisibleQuality);
    const { bestFixed, quality } = visible;
    const seenCheck = compareWithBest(sorted.find((c) => c.mode === ADAPTIVE_MODE), fixed, (c) => c.meanSeenQuality);
    const seen = { bestFixed: seenCheck.bestFixed, quality: seenCheck.quality };
    const counted = fixed.filter((c) => usable(c.freezeCount));
    const fewest = counted.length ? Math.min(...counted.map((c) => c.freezeCount.mean)) : NaN;
    const fewestFreezes = counted.length
      ? { perRun: fewest, modes: counted.filter((c) => c.freezeCount.mean <= fewest + EPSILON).map((c) => c.mode) } : undefined;
    const notes: string[] = [];
    if (visible.singleRun) notes.push(`${bestFixed!.mode} has ${bestFixed!.meanVisibleQuality.n} run: no interval, means compared`);
    const freezes = adaptive && fewestFreezes ? adaptive.freezeCount.mean <= fewestFreezes.perRun + EPSILON : null;
    let holds = quality === null || freezes === null ? null : quality !== 'below' && freezes;
    const adaptiveCell = sorted.find((c) => c.mode === ADAPTIVE_MODE);
    if (adaptiveCell?.failed) {
      notes.push(`${adaptiveCell.failed} of adaptive's ${adaptiveCell.runs} runs failed`);
      if (holds) holds = null;
    }
    const { condition, lossPct } = group[0];
    return { condition, lossPct, cells: sorted, bestFixed, adaptive, fewestFreezes, quality, freezes, holds, seen, notes };
  });
}

/** "mean ± ci" (no interval for one run; "–" without a value). */
export function withInterval(s: Stat, digits: number): string {
  if (!usable(s)) return '–';
  return Number.isFinite(s.ci95) ? `${s.mean.toFixed(digits)} ± ${s.ci95.toFixed(digits)}` : s.mean.toFixed(digits);
}

/** One row's mode entry: visible quality and freezes per run, each with its interval. */
function modeEntry(c: Cell | undefined): string {
  if (!c || !usable(c.meanVisibleQuality)) return c?.failed ? `– (${c.failed} failed)` : '–';
  return `${withInterval(c.meanVisibleQuality, 2)} · ${withInterval(c.freezeCount, 1)} fr.`;
}

function verdictText(row: DominanceRow): [string, string, string, string] {
  const quality = row.quality ?? '–';
  const freezes = row.freezes === null ? '–'
    : `${row.freezes ? '≤' : '>'} ${row.fewestFreezes!.perRun.toFixed(1)} (${row.fewestFreezes!.modes.join(', ')})`;
  const holds = row.holds === null ? '–' : row.holds ? 'yes' : 'NO';
  const adaptiveSeen = row.cells.find((c) => c.mode === ADAPTIVE_MODE)?.meanSeenQuality;
  const seen = row.seen.quality === null ? '–'
    : `${row.seen.quality}: ${withInterval(adaptiveSeen!, 2)} vs ${withInterval(row.seen.bestFixed!.meanSeenQuality, 2)} (${row.seen.bestFixed!.mode})`;
  return [quality, freezes, row.notes.length ? `${holds} (${row.notes.join('; ')})` : holds, seen];
}

/** Header and rows of the dominance table; `emphasis` marks the best fixed mode's entry. */
export function dominanceTable(rows: readonly DominanceRow[], emphasis: (text: string) => string): { headers: string[]; rows: string[][] } {
  const modes = [...new Set(rows.flatMap((r) => r.cells.map((c) => c.mode)))].sort(compareModes);
  const headers = ['condition', 'loss', ...modes, 'best fixed', 'adaptive vs best (quality)', 'adaptive freezes vs fewest', 'holds', 'seen quality: adaptive vs best fixed'];
  const body = rows.map((r) => {
    const entries = modes.map((m) => {
      const text = modeEntry(r.cells.find((c) => c.mode === m));
      return r.bestFixed?.mode === m ? emphasis(text) : text;
    });
    return [r.condition, `${r.lossPct} %`, ...entries, r.bestFixed?.mode ?? '–', ...verdictText(r)];
  });
  return { headers, rows: body };
}

/** What the table's entries mean, for beneath it. */
export const DOMINANCE_LEGEND = 'Entries: visible quality · freezes per run (fr.), mean over repetitions; the best fixed mode by visible quality ' +
  'in bold. adaptive holds a cell when its visible quality is at or above the best fixed mode\'s mean ("above") or inside its 95 % interval ' +
  `("within"), and its freezes per run are at most the fewest of any fixed mode. The last column, not part of the verdict, compares seen ` +
  'quality the same way (the quality shown weighted by the area each object covered at playout, not by the area the player predicted ' +
  `when it asked; the best fixed mode by seen quality in brackets). ${CI_NOTE}.`;

/** The check as Markdown, for docs/results.md (`dominance.md` of an experiment directory). */
export function dominanceMarkdown(cells: readonly Cell[]): string {
  const rows = checkDominance(cells);
  if (rows.length === 0) return '';
  const { headers, rows: body } = dominanceTable(rows, (t) => `**${t}**`);
  const held = rows.filter((r) => r.holds === true).length, failed = rows.filter((r) => r.holds === false).length;
  return [`${held} of ${rows.length} cells hold, ${failed} do not, ${rows.length - held - failed} undecided.`, '',
    ...markdownTable(headers, body), '', DOMINANCE_LEGEND, ''].join('\n');
}
