//! The QUIC side of a graceful drain (`shutdown.rs`): once the origin drains, new connections are
//! refused with CONNECTION_REFUSED, new sessions and requests on open ones with 503, each open
//! connection is told at once (DRAIN_WEBTRANSPORT_SESSION on its sessions, an HTTP/3 GOAWAY) so
//! its client can move to another origin early, and it is closed in two steps as soon as it is
//! quiet:
//!
//! 1. when its in-flight objects and HTTP/3 answers are written **and acknowledged**, its
//!    sessions are closed: our CLOSE_WEBTRANSPORT_SESSION capsule and FIN on each session stream
//!    (a browser that reads the capsule resets whatever of the session it has not read, so it
//!    must come after the objects' last bytes have arrived, not merely after they were sent);
//! 2. when that capsule is acknowledged too and the client has finished its side of each session
//!    stream (as a WebTransport client does on reading the capsule, once it is done with the
//!    session — acknowledged bytes may still be unread by the application, and a connection
//!    closed under them would lose them), the connection is closed (H3_NO_ERROR).
//!
//! "Acknowledged" is read from quiche's timers, as quiche exposes no per-stream acknowledgement:
//! while ack-eliciting packets are unacknowledged quiche arms its loss-detection timer (a probe
//! timeout, a round trip or a few), otherwise only its idle timer (`set_max_idle_timeout`,
//! seconds). A next timer farther than [`QUIET_TIMER`] therefore means everything sent has been
//! acknowledged; a connection whose idle timer is that close to firing ends by itself anyway.
//! The timers know only what has been *sent*: bytes written into quiche but not yet sent (an
//! object's last bytes, written when the client's window opened; data declared lost and queued
//! again) arm nothing. So the drain looks at a connection only right after the loop's sending
//! (`Server::run`), when quiche has sent all it could: whatever it still holds is then held back
//! by the congestion window or pacing, which means packets in flight (a loss timer) or a packet
//! held by us. (Looked at before the sending, a drain closed sessions while an object's last
//! 40–125 kB sat unsent in quiche, and the close capsule reached the client first.)
//! Whatever is not done by the end of the grace period is closed by `Server::close_all`.

use std::time::{Duration, Instant};

use super::{Client, Server};

/// See the module's comment: a loss-detection timer is shorter than this (a probe timeout after
/// several backoffs on a slow path is still well below it), an idle timer longer.
const QUIET_TIMER: Duration = Duration::from_secs(1);
/// QUIC's CONNECTION_REFUSED transport error: what a connection attempted during a drain gets.
const CONNECTION_REFUSED: u64 = 0x2;

/// How far one connection is in the drain.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub enum Step {
    /// Its objects and answers are finishing.
    #[default]
    Finishing,
    /// The close capsules are written on these session streams; the connection closes once they
    /// are acknowledged and the client has finished the streams.
    SessionsClosed(Vec<u64>),
}

impl Server {
    /// The drain's part of a round before the sending: on the first, every connection learns
    /// that new sessions and requests are refused; on each, a connection not yet established
    /// (accepted during the drain, or caught in its handshake) is refused before it is sent
    /// anything that would let its handshake complete.
    pub(super) fn drain_round(&mut self) {
        if !self.draining {
            self.draining = true;
            tracing::info!(connections = self.clients.len(), "draining: refusing new connections, finishing in-flight objects");
            for client in self.clients.values_mut() {
                client.wt.begin_drain();
                if client.conn.is_established() && !client.poisoned {
                    super::guarded(client, &self.ctx, "announcing the drain", |client, _| client.wt.announce_drain(&mut client.conn));
                }
            }
        }
        for client in self.clients.values_mut() {
            if !client.conn.is_established() && !client.conn.is_closed() {
                let _ = client.conn.close(false, CONNECTION_REFUSED, b"origin draining");
            }
        }
    }

    /// The drain's part of a round after the sending (see the module's comment): every
    /// connection that is ready takes its next step.
    pub(super) fn drain_steps(&mut self, now: Instant) {
        for client in self.clients.values_mut() {
            super::guarded(client, &self.ctx, "draining", |client, ctx| step(client, ctx, now));
        }
    }
}

/// Moves `client` on in the drain if it is ready (see the module's comment).
fn step(client: &mut Client, ctx: &super::QuicContext, now: Instant) {
    if client.poisoned || !client.conn.is_established() || client.conn.is_closed() || client.conn.is_draining() {
        return;
    }
    if client.wt.has_work_in_flight() || !is_quiet(client) {
        return;
    }
    match &client.drain {
        Step::Finishing => {
            let sessions = client.wt.close_sessions(&mut client.conn, ctx, now);
            tracing::debug!(connection = client.conn.trace_id(), sessions = sessions.len(), "draining: in-flight work acknowledged, sessions closed");
            client.drain = Step::SessionsClosed(sessions);
        }
        Step::SessionsClosed(streams) if streams.iter().all(|s| client.conn.stream_finished(*s)) => {
            let _ = client.conn.close(true, holoquic_proto::h3::error_code::H3_NO_ERROR, b"origin draining");
        }
        Step::SessionsClosed(_) => {}
    }
}

/// Whether everything `client` sent has been acknowledged and nothing waits to be sent; valid
/// only right after the connection's sending (see the module's comment).
fn is_quiet(client: &Client) -> bool {
    client.held.is_empty() && client.conn.timeout().is_none_or(|t| t >= QUIET_TIMER)
}
