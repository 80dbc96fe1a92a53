/**
 * Where the QoE runner finds a run's bandwidth and pose traces. A plan names them portably — the
 * built-in `synthetic`, a file of the evaluation data beside the checkout (`../shared/data`) by
 * name, or a path (absolute, or relative to the working directory or the checkout) — and each machine resolves the names
 * when it runs, so one plan serves every shard of a matrix.
 */
import { existsSync } from 'node:fs';
import { isAbsolute, join, resolve } from 'node:path';
import { SYNTHETIC_BANDWIDTH, SYNTHETIC_POSE } from './synthetic';

export interface InputRoots {
  /** The checkout (relative paths are taken from here). */
  root: string;
  /** The evaluation data (`network/`, `pose/`), normally `../shared/data` beside the checkout. */
  shared: string;
}

function firstExisting(candidates: string[], what: string, name: string): string {
  const found = candidates.find((c) => existsSync(c) && c.endsWith('.csv'));
  if (!found) throw new Error(`${what} "${name}" not found (tried ${candidates.join(', ')})`);
  return resolve(found);
}

function asPaths(name: string, roots: InputRoots): string[] {
  return isAbsolute(name) ? [name] : [resolve(name), join(roots.root, name)];
}

/** A bandwidth trace: `synthetic`, a path, or a name in `<shared>/network/` (with or without `.csv`). */
export function resolveTrace(name: string, roots: InputRoots): string {
  if (name === SYNTHETIC_BANDWIDTH.name) return SYNTHETIC_BANDWIDTH.file;
  return firstExisting([...asPaths(name, roots), join(roots.shared, 'network', name), join(roots.shared, 'network', `${name}.csv`)], 'bandwidth trace', name);
}

/** A head-pose trace: `synthetic`, a path, or a name under `<shared>/pose/` (e.g. `hhi_hololens/hololens_trace_01`). */
export function resolvePose(name: string, roots: InputRoots): string {
  if (name === SYNTHETIC_POSE.name) return SYNTHETIC_POSE.file;
  return firstExisting([...asPaths(name, roots), join(roots.shared, 'pose', name), join(roots.shared, 'pose', `${name}.csv`)], 'pose trace', name);
}
