//! Per-direction impairment pipeline: loss, then a token-bucket rate limit with a
//! bounded queue, then a fixed one-way delay. It only decides *when* a packet
//! leaves (or that it is dropped); the caller does the I/O.

use std::time::{Duration, Instant};

use crate::loss::LossModel;
use crate::stats::DirectionStats;

/// What happens to one packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Send at this instant.
    SendAt(Instant),
    /// Dropped by the loss model.
    Lost,
    /// Dropped because the rate-limit queue was full.
    QueueFull,
}

/// Rate limit: bits per second and the largest backlog (bytes) allowed to wait.
#[derive(Debug, Clone, Copy)]
pub struct RateLimit {
    pub bits_per_second: f64,
    pub queue_bytes: usize,
}

#[derive(Debug)]
pub struct Shaper {
    loss: LossModel,
    delay: Duration,
    rate: Option<RateLimit>,
    /// When the link finishes serialising the last accepted packet.
    link_free_at: Option<Instant>,
}

impl Shaper {
    pub fn new(loss: LossModel, delay: Duration, rate: Option<RateLimit>) -> Self {
        Self { loss, delay, rate, link_free_at: None }
    }

    /// Decides the fate of a packet of `len` bytes arriving at `now` and counts it.
    ///
    /// Departure times are non-decreasing, so a FIFO of accepted packets is
    /// already sorted by send time and the relay never reorders.
    pub fn admit(&mut self, len: usize, now: Instant, stats: &DirectionStats) -> Verdict {
        stats.seen(len);
        if self.loss.should_drop(now) {
            stats.lost();
            return Verdict::Lost;
        }
        let departure = match self.rate {
            None => now,
            Some(rate) => {
                let start = self.link_free_at.map_or(now, |free| free.max(now));
                let backlog_bytes = (start - now).as_secs_f64() * rate.bits_per_second / 8.0;
                if backlog_bytes + len as f64 > rate.queue_bytes as f64 {
                    stats.queue_full();
                    return Verdict::QueueFull;
                }
                let done = start + Duration::from_secs_f64(len as f64 * 8.0 / rate.bits_per_second);
                self.link_free_at = Some(done);
                done
            }
        };
        let send_at = departure + self.delay;
        if send_at > now {
            stats.delayed();
        }
        Verdict::SendAt(send_at)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rate_limit_spaces_packets_and_drops_when_queue_is_full() {
        let rate = RateLimit { bits_per_second: 8_000.0, queue_bytes: 2_500 };
        let mut shaper = Shaper::new(LossModel::None, Duration::from_millis(10), Some(rate));
        let stats = DirectionStats::default();
        let now = Instant::now();
        let verdicts: Vec<_> = (0..4).map(|_| shaper.admit(1000, now, &stats)).collect();
        assert_eq!(verdicts[0], Verdict::SendAt(now + Duration::from_millis(1010)));
        assert_eq!(verdicts[1], Verdict::SendAt(now + Duration::from_millis(2010)));
        // Backlog is now 2000 bytes; another 1000 would exceed the 2500-byte queue.
        assert_eq!(verdicts[2], Verdict::QueueFull);
        assert_eq!(stats.snapshot().dropped_queue, 2);
    }

    #[test]
    fn without_rate_limit_only_the_delay_applies() {
        let mut shaper = Shaper::new(LossModel::None, Duration::from_millis(25), None);
        let stats = DirectionStats::default();
        let now = Instant::now();
        assert_eq!(shaper.admit(1200, now, &stats), Verdict::SendAt(now + Duration::from_millis(25)));
        assert_eq!(stats.snapshot().delayed, 1);
    }
}
