//! The event loop: every session's QUIC connection on one UDP socket, driven by one thread.
//!
//! Why a plain `poll(2)` on one socket rather than mio: there is exactly one file descriptor to
//! wait on; what to wake for besides it is a time (quiche's timers, segment times, deadlines),
//! which `poll`'s timeout covers. Packets are sorted to their connection by the destination
//! connection id (ours, `CID_LEN` bytes), so N sessions cost no N sockets or N threads, and one
//! thread keeps the client's own CPU use small beside the origin it measures.

use std::collections::HashMap;
use std::io::ErrorKind;
use std::net::{SocketAddr, UdpSocket};
use std::os::fd::AsRawFd;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};

use crate::pattern::Pattern;
use crate::session::{client_config, Session, CID_LEN};

/// Socket buffers asked for: a few hundred sessions' bursts between two reads.
const SOCKET_BUFFER: usize = 32 << 20;
/// Packets read before the timers run again, so a burst cannot starve them.
const READ_BUDGET: usize = 4096;

/// The socket and the sessions on it.
pub struct EventLoop {
    socket: UdpSocket,
    local: SocketAddr,
    origin: SocketAddr,
    server_name: String,
    wt_path: String,
    config: quiche::Config,
    pub sessions: Vec<Session>,
    by_cid: HashMap<Vec<u8>, usize>,
    /// Each session's next wake-up, as of its last advance.
    wake: Vec<Option<Instant>>,
    due: Vec<bool>,
    /// One buffer for every read (packets, stream data, datagrams).
    scratch: Vec<u8>,
}

impl EventLoop {
    pub fn new(origin: SocketAddr, server_name: &str, wt_path: &str) -> Result<Self> {
        let any: SocketAddr = if origin.is_ipv4() { "0.0.0.0:0" } else { "[::]:0" }.parse().expect("an address");
        let socket = socket2::Socket::new(socket2::Domain::for_address(any), socket2::Type::DGRAM, None).context("UDP socket")?;
        grow_buffers(&socket);
        socket.bind(&any.into()).context("binding the UDP socket")?;
        socket.set_nonblocking(true)?;
        let socket: UdpSocket = socket.into();
        let local = socket.local_addr()?;
        Ok(Self {
            socket,
            local,
            origin,
            server_name: server_name.to_owned(),
            wt_path: wt_path.to_owned(),
            config: client_config()?,
            sessions: Vec::new(),
            by_cid: HashMap::new(),
            wake: Vec::new(),
            due: Vec::new(),
            scratch: vec![0; 65_536],
        })
    }

    /// Starts one more session (its handshake begins at the next turn).
    pub fn open(&mut self) -> Result<usize> {
        let index = self.sessions.len();
        let session = Session::new(index, &mut self.config, self.local, self.origin, &self.server_name, &self.wt_path)?;
        self.by_cid.insert(session.conn.source_id().to_vec(), index);
        self.sessions.push(session);
        self.wake.push(Some(Instant::now()));
        self.due.push(true);
        Ok(index)
    }

    /// Has session `index` advanced and flushed at the next turn (after a request was added
    /// from outside the loop).
    pub fn wake_now(&mut self, index: usize) {
        self.due[index] = true;
    }

    /// One turn: waits for packets or the next due time (at most until `until`), reads what
    /// arrived, advances the sessions that got packets or are due, and sends what they have.
    pub fn turn(&mut self, until: Instant, pattern: Option<&Pattern>) {
        let now = Instant::now();
        let next = self.wake.iter().flatten().copied().chain(std::iter::once(until)).min().unwrap_or(until);
        if next > now && !self.due.iter().any(|d| *d) {
            // Rounded up: waking a little late is harmless, waking early spins.
            let ms = (next - now).as_micros().div_ceil(1000).min(1000) as libc::c_int;
            let mut fd = libc::pollfd { fd: self.socket.as_raw_fd(), events: libc::POLLIN, revents: 0 };
            // SAFETY: one valid pollfd for the duration of the call.
            unsafe { libc::poll(&mut fd, 1, ms) };
        }
        self.read_packets();
        let now = Instant::now();
        let mut out = [0u8; 1500];
        for i in 0..self.sessions.len() {
            if !(self.due[i] || self.wake[i].is_some_and(|w| w <= now)) {
                continue;
            }
            self.due[i] = false;
            let session = &mut self.sessions[i];
            session.advance(now, pattern, &mut self.scratch);
            flush(&self.socket, &mut session.conn, &mut out);
            self.wake[i] = session.next_wake(pattern);
        }
    }

    fn read_packets(&mut self) {
        let buf = &mut self.scratch;
        for _ in 0..READ_BUDGET {
            let (n, from) = match self.socket.recv_from(buf) {
                Ok(got) => got,
                Err(e) if e.kind() == ErrorKind::WouldBlock => return,
                Err(_) => continue,
            };
            let packet = &mut buf[..n];
            let Ok(header) = quiche::Header::from_slice(packet, CID_LEN) else { continue };
            let Some(&index) = self.by_cid.get(header.dcid.as_ref()) else { continue };
            let session = &mut self.sessions[index];
            if session.is_closed() {
                continue;
            }
            let _ = session.conn.recv(packet, quiche::RecvInfo { from, to: self.local });
            self.due[index] = true;
        }
    }

    /// Ends every session (CONNECTION_CLOSE sent) and lets the closes go out.
    pub fn finish_all(&mut self) {
        let mut out = [0u8; 1500];
        for session in &mut self.sessions {
            session.finish();
            flush(&self.socket, &mut session.conn, &mut out);
        }
    }

    /// Turns until `done` holds or `timeout` passes; whether `done` held.
    pub fn run_until(&mut self, timeout: Duration, pattern: Option<&Pattern>, mut done: impl FnMut(&mut Self) -> bool) -> bool {
        let end = Instant::now() + timeout;
        while Instant::now() < end {
            if done(self) {
                return true;
            }
            self.turn(end, pattern);
        }
        done(self)
    }
}

/// Sends every packet quiche has for this connection. A full socket buffer drops the packet:
/// QUIC recovers it as any loss.
fn flush(socket: &UdpSocket, conn: &mut quiche::Connection, out: &mut [u8]) {
    while let Ok((n, info)) = conn.send(out) {
        let _ = socket.send_to(&out[..n], info.to);
    }
}

/// Asks for large socket buffers; as root beyond the system's limit (`SO_RCVBUFFORCE`), else
/// as much as it allows.
fn grow_buffers(socket: &socket2::Socket) {
    let _ = socket.set_recv_buffer_size(SOCKET_BUFFER);
    let _ = socket.set_send_buffer_size(SOCKET_BUFFER);
    if socket.recv_buffer_size().unwrap_or(0) < SOCKET_BUFFER {
        let size = SOCKET_BUFFER as libc::c_int;
        for option in [libc::SO_RCVBUFFORCE, libc::SO_SNDBUFFORCE] {
            // SAFETY: setsockopt with a valid fd and a c_int option value of the right size.
            unsafe {
                libc::setsockopt(
                    socket.as_raw_fd(),
                    libc::SOL_SOCKET,
                    option,
                    (&size as *const libc::c_int).cast(),
                    std::mem::size_of::<libc::c_int>() as libc::socklen_t,
                );
            }
        }
    }
}
