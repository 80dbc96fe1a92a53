//! The object requests of one connection and the order their bytes leave: urgency ranks
//! datagrams against reliable stream bytes, streams are written most urgent first, datagrams
//! are handed to quiche a congestion window at a time (and the window's tail filled with a
//! symbol on a stream), the queued datagrams of ended requests are purged, and departures are
//! counted so each request knows what is on the wire. Each request is a `delivery.rs`
//! `RequestStream`; `webtransport.rs` opens, feeds and ends them as the session machine says.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use holoquic_proto::h3::{datagram_prefix, error_code};

use super::budget::ConnectionBudgets;
use super::delivery::{Ending, RequestEnv, RequestStream};
use super::QuicContext;
use crate::metrics::Metrics;

/// Datagram bytes kept queued inside quiche, at least. The queue is topped up to the congestion
/// window when that is larger: quiche treats a sender whose queued bytes are below the window's
/// free room as application-limited, and BBR2 then ignores its bandwidth samples (measured: with
/// a fixed 48-datagram queue BBR2 was "app-limited" all along at 14–16 of 20 Mbit/s).
/// Order and purging stay ours: at most one window waits in quiche, and an ended request's
/// leftovers are purged from it.
const QUICHE_DATAGRAM_QUEUE_MIN_BYTES: usize = 64 * 1024;

/// The requests being served on a connection, by stream id, and the datagram counts that tell
/// which of them have left.
#[derive(Default)]
pub struct Scheduler {
    requests: BTreeMap<u64, RequestStream>,
    /// Datagrams handed to quiche so far, and those of them purged from its queue before sending:
    /// with quiche's own sent count they tell which hand-offs have left (its queue is FIFO).
    datagrams_handed: u64,
    datagrams_dropped: u64,
    /// quiche's count of datagrams sent, as far as it is in `symbols_sent_total`.
    datagrams_counted: u64,
    /// quiche's count of datagrams sent when the window's tail was last filled (`fill_window`).
    filled_at: Option<usize>,
    /// Stream bytes handed to quiche that have not been seen leaving yet (`StreamBacklog`).
    backlog: StreamBacklog,
}

/// Stream bytes inside quiche, not yet sent, and the most urgent reliable request among those
/// whose object bytes are in them.
///
/// Why: quiche takes up to a congestion window of stream data at once and then alternates packets
/// between STREAM and DATAGRAM frames, so once a reliable object smaller than the window was
/// handed over whole, datagrams of less urgent requests took every other packet from it (in the
/// QoE runs the object in view finished ~40 % later than in `qr`, and the player's throughput
/// samples, which assume the origin serves by urgency, read low). quiche does not say what of a
/// stream's data is unsent, so the origin counts: bytes handed in, and the size of every packet
/// quiche makes that carries no datagram out (`packet_sent`; a packet's headers count as data, so
/// the count clears a little early, sharing at most the last packet or two). Lost stream data
/// quiche sends again is not counted. If no data packet leaves for `STALL_ROUND_TRIPS` round
/// trips (flow control, a congestion window that stays full, or a count that went wrong: data
/// handed to a stream that was then reset never leaves) the backlog is forgotten, so datagrams
/// are never held long by data quiche will not send.
#[derive(Default)]
struct StreamBacklog {
    bytes: usize,
    urgency: Option<u8>,
    last_progress: Option<Instant>,
}

/// Round trips without a stream packet leaving after which the backlog no longer holds datagrams.
const STALL_ROUND_TRIPS: u32 = 2;

/// The shortest stall, for paths of a millisecond or less, where a round trip is shorter than the
/// origin's own loop.
const STALL_MIN: Duration = Duration::from_millis(25);

/// A packet at least this long counts as stream data leaving (an acknowledgement-only packet is
/// ~50 bytes: header, ACK frame, AEAD tag).
const DATA_PACKET_MIN_BYTES: usize = 128;

impl StreamBacklog {
    fn handed(&mut self, n: usize, reliable_urgency: Option<u8>, now: Instant) {
        if self.bytes == 0 {
            self.last_progress = Some(now);
        }
        self.bytes += n;
        if let Some(u) = reliable_urgency {
            self.urgency = Some(self.urgency.map_or(u, |v| v.min(u)));
        }
    }

    fn left(&mut self, n: usize, now: Instant) {
        if self.bytes == 0 {
            return;
        }
        self.bytes = self.bytes.saturating_sub(n);
        // Acknowledgement-only packets (the client's requests and acknowledgements keep them
        // coming) drain the count a little but are no sign that stream data is leaving.
        if n >= DATA_PACKET_MIN_BYTES {
            self.last_progress = Some(now);
        }
        if self.bytes == 0 {
            self.urgency = None;
        }
    }

