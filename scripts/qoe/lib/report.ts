/**
 * The QoE experiment report: one static HTML page (tables + inline SVG figures) from the run
 * records of an experiment. Layout follows the reference paper where it has one (freezes and
 * total freeze time per mode and loss: its Table 3) and adds what a decoding player can show.
 */
import { aggregate, type Cell, cdf, compareModes, conditionOf, queueMsOf, type RunRecord, type RunRow, type Stat, toRow } from './aggregate';
import { checkDominance, DOMINANCE_LEGEND, dominanceTable } from './dominance';
import { checkRoundTrip, ROUND_TRIP_GOAL, ROUND_TRIP_LEGEND, roundTripTable } from './roundTrip';
import { CI_NOTE } from './stats';
import { barChart, escapeXml, lineChart } from './svg';

export interface ReportInput {
  title: string;
  /** Free text: command line, machine, date. Shown verbatim. */
  provenance: string[];
  records: RunRecord[];
  /** What merging shards found (report.ts --merge): planned runs without a record, runs recorded twice. */
  mergeIssues?: { missing: string[]; duplicates: string[] };
}

/** The project's stated goals (issue 8), evaluated on the measured cells, never asserted. */
export interface GoalCheck {
  goal: string;
  met: boolean | null;
  detail: string;
}

/** "mean ± 95 % interval" (the mean alone for one run). */
function fmt(s: Stat, digits = 2, scale = 1): string {
  if (s.n === 0 || !Number.isFinite(s.mean)) return '–';
  const mean = (scale * s.mean).toFixed(digits);
  return Number.isFinite(s.ci95) ? `${mean} ± ${(scale * s.ci95).toFixed(digits)}` : mean;
}

function pct(s: Stat, digits = 1): string {
  return s.n === 0 || !Number.isFinite(s.mean) ? '–' : `${fmt(s, digits, 100)} %`;
}

function unique<T>(values: T[]): T[] {
  return [...new Set(values)];
}

export function checkGoals(cells: readonly Cell[]): GoalCheck[] {
  const goals: GoalCheck[] = [];
  for (const trace of unique(cells.map((c) => c.condition))) {
    const at = (mode: string, loss: number) => cells.find((c) => c.condition === trace && c.mode === mode && c.lossPct === loss);
    const qr5 = at('qr', 5), fec5 = at('qpr-fec', 5);
    if (qr5 && fec5 && fec5.throughputMbps.n > 0 && qr5.throughputMbps.n > 0) {
      const ratio = fec5.throughputMbps.mean / qr5.throughputMbps.mean;
      const busy = fec5.busyGoodputMbps.mean / qr5.busyGoodputMbps.mean;
      // Whether the target is reachable at all: above every mode's throughput with no loss, it is
      // beyond the link, whatever a player does.
      const lossless = cells.filter((c) => c.condition === trace && c.lossPct === 0 && c.throughputMbps.n > 0);
      const ceiling = lossless.length ? Math.max(...lossless.map((c) => c.throughputMbps.mean)) : NaN;
      const target = 1.5 * qr5.throughputMbps.mean;
      const beyond = target > ceiling
        ? `; the target, ${target.toFixed(1)} Mbit/s, is above every mode's throughput at 0 % loss (at most ${ceiling.toFixed(1)})` : '';
      goals.push({ goal: `${trace}: qpr-fec throughput ≥ 1.5 × qr at 5 % loss`, met: ratio >= 1.5,
        detail: `ratio ${ratio.toFixed(2)} (per-segment throughput; busy goodput ${Number.isFinite(busy) ? busy.toFixed(2) : '–'})${beyond}` });
    }
    for (const mode of ['qpr-fec', 'adaptive']) {
      const upTo5 = cells.filter((c) => c.condition === trace && c.mode === mode && c.lossPct <= 5);
      if (upTo5.length === 0) continue;
      const measured = upTo5.filter((c) => c.freezeCount.n > 0);
      const worst = measured.length ? Math.max(...measured.map((c) => c.freezeCount.mean)) : NaN;
      const failed = upTo5.reduce((a, c) => a + c.failed, 0);
      // A failed run may have frozen: with any, "none" cannot be claimed (a freeze still says "no").
      const met = worst > 0 ? false : failed > 0 || measured.length === 0 ? null : true;
      goals.push({ goal: `${trace}: no freezes in ${mode} up to 5 % loss`, met,
        detail: `worst mean freeze count ${Number.isFinite(worst) ? worst.toFixed(2) : '–'}${failed ? `; ${failed} failed run(s) not counted` : ''}` });
    }
  }
  const datagram = cells.filter((c) => c.datagramDecoded.n > 0);
  if (datagram.length > 0) {
    const weighted = datagram.reduce((a, c) => a + c.datagramDecoded.mean * c.datagramDecoded.n, 0) / datagram.reduce((a, c) => a + c.datagramDecoded.n, 0);
    goals.push({ goal: '≥ 99.9 % of datagram-delivered objects decoded (of those recovered in time to decode)', met: weighted >= 0.999, detail: `${(100 * weighted).toFixed(2)} % (mean over runs)` });
  }
  return goals;
}

