//! The path stream of each WebTransport session (docs/protocol.md → PATH): a unidirectional
//! WebTransport stream the origin opens once the session is accepted, on which it writes a PATH
//! message with quiche's view of the network path — smoothed and minimum RTT, RTT variation,
//! congestion window, delivery rate — every `REPORT_INTERVAL`. The player uses the round trip
//! for repair-on-demand timing and deadlines, where its own request → response times would
//! count the wait behind more urgent objects as network delay.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use holoquic_proto::h3::{stream_type, WebTransportStreamHeader};
use holoquic_proto::{Message, PathReport};

/// How often a session hears of its path. Four reports a second follow a trace's one-second rate
/// steps closely and cost about 100 bytes a second.
pub const REPORT_INTERVAL: Duration = Duration::from_millis(250);
/// Urgency of the path stream: ahead of every object (RFC 9218; objects use 0 … 7 and this
/// stream, opened first, goes first among equals), a report is worth most when it is fresh.
const URGENCY: u8 = 0;
/// Our control stream is server-initiated unidirectional stream 3; path streams follow it.
const FIRST_PATH_STREAM: u64 = 7;

/// One session's path stream.
struct PathStream {
    id: u64,
    /// Bytes not yet taken by quiche (the stream header, a report). A report is only added when
    /// this is empty, so at most one report ever waits: memory stays bounded however slow the peer.
    pending: Vec<u8>,
    last_report: Option<Instant>,
    /// quiche knows the stream (its first bytes were taken) and it has our urgency.
    prioritised: bool,
}

/// The path streams of one connection's sessions.
pub struct PathReports {
    streams: HashMap<u64, PathStream>,
    next_stream: u64,
}

impl Default for PathReports {
    fn default() -> Self {
        Self { streams: HashMap::new(), next_stream: FIRST_PATH_STREAM }
    }
}

/// What quiche knows of the connection's active path, as a PATH report (None before it has one).
pub fn report_of(conn: &quiche::Connection) -> Option<PathReport> {
    let path = conn.path_stats().find(|p| p.active)?;
    let micros = |d: Duration| u64::try_from(d.as_micros()).unwrap_or(u64::MAX).min(holoquic_proto::path::MAX_REPORTED_RTT_US);
    Some(PathReport {
        smoothed_rtt_us: micros(path.rtt),
        min_rtt_us: path.min_rtt.map_or(0, micros),
        rtt_var_us: micros(path.rttvar),
        cwnd_bytes: path.cwnd as u64,
        delivery_rate_bytes_per_s: path.delivery_rate,
    })
}

impl PathReports {
    /// One round: opens a path stream for each new session in `sessions` (their stream ids),
    /// ends those of sessions that are gone, adds a report where one is due, and hands quiche
    /// what it takes.
    pub fn write(&mut self, conn: &mut quiche::Connection, sessions: &[u64], now: Instant) {
        self.streams.retain(|session, stream| {
            let open = sessions.contains(session);
            if !open {
                // The session ended: so does its path stream (FIN; a report still owed is dropped).
                let _ = conn.stream_send(stream.id, &[], true);
            }
            open
        });
        for &session in sessions {
            let stream = self.streams.entry(session).or_insert_with(|| {
                let id = self.next_stream;
                self.next_stream += 4;
                let mut pending = Vec::new();
                WebTransportStreamHeader { session_id: session }.encode(stream_type::WEBTRANSPORT_UNI, &mut pending);
                PathStream { id, pending, last_report: None, prioritised: false }
            });
            let due = stream.last_report.is_none_or(|at| now.duration_since(at) >= REPORT_INTERVAL);
            // The first report goes with the stream header; later ones once the last is out.
            if due && (stream.pending.is_empty() || stream.last_report.is_none()) {
                if let Some(report) = report_of(conn) {
                    Message::Path(report).encode(&mut stream.pending);
                    stream.last_report = Some(now);
                }
            }
            if stream.pending.is_empty() {
                continue;
            }
            match conn.stream_send(stream.id, &stream.pending, false) {
                Ok(n) => {
                    if n > 0 && !stream.prioritised {
                        stream.prioritised = conn.stream_priority(stream.id, URGENCY, false).is_ok();
                    }
                    stream.pending.drain(..n);
                }
                // No room now (flow control, or the peer's stream limit): next round.
                Err(quiche::Error::Done) | Err(quiche::Error::StreamLimit) => {}
                // The peer stopped the stream: it does not want reports.
                Err(_) => stream.pending.clear(),
            }
        }
    }
}