    /// Forgets the backlog if nothing of it has left for `STALL_ROUND_TRIPS` round trips.
    fn expire_if_stalled(&mut self, rtt: Duration, now: Instant) {
        let stall = (rtt * STALL_ROUND_TRIPS).max(STALL_MIN);
        if self.last_progress.is_some_and(|t| now.saturating_duration_since(t) > stall) {
            *self = Self::default();
        }
    }
}

impl Scheduler {
    /// A request begins on stream `id` of `session` (its bytes follow through `feed`).
    pub fn open(&mut self, id: u64, session: u64, now: Instant) {
        self.requests.insert(id, RequestStream::new(id, session, now));
    }

    /// Bytes read from request stream `id`. Once the request is read, its stream gets its
    /// urgency and the request is counted. A new request is refused (503) while `draining`.
    #[allow(clippy::too_many_arguments)]
    pub fn feed(
        &mut self,
        conn: &mut quiche::Connection,
        ctx: &QuicContext,
        budgets: &ConnectionBudgets,
        draining: bool,
        id: u64,
        data: &[u8],
        fin: bool,
        now: Instant,
    ) {
        let Some(request) = self.requests.get(&id) else { return };
        let session_id = request.session_id;
        // Every datagram of the session starts with its quarter stream id.
        let mut prefix = Vec::new();
        datagram_prefix(session_id, &mut prefix);
        let in_flight: Vec<u64> =
            self.requests.iter().filter(|(sid, r)| **sid != id && r.session_id == session_id && !r.is_done()).filter_map(|(_, r)| r.request_id()).collect();
        let env = RequestEnv {
            loader: &ctx.loader,
            connection_budget: &budgets.bytes,
            connection_loads: &budgets.loads,
            draining,
            symbol_size: symbol_size(conn, prefix.len()),
            datagram_prefix: &prefix,
            may_start: in_flight.len() < ctx.config.limits.max_requests_per_session,
            id_in_use: &|rid| in_flight.contains(&rid),
        };
        if let Some(request) = self.requests.get_mut(&id) {
            let was_started = request.request_id().is_some();
            request.on_data(data, fin, now, &env);
            if !was_started && request.request_id().is_some() {
                let _ = conn.stream_priority(id, request.stream_urgency(), false);
            }
        }
    }

    /// The client reset request stream `id`: the request stops, is counted, its queued
    /// datagrams go, and our side of the stream is reset.
    pub fn reset(&mut self, conn: &mut quiche::Connection, ctx: &QuicContext, id: u64) {
        if let Some(mut r) = self.requests.remove(&id) {
            r.on_stopped();
            count_outcome(conn, ctx, &mut r);
            if let Some(header) = r.take_purge() {
                self.datagrams_dropped += purge_queued(conn, ctx, &header);
            }
        }
        let _ = conn.stream_shutdown(id, quiche::Shutdown::Write, 0);
    }

    /// The session of request `id` ended: the request stops (uncounted), its queued datagrams
    /// go, and its stream is reset both ways with WEBTRANSPORT_SESSION_GONE.
    pub fn session_gone(&mut self, conn: &mut quiche::Connection, ctx: &QuicContext, id: u64) {
        if let Some(mut r) = self.requests.remove(&id) {
            r.on_session_closing();
            if let Some(header) = r.take_purge() {
                self.datagrams_dropped += purge_queued(conn, ctx, &header);
            }
        }
        let _ = conn.stream_shutdown(id, quiche::Shutdown::Write, error_code::WEBTRANSPORT_SESSION_GONE);
        let _ = conn.stream_shutdown(id, quiche::Shutdown::Read, error_code::WEBTRANSPORT_SESSION_GONE);
    }

    /// Whether an object request is in flight: asked for (its REQUEST read) and not yet ended and
    /// written. A stream that has not sent its REQUEST does not count (a drain does not wait
    /// for it).
    pub fn has_objects_in_flight(&self) -> bool {
        self.requests.values().any(|r| r.request_id().is_some() && !r.is_done())
    }

    /// Whether a request waits for the loader (its object being read, or encoders being built).
    pub fn waits_for_loader(&self) -> bool {
        self.requests.values().any(|r| r.is_loading() || r.waits_for_encoders())
    }

    /// Lets every request check its deadline.
    pub fn on_time(&mut self, now: Instant) {
        for request in self.requests.values_mut() {
            request.on_time(now);
        }
    }

