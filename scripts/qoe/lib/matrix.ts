/**
 * The experiment matrix of the QoE runner: modes × loss levels × bandwidth traces × pose traces ×
 * one-way delays × player buffers × repetitions, and the network parameters of each run (docs/qoe.md).
 */

/** Gilbert–Elliott shape shared by every loss level (docs/qoe.md, "Parameterisation"): a Bad state
 *  lasting 1/r = 10 packets on average that loses 70 %, and 0.1 % background loss in Good. Only
 *  p (how often a Bad period starts) varies with the target level. */
export const GE_SHAPE = { rPct: 10, badLossPct: 70, goodLossPct: 0.1 } as const;

/** `--ge p,r,1-h,1-k` (percent) of holoquic-impair for a target mean loss in percent; empty for 0. */
export function geForLoss(lossPct: number): string {
  if (!(lossPct >= 0) || lossPct >= GE_SHAPE.badLossPct) throw new Error(`loss ${lossPct} % is outside [0, ${GE_SHAPE.badLossPct}) %`);
  if (lossPct === 0) return '';
  if (lossPct <= GE_SHAPE.goodLossPct) throw new Error(`loss ${lossPct} % is below the model's background loss of ${GE_SHAPE.goodLossPct} %`);
  const L = lossPct / 100, r = GE_SHAPE.rPct / 100, bad = GE_SHAPE.badLossPct / 100, good = GE_SHAPE.goodLossPct / 100;
  const p = (r * (L - good)) / (bad - L);
  return [p * 100, GE_SHAPE.rPct, GE_SHAPE.badLossPct, GE_SHAPE.goodLossPct].map((v) => +v.toFixed(4)).join(',');
}

export interface MatrixSpec {
  modes: string[];
  lossPct: number[];
  /** Bandwidth trace names (file stem) or paths. */
  traces: string[];
  poses: string[];
  /** One-way delays in ms, both directions (default: the usual 10 ms alone). */
  delaysMs?: number[];
  /** The player's buffer targets in s; null keeps the player's default (the default: that alone). */
  buffersS?: Array<number | null>;
  repetitions: number;
}

export interface MatrixEntry {
  id: string;
  mode: string;
  lossPct: number;
  trace: string;
  pose: string;
  delayMs: number;
  bufferS: number | null;
  repetition: number;
}

/** The one-way delay runs had before delay was a dimension: ids and condition names leave it out. */
export const USUAL_DELAY_MS = 10;
/**
 * The bottleneck's usual queue, in ms at the link's current rate (tbf's `latency`): five round
 * trips at the usual delay, one at 50 ms one way (`--queue-rtts` keeps it in round trips instead).
 */
export const USUAL_QUEUE_MS = 100;

function stem(path: string): string {
  return path.replace(/^.*\//, '').replace(/\.[^.]*$/, '');
}

/**
 * A run's id: stable, file-name safe, and the same as before delay and buffer were dimensions
 * for runs at the usual delay with the player's buffer (`…_loss5_qr_r0`; else `…_qr_d50ms_b1s_r0`),
 * so earlier experiment directories resume and merge as they did.
 */
export function runId(e: Omit<MatrixEntry, 'id'>): string {
  return [stem(e.trace), stem(e.pose), `loss${e.lossPct}`, e.mode, e.delayMs === USUAL_DELAY_MS ? '' : `d${e.delayMs}ms`,
    e.bufferS === null ? '' : `b${e.bufferS}s`, `r${e.repetition}`].filter(Boolean).join('_').replace(/[^A-Za-z0-9_.-]/g, '-');
}

/** Every combination, repetitions outermost so an interrupted experiment has every cell at least
 *  once before any cell twice; ids are stable and file-name safe. */
export function expandMatrix(spec: MatrixSpec): MatrixEntry[] {
  const delays = spec.delaysMs ?? [USUAL_DELAY_MS], buffers = spec.buffersS ?? [null];
  if (spec.modes.length === 0 || spec.lossPct.length === 0 || spec.traces.length === 0 || spec.poses.length === 0 || delays.length === 0 || buffers.length === 0) {
    throw new Error('the matrix needs at least one mode, loss level, trace, pose, delay and buffer');
  }
  if (!Number.isInteger(spec.repetitions) || spec.repetitions < 1) throw new Error('repetitions must be a positive integer');
  for (const d of delays) if (!(Number.isFinite(d) && d >= 0)) throw new Error(`one-way delay ${d} ms is not a non-negative number`);
  for (const b of buffers) if (b !== null && !(Number.isFinite(b) && b > 0)) throw new Error(`buffer ${b} s is not a positive number`);
  const out: MatrixEntry[] = [];
  for (let repetition = 0; repetition < spec.repetitions; repetition++) {
    for (const trace of spec.traces) {
      for (const pose of spec.poses) {
        for (const delayMs of delays) {
          for (const bufferS of buffers) {
            for (const lossPct of spec.lossPct) {
              for (const mode of spec.modes) {
                const entry = { mode, lossPct, trace, pose, delayMs, bufferS, repetition };
                out.push({ id: runId(entry), ...entry });
              }
            }
          }
        }
      }
    }
  }
  const ids = new Set(out.map((e) => e.id));
  if (ids.size !== out.length) throw new Error('two runs of the matrix share an id (traces or poses with the same file name, or a repeated value)');
  return out;
}

/** Parses a `t_seconds,mbps` trace (header and comments allowed). */
export function parseBandwidthTrace(text: string): Array<{ t: number; mbps: number }> {
  const rows: Array<{ t: number; mbps: number }> = [];
  for (const [i, line] of text.split(/\r?\n/).entries()) {
    const trimmed = line.trim();
    if (trimmed === '' || trimmed.startsWith('#') || /^t_seconds/.test(trimmed)) continue;
    const fields = trimmed.split(',').map((f) => f.trim());
    const [t, mbps] = fields.map(Number);
    if (fields.length !== 2 || fields.includes('') || !Number.isFinite(t) || !Number.isFinite(mbps) || mbps < 0) {
      throw new Error(`trace line ${i + 1}: expected "t_seconds,mbps", got "${trimmed}"`);
    }
    const previous = rows[rows.length - 1];
    if (previous && t <= previous.t) throw new Error(`trace line ${i + 1}: time ${t} s does not increase (previous ${previous.t} s)`);
    rows.push({ t, mbps });
  }
  if (rows.length === 0) throw new Error('trace has no samples');
  return rows;
}

export function median(values: readonly number[]): number {
  const s = [...values].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

/**
 * The trace multiplier of `--trace-scale auto`: the trace's median becomes the sum over objects of
 * their second-highest representation bandwidth, so the ladder matters (everyone at the top does
 * not fit about half of the time, everyone at the bottom nearly always does).
 * @param ladders per object, representation bandwidths in bit/s
 */
export function autoTraceScale(traceMbps: readonly number[], ladders: readonly number[][]): number {
  const target = ladders.reduce((sum, ladder) => {
    const sorted = [...ladder].sort((a, b) => a - b);
    return sum + sorted[Math.max(0, sorted.length - 2)];
  }, 0) / 1e6;
  const m = median(traceMbps);
  if (!(m > 0) || !(target > 0)) throw new Error('cannot scale: trace median or ladder is zero');
  return target / m;
}
