/**
 * Merging the shards of a matrix (`npm run qoe:report -- --merge --out DIR SHARD_DIR…`): the
 * records of several experiment directories that ran parts of one plan, as one experiment.
 * Checked, never silently: shards of different plans or commits are refused, a run recorded twice
 * is reported (and refused when both copies could count), and planned runs without a record are
 * listed so a partial matrix says what it lacks.
 */
import { type RunRecord, unusableReason } from './aggregate';
import { type Plan, planDigest } from './plan';

/** One shard's directory as read: its label (the directory), its plan (if it kept one) and records. */
export interface ShardSource {
  label: string;
  plan?: Plan;
  records: readonly RunRecord[];
}

export interface MergeResult {
  /** One record per run id, in plan order (runs outside any plan after them, by id). */
  records: RunRecord[];
  /** The plan every shard shares (undefined when no shard kept one). */
  plan?: Plan;
  /** Planned run ids no shard recorded. */
  missing: string[];
  /** Run ids recorded by several shards: which shards, and which copy was kept. */
  duplicates: Array<{ id: string; in: string[]; kept: string; keptUsable: boolean }>;
}

/**
 * Merges shard directories. Refuses: no shards; shards of different plans (digest); records of a
 * run the plan does not list; shards that measured different commits (their cells would pool two
 * versions of the code); and a run recorded usable in two shards (which to count is a choice for
 * a person: remove one). A run recorded twice of which one copy is unusable (failed, then run
 * again elsewhere) keeps the usable copy and is listed among the duplicates.
 */
export function mergeShards(shards: readonly ShardSource[]): MergeResult {
  if (shards.length === 0) throw new Error('no shard directories to merge');
  const planned = shards.filter((s) => s.plan);
  const digests = [...new Set(planned.map((s) => planDigest(s.plan!)))];
  if (digests.length > 1) {
    throw new Error(`the shards ran different plans: ${planned.map((s) => `${s.label} (plan ${planDigest(s.plan!)})`).join(', ')}`);
  }
  const plan = planned[0]?.plan;
  const commits = new Map<string, Set<string>>();
  for (const s of shards) for (const r of s.records) commits.set(r.commit ?? 'unknown', (commits.get(r.commit ?? 'unknown') ?? new Set()).add(s.label));
  if (commits.size > 1) {
    throw new Error(`the shards measured different commits: ${[...commits].map(([c, dirs]) => `${c} in ${[...dirs].join(', ')}`).join('; ')}`);
  }
  const plannedIds = plan ? new Set(plan.runs.map((r) => r.id)) : undefined;
  const copies = new Map<string, Array<{ label: string; record: RunRecord }>>();
  for (const s of shards) {
    for (const record of s.records) {
      if (plannedIds && !plannedIds.has(record.run.id)) throw new Error(`${s.label}: run ${record.run.id} is not in the plan`);
      copies.set(record.run.id, [...(copies.get(record.run.id) ?? []), { label: s.label, record }]);
    }
  }
  const duplicates: MergeResult['duplicates'] = [];
  const chosen = new Map<string, RunRecord>();
  for (const [id, list] of copies) {
    if (list.length === 1) {
      chosen.set(id, list[0].record);
      continue;
    }
    const counted = list.filter((c) => unusableReason(c.record) === undefined);
    if (counted.length > 1) {
      throw new Error(`run ${id} was recorded usable in ${counted.map((c) => c.label).join(' and ')}: remove one copy`);
    }
    const kept = counted[0] ?? list[list.length - 1];
    duplicates.push({ id, in: list.map((c) => c.label), kept: kept.label, keptUsable: counted.length === 1 });
    chosen.set(id, kept.record);
  }
  const order = plan ? plan.runs.map((r) => r.id) : [];
  const rank = new Map(order.map((id, i) => [id, i]));
  const records = [...chosen.values()].sort((a, b) =>
    (rank.get(a.run.id) ?? Infinity) - (rank.get(b.run.id) ?? Infinity) || a.run.id.localeCompare(b.run.id));
  const missing = order.filter((id) => !chosen.has(id));
  return { records, plan, missing, duplicates: duplicates.sort((a, b) => a.id.localeCompare(b.id)) };
}

/** The merge's findings as lines for the report's provenance and the terminal. */
export function describeMerge(result: MergeResult, shards: readonly ShardSource[]): string[] {
  const lines = [`merged ${shards.length} shard(s)${result.plan ? ` of plan "${result.plan.name}" (${planDigest(result.plan)})` : ''}: ` +
    `${result.records.length} runs${result.plan ? ` of ${result.plan.runs.length} planned` : ''}`];
  if (!result.plan) lines.push('no shard kept its plan (plan.json): runs missing from the matrix cannot be known');
  if (result.missing.length) {
    const shown = result.missing.slice(0, 20).join(', ');
    lines.push(`MISSING: ${result.missing.length} planned run(s) recorded by no shard: ${shown}${result.missing.length > 20 ? `, … (all in the report)` : ''}`);
  }
  for (const d of result.duplicates) {
    lines.push(`DUPLICATE: ${d.id} recorded in ${d.in.join(' and ')}; kept ${d.keptUsable ? 'the usable copy' : 'the last copy (none usable)'}, from ${d.kept}`);
  }
  return lines;
}
