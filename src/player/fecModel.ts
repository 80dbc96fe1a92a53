/**
 * The FEC planning model of docs/protocol.md §3.3, the same as the origin's
 * (`holoquic-proto/src/fec.rs`; shared test vectors keep them equal). The player uses it to
 * predict what a datagram delivery will cost and how likely it is to be recovered, when it
 * chooses quality, reliability and FEC overhead together (`adaptive` mode).
 *
 * Losses are modelled as ⌈N / b⌉ independent groups of b consecutive symbols (b = mean burst
 * length), each lost whole with the mean loss rate: same mean as independent losses, variance
 * b times larger, as on a Gilbert–Elliott channel.
 */
import type { LossModel } from '../model/link';

/** Probability with which the planned symbols must suffice. */
export const TARGET_SUCCESS = 0.99;
/** Symbols beyond K given to the RaptorQ decoder to make its own failure negligible. */
export const DECODE_MARGIN = 2;

/**
 * The range of loss FEC is planned for. The least: a link with no random loss still drops
 * datagrams when its bottleneck queue overflows (a rate trace stepping down), and the estimate
 * reads 0 until a loss was seen; planning for nothing then made one dropped symbol cost the
 * object whenever repair on demand had no time left (1 % costs ~4–8 % overhead at the demo's
 * object sizes). The most: losses beyond a few percent, and long runs of them, are the bottleneck
 * queue overflowing — congestion, which more repair symbols only deepen (planning for what such
 * episodes measure sent 2·K repair, the model's cap, and halved the quality that fitted).
 * Beyond the caps repair on demand and the ABR take over.
 */
export const PLANNING_LOSS_FLOOR = 0.01;
export const PLANNING_LOSS_CAP = 0.1;
export const PLANNING_BURST_CAP = 4;

/** The loss FEC is planned for: the measured one, within the planning range. */
export function planningLoss(loss: LossModel): LossModel {
  return {
    rate: Math.min(PLANNING_LOSS_CAP, Math.max(loss.rate, PLANNING_LOSS_FLOOR)),
    meanBurst: Math.min(PLANNING_BURST_CAP, Math.max(1, loss.meanBurst)),
  };
}

/** P[X ≤ x] for X ~ Binomial(n, p), in log space so large n does not underflow. */
export function binomialCdf(n: number, p: number, x: number): number {
  if (x >= n || p <= 0) return 1;
  if (x < 0 || p >= 1) return 0;
  const lnP = Math.log(p), lnQ = Math.log1p(-p);
  let lnPmf = n * lnQ;
  let cdf = Math.exp(lnPmf);
  for (let i = 0; i < x; i++) {
    lnPmf += Math.log((n - i) / (i + 1)) + lnP - lnQ;
    cdf += Math.exp(lnPmf);
  }
  return Math.min(1, cdf);
}

/** Probability that K source + `repair` repair symbols deliver at least K + margin under `loss`. */
export function recoveryProbability(sourceSymbols: number, repair: number, loss: LossModel): number {
  if (sourceSymbols <= 0) return 1;
  if (loss.rate <= 0) return repair >= 0 ? 1 : 0;
  if (repair < DECODE_MARGIN) {
    // Without the margin only a loss-free delivery of all symbols works (source-only case).
    return Math.pow(1 - Math.min(1, loss.rate), Math.ceil((sourceSymbols + repair) / Math.max(1, loss.meanBurst)));
  }
  const burst = Math.max(1, loss.meanBurst);
  const groups = Math.ceil((sourceSymbols + repair) / burst);
  const maxLostGroups = Math.floor((repair - DECODE_MARGIN) / burst);
  return binomialCdf(groups, Math.min(1, loss.rate), maxLostGroups);
}

/**
 * Repair symbols the origin plans for a block of K (docs/protocol.md §3.3): 0 without loss, else
 * 2 … 2K. With another `target` (a client asking for fixed FEC, `fecTarget`), the same plan for
 * that probability.
 */
export function planRepair(sourceSymbols: number, loss: LossModel, target = TARGET_SUCCESS): number {
  const k = sourceSymbols;
  if (k <= 0 || loss.rate <= 0) return 0;
  const enough = (r: number) => r >= DECODE_MARGIN && recoveryProbability(k, r, loss) >= target;
  const max = 2 * k;
  if (!enough(max)) return max;
  let lo = 1, hi = max;
  while (lo < hi) {
    const mid = lo + Math.floor((hi - lo) / 2);
    if (enough(mid)) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}
