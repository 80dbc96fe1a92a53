//! Congestion control settings of QUIC connections.
//!
//! Why this exists: BBR2 as quiche implements it (Google's BBRv2/v3) reads every lossy round trip
//! as congestion: the lower bounds `bandwidth_lo`/`inflight_lo` shrink by 30 % (`beta`) after any
//! round with a loss, and bandwidth probing stops as soon as a round loses more than 1.5 %
//! (`loss_threshold`). On a path with random loss — which our RaptorQ datagrams are designed to
//! absorb — the rate ratchets down to the minimum window (measured through `holoquic-impair relay`
//! at 20 Mbit/s with 5 % Gilbert–Elliott loss: the window fell from 124 kB to 13.5 kB within 10 s
//! and goodput to 1.5–3 Mbit/s; docs/benchmarks.md → "Origin"). With a loss tolerance BBR2 keeps
//! probing for bandwidth while a round's loss stays below it, so the rate climbs back after each
//! lossy round instead of ratcheting down. Bursty loss makes single rounds far lossier than the
//! average (a Bad Gilbert–Elliott period loses 70 % of ~10 packets), hence a high tolerance. Its
//! model (delivery rate, min RTT, cwnd ≤ 2 BDP) still bounds queueing, and the `beta` cut of the
//! lower bounds after a lossy round stays, so real congestion is still answered.

use crate::config::CongestionControl;

/// Applies the algorithm and, for BBR2 with a non-zero `loss_tolerance`, the loss-tolerant
/// parameters. The parameters API is quiche's own (doc-hidden, experimental in 0.30).
pub fn configure(config: &mut quiche::Config, cc: CongestionControl, loss_tolerance: f32) {
    config.set_cc_algorithm(cc.quiche());
    if cc == CongestionControl::Bbr2 && loss_tolerance > 0.0 {
        config.set_custom_bbr_params(loss_tolerant_bbr(loss_tolerance));
    }
}

fn loss_tolerant_bbr(loss_tolerance: f32) -> quiche::BbrParams {
    // Only the probing threshold: quiche's other lower-bound strategies (`minrtt`, `inflight`,
    // `cwnd`) cut the rate per loss event and measured worse or less stable (1.5, 1.6–2.5 and
    // 5–13 Mbit/s against 10–12 with the default strategy at 5 % loss).
    quiche::BbrParams { loss_threshold: Some(loss_tolerance), ..Default::default() }
}
