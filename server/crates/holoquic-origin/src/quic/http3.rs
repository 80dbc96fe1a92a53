//! Plain HTTP/3 requests on the QUIC side: a GET or HEAD (or any other method but CONNECT, which
//! gets 405) is answered exactly as HTTPS answers it (`web.rs`), so the `Alt-Svc: h3` the HTTPS
//! side advertises holds. This module turns the request into a `web.rs` request, has a loader
//! worker compute the answer (it may read a file: never on the QUIC thread; a full loader queue,
//! or a connection with all its loads queued, gets 503 with `Retry-After`, as object requests
//! do), frames the answer (a HEADERS frame, then the body as one DATA frame) and writes it as
//! flow control and the congestion window let quiche take it, resuming every round of the driver
//! until the stream is finished, the peer stops it, or the connection ends.

use std::collections::BTreeMap;
use std::sync::Arc;

use bytes::Bytes;
use holoquic_proto::h3::frame_type;
use holoquic_proto::varint;

use super::budget::ConnectionBudgets;
use super::headers::{self, RequestHead};
use super::loader::{Poll, Ticket};
use super::QuicContext;
use crate::metrics::Metrics;
use crate::web::{self, Site, WebRequest, WebResponse};

/// Body bytes a connection may have waiting to be written. A request whose answer would go past
/// it gets 503 instead, unless nothing else waits (so one object up to `--max-object-bytes` is
/// always served): a client that asks for many large files and reads none of them holds at most
/// this much (plus one object) of the origin's memory.
pub const CONNECTION_QUEUE_BYTES: usize = 64 << 20;

/// RFC 9218's default urgency, for requests without a `priority` header.
const DEFAULT_URGENCY: u8 = 3;

/// The answers being computed (by a loader worker) and written on one connection.
#[derive(Default)]
pub struct Responses {
    /// Answers a worker is computing, by stream.
    computing: BTreeMap<u64, Arc<Ticket<WebResponse>>>,
    pending: BTreeMap<u64, Pending>,
    /// Body bytes of `pending` not yet taken by quiche.
    queued: usize,
}

/// One answer: its HEADERS frame and DATA frame header, then its body.
struct Pending {
    head: Vec<u8>,
    head_sent: usize,
    body: Bytes,
    body_sent: usize,
}

/// What a write round left of an answer.
enum Progress {
    /// Everything, FIN included, is with quiche.
    Finished,
    /// quiche took what it could; the rest waits for the next round.
    Waiting,
    /// The peer stopped the stream (or it is gone): nothing more to write.
    Gone,
}

impl Responses {
    /// Answers request `head` on `stream`: counts it and has a loader worker compute the answer
    /// (`write` starts writing it once there). While `draining`, or when the loader refuses the
    /// job, the answer is 503 at once.
    pub fn serve(&mut self, conn: &mut quiche::Connection, ctx: &QuicContext, budgets: &ConnectionBudgets, draining: bool, stream: u64, head: &RequestHead) {
        Metrics::inc(&ctx.metrics.http3_requests_total);
        let (urgency, incremental) = priority(&head.priority);
        let _ = conn.stream_priority(stream, urgency, incremental);
        if draining {
            return self.start(conn, stream, busy(b"the origin is shutting down; retry on another\n"));
        }
        let ticket = Ticket::new();
        let job = answer_job(conn, ctx, head, Arc::clone(&ticket));
        if ctx.loader.try_read(&budgets.loads, job) {
            self.computing.insert(stream, ticket);
        } else {
            Metrics::inc(&ctx.metrics.requests_shed_total);
            self.start(conn, stream, busy(b"the origin is busy reading files; retry\n"));
        }
    }

    /// Whether an answer is still being computed by a loader worker.
    pub fn waits_for_loader(&self) -> bool {
        !self.computing.is_empty()
    }

    /// Starts writing `answer` on `stream`, or 503 when the connection has too many body bytes
    /// waiting already.
    fn start(&mut self, conn: &mut quiche::Connection, stream: u64, mut answer: WebResponse) {
        if !answer.body.is_empty() && self.queued > 0 && self.queued + answer.body.len() > CONNECTION_QUEUE_BYTES {
            answer = busy(b"too many bytes waiting on this connection; retry when it has read them\n");
        }
        self.queued += answer.body.len();
        self.pending.insert(stream, Pending::new(answer));
        self.write_one(conn, stream);
    }

    /// Starts the answers the workers have computed, then writes what quiche takes of every
    /// waiting answer, most urgent stream first as quiche sends them; finished and stopped ones
    /// are forgotten.
    pub fn write(&mut self, conn: &mut quiche::Connection) {
        let computed: Vec<(u64, Option<WebResponse>)> = self
            .computing
            .iter()
            .filter_map(|(stream, ticket)| match ticket.poll() {
                Poll::Pending => None,
                Poll::Ready(answer) => Some((*stream, Some(answer))),
                Poll::Lost => Some((*stream, None)),
            })
            .collect();
        for (stream, answer) in computed {
            self.computing.remove(&stream);
            self.start(conn, stream, answer.unwrap_or_else(internal_error));
        }
        let streams: Vec<u64> = self.pending.keys().copied().collect();
        for stream in streams {
            self.write_one(conn, stream);
        }
    }

