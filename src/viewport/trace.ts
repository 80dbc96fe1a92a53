import type { Pose } from '../model/pose';
import { normalize } from './quaternion';

/**
 * Handedness of the numbers in a trace file.
 * - `right-handed`: already WebXR / glTF (+Y up, camera looks along −Z); used as is.
 * - `unity-left-handed`: Unity's frame (+Y up, left-handed, camera looks along +Z), the native frame
 *   of both datasets under `/work/shared/data/pose/`. Converted by mirroring Z, which negates z and
 *   the x/y quaternion components: `(x, y, −z)`, `(−qx, −qy, qz, qw)`.
 */
export type TraceConvention = 'right-handed' | 'unity-left-handed';

export const TRACE_COLUMNS = ['t_seconds', 'x', 'y', 'z', 'qx', 'qy', 'qz', 'qw'] as const;

export interface ParseTraceOptions {
  convention: TraceConvention;
  /** Name used in error messages (e.g. the file path). */
  source?: string;
}

/**
 * Parses a pose trace CSV with columns `t_seconds,x,y,z,qx,qy,qz,qw` into poses in the right-handed
 * frame. A header line is optional but, if present, must name exactly those columns. Blank lines are
 * skipped. Any malformed line throws an error naming the source and the 1-based line number.
 */
export function parseTrace(text: string, options: ParseTraceOptions): Pose[] {
  const source = options.source ?? 'trace';
  const poses: Pose[] = [];
  const lines = text.split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i].trim();
    if (line === '') continue;
    const where = `${source}:${i + 1}`;
    const fields = line.split(',').map((f) => f.trim());
    if (poses.length === 0 && i === firstNonBlank(lines) && /[a-z_]/i.test(fields[0]) && !isNumber(fields[0])) {
      if (fields.join(',') !== TRACE_COLUMNS.join(',')) {
        throw new Error(`${where}: header "${line}" is not "${TRACE_COLUMNS.join(',')}"`);
      }
      continue;
    }
    if (fields.length !== TRACE_COLUMNS.length) {
      throw new Error(`${where}: expected ${TRACE_COLUMNS.length} fields, got ${fields.length}: "${line}"`);
    }
    const v = fields.map(Number);
    const bad = v.findIndex((n, k) => fields[k] === '' || !Number.isFinite(n));
    if (bad >= 0) {
      throw new Error(`${where}: column ${TRACE_COLUMNS[bad]} is not a finite number: "${fields[bad]}"`);
    }
    const [t, x, y, z, qx, qy, qz, qw] = v;
    const previous = poses[poses.length - 1];
    if (previous && t <= previous.t) {
      throw new Error(`${where}: time ${t} s does not increase (previous ${previous.t} s)`);
    }
    if (Math.hypot(qx, qy, qz, qw) < 1e-6) {
      throw new Error(`${where}: quaternion is zero`);
    }
    const unity = options.convention === 'unity-left-handed';
    poses.push({
      t,
      position: unity ? [x, y, -z] : [x, y, z],
      orientation: normalize(unity ? [-qx, -qy, qz, qw] : [qx, qy, qz, qw]),
    });
  }
  return poses;
}

function firstNonBlank(lines: string[]): number {
  return lines.findIndex((l) => l.trim() !== '');
}

function isNumber(s: string): boolean {
  return s !== '' && Number.isFinite(Number(s));
}
