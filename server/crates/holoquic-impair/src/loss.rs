//! Packet loss models shared by every impairer mode.
//!
//! The Gilbert–Elliott model follows the semantics of Linux netem's
//! `loss gemodel p r 1-h 1-k`: a two-state Markov chain (Good, Bad) advanced once
//! per packet. The loss decision for a packet uses the state the chain was in
//! *before* that packet's transition, exactly as netem does, so measurements made
//! against kernel netem and against this impairer are comparable.
//!
//! * `p`   – probability Good → Bad,
//! * `r`   – probability Bad → Good,
//! * `1-h` – loss probability while Bad,
//! * `1-k` – loss probability while Good.
//!
//! The same chain can instead run on a clock ([`LossModel::timed_gilbert_elliott`]): Bad periods
//! last a given time on average rather than `1/r` packets. Per packet, a sender that goes quiet —
//! a TCP connection backing off its retransmission timer sends one packet per timeout — stays in
//! a Bad period for as many of its packets as a busy sender, i.e. for seconds; on a clock a burst
//! is over in milliseconds whoever sends. The loss shape (`p/(p+r)` of the time in Bad, `1-h`,
//! `1-k`) is the same, so a steady sender sees the same loss rate under either clock.

use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// Parameters of the Gilbert–Elliott chain, as probabilities in `[0, 1]`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GeParams {
    pub p: f64,
    pub r: f64,
    pub loss_bad: f64,
    pub loss_good: f64,
}

impl GeParams {
    /// Parses `p,r,1-h,1-k` given in percent (the order netem uses).
    pub fn parse_percent(text: &str) -> Result<Self> {
        let values: Vec<f64> = text.split(',').map(|v| v.trim().parse::<f64>().with_context(|| format!("`{v}` is not a number"))).collect::<Result<_>>()?;
        let [p, r, loss_bad, loss_good] = values[..] else {
            bail!("expected four comma-separated percentages `p,r,1-h,1-k`, got `{text}`");
        };
        let params = Self { p: p / 100.0, r: r / 100.0, loss_bad: loss_bad / 100.0, loss_good: loss_good / 100.0 };
        params.validate()?;
        Ok(params)
    }

    fn validate(&self) -> Result<()> {
        for (name, v) in [("p", self.p), ("r", self.r), ("1-h", self.loss_bad), ("1-k", self.loss_good)] {
            if !(0.0..=1.0).contains(&v) {
                bail!("{name} must be between 0 and 100 %");
            }
        }
        if self.p + self.r == 0.0 {
            bail!("p and r cannot both be 0: the chain would have no stationary state");
        }
        Ok(())
    }

    /// Stationary probability of being in the Bad state: `p / (p + r)`.
    pub fn bad_share(&self) -> f64 {
        self.p / (self.p + self.r)
    }

    /// Long-run fraction of packets lost.
    pub fn loss_rate(&self) -> f64 {
        let bad = self.bad_share();
        (1.0 - bad) * self.loss_good + bad * self.loss_bad
    }

    /// Mean length of a run of consecutive losses.
    ///
    /// Every burst ends with exactly one "loss followed by delivery" pair, so the
    /// mean burst length is `P(loss) / P(loss, next delivered)`. The joint
    /// probability sums over the state of the lost packet and the state the chain
    /// moves to before the next packet.
    pub fn mean_burst_length(&self) -> f64 {
        let bad = self.bad_share();
        let good = 1.0 - bad;
        let delivered_next_from_good = (1.0 - self.p) * (1.0 - self.loss_good) + self.p * (1.0 - self.loss_bad);
        let delivered_next_from_bad = self.r * (1.0 - self.loss_good) + (1.0 - self.r) * (1.0 - self.loss_bad);
        let loss_then_delivered = good * self.loss_good * delivered_next_from_good + bad * self.loss_bad * delivered_next_from_bad;
        self.loss_rate() / loss_then_delivered
    }
}

/// A seeded, per-direction loss process.
#[derive(Debug)]
pub enum LossModel {
    None,
    Uniform {
        probability: f64,
        rng: StdRng,
    },
    GilbertElliott {
        params: GeParams,
        bad: bool,
        rng: StdRng,
    },
    /// The chain in continuous time: it leaves Bad at rate `1 / mean_bad` and Good at the rate
    /// that keeps `params.bad_share()` of the time in Bad. `last` is the previous packet's
    /// arrival, where `bad` was drawn.
    TimedGilbertElliott {
        params: GeParams,
        mean_bad: Duration,
        bad: bool,
        last: Option<Instant>,
        rng: StdRng,
    },
}

