//! FEC planning (docs/protocol.md §3.3): how many RaptorQ repair symbols to send with a block of
//! K source symbols so that the client almost surely receives enough to decode without asking.
//!
//! RaptorQ decodes from any K + 2 symbols with overwhelming probability, so the plan is the
//! smallest R such that P[at least K + 2 of the N = K + R symbols arrive] ≥ 99 %.
//!
//! Losses on real paths come in bursts (Gilbert–Elliott). With mean loss rate `p` and mean burst
//! length `b`, we model the N symbols as ⌈N / b⌉ independent groups of `b` consecutive symbols,
//! each lost whole with probability `p`: the mean loss is unchanged but the variance grows by a
//! factor `b`, which is what makes bursty channels need more repair than independent ones.

/// Probability with which the planned symbols must suffice.
pub const TARGET_SUCCESS: f64 = 0.99;
/// Symbols beyond K the RaptorQ decoder is given to make its own failure negligible.
pub const DECODE_MARGIN: u64 = 2;

/// Loss seen by the client, as reported in a REQUEST.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LossReport {
    /// Mean datagram loss rate, 0 … 1.
    pub rate: f64,
    /// Mean length of a run of lost datagrams (≥ 1; 1 = independent losses).
    pub mean_burst: f64,
}

impl LossReport {
    /// From the REQUEST fields `loss_ppm` and `burst_milli` (0 = unknown → 1).
    pub fn from_wire(loss_ppm: u32, burst_milli: u32) -> Self {
        Self { rate: f64::from(loss_ppm.min(1_000_000)) / 1e6, mean_burst: (f64::from(burst_milli) / 1000.0).max(1.0) }
    }
}

/// Repair symbols to send with a block of `source_symbols` under `loss`.
/// Zero when there is no loss; otherwise between `DECODE_MARGIN` (2) and 2·K.
pub fn plan_repair(source_symbols: u64, loss: LossReport) -> u64 {
    let k = source_symbols;
    if k == 0 || loss.rate <= 0.0 {
        return 0;
    }
    let max_repair = 2 * k;
    if !enough(k, max_repair, loss) {
        return max_repair;
    }
    // Success probability grows with R: binary search for the smallest R that reaches the target.
    let (mut lo, mut hi) = (1, max_repair);
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if enough(k, mid, loss) {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    lo
}

/// Whether K + R symbols deliver at least K + margin with probability ≥ the target.
fn enough(k: u64, repair: u64, loss: LossReport) -> bool {
    if repair < DECODE_MARGIN {
        return false;
    }
    let burst = loss.mean_burst.max(1.0);
    let groups = ((k + repair) as f64 / burst).ceil() as u64;
    // Lost groups X ~ Binomial(groups, p); the block survives when burst·X ≤ R − margin.
    let max_lost_groups = ((repair - DECODE_MARGIN) as f64 / burst).floor() as u64;
    binomial_cdf_reaches(groups, loss.rate.min(1.0), max_lost_groups, TARGET_SUCCESS)
}

/// Whether P[X ≤ x] ≥ `target` for X ~ Binomial(n, p), summed in log space so large n does not
/// underflow. The sum stops as soon as it reaches the target (the terms are never negative): the
/// client chooses the loss report, and without the early stop a large object at a middling loss
/// rate would cost the QUIC thread tens of milliseconds per request (2K terms × ~17 probes).
fn binomial_cdf_reaches(n: u64, p: f64, x: u64, target: f64) -> bool {
    if x >= n || p <= 0.0 {
        return true;
    }
    if p >= 1.0 {
        return false;
    }
    let (ln_p, ln_q) = (p.ln(), (1.0 - p).ln());
    let mut ln_pmf = n as f64 * ln_q;
    let mut cdf = ln_pmf.exp();
    for i in 0..x {
        if cdf >= target {
            return true;
        }
        ln_pmf += ((n - i) as f64 / (i + 1) as f64).ln() + ln_p - ln_q;
        cdf += ln_pmf.exp();
    }
    cdf >= target
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report(rate: f64, mean_burst: f64) -> LossReport {
        LossReport { rate, mean_burst }
    }

    // Plans for given (K, loss, burst), shared with the player's model: tests/fec_planning_vectors.rs,
    // from docs/vectors/fec-planning.json.

    /// The whole sum, as the early stop must agree with it.
    fn full_cdf(n: u64, p: f64, x: u64) -> f64 {
        let (ln_p, ln_q) = (p.ln(), (1.0 - p).ln());
        let mut ln_pmf = n as f64 * ln_q;
        let mut cdf = ln_pmf.exp();
        for i in 0..x.min(n) {
            ln_pmf += ((n - i) as f64 / (i + 1) as f64).ln() + ln_p - ln_q;
            cdf += ln_pmf.exp();
        }
        cdf
    }

    #[test]
    fn stopping_at_the_target_gives_the_full_sum_s_answer() {
        for n in [1u64, 7, 60, 500, 4000] {
            for p in [0.001, 0.01, 0.05, 0.2, 0.5, 0.9] {
                for x in (0..n).step_by((n as usize / 37).max(1)) {
                    assert_eq!(binomial_cdf_reaches(n, p, x, TARGET_SUCCESS), full_cdf(n, p, x) >= TARGET_SUCCESS, "n {n} p {p} x {x}");
                }
            }
        }
    }

    #[test]
    fn repair_grows_with_loss_and_burstiness() {
        let k = 1000;
        let low = plan_repair(k, report(0.01, 1.0));
        let high = plan_repair(k, report(0.05, 1.0));
        let bursty = plan_repair(k, report(0.05, 4.0));
        assert!(low < high && high < bursty, "{low} {high} {bursty}");
        // Must cover at least the mean loss of the N sent symbols.
        assert!(high as f64 >= 0.05 * (k + high) as f64 + DECODE_MARGIN as f64);
    }

    #[test]
    fn plan_meets_the_target_under_the_model_by_simulation() {
        // Monte Carlo of the burst-group model with a fixed-seed LCG: the plan must succeed ≥ 99 %.
        let (k, loss) = (500u64, report(0.05, 3.0));
        let r = plan_repair(k, loss);
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut uniform = || {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (seed >> 11) as f64 / (1u64 << 53) as f64
        };
        let groups = ((k + r) as f64 / 3.0).ceil() as u64;
        let trials = 4000;
        let ok = (0..trials)
            .filter(|_| {
                let lost: u64 = (0..groups).filter(|_| uniform() < loss.rate).count() as u64 * 3;
                k + r - lost.min(k + r) >= k + DECODE_MARGIN
            })
            .count();
        assert!(ok as f64 / trials as f64 >= 0.985, "{ok}/{trials} with R = {r}");
    }

    #[test]
    fn wire_fields_convert() {
        assert_eq!(LossReport::from_wire(20_000, 1500), report(0.02, 1.5));
        assert_eq!(LossReport::from_wire(5, 0).mean_burst, 1.0);
    }
}
