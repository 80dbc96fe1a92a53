/**
 * Compares two reconstructions of one frame as sets of coloured points (their order differs: the
 * CPU emits patch by patch, the GPU pixel by pixel). Positions must match exactly; colours are
 * compared per channel after pairing equal positions.
 */

export interface PointSet {
  count: number;
  positions: ArrayLike<number>;
  colors: ArrayLike<number>;
}

export interface PointSetDifference {
  countA: number;
  countB: number;
  /** Points of A whose position B lacks (0 when the position multisets are equal). */
  positionMismatches: number;
  /** Largest colour channel difference over paired points. */
  maxColorDiff: number;
  /** Paired points whose colours are identical, 0 … 1. */
  exactColorShare: number;
}

interface Keys {
  position: Float64Array;
  color: Float64Array;
}

/** Position key (16 bits per axis, exact in a double) and colour key, sorted by both. */
function sortedKeys(s: PointSet): Keys {
  const position = new Float64Array(s.count), color = new Float64Array(s.count);
  for (let i = 0; i < s.count; i++) {
    position[i] = s.positions[i * 3] * 2 ** 32 + s.positions[i * 3 + 1] * 2 ** 16 + s.positions[i * 3 + 2];
    color[i] = s.colors[i * 3] * 65536 + s.colors[i * 3 + 1] * 256 + s.colors[i * 3 + 2];
  }
  const order = new Uint32Array(s.count).map((_, i) => i).sort((x, y) => position[x] - position[y] || color[x] - color[y]);
  return { position: order.reduce((out, k, i) => ((out[i] = position[k]), out), new Float64Array(s.count)), color: order.reduce((out, k, i) => ((out[i] = color[k]), out), new Float64Array(s.count)) };
}

export function comparePointSets(a: PointSet, b: PointSet): PointSetDifference {
  const ka = sortedKeys(a), kb = sortedKeys(b);
  let i = 0, j = 0, mismatches = 0, maxColorDiff = 0, exact = 0, paired = 0;
  while (i < a.count && j < b.count) {
    const pa = ka.position[i], pb = kb.position[j];
    if (pa < pb) { mismatches++; i++; continue; }
    if (pa > pb) { j++; continue; }
    const ca = ka.color[i], cb = kb.color[j];
    const diff = Math.max(Math.abs((ca >> 16) - (cb >> 16)), Math.abs(((ca >> 8) & 255) - ((cb >> 8) & 255)), Math.abs((ca & 255) - (cb & 255)));
    maxColorDiff = Math.max(maxColorDiff, diff);
    if (diff === 0) exact++;
    paired++;
    i++; j++;
  }
  mismatches += a.count - i;
  return { countA: a.count, countB: b.count, positionMismatches: mismatches, maxColorDiff, exactColorShare: paired ? exact / paired : 1 };
}
