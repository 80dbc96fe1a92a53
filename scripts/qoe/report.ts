/**
 * Writes the QoE report of an experiment directory: runs.csv (one line per run), cells.json
 * (aggregates per condition × loss × mode), summary.md (the same as Markdown tables, the dominance
 * check first), dominance.md (that check alone, for docs/results.md), roundtrip.md (longer one-way
 * delays against the shortest, where a cell was measured at two) and report.html.
 *
 *   npm run qoe:report -- results/qoe/<name>
 *
 * The shards of one plan (run.ts --shard I/N), merged into one experiment directory (their
 * records copied into DIR/runs): runs missing from the plan or recorded twice are listed on the
 * terminal and in the report; shards of different plans or commits are refused.
 *
 *   npm run qoe:report -- --merge --out results/qoe/<name> results/qoe/<name>-shard*
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
import { roundTripMarkdown } from './lib/roundTrip';
import { describeMerge, mergeShards, type ShardSource } from './lib/merge';
import { type Plan, parsePlan } from './lib/plan';
import { renderReport } from './lib/report';
import { markdownSummary, runsCsv } from './lib/summary';

/** Where an experiment directory keeps its plan (every run of the matrix) and which shard of it ran there. */
export const PLAN_FILE = 'plan.json';
export const SHARD_FILE = 'shard.json';

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

/** The plan an experiment directory kept, if it kept one. */
export function loadPlan(dir: string): Plan | undefined {
  const file = join(dir, PLAN_FILE);
  return existsSync(file) ? parsePlan(readFileSync(file, 'utf8'), file) : undefined;
}

export function writeReport(dir: string, provenance: string[], records: RunRecord[] = loadRecords(dir),
  mergeIssues?: { missing: string[]; duplicates: string[] }): void {
  const rows = records.map(toRow);
  writeFileSync(join(dir, 'runs.csv'), runsCsv(rows));
  const cells = aggregate(rows);
  writeFileSync(join(dir, 'cells.json'), JSON.stringify(cells, null, 1));
  writeFileSync(join(dir, 'summary.md'), markdownSummary(cells));
  writeFileSync(join(dir, 'dominance.md'), dominanceMarkdown(cells));
  writeFileSync(join(dir, 'roundtrip.md'), roundTripMarkdown(cells));
  writeFileSync(join(dir, 'report.html'), renderReport({ title: `holoquic QoE — ${dir.replace(/^.*\//, '')}`, provenance, records, mergeIssues }));
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

/** Merges shard directories into `out` (records, plan, commit) and reports on the whole. */
function mergeInto(out: string, dirs: string[], date: string): void {
  const shards: ShardSource[] = dirs.map((dir) => ({ label: dir, plan: loadPlan(resolve(dir)), records: loadRecords(resolve(dir)) }));
  const result = mergeShards(shards);
  const findings = describeMerge(result, shards);
  for (const line of findings) (line.startsWith('MISSING') || line.startsWith('DUPLICATE') ? console.warn : console.log)(line);
  mkdirSync(join(out, 'runs'), { recursive: true });
  const already = readdirSync(join(out, 'runs')).filter((f) => f.endsWith('.json'));
  if (already.length > 0) throw new Error(`${out}/runs already holds ${already.length} records: merge into an empty directory`);
  for (const record of result.records) writeFileSync(join(out, 'runs', `${record.run.id}.json`), JSON.stringify(record));
  if (result.plan) writeFileSync(join(out, PLAN_FILE), JSON.stringify(result.plan, null, 1));
  writeFileSync(join(out, 'commit.txt'), `${commits(result.records)}\n`);
  const issues = {
    missing: result.missing,
    duplicates: result.duplicates.map((d) => `${d.id}: in ${d.in.join(', ')}; kept ${d.keptUsable ? 'the usable copy' : 'the last (none usable)'} from ${d.kept}`),
  };
  writeReport(out, [`merged: npm run qoe:report -- ${process.argv.slice(2).join(' ')}`, ...findings, `commit: ${commits(result.records)}`, date],
    result.records, issues);
  console.log(`report: ${join(out, 'report.html')}`);
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const usage = 'usage: npm run qoe:report -- results/qoe/<name>\n' +
    '       npm run qoe:report -- --merge --out results/qoe/<name> <shard dir> <shard dir> …\n' +
    '       npm run qoe:report -- --out results/qoe/<combined> results/qoe/<a>[:mode,…] results/qoe/<b>[:mode,…] …';
  try {
    const { values, positionals } = parseArgs({ options: { out: { type: 'string' }, merge: { type: 'boolean', default: false } }, allowPositionals: true });
    const date = `date: ${new Date().toISOString()}`;
    if (values.merge) {
      if (values.out === undefined || positionals.length === 0) throw new Error(usage);
      mergeInto(resolve(values.out), positionals, date);
    } else if (values.out !== undefined) {
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
