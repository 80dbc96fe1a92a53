//! Counters and gauges of the origin, rendered in the Prometheus text exposition format at
//! `/metrics`.

use std::sync::atomic::{AtomicU64, Ordering};

macro_rules! metrics {
    ($( $(#[doc = $doc:literal])* $kind:ident $name:ident ),* $(,)?) => {
        /// Every metric is a relaxed atomic: exact totals, no ordering needed between them.
        #[derive(Debug, Default)]
        pub struct Metrics { $( $(#[doc = $doc])* pub $name: AtomicU64, )* }

        impl Metrics {
            pub fn render_prometheus(&self) -> String {
                let mut out = String::new();
                $(
                    let help = concat!($($doc),*).trim();
                    let kind = stringify!($kind);
                    let name = concat!("holoquic_", stringify!($name));
                    out.push_str(&format!("# HELP {name} {help}\n# TYPE {name} {kind}\n{name} {}\n", self.$name.load(Ordering::Relaxed)));
                )*
                out
            }
        }
    };
}

metrics! {
    /// QUIC connections accepted.
    counter connections_total,
    /// QUIC connections open now.
    gauge connections_active,
    /// Retry packets sent (address validation while many handshakes are open).
    counter retries_sent_total,
    /// Initials whose token was not a valid Retry token of this origin (dropped).
    counter retry_tokens_refused_total,
    /// WebTransport sessions established.
    counter sessions_total,
    /// WebTransport sessions open now.
    gauge sessions_active,
    /// WebTransport CONNECT requests refused (origin not allowed, wrong path or method).
    counter sessions_refused_total,
    /// Object requests answered with reliable delivery.
    counter requests_reliable_total,
    /// Object requests answered with datagram delivery.
    counter requests_datagram_total,
    /// Object requests answered with an error status.
    counter requests_failed_total,
    /// Object payload bytes written on reliable streams.
    counter bytes_reliable_total,
    /// Symbol bytes handed to QUIC as datagrams (a few later purged unsent, `datagrams_purged_total`).
    counter bytes_datagram_total,
    /// RaptorQ symbols sent (source and repair): datagrams as they leave QUIC, symbols on streams
    /// as they are written.
    counter symbols_sent_total,
    /// Source symbols (K, summed over blocks) of the objects answered with datagram delivery: with
    /// `symbols_sent_total`, the FEC overhead the origin actually paid, (sent − source) / source.
    counter source_symbols_total,
    /// REPAIR messages received.
    counter repair_requests_total,
    /// Repair symbols sent on demand.
    counter repair_symbols_total,
    /// Queued datagrams dropped because of a deadline or a cancel.
    counter datagrams_purged_total,
    /// Symbols sent on a request stream to fill the congestion window's tail (docs/protocol.md →
    /// SYMBOL); they count in `symbols_sent_total` too.
    counter symbols_on_stream_total,
    /// Requests whose deadline passed before everything was sent.
    counter deadline_misses_total,
    /// Requests the client gave up before they completed: CANCEL, or the stream stopped or reset.
    counter requests_cancelled_total,
    /// Connections or streams closed for protocol errors.
    counter protocol_errors_total,
    /// Datagrams received from clients (not part of the protocol; dropped).
    counter client_datagrams_dropped_total,
    /// HTTPS (HTTP/2 and HTTP/1.1) requests served.
    counter https_requests_total,
    /// QUIC packets sent, counted when their connection ends.
    counter quic_packets_sent_total,
    /// QUIC packets declared lost by loss detection (queue drops and link loss alike), counted when
    /// their connection ends.
    counter quic_packets_lost_total,
}

impl Metrics {
    pub fn add(counter: &AtomicU64, n: u64) {
        counter.fetch_add(n, Ordering::Relaxed);
    }

    pub fn inc(counter: &AtomicU64) {
        counter.fetch_add(1, Ordering::Relaxed);
    }

    pub fn dec(counter: &AtomicU64) {
        counter.fetch_sub(1, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_prometheus_text() {
        let m = Metrics::default();
        Metrics::add(&m.symbols_sent_total, 42);
        let text = m.render_prometheus();
        assert!(text.contains("# HELP holoquic_symbols_sent_total RaptorQ symbols sent (source and repair): datagrams as they leave QUIC, symbols on streams as they are written.\n"));
        assert!(text.contains("# TYPE holoquic_symbols_sent_total counter\nholoquic_symbols_sent_total 42\n"));
        assert!(text.contains("# TYPE holoquic_sessions_active gauge\n"));
        // Every sample line is `name value` with a numeric value.
        for line in text.lines().filter(|l| !l.starts_with('#')) {
            let (name, value) = line.split_once(' ').unwrap();
            assert!(name.starts_with("holoquic_"));
            value.parse::<u64>().unwrap();
        }
    }
}
