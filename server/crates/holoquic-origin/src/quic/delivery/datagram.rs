//! The datagram side of one object request: its RaptorQ symbols queued as datagrams (source
//! symbols and planned repair), REPAIR on demand within a budget, SENT once a batch has left the
//! connection, symbols moved to the stream to fill the congestion window's tail, and END with
//! the purge of what QUIC still holds when the request ends. Repair symbols asked for before the
//! object's encoders exist wait in the queue while a loader worker builds them.

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Instant;

use holoquic_proto::fec::{plan_repair, LossReport};
use holoquic_proto::object::EndReason;
use holoquic_proto::{FecMode, Message, ObjectDatagram, Request, Response, ResponseBody};

use raptorq::SourceBlockEncoder;

use super::{Ending, RequestEnv, RequestStream, State};
use crate::quic::loader::{Loader, Poll, Ticket};
use crate::quic::symbols::{ObjectSymbols, SymbolRef};

/// Most repair symbols one request may cost per source block of K source symbols, planned and
/// on demand together: 2K, at least 32. Without a bound a client could make the origin queue
/// symbols without end (a REPAIR is a few bytes and may ask for 65 535 per block, again and
/// again, on a request without deadline); with it, repair ESIs also stay far below RaptorQ's 2^24.
/// No real loss needs more: at 50 % loss, 2K repair symbols still leave a K-symbol margin.
pub fn repair_budget(source_symbols: u32) -> u32 {
    (2 * source_symbols).max(32)
}

/// Repair symbols `request` has the origin send unprompted for a block of `k` source symbols.
fn planned_repair(request: &Request, k: u64) -> u64 {
    match request.fec_mode {
        FecMode::None => 0,
        FecMode::Planned => plan_repair(k, LossReport::from_wire(request.loss_ppm, request.burst_milli)),
        FecMode::Fixed => ((k * u64::from(request.overhead_permille)).div_ceil(1000)).min(2 * k),
    }
}

pub(super) struct DatagramSend {
    pub(super) symbols: ObjectSymbols,
    /// Next repair symbol index per source block (indices ≥ K are repair symbols).
    pub(super) next_esi: Vec<u32>,
    /// Symbols still to send, in order; their datagrams are built when they are sent.
    pub(super) queue: VecDeque<SymbolRef>,
    /// The datagram of the queue's front, once built by `peek_datagram`.
    pub(super) front: Vec<u8>,
    pub(super) symbols_sent: u64,
    pub(super) purged: u64,
    /// A SENT is owed once every queued datagram has left the connection.
    pub(super) sent_owed: bool,
    /// Connection-wide hand-off number of the last datagram given to QUIC (see `datagram_sent`).
    pub(super) last_handed: u64,
    /// Prefix of every datagram of this request (quarter stream id + request id), to find them in
    /// QUIC's own queue.
    pub(super) header: Vec<u8>,
    /// Builds the encoders when repair is asked for before they exist.
    pub(super) loader: Arc<Loader>,
    /// The connection's loader-job cap (builds count in it).
    pub(super) loads: Arc<crate::quic::budget::ByteBudget>,
    /// The encoders being built by a loader worker.
    pub(super) encoders: Option<Arc<Ticket<Vec<Arc<SourceBlockEncoder>>>>>,
}

impl DatagramSend {
    /// Takes encoders a worker has built, and asks for them while repair symbols wait without
    /// (again each round while the loader's queue is full).
    pub(super) fn poll_encoders(&mut self) {
        if let Some(ticket) = &self.encoders {
            match ticket.poll() {
                Poll::Pending => return,
                Poll::Ready(built) => self.symbols.install_encoders(built),
                Poll::Lost => {}
            }
            self.encoders = None;
        }
        let waiting = self.queue.back().is_some_and(|last| !self.symbols.is_ready(*last));
        if waiting {
            let ticket = Ticket::new();
            let (theirs, build) = (Arc::clone(&ticket), self.symbols.encoder_build());
            let job = move || {
                if theirs.is_wanted() {
                    theirs.fill(build.run());
                }
            };
            if self.loader.try_build(&self.loads, job) {
                self.encoders = Some(ticket);
            }
        }
    }
}

