//! What the session state machine (session.rs, control.rs) asks the driver (webtransport.rs) to
//! do on the QUIC connection: the machine's only output, so it is testable without a connection.

use super::headers::RequestHead;

/// What the driver does on the QUIC connection after an event, in the order given.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    /// Refuse the peer's unidirectional stream (STOP_SENDING with `code`).
    StopSending { stream: u64, code: u64 },
    /// Refuse a bidirectional stream both ways (STOP_SENDING and RESET_STREAM with `code`).
    RejectStream { stream: u64, code: u64 },
    /// Answer an extended CONNECT with 200, then tell the machine whether it was written
    /// ([`SessionMachine::on_accept_sent`](super::session::SessionMachine::on_accept_sent)) before anything else happens on the connection.
    Accept { stream: u64 },
    /// Answer a request with `status`, a text/plain `body` (none if empty) and FIN.
    Refuse { stream: u64, status: &'static str, body: &'static str },
    /// Answer a plain HTTP/3 request (any method but CONNECT) as HTTPS would (`quic/http3.rs`).
    Serve { stream: u64, head: RequestHead },
    /// The bidi stream carries an object request of `session` (its bytes follow as `RequestData`).
    OpenRequest { stream: u64, session: u64 },
    /// Bytes, and maybe FIN, for the object request on `stream`.
    RequestData { stream: u64, data: Vec<u8>, fin: bool },
    /// The peer reset the request's stream: the request stops and is counted.
    RequestReset { stream: u64 },
    /// The request's session ended: it stops, uncounted, and its stream is reset both ways with
    /// WEBTRANSPORT_SESSION_GONE.
    RequestSessionGone { stream: u64 },
    /// The session on `stream` ended (its requests were ended just before); when `reply`, the
    /// peer asked, and our CLOSE_WEBTRANSPORT_SESSION (code 0) and FIN answer it.
    SessionClosed { stream: u64, reply: bool },
}