impl LossModel {
    pub fn uniform(percent: f64, seed: u64) -> Result<Self> {
        if !(0.0..=100.0).contains(&percent) {
            bail!("uniform loss must be between 0 and 100 %, got {percent}");
        }
        Ok(Self::Uniform { probability: percent / 100.0, rng: StdRng::seed_from_u64(seed) })
    }

    pub fn gilbert_elliott(params: GeParams, seed: u64) -> Self {
        Self::GilbertElliott { params, bad: false, rng: StdRng::seed_from_u64(seed) }
    }

    /// The chain of `params` on a clock: Bad periods last `mean_bad` on average, Good periods
    /// `mean_bad · r / p`, so the share of time in Bad is `p / (p + r)` as per packet.
    pub fn timed_gilbert_elliott(params: GeParams, mean_bad: Duration, seed: u64) -> Result<Self> {
        if mean_bad.is_zero() {
            bail!("the mean Bad period must be longer than 0");
        }
        if params.p == 0.0 || params.r == 0.0 {
            bail!("a chain on a clock needs p and r above 0 (with either at 0 it would never change state)");
        }
        Ok(Self::TimedGilbertElliott { params, mean_bad, bad: false, last: None, rng: StdRng::seed_from_u64(seed) })
    }

    /// Advances the model to a packet arriving at `now` and says whether it is dropped.
    pub fn should_drop(&mut self, now: Instant) -> bool {
        match self {
            Self::None => false,
            Self::Uniform { probability, rng } => rng.gen::<f64>() < *probability,
            Self::GilbertElliott { params, bad, rng } => {
                let loss_probability = if *bad { params.loss_bad } else { params.loss_good };
                let leave_probability = if *bad { params.r } else { params.p };
                if rng.gen::<f64>() < leave_probability {
                    *bad = !*bad;
                }
                rng.gen::<f64>() < loss_probability
            }
            Self::TimedGilbertElliott { params, mean_bad, bad, last, rng } => {
                // A two-state chain in continuous time forgets its state exponentially, at the sum
                // of its two leaving rates: P(Bad after t | Bad) = π + (1 − π)·e^(−λt) and
                // P(Bad after t | Good) = π·(1 − e^(−λt)), with π the Bad share. Drawing the state
                // at each arrival from these is exact however far apart packets come.
                let share = params.bad_share();
                let leave_bad = 1.0 / mean_bad.as_secs_f64();
                let leave_good = leave_bad * share / (1.0 - share);
                let elapsed = last.map_or(Duration::MAX, |t| now.saturating_duration_since(t));
                let memory = (-(leave_bad + leave_good) * elapsed.as_secs_f64()).exp();
                let bad_probability = if *bad { share + (1.0 - share) * memory } else { share * (1.0 - memory) };
                *bad = rng.gen::<f64>() < bad_probability;
                *last = Some(now);
                let loss_probability = if *bad { params.loss_bad } else { params.loss_good };
                rng.gen::<f64>() < loss_probability
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs `n` packets 1 ms apart and returns (loss rate, mean burst length).
    fn measure(model: &mut LossModel, n: usize) -> (f64, f64) {
        measure_every(model, n, Duration::from_millis(1))
    }

    /// Runs `n` packets `gap` apart and returns (loss rate, mean burst length in packets).
    fn measure_every(model: &mut LossModel, n: usize, gap: Duration) -> (f64, f64) {
        let start = Instant::now();
        let (mut lost, mut bursts, mut previous_lost) = (0usize, 0usize, false);
        for i in 0..n {
            let dropped = model.should_drop(start + gap * i as u32);
            if dropped {
                lost += 1;
                if !previous_lost {
                    bursts += 1;
                }
            }
            previous_lost = dropped;
        }
        (lost as f64 / n as f64, lost as f64 / bursts.max(1) as f64)
    }

    #[test]
    fn issue_parameter_set_gives_about_six_point_four_percent() {
        let params = GeParams::parse_percent("1,10,70,0.1").unwrap();
        assert!((params.loss_rate() - 0.0645).abs() < 0.0005, "{}", params.loss_rate());
    }

    #[test]
    fn long_run_loss_and_burst_length_match_analytic_values() {
        for (text, seed) in [("1,10,70,0.1", 1), ("0.5,25,100,0", 2), ("2,30,50,0.2", 3), ("0.1,5,80,0", 4), ("5,50,100,1", 5)] {
            let params = GeParams::parse_percent(text).unwrap();
            let (loss, burst) = measure(&mut LossModel::gilbert_elliott(params, seed), 2_000_000);
            let (want_loss, want_burst) = (params.loss_rate(), params.mean_burst_length());
            assert!((loss - want_loss).abs() / want_loss < 0.05, "{text}: loss {loss} vs {want_loss}");
            assert!((burst - want_burst).abs() / want_burst < 0.05, "{text}: burst {burst} vs {want_burst}");
        }
    }

    #[test]
    fn simple_gilbert_burst_length_is_inverse_of_r() {
        let params = GeParams::parse_percent("1,20,100,0").unwrap();
        assert!((params.mean_burst_length() - 5.0).abs() < 1e-9);
    }

    #[test]
    fn uniform_loss_matches_configured_rate_with_unit_bursts() {
        for (percent, seed) in [(0.5, 7), (5.0, 8), (30.0, 9)] {
            let (loss, burst) = measure(&mut LossModel::uniform(percent, seed).unwrap(), 1_000_000);
            let p = percent / 100.0;
            assert!((loss - p).abs() / p < 0.05, "{percent}: {loss}");
            assert!((burst - 1.0 / (1.0 - p)).abs() < 0.05, "{percent}: burst {burst}");
        }
    }

    #[test]
    fn same_seed_gives_same_drop_sequence() {
        let params = GeParams::parse_percent("1,10,70,0.1").unwrap();
        let mut a = LossModel::gilbert_elliott(params, 42);
        let mut b = LossModel::gilbert_elliott(params, 42);
        let now = Instant::now();
        assert!((0..10_000).all(|_| a.should_drop(now) == b.should_drop(now)));
    }

    /// The matrix's 5 % level (docs/qoe.md) with Bad periods of 10 ms.
    fn timed_five_percent(seed: u64) -> LossModel {
        LossModel::timed_gilbert_elliott(GeParams::parse_percent("0.7538,10,70,0.1").unwrap(), Duration::from_millis(10), seed).unwrap()
    }

    #[test]
    fn on_a_clock_any_sender_sees_the_configured_loss_rate() {
        let want = GeParams::parse_percent("0.7538,10,70,0.1").unwrap().loss_rate();
        // A busy sender (a packet every 0.1 ms), one at the per-packet chain's pace, and one in
        // timeout backoff (a packet a second).
        for (gap_us, n, seed) in [(100, 10_000_000, 11), (1_000, 2_000_000, 12), (1_000_000, 400_000, 13)] {
            let (loss, _) = measure_every(&mut timed_five_percent(seed), n, Duration::from_micros(gap_us));
            assert!((loss - want).abs() / want < 0.06, "gap {gap_us} µs: loss {loss} vs {want}");
        }
    }

    #[test]
    fn on_a_clock_bursts_last_in_time_not_in_packets() {
        // A packet per 0.1 ms crosses a 10-ms Bad period in ~100 packets, 70 % of them lost:
        // losses come in runs (≈ 3.2 packets on average, with the Good state's isolated ones).
        let (_, dense_burst) = measure_every(&mut timed_five_percent(21), 2_000_000, Duration::from_micros(100));
        assert!(dense_burst > 2.8, "dense sender's mean loss burst {dense_burst}");
        // A packet a second meets a fresh state each time: a loss is followed by another about as
        // often as any packet is lost (mean run ≈ 1 / (1 − L)), where per packet the chain would
        // keep such a sender in Bad for ~10 of its packets.
        let (loss, sparse_burst) = measure_every(&mut timed_five_percent(22), 400_000, Duration::from_secs(1));
        assert!((sparse_burst - 1.0 / (1.0 - loss)).abs() < 0.02, "sparse sender's mean loss burst {sparse_burst}");
        let params = GeParams::parse_percent("0.7538,10,70,0.1").unwrap();
        let (_, per_packet_burst) = measure_every(&mut LossModel::gilbert_elliott(params, 23), 400_000, Duration::from_secs(1));
        assert!(per_packet_burst > 2.0, "per-packet chain's mean loss burst {per_packet_burst}");
    }

    #[test]
    fn a_clock_needs_a_chain_that_moves() {
        let params = GeParams::parse_percent("1,10,70,0.1").unwrap();
        assert!(LossModel::timed_gilbert_elliott(params, Duration::ZERO, 0).is_err());
        let stuck = GeParams::parse_percent("0,10,70,0.1").unwrap();
        assert!(LossModel::timed_gilbert_elliott(stuck, Duration::from_millis(10), 0).is_err());
    }

    #[test]
    fn bad_parameters_are_rejected_with_a_message() {
        assert!(GeParams::parse_percent("1,10,70").is_err());
        assert!(GeParams::parse_percent("1,10,170,0").is_err());
        assert!(GeParams::parse_percent("0,0,50,0").is_err());
        assert!(GeParams::parse_percent("a,1,1,1").is_err());
        assert!(LossModel::uniform(-1.0, 0).is_err());
    }
}
