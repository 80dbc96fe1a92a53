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
    Uniform { probability: f64, rng: StdRng },
    GilbertElliott { params: GeParams, bad: bool, rng: StdRng },
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

    /// Advances the model by one packet and says whether that packet is dropped.
    pub fn should_drop(&mut self) -> bool {
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
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs `n` packets and returns (loss rate, mean burst length).
    fn measure(model: &mut LossModel, n: usize) -> (f64, f64) {
        let (mut lost, mut bursts, mut previous_lost) = (0usize, 0usize, false);
        for _ in 0..n {
            let dropped = model.should_drop();
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
        assert!((0..10_000).all(|_| a.should_drop() == b.should_drop()));
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
