/** Loads the head-pose traces of ../shared/data/pose (both datasets, Unity frame → WebXR frame). */
import { readFileSync, readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Pose } from '../../src/model/pose';
import { parseTrace } from '../../src/viewport/trace';

/** The traces beside the repository (`../shared`, as in CI), or where HOLOQUIC_POSE_DIR says. */
export const POSE_DIR = process.env.HOLOQUIC_POSE_DIR ?? resolve(import.meta.dirname, '../../../shared/data/pose');

export type Dataset = 'hhi' | 'cwi';

export interface LoadedTrace {
  name: string;
  dataset: Dataset;
  poses: Pose[];
}

const FOLDERS: Record<Dataset, string> = { hhi: 'hhi_hololens', cwi: 'cwi_8i_unity' };

/** All traces of the given datasets, sorted by file name; throws naming the file on bad input. */
export function loadTraces(datasets: readonly Dataset[] = ['hhi', 'cwi']): LoadedTrace[] {
  const traces: LoadedTrace[] = [];
  for (const dataset of datasets) {
    const dir = join(POSE_DIR, FOLDERS[dataset]);
    for (const file of readdirSync(dir).filter((f) => f.endsWith('.csv')).sort()) {
      const path = join(dir, file);
      // Both datasets are in Unity's left-handed frame (../shared/data/README.md, section 2).
      const poses = parseTrace(readFileSync(path, 'utf8'), { convention: 'unity-left-handed', source: path });
      traces.push({ name: `${dataset}/${file.replace(/\.csv$/, '')}`, dataset, poses });
    }
  }
  if (traces.length === 0) throw new Error(`no traces found under ${POSE_DIR}`);
  return traces;
}