function table(headers: string[], rows: string[][]): string {
  const th = headers.map((h) => `<th>${escapeXml(h)}</th>`).join('');
  const trs = rows.map((r) => `<tr>${r.map((c) => `<td>${escapeXml(c)}</td>`).join('')}</tr>`).join('');
  return `<table><thead><tr>${th}</tr></thead><tbody>${trs}</tbody></table>`;
}

/** Rows = loss levels, columns = modes, cell text from `cellText`. */
function modeLossTable(cells: readonly Cell[], modes: string[], losses: number[], cellText: (c: Cell) => string): string {
  return table(['loss'].concat(modes), losses.map((loss) => [`${loss} %`].concat(modes.map((m) => {
    const c = cells.find((x) => x.mode === m && x.lossPct === loss);
    return c ? cellText(c) : '';
  }))));
}

function qualityOverTime(rows: readonly RunRow[], records: readonly RunRecord[], condition: string, loss: number): string {
  const figures: string[] = [];
  for (const row of rows.filter((r) => r.ok && conditionOf(r.run) === condition && r.run.lossPct === loss && r.run.repetition === 0)) {
    const log = records.find((r) => r.run.id === row.run.id)?.qoe;
    if (!log) continue;
    const objects = unique(log.segments.map((s) => s.object)).sort();
    const series = objects.map((o) => ({
      name: o,
      // An abandoned request shares its index with its replacement: only the outcome is drawn.
      points: log.segments.filter((s) => s.object === o && !s.abandoned).sort((a, b) => a.index - b.index)
        .map((s) => [s.index, s.onTime || s.shownLate ? s.quality : -1] as [number, number]),
    }));
    figures.push(lineChart({ title: `${row.run.mode}: quality shown per object (−1 = not shown)`, xLabel: 'segment', yLabel: 'quality index',
      series, step: true, yMin: -1, width: 440, height: 240 }));
  }
  return figures.join('\n');
}

/**
 * Every freeze of every usable run on `trace`, when it began (s since the player loaded) and how
 * long it lasted. The bandwidth trace starts replaying a few seconds before the player loads
 * (browser start-up; not recorded), an offset similar from run to run: freezes of different modes
 * within a few seconds of each other likely share a cause in the network (a trace's trough).
 */
function freezeList(rows: readonly RunRow[], records: readonly RunRecord[], condition: string): string {
  const usable = new Set(rows.filter((r) => r.ok).map((r) => r.run.id));
  const rowsOut = records
    .filter((r) => usable.has(r.run.id) && conditionOf(r.run) === condition && (r.qoe?.freezes.length ?? 0) > 0)
    .sort((a, b) => a.run.mode.localeCompare(b.run.mode) || a.run.lossPct - b.run.lossPct || a.run.repetition - b.run.repetition)
    .map((r) => [r.run.mode, `${r.run.lossPct} %`, String(r.run.repetition),
      r.qoe!.freezes.map((f) => `${f.atS.toFixed(1)} s (${f.durationS.toFixed(2)} s${f.cause === 'underrun' ? '' : `, ${f.cause}`})`).join(', ')]);
  if (rowsOut.length === 0) return '<h3>Freezes by run</h3><p>No run froze.</p>';
  return '<h3>Freezes by run: when (s since the player loaded; the trace started a few seconds earlier) and for how long</h3>' +
    table(['mode', 'loss', 'rep', 'freezes'], rowsOut);
}

/**
 * How the runs' network and player were set up, one line per distinct setting (a combined report
 * may hold several): what a reader needs before comparing numbers across reports.
 */
export function describeSettings(records: readonly RunRecord[]): string[] {
  const lines = records.map(({ run }) => {
    const loss = run.ge === '' ? 'no loss' : run.lossBadMs !== undefined
      ? `Gilbert–Elliott loss on a clock (Bad periods of ${run.lossBadMs} ms)` : 'Gilbert–Elliott loss per packet (netem gemodel)';
    const direction = run.lossDirection === 'both' ? 'both ways' : 'origin → client';
    const page = Object.entries(run.page ?? {}).map(([k, v]) => `${k}=${v}`).join(', ');
    return `${run.trace} × ${run.traceScale.toPrecision(3)}, ${run.delayMs} ms one-way, ${queueMsOf(run)}-ms queue${run.queueRtts === undefined ? '' : ` (${run.queueRtts} round trips)`}, ${loss}${run.ge === '' ? '' : ` ${direction}`}; ` +
      `origin ${run.congestionControl ?? 'bbr2 (default)'}; player ${page || 'defaults'}; ${run.durationS} s`;
  });
  return unique(lines).sort();
}

