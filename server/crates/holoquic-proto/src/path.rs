//! The path report (docs/protocol.md → PATH): what the origin's QUIC connection knows about the
//! network path — smoothed and minimum round-trip time, RTT variation, congestion window and
//! delivery rate — sent to the player every quarter second on the session's path stream. The
//! player cannot ask its browser (Chromium has no `WebTransport.getStats()`), and its own
//! request → response times include the wait behind more urgent objects, so they overstate the
//! path's round trip on a busy link.

use crate::varint::{put, Reader};
use crate::DecodeError;

/// The largest round-trip time (µs) a report may carry: one minute. A connection whose RTT is
/// beyond it has failed long before; a larger value is a broken or hostile origin.
pub const MAX_REPORTED_RTT_US: u64 = 60_000_000;

/// PATH (0x14): one report of the connection's recovery and congestion state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PathReport {
    /// Smoothed RTT (RFC 9002 §5.3) in microseconds: path delay plus the bottleneck's queue.
    pub smoothed_rtt_us: u64,
    /// Smallest RTT sample seen on the connection, microseconds (0 = no sample yet): the path's
    /// propagation delay without queueing.
    pub min_rtt_us: u64,
    /// RTT variation (RFC 9002 `rttvar`), microseconds.
    pub rtt_var_us: u64,
    /// Congestion window, bytes.
    pub cwnd_bytes: u64,
    /// The congestion controller's delivery-rate estimate, bytes per second (0 = unknown).
    pub delivery_rate_bytes_per_s: u64,
}

impl PathReport {
    /// Appends the message body (the framing is `Message::encode`'s).
    pub(crate) fn encode_body(&self, body: &mut Vec<u8>) {
        put(body, self.smoothed_rtt_us);
        put(body, self.min_rtt_us);
        put(body, self.rtt_var_us);
        put(body, self.cwnd_bytes);
        put(body, self.delivery_rate_bytes_per_s);
    }

    /// Reads the body's fields; RTTs beyond `MAX_REPORTED_RTT_US` are refused.
    pub(crate) fn decode_body(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        let mut rtt = || -> Result<u64, DecodeError> {
            let us = r.varint()?;
            if us > MAX_REPORTED_RTT_US {
                return Err(DecodeError::Malformed("PATH round-trip time over 60 s"));
            }
            Ok(us)
        };
        let (smoothed_rtt_us, min_rtt_us, rtt_var_us) = (rtt()?, rtt()?, rtt()?);
        Ok(PathReport { smoothed_rtt_us, min_rtt_us, rtt_var_us, cwnd_bytes: r.varint()?, delivery_rate_bytes_per_s: r.varint()? })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Message;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn reports_round_trip(
            smoothed_rtt_us in 0..=MAX_REPORTED_RTT_US, min_rtt_us in 0..=MAX_REPORTED_RTT_US, rtt_var_us in 0..=MAX_REPORTED_RTT_US,
            cwnd_bytes in 0u64..1 << 62, delivery_rate_bytes_per_s in 0u64..1 << 62,
        ) {
            let message = Message::Path(PathReport { smoothed_rtt_us, min_rtt_us, rtt_var_us, cwnd_bytes, delivery_rate_bytes_per_s });
            let mut out = Vec::new();
            message.encode(&mut out);
            prop_assert_eq!(Message::decode(&out), Ok((message, out.len())));
        }

        #[test]
        fn a_round_trip_over_a_minute_is_refused(over in MAX_REPORTED_RTT_US + 1..1 << 62, field in 0usize..3) {
            let mut rtts = [1_000u64; 3];
            rtts[field] = over;
            let report = PathReport { smoothed_rtt_us: rtts[0], min_rtt_us: rtts[1], rtt_var_us: rtts[2], ..PathReport::default() };
            let mut out = Vec::new();
            Message::Path(report).encode(&mut out);
            prop_assert!(matches!(Message::decode(&out), Err(DecodeError::Malformed(_))));
        }
    }
}
