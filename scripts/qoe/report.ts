/**
 * Writes the QoE report of an experiment directory: runs.csv (one line per run), cells.json
 * (aggregates per condition × loss × mode), summary.md (the same as Markdown tables, the dominance
 * check first), dominance.md (that check alone, for docs/results.md) and report.html.
 *
 *   npm run qoe:report -- results/qoe/<name>
 *
 * Or one report of several experiments, taking chosen modes from each (a column measured again
 * at a later commit beside the rest of a matrix); a cell found in two sources is refused:
 *
 *   npm run qoe:report -- --out results/qoe/<combined> results/qoe/<a>:qr,qpr results/qoe/<b>:h2
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { aggregate, combineSources, type RunRecord, type RunSource, takenFrom, toRow } from './lib/aggregate';
import { dominanceMarkdown } from './lib/dominance';
import { markdownSummary, runsCsv } from './lib/summary';
import { renderReport } from './lib/report';

/** The run records of an experiment directory; a record without its commit takes the directory's. */
export function loadRecords(dir: string): RunRecord[] {
  const runsDir = join(dir, 'runs');
  if (!existsSync(runsDir)) throw new Error(`${runsDir} does not exist: not an experiment directory`);
  const commitFile = join(dir, 'commit.txt');
  const commit = existsSync(commitFile) ? readFileSync(commitFile, 'utf8').trim() : undefined;
  return readdirSync(runsDir).filter((f) => f.endsWith('.json')).sort()
    .map((f) => JSON.parse(readFileSync(join(runsDir, f), 'utf8')) as RunRecord)
    .map((r) => (r.commit === undefined && commit !== undefined ? { ...r, commit } : r));
}

export function writeReport(dir: string, provenance: string[], records: RunRecord[] = loadRecords(dir)): void {
  const rows = records.map(toRow);
  writeFileSync(join(dir, 'runs.csv'), runsCsv(rows));
  const cells = aggregate(rows);
  writeFileSync(join(dir, 'cells.json'), JSON.stringify(cells, null, 1));
  writeFileSync(join(dir, 'summary.md'), markdownSummary(cells));
  writeFileSync(join(dir, 'dominance.md'), dominanceMarkdown(cells));
  writeFileSync(join(dir, 'report.html'), renderReport({ title: `holoquic QoE — ${dir.replace(/^.*\//, '')}`, provenance, records }));
}

function commits(records: readonly RunRecord[]): string {
  return [...new Set(records.map((r) => r.commit ?? 'unknown'))].join(', ');
}

/** `DIR` or `DIR:mode,mode`. */
function parseSource(arg: string): RunSource {
  const colon = arg.lastIndexOf(':');
  const dir = colon > 0 ? arg.slice(0, colon) : arg;
  const modes = colon > 0 ? arg.slice(colon + 1).split(',').filter(Boolean) : undefined;
  return { label: dir, modes, records: loadRecords(resolve(dir)) };
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const usage = 'usage: npm run qoe:report -- results/qoe/<name>\n' +
    '       npm run qoe:report -- --out results/qoe/<combined> results/qoe/<a>[:mode,…] results/qoe/<b>[:mode,…] …';
  try {
    const { values, positionals } = parseArgs({ options: { out: { type: 'string' } }, allowPositionals: true });
    const date = `date: ${new Date().toISOString()}`;
    if (values.out !== undefined) {
      if (positionals.length === 0) throw new Error(usage);
      const sources = positionals.map(parseSource);
      const records = combineSources(sources);
      const out = resolve(values.out);
      mkdirSync(out, { recursive: true });
      const described = sources.map((s) => {
        const taken = takenFrom(s);
        return `source: ${s.label} (${s.modes ? s.modes.join(', ') : 'all modes'}; ${taken.length} runs; commit ${commits(taken)})`;
      });
      writeReport(out, [`combined: npm run qoe:report -- ${process.argv.slice(2).join(' ')}`, ...described, date], records);
      console.log(`report: ${join(out, 'report.html')}`);
    } else {
      if (positionals.length !== 1) throw new Error(usage);
      const dir = positionals[0];
      const records = loadRecords(resolve(dir));
      writeReport(resolve(dir), [`regenerated: npm run qoe:report -- ${dir}`, `commit: ${commits(records)}`, date], records);
      console.log(`report: ${join(resolve(dir), 'report.html')}`);
    }
  } catch (e) {
    console.error(e instanceof Error ? e.message : e);
    process.exit(2);
  }
}