    /// Answers being computed or written.
    pub fn len(&self) -> usize {
        self.computing.len() + self.pending.len()
    }

    /// Body bytes waiting to be written.
    pub fn queued_bytes(&self) -> usize {
        self.queued
    }

    fn write_one(&mut self, conn: &mut quiche::Connection, stream: u64) {
        let Some(pending) = self.pending.get_mut(&stream) else { return };
        let body_before = pending.body_sent;
        let progress = pending.write(conn, stream);
        self.queued -= pending.body_sent - body_before;
        if !matches!(progress, Progress::Waiting) {
            if let Some(done) = self.pending.remove(&stream) {
                self.queued -= done.body.len() - done.body_sent;
            }
        }
    }
}

impl Pending {
    fn new(answer: WebResponse) -> Self {
        let mut head = headers::response(answer.status, &answer.headers);
        if !answer.body.is_empty() {
            varint::put(&mut head, frame_type::DATA);
            varint::put(&mut head, answer.body.len() as u64);
        }
        Self { head, head_sent: 0, body: answer.body, body_sent: 0 }
    }

    /// Hands quiche what it takes now, FIN with the last byte.
    fn write(&mut self, conn: &mut quiche::Connection, stream: u64) -> Progress {
        loop {
            let in_head = self.head_sent < self.head.len();
            let (bytes, last) = if in_head { (&self.head[self.head_sent..], self.body.is_empty()) } else { (&self.body[self.body_sent..], true) };
            match conn.stream_send(stream, bytes, last) {
                Ok(n) => {
                    let all = n == bytes.len();
                    if in_head {
                        self.head_sent += n;
                    } else {
                        self.body_sent += n;
                    }
                    match (all, last) {
                        (true, true) => return Progress::Finished,
                        (true, false) => continue,
                        (false, _) => return Progress::Waiting,
                    }
                }
                Err(quiche::Error::Done) => return Progress::Waiting,
                Err(_) => return Progress::Gone,
            }
        }
    }
}

/// The job that computes the answer to `head` on a loader worker: the one place an HTTP/3
/// request touches the disk (through `ContentStore`, cached, as object requests do, or the web
/// app's files). A request whose stream is gone before the job runs is not computed.
fn answer_job(conn: &quiche::Connection, ctx: &QuicContext, head: &RequestHead, ticket: Arc<Ticket<WebResponse>>) -> impl FnOnce() + Send + 'static {
    // The port the client reached us on: QUIC's own, as `/config.json` names it.
    let quic_port = conn.path_stats().find(|p| p.active).map_or(ctx.config.listen.port(), |p| p.local_addr.port());
    let (config, certs, content, web) = (Arc::clone(&ctx.config), Arc::clone(&ctx.certs), Arc::clone(&ctx.content), ctx.web.clone());
    let head = head.clone();
    move || {
        if !ticket.is_wanted() {
            return;
        }
        let site = Site { config: &config, certs: &certs, content: &content, web: web.as_deref(), quic_port };
        fn present(value: &str) -> Option<&str> {
            (!value.is_empty()).then_some(value)
        }
        let request = WebRequest {
            method: &head.method,
            target: &head.path,
            authority: present(&head.authority),
            range: present(&head.range),
            if_none_match: present(&head.if_none_match),
            alt_svc: false,
        };
        ticket.fill(web::respond(&site, &request));
    }
}

/// A 503 telling the client to come back in a second, with `message` as its body.
fn busy(message: &'static [u8]) -> WebResponse {
    let body = Bytes::from_static(message);
    WebResponse {
        status: 503,
        headers: vec![("content-type", "text/plain; charset=utf-8".into()), ("retry-after", "1".into()), ("content-length", body.len().to_string())],
        body,
    }
}

/// The answer when computing one failed (its job panicked).
fn internal_error() -> WebResponse {
    let body = Bytes::from_static(b"internal error\n");
    WebResponse { status: 500, headers: vec![("content-type", "text/plain; charset=utf-8".into()), ("content-length", body.len().to_string())], body }
}

/// The urgency (0 most urgent … 7) and incremental flag of an RFC 9218 `priority` header, as
/// quiche's stream priority: the same scale as object requests' urgency, so a page's fetches
/// and a session's objects on one connection are ordered together.
fn priority(value: &str) -> (u8, bool) {
    let (mut urgency, mut incremental) = (DEFAULT_URGENCY, false);
    for item in value.split(',').map(str::trim) {
        match item.split_once('=') {
            Some(("u", u)) => {
                if let Some(u) = u.parse::<u8>().ok().filter(|u| *u <= 7) {
                    urgency = u;
                }
            }
            Some(("i", flag)) => incremental = flag == "?1",
            None if item == "i" => incremental = true,
            _ => {}
        }
    }
    (urgency, incremental)
}

#[cfg(test)]
#[path = "http3_tests.rs"]
mod tests;
