/**
 * Object-level accuracy of a viewport prediction: does the predicted set of most-visible objects
 * match the set that is really most visible when the segment plays?
 */

/**
 * Indices of the up to `k` largest fractions among those > 0, largest first (ties: lower index
 * first). Objects not visible at all never enter the set, so it can hold fewer than `k`.
 */
export function topVisible(fractions: ArrayLike<number>, k: number): number[] {
  const visible: number[] = [];
  for (let i = 0; i < fractions.length; i++) if (fractions[i] > 0) visible.push(i);
  visible.sort((a, b) => fractions[b] - fractions[a] || a - b);
  return visible.slice(0, k);
}

/** Pooled precision and recall of predicted sets against true sets (micro-averaged over samples). */
export class SetAccuracy {
  private hits = 0;
  private predicted = 0;
  private actual = 0;
  samples = 0;

  add(predicted: readonly number[], actual: readonly number[]): void {
    const truth = new Set(actual);
    for (const p of predicted) if (truth.has(p)) this.hits++;
    this.predicted += predicted.length;
    this.actual += actual.length;
    this.samples++;
  }

  /** Share of predicted objects that are really in the true set (1 when nothing was predicted). */
  get precision(): number {
    return this.predicted === 0 ? 1 : this.hits / this.predicted;
  }

  /** Share of truly visible objects the prediction caught (1 when nothing was visible). */
  get recall(): number {
    return this.actual === 0 ? 1 : this.hits / this.actual;
  }
}
