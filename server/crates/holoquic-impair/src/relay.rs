//! UDP relay: every client 4-tuple gets its own upstream socket, so the origin
//! sees one distinct peer per client and replies can be routed back.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use anyhow::{Context, Result};
use tokio::net::UdpSocket;
use tokio::sync::mpsc;

use crate::shaper::{Shaper, Verdict};
use crate::stats::{DirectionStats, RelaySnapshot, RelayStats};

/// An accepted packet waiting for its send time.
struct Pending {
    send_at: Instant,
    socket: Arc<UdpSocket>,
    to: SocketAddr,
    payload: Vec<u8>,
}

/// One direction: its shaper and the FIFO feeding its sender task.
#[derive(Clone)]
struct Direction {
    shaper: Arc<Mutex<Shaper>>,
    queue: mpsc::UnboundedSender<Pending>,
}

impl Direction {
    fn start(shaper: Shaper) -> Self {
        let (queue, mut receiver) = mpsc::unbounded_channel::<Pending>();
        tokio::spawn(async move {
            while let Some(packet) = receiver.recv().await {
                tokio::time::sleep_until(packet.send_at.into()).await;
                // A send error (e.g. ICMP unreachable reported on the socket) is what
                // a real lossy link would do too: the packet is simply gone.
                let _ = packet.socket.send_to(&packet.payload, packet.to).await;
            }
        });
        Self { shaper: Arc::new(Mutex::new(shaper)), queue }
    }

    fn forward(&self, payload: Vec<u8>, socket: Arc<UdpSocket>, to: SocketAddr, stats: &DirectionStats) {
        let verdict = self.shaper.lock().expect("shaper lock").admit(payload.len(), Instant::now(), stats);
        if let Verdict::SendAt(send_at) = verdict {
            let _ = self.queue.send(Pending { send_at, socket, to, payload });
        }
    }
}

/// A running relay; counters can be read at any time.
pub struct Relay {
    pub local_addr: SocketAddr,
    stats: Arc<RelayStats>,
    clients: Arc<Mutex<HashMap<SocketAddr, Arc<UdpSocket>>>>,
}

impl Relay {
    /// Binds `listen` and starts relaying to `upstream` on the current tokio runtime.
    pub async fn start(listen: SocketAddr, upstream: SocketAddr, to_upstream: Shaper, to_client: Shaper) -> Result<Self> {
        let listener = Arc::new(bind_with_large_buffers(listen).with_context(|| format!("cannot bind {listen}"))?);
        let local_addr = listener.local_addr()?;
        let stats = Arc::new(RelayStats::default());
        let clients: Arc<Mutex<HashMap<SocketAddr, Arc<UdpSocket>>>> = Arc::default();
        let up = Direction::start(to_upstream);
        let down = Direction::start(to_client);
        let (stats_task, clients_task) = (stats.clone(), clients.clone());
        tokio::spawn(async move {
            let mut buffer = vec![0u8; 65_536];
            loop {
                let Ok((len, client)) = listener.recv_from(&mut buffer).await else {
                    continue;
                };
                let existing = clients_task.lock().expect("clients lock").get(&client).cloned();
                let socket = match existing {
                    Some(socket) => socket,
                    None => match open_upstream(&listener, client, upstream, &down, &stats_task).await {
                        Ok(socket) => {
                            clients_task.lock().expect("clients lock").insert(client, socket.clone());
                            socket
                        }
                        Err(error) => {
                            eprintln!("holoquic-impair: {error:#}");
                            continue;
                        }
                    },
                };
                up.forward(buffer[..len].to_vec(), socket, upstream, &stats_task.to_upstream);
            }
        });
        Ok(Self { local_addr, stats, clients })
    }

    pub fn snapshot(&self) -> RelaySnapshot {
        RelaySnapshot {
            to_upstream: self.stats.to_upstream.snapshot(),
            to_client: self.stats.to_client.snapshot(),
            clients: self.clients.lock().expect("clients lock").len(),
        }
    }
}

/// Opens the upstream socket for a new client and starts relaying its replies.
async fn open_upstream(
    listener: &Arc<UdpSocket>,
    client: SocketAddr,
    upstream: SocketAddr,
    down: &Direction,
    stats: &Arc<RelayStats>,
) -> Result<Arc<UdpSocket>> {
    let any: SocketAddr = if upstream.is_ipv4() { "0.0.0.0:0" } else { "[::]:0" }.parse()?;
    let socket = Arc::new(bind_with_large_buffers(any).context("cannot open upstream socket")?);
    let (reader, listener, down, stats) = (socket.clone(), listener.clone(), down.clone(), stats.clone());
    tokio::spawn(async move {
        let mut buffer = vec![0u8; 65_536];
        loop {
            let Ok((len, from)) = reader.recv_from(&mut buffer).await else {
                continue;
            };
            if from == upstream {
                down.forward(buffer[..len].to_vec(), listener.clone(), client, &stats.to_client);
            }
        }
    });
    Ok(socket)
}

/// Socket buffers large enough that bursts (a QUIC flight, an FEC block) are
/// queued for the relay instead of being dropped by the kernel uncounted.
const SOCKET_BUFFER_BYTES: usize = 4 << 20;

fn bind_with_large_buffers(addr: SocketAddr) -> Result<UdpSocket> {
    use socket2::{Domain, Socket, Type};
    let socket = Socket::new(Domain::for_address(addr), Type::DGRAM, None)?;
    // The kernel caps these at net.core.{r,w}mem_max; a smaller buffer still works.
    let _ = socket.set_recv_buffer_size(SOCKET_BUFFER_BYTES);
    let _ = socket.set_send_buffer_size(SOCKET_BUFFER_BYTES);
    socket.set_nonblocking(true)?;
    socket.bind(&addr.into())?;
    Ok(UdpSocket::from_std(socket.into())?)
}
