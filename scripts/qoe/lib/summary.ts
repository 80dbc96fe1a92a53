/**
 * The experiment's results as text: one CSV line per run (runs.csv, for spreadsheets and scripts)
 * and the per-cell comparison as Markdown tables (summary.md, which docs/results.md takes as is),
 * every mean with its 95 % confidence interval.
 */
import { type Cell, compareModes, type RunRow, type Stat } from './aggregate';
import { dominanceMarkdown } from './dominance';
import { roundTripMarkdown } from './roundTrip';
import { CI_NOTE } from './stats';

const CSV_COLUMNS = [
  'id', 'trace', 'mode', 'lossPct', 'repetition', 'ok', 'error', 'freezeCount', 'freezeTotalS', 'meanQuality',
  'meanThroughputMbps', 'onTimeRatio', 'visibleOnTimeRatio', 'skippedShare', 'decodeSuccess', 'datagramRecovery', 'datagramDecoded', 'fecOverhead',
  'repairRequests', 'objectSegments', 'startupS', 'qualitySwitches', 'bytesWasted', 'bytesReceived', 'measuredLossPct',
  'queueDropPct', 'meanVisibleQuality', 'volatileFromS', 'sessionsReplaced', 'busyGoodputMbps', 'originFecOverhead',
  'originTcpTimeouts', 'originTcpRetransPct', 'meanSeenQuality', 'firstStarvedGapS', 'commit',
] as const;

