/**
 * Writes the QoE report of an experiment directory: runs.csv (one line per run), cells.json
 * (aggregates per trace × loss × mode), summary.md (the same as Markdown tables) and report.html.
 *
 *   npm run qoe:report -- results/qoe/<name>
 */
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { aggregate, markdownSummary, type RunRecord, runsCsv, toRow } from '../../src/qoe/aggregate';
import { renderReport } from '../../src/qoe/report';

export function loadRecords(dir: string): RunRecord[] {
  const runsDir = join(dir, 'runs');
  if (!existsSync(runsDir)) throw new Error(`${runsDir} does not exist: not an experiment directory`);
  return readdirSync(runsDir).filter((f) => f.endsWith('.json')).sort()
    .map((f) => JSON.parse(readFileSync(join(runsDir, f), 'utf8')) as RunRecord);
}

export function writeReport(dir: string, provenance: string[]): void {
  const records = loadRecords(dir);
  const rows = records.map(toRow);
  writeFileSync(join(dir, 'runs.csv'), runsCsv(rows));
  const cells = aggregate(rows);
  writeFileSync(join(dir, 'cells.json'), JSON.stringify(cells, null, 1));
  writeFileSync(join(dir, 'summary.md'), markdownSummary(cells));
  writeFileSync(join(dir, 'report.html'), renderReport({ title: `holoquic QoE — ${dir.replace(/^.*\//, '')}`, provenance, records }));
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const dir = process.argv[2];
  if (!dir) {
    console.error('usage: npm run qoe:report -- results/qoe/<name>');
    process.exit(2);
  }
  writeReport(resolve(dir), [`regenerated: npm run qoe:report -- ${dir}`, `date: ${new Date().toISOString()}`]);
  console.log(`report: ${join(resolve(dir), 'report.html')}`);
}