/// An END encoded but not yet written, and its length in `out`.
#[derive(Debug, Clone, Copy)]
pub(super) struct EndMessage {
    pub(super) reason: EndReason,
    pub(super) symbols_sent: u64,
    pub(super) purged: u64,
    pub(super) len: usize,
}

impl RequestStream {
    /// REPAIR: `symbols` fresh repair symbols per source block, within the request's
    /// `repair_budget`, then a new SENT (which shows how many came).
    pub(super) fn repair(&mut self, symbols: u64, now: Instant) {
        if self.deadline.is_some_and(|d| now >= d) {
            return; // after the deadline REPAIR is ignored
        }
        let State::Datagram(send) = &mut self.state else { return };
        let wanted = symbols.clamp(1, 65_535) as u32;
        let mut added = 0u64;
        for block in 0..send.symbols.block_count() {
            let k = send.symbols.source_symbols(block);
            let first = send.next_esi[block];
            let n = wanted.min(repair_budget(k).saturating_sub(first - k));
            send.queue.extend((first..first + n).map(|index| SymbolRef { block: block as u8, index }));
            send.next_esi[block] += n;
            added += u64::from(n);
        }
        send.sent_owed = true;
        send.poll_encoders();
        self.outcome.repair_requests += 1;
        self.outcome.repair_symbols += added;
    }

    /// Answers a datagram request whose object's symbols are ready: RESPONSE, and the source
    /// symbols and planned repair queued.
    pub(super) fn start_datagram(
        &mut self,
        request: &Request,
        symbols: ObjectSymbols,
        header: Vec<u8>,
        loader: Arc<Loader>,
        loads: Arc<crate::quic::budget::ByteBudget>,
    ) {
        let oti = symbols.oti();
        let mut queue = VecDeque::new();
        let mut next_esi = Vec::with_capacity(symbols.block_count());
        let mut total_source = 0u64;
        let mut planned = 0u64;
        for block in 0..symbols.block_count() {
            let k = u64::from(symbols.source_symbols(block));
            total_source += k;
            let repair = planned_repair(request, k);
            planned = planned.max(repair);
            queue.extend((0..(k + repair) as u32).map(|index| SymbolRef { block: block as u8, index }));
            next_esi.push((k + repair) as u32);
        }
        let object_length = oti.transfer_length();
        Message::Response(Response {
            status: 200,
            body: ResponseBody::Datagram {
                object_length,
                oti: oti.serialize(),
                source_symbols: total_source,
                planned_repair: planned,
                first_repair_esi: u64::from(symbols.first_repair_esi(0)),
            },
        })
        .encode(&mut self.out);
        self.outcome.datagram = true;
        self.outcome.source_symbols = total_source;
        let mut send = DatagramSend {
            symbols,
            next_esi,
            queue,
            front: Vec::new(),
            symbols_sent: 0,
            purged: 0,
            sent_owed: true,
            last_handed: 0,
            header,
            loader,
            loads,
            encoders: None,
        };
        // Planned repair symbols wait for the encoders (unless cached); the build starts now, while
        // the source symbols go out.
        send.poll_encoders();
        self.state = State::Datagram(Box::new(send));
    }

    /// Prefix of every datagram of this request: the session's quarter stream id, the request id.
    pub(super) fn datagram_header(&self, env: &RequestEnv<'_>) -> Vec<u8> {
        let mut header = env.datagram_prefix.to_vec();
        ObjectDatagram::encode_header(self.request_id.unwrap_or(0), &mut header);
        header
    }

    pub(super) fn end_datagram(&mut self, reason: EndReason) {
        if let State::Datagram(send) = &mut self.state {
            send.purged += send.queue.len() as u64;
            self.outcome.purged += send.queue.len() as u64;
            send.queue.clear();
            send.front.clear();
            self.purge = Some(std::mem::take(&mut send.header));
            let end = EndMessage { reason, symbols_sent: send.symbols_sent, purged: send.purged, len: 0 };
            self.push_end(end);
            self.ending = Ending::Fin;
            self.state = State::Ended;
        }
    }