    /// The most urgent (lowest) urgency among requests with queued datagrams, and among reliable
    /// requests with object bytes still to hand to QUIC or unsent inside it (`StreamBacklog`).
    ///
    /// quiche alternates packets between DATAGRAM and STREAM frames whenever both are waiting, so
    /// it cannot rank one kind against the other; the origin does, by handing QUIC only the kind
    /// whose most urgent request is at least as urgent as the other kind's (equal urgencies
    /// share). Without it, the datagrams of objects nobody looks at took half the link from the
    /// reliable objects in view (qpr-fec).
    fn most_urgent(&self) -> (Option<u8>, Option<u8>) {
        let (mut datagram, mut reliable) = (None::<u8>, self.backlog.urgency);
        for r in self.requests.values() {
            if r.has_datagrams() {
                datagram = Some(datagram.map_or(r.urgency, |u| u.min(r.urgency)));
            }
            if r.has_reliable_body() {
                reliable = Some(reliable.map_or(r.urgency, |u| u.min(r.urgency)));
            }
        }
        (datagram, reliable)
    }

    /// Writes pending stream bytes of every request, most urgent stream first; the object bytes of
    /// a reliable request wait while datagrams of a more urgent request are queued.
    pub fn write_streams(&mut self, conn: &mut quiche::Connection, ctx: &QuicContext, now: Instant) {
        let (datagram_urgency, _) = self.most_urgent();
        // In the order quiche sends them (`stream_urgency`): QUIC takes about a congestion window
        // at a time, and a datagram request's messages must not wait for an object's bytes to be
        // handed over first.
        let mut order: Vec<(u8, u64)> = self.requests.iter().map(|(id, r)| (r.stream_urgency(), *id)).collect();
        order.sort();
        for (_, id) in order {
            let Some(r) = self.requests.get_mut(&id) else { continue };
            let yield_to_datagrams = datagram_urgency.is_some_and(|u| u < r.urgency);
            loop {
                // The response message goes; the object bytes wait for the datagrams.
                if yield_to_datagrams && r.has_reliable_body() && r.pending_is_body() {
                    break;
                }
                if let Ending::Reset(code) = r.ending {
                    if r.pending().is_empty() {
                        let _ = conn.stream_shutdown(id, quiche::Shutdown::Write, code);
                        break;
                    }
                }
                let fin = r.fin_with_pending();
                let pending_len = r.pending().len();
                if pending_len == 0 && !fin {
                    break;
                }
                match conn.stream_send(id, r.pending(), fin) {
                    Ok(n) => {
                        let body = r.wrote(n);
                        self.backlog.handed(n, (body > 0).then_some(r.urgency), now);
                        Metrics::add(&ctx.metrics.bytes_reliable_total, body);
                        if n == 0 || (pending_len == n && fin) {
                            break;
                        }
                    }
                    Err(quiche::Error::Done) => break,
                    Err(_) => {
                        // The client reset or stopped the stream: nothing more to write.
                        r.on_stopped();
                        break;
                    }
                }
            }
        }
    }

    /// The request whose symbols go next, in (urgency, deadline, request id) order: its urgency and
    /// stream id.
    fn next_datagram_request(&self) -> Option<(u8, u64)> {
        self.requests
            .iter()
            .filter(|(_, r)| r.has_datagrams())
            .map(|(id, r)| (r.urgency, r.deadline(), r.request_id(), *id))
            .min_by(|a, b| (a.0, a.1.is_none(), a.1, a.2).cmp(&(b.0, b.1.is_none(), b.1, b.2)))
            .map(|(urgency, _, _, id)| (urgency, id))
    }

    /// Hands queued datagrams to quiche in (urgency, deadline, request id) order until its queue
    /// holds a congestion window (or `QUICHE_DATAGRAM_QUEUE_MIN_BYTES`), and none of a request
    /// less urgent than a reliable response still being written.
    pub fn send_datagrams(&mut self, conn: &mut quiche::Connection, ctx: &QuicContext, now: Instant) {
        let (cwnd, rtt) = conn.path_stats().find(|p| p.active).map_or((0, Duration::ZERO), |p| (p.cwnd, p.rtt));
        self.backlog.expire_if_stalled(rtt, now);
        let (_, reliable_urgency) = self.most_urgent();
        let target = cwnd.max(QUICHE_DATAGRAM_QUEUE_MIN_BYTES);
        while conn.dgram_send_queue_byte_size() < target && !conn.is_dgram_send_queue_full() {
            let Some((urgency, id)) = self.next_datagram_request() else { return };
            if reliable_urgency.is_some_and(|u| u < urgency) {
                return;
            }
            let Some(r) = self.requests.get_mut(&id) else { return };
            let Some(datagram) = r.peek_datagram() else { return };
            let len = datagram.len() as u64;
            match conn.dgram_send(datagram) {
                Ok(()) => {
                    self.datagrams_handed += 1;
                    r.datagram_sent(self.datagrams_handed);
                    Metrics::add(&ctx.metrics.bytes_datagram_total, len);
                }
                // Too big for the path (it shrank) or the queue is full: try again later.
                Err(_) => return,
            }
        }
    }