export function renderReport(input: ReportInput): string {
  const rows = input.records.map(toRow);
  const cells = aggregate(rows);
  const goals = checkGoals(cells);
  let body = `<h1>${escapeXml(input.title)}</h1><pre>${escapeXml(input.provenance.join('\n'))}</pre>`;
  const failed = rows.filter((r) => !r.ok);
  body += `<p>${rows.length} runs, ${failed.length} failed.</p>`;
  body += '<h2>Settings</h2><ul>' + describeSettings(input.records).map((l) => `<li>${escapeXml(l)}</li>`).join('') + '</ul>';
  if (input.mergeIssues && input.mergeIssues.missing.length + input.mergeIssues.duplicates.length > 0) {
    const { missing, duplicates } = input.mergeIssues;
    body += '<h2>Merge: runs missing or recorded twice</h2>';
    if (missing.length) body += `<p>${missing.length} planned run(s) have no record in any shard:</p><pre>${escapeXml(missing.join('\n'))}</pre>`;
    if (duplicates.length) body += `<p>${duplicates.length} run(s) were recorded in more than one shard:</p><pre>${escapeXml(duplicates.join('\n'))}</pre>`;
  }
  const dominance = checkDominance(cells);
  if (dominance.some((r) => r.adaptive || r.bestFixed)) {
    const held = dominance.filter((r) => r.holds === true).length;
    const { headers, rows: dominanceRows } = dominanceTable(dominance, (t) => `\u0000${t}`);
    body += `<h2>adaptive against the best fixed mode (goal: in every cell)</h2><p>${held} of ${dominance.length} cells hold.</p>` +
      table(headers, dominanceRows).replace(/<td>\u0000/g, '<td class="best">') + `<p class="note">${escapeXml(DOMINANCE_LEGEND)}</p>`;
  }
  const roundTrip = checkRoundTrip(cells);
  if (roundTrip.length > 0) {
    const held = roundTrip.filter((r) => r.holds === true).length;
    const { headers, rows: roundTripRows } = roundTripTable(roundTrip);
    body += `<h2>Longer round trips against the shortest (goal: delivered ≥ ${ROUND_TRIP_GOAL} ×)</h2><p>${held} of ${roundTrip.length} comparisons hold.</p>` +
      table(headers, roundTripRows) + `<p class="note">${escapeXml(ROUND_TRIP_LEGEND)}</p>`;
  }
  body += `<p class="note">${escapeXml(CI_NOTE)}; bars carry the same interval as whiskers.</p>`;
  if (goals.length > 0) {
    body += '<h2>Goals</h2>' + table(['goal', 'met', 'measured'], goals.map((g) => [g.goal, g.met === null ? '–' : g.met ? 'yes' : 'NO', g.detail]));
  }
  for (const trace of unique(cells.map((c) => c.condition))) {
    const tc = cells.filter((c) => c.condition === trace);
    const modes = unique(tc.map((c) => c.mode)).sort(compareModes);
    const losses = unique(tc.map((c) => c.lossPct)).sort((a, b) => a - b);
    body += `<h2>${escapeXml(trace)}</h2>`;
    body += '<h3>Freezes: count / total freeze time (s), mean over repetitions (the paper\'s Table 3 layout)</h3>';
    body += modeLossTable(tc, modes, losses, (c) => `${fmt(c.freezeCount, 1)} / ${fmt(c.freezeTotalS, 1)}${c.failed ? ` (${c.failed} of ${c.runs} runs failed)` : ''}`);
    body += '<h3>Mean throughput (Mbit/s): per segment, recovered bytes over first request → last completion</h3>' +
      modeLossTable(tc, modes, losses, (c) => fmt(c.throughputMbps));
    body += '<h3>Busy goodput (Mbit/s): recovered bytes over the time some object was awaited</h3>' +
      modeLossTable(tc, modes, losses, (c) => fmt(c.busyGoodputMbps));
    body += '<h3>Mean quality shown (index, 0 = lowest)</h3>' + modeLossTable(tc, modes, losses, (c) => fmt(c.meanQuality));
    body += '<h3>Visible quality: quality shown, weighted by predicted visible area (what the viewer saw)</h3>' +
      modeLossTable(tc, modes, losses, (c) => fmt(c.meanVisibleQuality));
    body += '<h3>On-time display ratio (of objects requested) / of the predicted visible area / share not requested (adaptive, short of capacity)</h3>' +
      modeLossTable(tc, modes, losses, (c) => `${pct(c.onTimeRatio)} / ${pct(c.visibleOnTimeRatio)} / ${pct(c.skippedShare)}`);
    body += '<h3>Decode success (decoded / recovered)</h3>' + modeLossTable(tc, modes, losses, (c) => pct(c.decodeSuccess, 2));
    body += '<h3>Datagram objects: recovered / of those, decoded / FEC overhead (as the player saw it; as the origin paid it)</h3>' +
      modeLossTable(tc, modes, losses, (c) => c.datagramRecovery.n === 0 ? '–'
        : `${pct(c.datagramRecovery, 2)} / ${pct(c.datagramDecoded, 2)} / ${pct(c.fecOverhead)}${c.originFecOverhead.n ? `; ${pct(c.originFecOverhead)}` : ''}`);
    body += '<h3>Startup delay (s) / quality switches / share of received bytes never shown</h3>' +
      modeLossTable(tc, modes, losses, (c) => `${fmt(c.startupS)} / ${fmt(c.qualitySwitches, 1)} / ${pct(c.wastedShare)}`);
    body += '<h3>Measured loss, origin → client (%)</h3>' + modeLossTable(tc, modes, losses, (c) => fmt(c.measuredLossPct));
    body += '<div class="figs">';
    for (const loss of losses) {
      body += lineChart({ title: `Throughput CDF, ${loss} % loss`, xLabel: 'Mbit/s per segment', yLabel: 'CDF', step: true, yMin: 0, yMax: 1,
        series: modes.map((m) => ({ name: m, points: cdf(tc.find((c) => c.mode === m && c.lossPct === loss)?.throughputSamplesMbps ?? []) })) });
    }
    // Each bar the mean over repetitions, its whisker the 95 % interval.
    const byLoss = (f: (c: Cell) => Stat) => modes.map((m) => {
      const stats = losses.map((l) => {
        const c = tc.find((x) => x.mode === m && x.lossPct === l);
        return c ? f(c) : undefined;
      });
      return { name: m, values: stats.map((s) => s?.mean ?? NaN), intervals: stats.map((s) => s?.ci95 ?? NaN) };
    });
    const categories = losses.map((l) => `${l} %`);
    body += barChart({ title: 'Total freeze time (s)', yLabel: 's', categories, series: byLoss((c) => c.freezeTotalS) });
    body += barChart({ title: 'Visible quality', yLabel: 'quality index', categories, series: byLoss((c) => c.meanVisibleQuality) });
    body += barChart({ title: 'Mean quality shown', yLabel: 'quality index', categories, series: byLoss((c) => c.meanQuality) });
    body += barChart({ title: 'On-time display ratio', yLabel: 'ratio', categories, series: byLoss((c) => c.onTimeRatio) });
    body += barChart({ title: 'FEC overhead (repair / source symbols)', yLabel: 'ratio', categories, series: byLoss((c) => c.fecOverhead) });
    body += barChart({ title: 'Datagram objects recovered', yLabel: 'ratio', categories, series: byLoss((c) => c.datagramRecovery) });
    body += lineChart({ title: 'Measured vs configured loss', xLabel: 'configured %', yLabel: 'measured %',
      series: modes.map((m) => ({ name: m, points: tc.filter((c) => c.mode === m).map((c) => [c.lossPct, c.measuredLossPct.mean] as [number, number]) })) });
    body += qualityOverTime(rows, input.records, trace, losses[losses.length - 1]);
    body += '</div>';
    body += freezeList(rows, input.records, trace);
  }
  if (failed.length > 0) {
    body += '<h2>Failed runs</h2>' + table(['run', 'error'], failed.map((r) => [r.run.id, r.error ?? '']));
  }
  const style = 'body{font-family:sans-serif;max-width:1200px;margin:auto;padding:1em}table{border-collapse:collapse;margin:.5em 0}' +
    'td,th{border:1px solid #ccc;padding:3px 8px;text-align:right}th{background:#f4f4f4}td.best{font-weight:bold;background:#eef6ee}.note{font-size:90%;color:#444}.figs svg{margin:4px}pre{background:#f8f8f8;padding:.5em}';
  return `<!doctype html><html><head><meta charset="utf-8"><title>${escapeXml(input.title)}</title><style>${style}</style></head><body>${body}</body></html>\n`;
}
