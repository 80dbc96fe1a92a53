//! What the origin counts about itself: counters, gauges and histograms, rendered in the
//! Prometheus text exposition format at the admin listener's `/metrics` (see `admin`).

use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use crate::histogram::Histogram;

macro_rules! metrics {
    ($( $(#[doc = $doc:literal])* $kind:ident $name:ident ),* $(,)?) => {
        /// Every metric is a relaxed atomic: exact totals, no ordering needed between them.
        #[derive(Debug, Default)]
        pub struct Metrics {
            $( $(#[doc = $doc])* pub $name: AtomicU64, )*
            pub histograms: Histograms,
        }

        impl Metrics {
            pub fn render_prometheus(&self) -> String {
                let mut out = String::new();
                $(
                    let help = concat!($($doc),*).trim();
                    let kind = stringify!($kind);
                    let name = concat!("holoquic_", stringify!($name));
                    out.push_str(&format!("# HELP {name} {help}\n# TYPE {name} {kind}\n{name} {}\n", self.$name.load(Ordering::Relaxed)));
                )*
                self.histograms.render(&mut out);
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
    /// Object and HTTP/3 requests answered 503 because the loader's queue, the connection's share
    /// of it or a byte budget was full.
    counter requests_shed_total,
    /// QUIC connections closed because their handling panicked (the origin goes on).
    counter connection_panics_total,
    /// New QUIC connections refused by a per-IP limit (connections or handshakes).
    counter connections_refused_per_ip_total,
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
    /// Plain HTTP/3 requests (GET, HEAD and refused methods) answered on the QUIC side.
    counter http3_requests_total,
    /// TCP connections (HTTPS and plain) open now, TLS handshakes included.
    gauge https_connections_active,
    /// TCP connections closed at once because the listener had `--https-max-connections` open.
    counter https_connections_refused_total,
    /// TCP connections closed by a timeout: TLS handshake, or idle with no request in flight.
    counter https_timeouts_total,
    /// Failed `accept` calls (file descriptors or memory ran out), each followed by a back-off.
    counter https_accept_errors_total,
    /// QUIC packets sent, counted when their connection ends.
    counter quic_packets_sent_total,
    /// QUIC packets declared lost by loss detection (queue drops and link loss alike), counted when
    /// their connection ends.
    counter quic_packets_lost_total,
    /// 1 while the origin drains (after SIGTERM or SIGINT: no new connections, in-flight objects
    /// finishing), else 0.
    gauge draining,
    /// QUIC connections refused because the origin is draining.
    counter connections_refused_draining_total,
    /// Bytes the allocator held free in its heaps at the last check (every 10 s; glibc only).
    gauge heap_free_bytes,
    /// Times the free heap was handed back to the system (more than 16 MiB free at a check).
    counter heap_trims_total,
    /// Resident bytes those trims gave back.
    counter heap_released_bytes_total,
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

    /// One object request ended: its latency, size and deadline slack go into the histograms
    /// (when it was served, not refused or given up by the client), and its access-log line is
    /// written. The QUIC side calls this once per request, where the request is forgotten.
    pub fn request_ended(&self, end: &RequestEnd<'_>) {
        crate::access_log::object_request(end);
        if end.status != 200 || end.cancelled {
            return;
        }
        let h = &self.histograms;
        let latency = end.ended_at.saturating_duration_since(end.received_at).as_secs_f64();
        match end.delivery {
            Some(RequestDelivery::Reliable) => h.object_latency_reliable.observe(latency),
            Some(RequestDelivery::Datagram) => h.object_latency_datagram.observe(latency),
            None => {}
        }
        h.object_size.observe(end.object_bytes as f64);
        if let (Some(RequestDelivery::Datagram), Some(deadline)) = (end.delivery, end.deadline) {
            h.deadline_slack.observe(signed_seconds(deadline, end.ended_at));
        }
    }
}

/// `a − b` in seconds, negative when `a` is earlier.
fn signed_seconds(a: Instant, b: Instant) -> f64 {
    match a.checked_duration_since(b) {
        Some(ahead) => ahead.as_secs_f64(),
        None => -b.duration_since(a).as_secs_f64(),
    }
}

/// How an object request was answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RequestDelivery {
    Reliable,
    Datagram,
}

/// What the origin saw of one object request when it ended: the input of the histograms and of
/// the access log.
#[derive(Debug, Clone)]
pub struct RequestEnd<'a> {
    /// Object path as requested ("" when no REQUEST was read).
    pub path: &'a str,
    /// None when the request was refused with an error status.
    pub delivery: Option<RequestDelivery>,
    /// The RESPONSE status (0 when no REQUEST was read).
    pub status: u16,
    /// Why the request was refused or cut ("" when it was served): the message of its error
    /// RESPONSE, for the access log.
    pub reason: &'a str,
    pub object_bytes: u64,
    /// When the REQUEST was read.
    pub received_at: Instant,
    pub deadline: Option<Instant>,
    /// When the request ended: its last byte written (reliable), or the client's FIN after it
    /// decoded the object, or its deadline (datagram).
    pub ended_at: Instant,
    pub cancelled: bool,
    pub deadline_missed: bool,
    pub peer: Option<SocketAddr>,
}

/// The histograms (fixed buckets, see `histogram` for why hand-written).
#[derive(Debug)]
pub struct Histograms {
    pub object_latency_reliable: Histogram,
    pub object_latency_datagram: Histogram,
    pub deadline_slack: Histogram,
    pub object_size: Histogram,
}

/// Object latency buckets, seconds: from a LAN round trip to a segment's whole duration and past it.
const LATENCY_BUCKETS: &[f64] = &[0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0];
/// Deadline slack buckets, seconds: negative = completed after its deadline.
const SLACK_BUCKETS: &[f64] = &[-1.0, -0.25, -0.1, -0.05, 0.0, 0.05, 0.1, 0.25, 0.5, 1.0, 2.0, 5.0];
/// Object size buckets, bytes: 1 KiB to the default `--max-object-bytes` (64 MiB), ×4 apart.
const SIZE_BUCKETS: &[f64] = &[1024.0, 4096.0, 16384.0, 65536.0, 262144.0, 1048576.0, 4194304.0, 16777216.0, 67108864.0];

impl Default for Histograms {
    fn default() -> Self {
        Self {
            object_latency_reliable: Histogram::new(LATENCY_BUCKETS),
            object_latency_datagram: Histogram::new(LATENCY_BUCKETS),
            deadline_slack: Histogram::new(SLACK_BUCKETS),
            object_size: Histogram::new(SIZE_BUCKETS),
        }
    }
}

impl Histograms {
    fn render(&self, out: &mut String) {
        let latency =
            "Object requests from REQUEST read to their end (last byte written, or the client's FIN after decoding, or the deadline), served ones only.";
        Histogram::render_family(
            out,
            "holoquic_object_latency_seconds",
            latency,
            &[("delivery=\"reliable\"", &self.object_latency_reliable), ("delivery=\"datagram\"", &self.object_latency_datagram)],
        );
        let slack = "Deadline minus end of datagram requests with a deadline; negative when late.";
        Histogram::render_family(out, "holoquic_deadline_slack_seconds", slack, &[("", &self.deadline_slack)]);
        Histogram::render_family(out, "holoquic_object_size_bytes", "Size of the objects served.", &[("", &self.object_size)]);
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
        // Every sample line is `name[{labels}] value` with a numeric value.
        for line in text.lines().filter(|l| !l.starts_with('#')) {
            let (name, value) = line.rsplit_once(' ').unwrap();
            assert!(name.starts_with("holoquic_"));
            value.parse::<f64>().unwrap();
        }
    }

    #[test]
    fn a_served_request_lands_in_the_histograms_and_a_refused_one_does_not() {
        let m = Metrics::default();
        let t0 = Instant::now();
        let served = RequestEnd {
            path: "/content/a",
            delivery: Some(RequestDelivery::Datagram),
            status: 200,
            reason: "",
            object_bytes: 5000,
            received_at: t0,
            deadline: Some(t0 + std::time::Duration::from_millis(100)),
            ended_at: t0 + std::time::Duration::from_millis(130),
            cancelled: false,
            deadline_missed: true,
            peer: None,
        };
        m.request_ended(&served);
        m.request_ended(&RequestEnd { status: 404, delivery: None, ..served.clone() });
        let h = &m.histograms;
        assert_eq!((h.object_latency_datagram.count(), h.object_latency_reliable.count(), h.object_size.count()), (1, 0, 1));
        assert!((h.deadline_slack.sum() + 0.030).abs() < 1e-9, "30 ms late: {}", h.deadline_slack.sum());
        let text = m.render_prometheus();
        assert!(text.contains("holoquic_deadline_slack_seconds_bucket{le=\"-0.05\"} 0\nholoquic_deadline_slack_seconds_bucket{le=\"0\"} 1\n"));
        assert!(text.contains("holoquic_object_size_bytes_bucket{le=\"4096\"} 0\nholoquic_object_size_bytes_bucket{le=\"16384\"} 1\n"));
    }
}