    fn push_end(&mut self, mut end: EndMessage) {
        let before = self.out.len();
        Message::End { reason: end.reason, symbols_sent: end.symbols_sent, purged: end.purged }.encode(&mut self.out);
        end.len = self.out.len() - before;
        self.end_message = Some(end);
    }

    /// `n` of the datagrams this request handed to QUIC were dropped from its queue unsent when
    /// the request ended (see `take_purge`): the END, if not yet written, counts them as purged
    /// instead of sent, so the client learns what really went out.
    pub fn purged_in_quic(&mut self, n: u64) {
        let Some(end) = self.end_message else { return };
        // END is the last message; once its first byte is written it can no longer change.
        if n == 0 || self.out.len() < end.len {
            return;
        }
        self.out.truncate(self.out.len() - end.len);
        self.push_end(EndMessage { symbols_sent: end.symbols_sent.saturating_sub(n), purged: end.purged + n, ..end });
    }

    /// Whether datagrams are queued that can be sent now (a repair symbol waits for its encoder).
    pub fn has_datagrams(&self) -> bool {
        matches!(&self.state, State::Datagram(s) if s.queue.front().is_some_and(|f| s.symbols.is_ready(*f)))
    }

    /// Whether repair symbols are queued whose encoders a loader worker is still building.
    pub fn waits_for_encoders(&self) -> bool {
        matches!(&self.state, State::Datagram(s) if s.queue.back().is_some_and(|last| !s.symbols.is_ready(*last)))
    }

    /// The next datagram to send (already prefixed); call `datagram_sent` once QUIC took it.
    pub fn peek_datagram(&mut self) -> Option<&[u8]> {
        let State::Datagram(send) = &mut self.state else { return None };
        let symbol = *send.queue.front()?;
        if send.front.is_empty() {
            if !send.symbols.is_ready(symbol) {
                return None;
            }
            send.front.extend_from_slice(&send.header);
            send.symbols.write_packet(symbol, &mut send.front);
        }
        Some(&send.front)
    }

    /// The datagram from `peek_datagram` was handed to QUIC as the connection's `handed`-th.
    pub fn datagram_sent(&mut self, handed: u64) {
        if let State::Datagram(send) = &mut self.state {
            send.queue.pop_front();
            send.front.clear();
            send.symbols_sent += 1;
            send.last_handed = handed;
        }
    }

    /// QUIC has put `departed` of the connection's handed-off datagrams on the wire (or dropped
    /// them): once all of this request's have gone, SENT reports the batch. Waiting for the wire,
    /// not for the hand-off, keeps the client's repair timer (about one RTT after SENT) from firing
    /// while symbols still wait in QUIC's queue.
    pub fn on_departed(&mut self, departed: u64) {
        if let State::Datagram(send) = &mut self.state {
            if send.queue.is_empty() && send.sent_owed && departed >= send.last_handed {
                send.sent_owed = false;
                let next_esi = send.next_esi.iter().copied().max().unwrap_or(0);
                Message::Sent { symbols_sent: send.symbols_sent, next_esi: u64::from(next_esi) }.encode(&mut self.out);
            }
        }
    }

    /// Moves the next symbol of the datagram queue to the stream as a SYMBOL message (see
    /// `Connection::fill_window`). Returns whether there was one to move.
    pub fn symbol_to_stream(&mut self) -> bool {
        let State::Datagram(send) = &mut self.state else { return false };
        if self.ending != Ending::Open {
            return false;
        }
        let Some(&symbol) = send.queue.front() else { return false };
        if !send.symbols.is_ready(symbol) {
            return false;
        }
        send.queue.pop_front();
        let packet = if send.front.is_empty() {
            let mut packet = Vec::new();
            send.symbols.write_packet(symbol, &mut packet);
            packet
        } else {
            let packet = send.front[send.header.len()..].to_vec();
            send.front.clear();
            packet
        };
        send.symbols_sent += 1;
        Message::Symbol { packet }.encode(&mut self.out);
        true
    }
}