function csvField(value: unknown): string {
  const text = typeof value === 'number' ? (Number.isFinite(value) ? String(+value.toFixed(6)) : '') : String(value ?? '');
  return /[",\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/** One line per run, for spreadsheets and scripts. */
export function runsCsv(rows: readonly RunRow[]): string {
  const lines = [CSV_COLUMNS.join(',')];
  for (const r of rows) {
    const s = r.summary;
    const values: Record<(typeof CSV_COLUMNS)[number], unknown> = {
      id: r.run.id, trace: r.run.trace, mode: r.run.mode, lossPct: r.run.lossPct, repetition: r.run.repetition,
      ok: r.ok, error: r.error ?? '',
      freezeCount: s?.freezeCount, freezeTotalS: s?.freezeTotalS, meanQuality: s?.meanQuality,
      meanThroughputMbps: s ? s.meanThroughputBps / 1e6 : undefined, onTimeRatio: s?.onTimeRatio, visibleOnTimeRatio: s?.visibleOnTimeRatio, skippedShare: s?.skippedShare,
      decodeSuccess: s?.decodeSuccess, datagramRecovery: s?.datagramRecovery, datagramDecoded: s?.datagramDecoded,
      fecOverhead: s?.fecOverhead, repairRequests: s?.repairRequests, objectSegments: s?.objectSegments,
      startupS: s?.startupS, qualitySwitches: s?.qualitySwitches, bytesWasted: s?.bytesWasted, bytesReceived: s?.bytesReceived,
      measuredLossPct: r.measuredLossPct, queueDropPct: r.queueDropPct,
      meanVisibleQuality: s?.meanVisibleQuality, volatileFromS: s?.volatileFromS, sessionsReplaced: s?.sessionsReplaced,
      busyGoodputMbps: s ? s.busyGoodputBps / 1e6 : undefined, originFecOverhead: r.originFecOverhead,
      originTcpTimeouts: r.originTcp?.timeouts, meanSeenQuality: s?.meanSeenQuality, firstStarvedGapS: s?.firstStarvedGapS,
      originTcpRetransPct: r.originTcp && r.originTcp.outSegs > 0 ? (100 * r.originTcp.retransSegs) / r.originTcp.outSegs : undefined,
      commit: r.commit,
    };
    lines.push(CSV_COLUMNS.map((c) => csvField(values[c])).join(','));
  }
  return lines.join('\n') + '\n';
}

/** "mean ± 95 % interval" with `digits` decimals (the mean alone for one run; "–" when there is no value). */
function fmt(st: Stat, digits: number, scale = 1): string {
  if (st.n === 0 || !Number.isFinite(st.mean)) return '–';
  const m = (st.mean * scale).toFixed(digits);
  return Number.isFinite(st.ci95) ? `${m} ± ${(st.ci95 * scale).toFixed(digits)}` : m;
}

/** A share as "mean ± interval %" ("–" alone when there is no value). */
function pct(st: Stat, digits: number): string {
  return `${fmt(st, digits, 100)}${unit(st, ' %')}`;
}

function unit(st: Stat, text: string): string {
  return st.n > 0 && Number.isFinite(st.mean) ? text : '';
}

/**
 * The comparison as Markdown tables (docs/results.md takes them as they are): the dominance check
 * first, the round-trip check where a cell was measured at two delays, then per condition (trace, delay, buffer):
 * freezes, quality (visible and all), throughput, on-time ratio (all and by visible area), datagram objects recovered and
 * decoded, FEC overhead, the loss the impairer applied and what the bottleneck queue dropped, per
 * loss level and mode.
 */
export function markdownSummary(cells: readonly Cell[]): string {
  const out: string[] = [];
  const dominance = dominanceMarkdown(cells);
  if (dominance) out.push('#### adaptive against the best fixed mode, per cell', '', dominance);
  const roundTrip = roundTripMarkdown(cells);
  if (roundTrip) out.push('#### Longer round trips against the shortest, per cell', '', roundTrip);
  out.push(`${CI_NOTE}.`, '');
  for (const trace of [...new Set(cells.map((c) => c.condition))]) {
    // The reference paper's Table 3 layout first: modes × loss levels, freezes / seconds frozen
    // per run (mean over repetitions), a bold 0 where no repetition froze.
    const tc = cells.filter((x) => x.condition === trace);
    const losses = [...new Set(tc.map((c) => c.lossPct))].sort((a, b) => a - b);
    const modes = [...new Set(tc.map((c) => c.mode))].sort(compareModes);
    const modeByLoss = (title: string, text: (c: Cell) => string) => {
      out.push(`#### ${trace}: ${title}`, '');
      out.push(`| mode | ${losses.map((l) => `${l} %`).join(' | ')} |`, `|---|${losses.map(() => '---|').join('')}`);
      for (const mode of modes) {
        const row = losses.map((l) => {
          const c = tc.find((x) => x.mode === mode && x.lossPct === l);
          return c && c.freezeCount.n > 0 ? text(c) : '–';
        });
        out.push(`| \`${mode}\` | ${row.join(' | ')} |`);
      }
      out.push('');
    };
    modeByLoss('freezes per run / seconds frozen per run', (c) => {
      if (c.freezeCount.mean === 0) return '**0**';
      const seconds = c.freezeTotalS.mean;
      return `${fmt(c.freezeCount, 1)} / ${seconds < 0.005 ? '< 0.01' : fmt(c.freezeTotalS, 2)} s`;
    });
    // What the viewer saw, beside whether it stopped: the two numbers a mode trades.
    modeByLoss('visible quality (runs)', (c) => `${fmt(c.meanVisibleQuality, 2)} (${c.meanVisibleQuality.n})`);
    out.push(`#### ${trace}`, '');
    out.push('| loss | mode | runs | freezes | freeze time (s) | visible quality | quality | throughput (Mbit/s) | busy goodput (Mbit/s) | on time | visible on time | skipped | datagram objects recovered | of those, decoded | FEC overhead | FEC overhead (origin) | measured loss | queue drops |');
    out.push('|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|');
    for (const c of tc) {
      out.push(`| ${c.lossPct} % | ${c.mode} | ${c.runs - c.failed}${c.failed ? ` (+${c.failed} failed)` : ''} | ${fmt(c.freezeCount, 1)} | ${fmt(c.freezeTotalS, 2)} | ` +
        `${fmt(c.meanVisibleQuality, 2)} | ${fmt(c.meanQuality, 2)} | ${fmt(c.throughputMbps, 1)} | ${fmt(c.busyGoodputMbps, 1)} | ${pct(c.onTimeRatio, 1)} | ${pct(c.visibleOnTimeRatio, 1)} | ${pct(c.skippedShare, 1)} | ` +
        `${pct(c.datagramRecovery, 1)} | ${pct(c.datagramDecoded, 1)} | ${pct(c.fecOverhead, 0)} | ${pct(c.originFecOverhead, 0)} | ${fmt(c.measuredLossPct, 2)}${unit(c.measuredLossPct, ' %')} | ${fmt(c.queueDropPct, 2)}${unit(c.queueDropPct, ' %')} |`);
    }
    out.push('');
  }
  return out.join('\n');
}