    /// Fills the tail of the congestion window when datagrams wait that do not fit it; returns
    /// whether there is something new for quiche to send.
    ///
    /// Why: quiche sends a DATAGRAM frame whole or not at all, so a datagram-only sender stops
    /// with up to one datagram of the window unused, and BBR2 reads that as (a) an
    /// application-limited sender (quiche calls `on_app_limited` when a send leaves room) and
    /// (b) a window not fully used, the one condition under which PROBE_UP raises `inflight_hi`.
    /// After a lossy round has cut `inflight_hi`, a datagram-only connection could then never
    /// raise it again: measured on the 5G walking trace with 1 % loss, its window sat at the
    /// 13.5 kB minimum and its rate at 1.7 Mbit/s while the link offered 40–60 (reliable streams,
    /// whose frames quiche splits to fill the window exactly, were unaffected). So the next
    /// symbol of the most urgent datagram request goes on its request stream instead (a SYMBOL
    /// message): stream data, which quiche splits to fill the tail exactly, and bytes the client
    /// needs anyway. At most one per window tail (until quiche has sent another datagram).
    pub fn fill_window(&mut self, conn: &mut quiche::Connection, ctx: &QuicContext, now: Instant) -> bool {
        if conn.dgram_send_queue_len() == 0 {
            return false;
        }
        let sent = conn.stats().dgram_sent;
        if self.filled_at == Some(sent) {
            return false;
        }
        let Some((_, id)) = self.next_datagram_request() else { return false };
        let Some(r) = self.requests.get_mut(&id) else { return false };
        if !r.symbol_to_stream() {
            return false;
        }
        self.filled_at = Some(sent);
        Metrics::inc(&ctx.metrics.symbols_on_stream_total);
        Metrics::inc(&ctx.metrics.symbols_sent_total);
        self.write_streams(conn, ctx, now);
        true
    }

    /// quiche made a packet of `len` bytes; `carried_datagram` when its datagram queue shrank
    /// meanwhile. A packet without a datagram carried stream data (or only acknowledgements,
    /// counted the same: see `StreamBacklog`).
    pub fn packet_sent(&mut self, len: usize, carried_datagram: bool, now: Instant) {
        if !carried_datagram {
            self.backlog.left(len, now);
        }
    }

    /// Adds the datagrams quiche has sent since the last call to `symbols_sent_total` (every
    /// datagram the origin sends is a symbol). Counted as they leave, not as they are handed to
    /// quiche: some handed are purged from its queue at a deadline or cancel and never sent.
    /// Called as the connection is served and once more when it is reaped.
    pub fn count_sent_datagrams(&mut self, conn: &quiche::Connection, ctx: &QuicContext) {
        let sent = conn.stats().dgram_sent as u64;
        Metrics::add(&ctx.metrics.symbols_sent_total, sent - self.datagrams_counted);
        self.datagrams_counted = sent;
    }

    /// Tells datagram requests how many hand-offs have left quiche (sent or purged), so SENT
    /// goes out when a batch is really on the wire.
    pub fn report_departed(&mut self, conn: &quiche::Connection) {
        let departed = conn.stats().dgram_sent as u64 + self.datagrams_dropped;
        for r in self.requests.values_mut() {
            r.on_departed(departed);
        }
    }

    /// Drops from quiche's queue the datagrams of requests that ended (deadline, cancel, FIN), and
    /// counts the cancels as they come.
    pub fn purge_ended(&mut self, conn: &mut quiche::Connection, ctx: &QuicContext) {
        for r in self.requests.values_mut() {
            if let Some(header) = r.take_purge() {
                let purged = purge_queued(conn, ctx, &header);
                self.datagrams_dropped += purged;
                r.purged_in_quic(purged);
            }
            if r.take_cancel() {
                Metrics::inc(&ctx.metrics.requests_cancelled_total);
            }
            count_start(ctx, r);
        }
    }

