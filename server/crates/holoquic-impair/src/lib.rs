//! `holoquic-impair`: network impairment for holoquic QoE experiments.
//!
//! [`loss`] holds the loss models, [`shaper`] turns them plus delay and a rate
//! limit into per-packet verdicts, and [`relay`] applies them to a UDP relay
//! that forwards QUIC between browsers and the origin.

pub mod loss;
pub mod nfqueue;
pub mod relay;
pub mod shaper;
pub mod stats;