    /// Forgets finished requests, applying their outcome to the metrics; returns their streams.
    pub fn collect(&mut self, conn: &quiche::Connection, ctx: &QuicContext) -> Vec<u64> {
        let done: Vec<u64> = self.requests.iter().filter(|(_, r)| r.is_done()).map(|(id, _)| *id).collect();
        for id in &done {
            if let Some(mut r) = self.requests.remove(id) {
                count_outcome(conn, ctx, &mut r);
            }
        }
        done
    }
}

/// Counts a request by its delivery once its response has started (the object is read off the
/// loop, some time after the REQUEST).
fn count_start(ctx: &QuicContext, r: &mut RequestStream) {
    if r.take_started() {
        let outcome = r.outcome();
        if outcome.reliable {
            Metrics::inc(&ctx.metrics.requests_reliable_total);
        } else if outcome.datagram {
            Metrics::inc(&ctx.metrics.requests_datagram_total);
            Metrics::add(&ctx.metrics.source_symbols_total, outcome.source_symbols);
        }
    }
}

/// Applies a finished request's outcome to the metrics (once: the request is dropped after).
fn count_outcome(conn: &quiche::Connection, ctx: &QuicContext, r: &mut RequestStream) {
    count_start(ctx, r);
    let m = &ctx.metrics;
    m.request_ended(&r.end_report(conn.path_stats().next().map(|p| p.peer_addr), Instant::now()));
    if r.take_cancel() {
        Metrics::inc(&m.requests_cancelled_total);
    }
    let o = r.outcome();
    if o.failed {
        Metrics::inc(&m.requests_failed_total);
    }
    if o.shed {
        Metrics::inc(&m.requests_shed_total);
    }
    Metrics::add(&m.repair_requests_total, o.repair_requests);
    Metrics::add(&m.repair_symbols_total, o.repair_symbols);
    Metrics::add(&m.datagrams_purged_total, o.purged);
    if o.deadline_missed {
        Metrics::inc(&m.deadline_misses_total);
    }
}

/// Removes the queued datagrams starting with `header` (one request's) from quiche's queue;
/// returns how many went.
fn purge_queued(conn: &mut quiche::Connection, ctx: &QuicContext, header: &[u8]) -> u64 {
    let purged = std::cell::Cell::new(0u64);
    conn.dgram_purge_outgoing(|d: &[u8]| {
        let hit = d.starts_with(header);
        purged.set(purged.get() + u64::from(hit));
        hit
    });
    Metrics::add(&ctx.metrics.datagrams_purged_total, purged.get());
    purged.get()
}

/// Largest symbol (multiple of 8, RaptorQ's alignment) that fits one datagram after the quarter
/// stream id, the request id (≤ 8 bytes) and the 4-byte payload id; None without datagrams or
/// with room for less than 64 bytes (a symbol that small would cost more in headers than it carries).
fn symbol_size(conn: &quiche::Connection, prefix_len: usize) -> Option<u16> {
    let room = conn.dgram_max_writable_len()?.saturating_sub(prefix_len + 8 + 4);
    (room >= 64).then(|| ((room / 8) * 8).min(1400) as u16)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_backlog_holds_until_its_bytes_have_left_in_data_packets() {
        let t0 = Instant::now();
        let rtt = Duration::from_millis(40);
        let mut b = StreamBacklog::default();
        b.handed(3000, Some(2), t0);
        b.handed(500, None, t0);
        b.left(1350, t0 + Duration::from_millis(1));
        b.expire_if_stalled(rtt, t0 + Duration::from_millis(2));
        assert_eq!(b.urgency, Some(2));
        b.left(1350, t0 + Duration::from_millis(3));
        b.left(1350, t0 + Duration::from_millis(4));
        assert_eq!((b.bytes, b.urgency), (0, None), "all of it left");
    }

    #[test]
    fn a_backlog_that_makes_no_progress_stops_holding_datagrams() {
        let t0 = Instant::now();
        let rtt = Duration::from_millis(40);
        let mut b = StreamBacklog::default();
        b.handed(20_000, Some(0), t0);
        b.left(1350, t0 + Duration::from_millis(10));
        // Only acknowledgements leave afterwards (data of a stream that was reset, or blocked).
        for ms in (20..=90).step_by(10) {
            b.left(50, t0 + Duration::from_millis(ms));
            b.expire_if_stalled(rtt, t0 + Duration::from_millis(ms));
        }
        assert_eq!(b.urgency, Some(0), "held for two round trips");
        b.expire_if_stalled(rtt, t0 + Duration::from_millis(100));
        assert_eq!((b.bytes, b.urgency), (0, None), "forgotten after two round trips without data leaving");
    }
}
