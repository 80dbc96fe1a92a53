//! NFQUEUE mode: impair packets the kernel hands to a netfilter queue.
//!
//! Loss is a DROP verdict; delay and rate limiting are done by *holding* the
//! verdict until the packet's departure time, so the kernel keeps the packet and
//! no copy is re-injected. One queue number serves one direction; the scripts
//! install the `iptables-legacy ... -j NFQUEUE --queue-num N` rule.
//!
//! Packets the kernel drops before they reach us — its queue at its maximum
//! length, or our netlink socket full — are loss the configured model did not
//! choose; [`KernelDrops`] reads them from procfs so a report can tell.

use std::collections::VecDeque;
use std::io::ErrorKind;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use nfq::{Message, Queue, Verdict as NfVerdict};
use serde::Serialize;

use crate::shaper::{Shaper, Verdict};
use crate::stats::DirectionStats;

/// How long the loop sleeps when no packet arrived and none is due.
const IDLE_SLEEP: Duration = Duration::from_micros(200);

/// The kernel's netfilter queues of the current network namespace, one line per bound queue.
const QUEUES_PROCFS: &str = "/proc/net/netfilter/nfnetlink_queue";

/// Receive buffer of our netlink socket: room for thousands of queued packets. The default
/// (`net.core.rmem_default`, ~200 kB) holds under a hundred, about 30 ms of a 40 Mbit/s flow:
/// when this process was not scheduled for that long while a busy browser decoded, the kernel
/// dropped packets the loss model never chose (seen on TCP flows, as `socket_full`).
const SOCKET_RECEIVE_BUFFER: usize = 16 << 20;

/// Packets the kernel keeps awaiting our verdict (its default, 1024, holds 10 ms of delay only up
/// to ~1 Gbit/s, and one burst of a busy sender can exceed it; drops counted as `queue_full`).
const QUEUE_MAX_LEN: u32 = 16_384;

/// Packets of one queue the kernel dropped instead of handing them over.
#[derive(Debug, Clone, Copy, Default, Serialize, PartialEq, Eq)]
pub struct KernelDrops {
    /// Dropped because the queue held its maximum number of packets awaiting a verdict.
    pub queue_full: u64,
    /// Dropped because our netlink socket's receive buffer was full.
    pub socket_full: u64,
}

impl KernelDrops {
    /// Reads `queue_num`'s counters from the procfs table (`None` if the queue is not listed).
    pub fn read(queue_num: u16) -> Option<KernelDrops> {
        Self::parse(&std::fs::read_to_string(QUEUES_PROCFS).ok()?, queue_num)
    }

    /// Parses the table's text: per line, the queue number, the peer's netlink port, packets
    /// awaiting a verdict, copy mode, copy range, queue-full drops, socket-full drops, last id, 1.
    pub fn parse(table: &str, queue_num: u16) -> Option<KernelDrops> {
        queue_fields(table, queue_num).and_then(|fields| match fields[..] {
            [_, _, _, _, _, queue_full, socket_full, ..] => Some(KernelDrops { queue_full, socket_full }),
            _ => None,
        })
    }
}

/// The numbers of `queue_num`'s line in the procfs table.
fn queue_fields(table: &str, queue_num: u16) -> Option<Vec<u64>> {
    table.lines().find_map(|line| {
        let fields: Vec<u64> = line.split_whitespace().map(str::parse).collect::<Result<_, _>>().ok()?;
        (fields.first() == Some(&u64::from(queue_num))).then_some(fields)
    })
}

/// Gives the netlink socket bound to `queue_num` a receive buffer of `bytes`, beyond
/// `net.core.rmem_max` (SO_RCVBUFFORCE, root). The `nfq` crate does not expose its socket, so
/// it is found among this process's descriptors by the netlink port the kernel lists for the
/// queue. Returns the buffer the kernel granted.
fn enlarge_receive_buffer(queue_num: u16, bytes: usize) -> Result<usize> {
    let table = std::fs::read_to_string(QUEUES_PROCFS).with_context(|| format!("cannot read {QUEUES_PROCFS}"))?;
    let port = queue_fields(&table, queue_num).and_then(|f| f.get(1).copied()).with_context(|| format!("queue {queue_num} missing from {QUEUES_PROCFS}"))?;
    for entry in std::fs::read_dir("/proc/self/fd").context("cannot list /proc/self/fd")? {
        let Some(fd) = entry?.file_name().to_str().and_then(|n| n.parse::<libc::c_int>().ok()) else { continue };
        // SAFETY: getsockname writes at most `len` bytes into a zeroed sockaddr_nl; on a
        // descriptor that is not a socket (or is already closed) it fails and nothing is used.
        let mut addr: libc::sockaddr_nl = unsafe { std::mem::zeroed() };
        let mut len = std::mem::size_of::<libc::sockaddr_nl>() as libc::socklen_t;
        let named = unsafe { libc::getsockname(fd, std::ptr::addr_of_mut!(addr).cast(), &mut len) } == 0;
        if !named || addr.nl_family != libc::AF_NETLINK as libc::sa_family_t || u64::from(addr.nl_pid) != port {
            continue;
        }
        let size = libc::c_int::try_from(bytes).context("receive buffer too large")?;
        // SAFETY: plain setsockopt/getsockopt on our own socket with c_int values of the right size.
        let int_len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
        if unsafe { libc::setsockopt(fd, libc::SOL_SOCKET, libc::SO_RCVBUFFORCE, std::ptr::addr_of!(size).cast(), int_len) } != 0 {
            return Err(std::io::Error::last_os_error()).context("SO_RCVBUFFORCE on the netfilter queue socket (root needed)");
        }
        let (mut granted, mut granted_len): (libc::c_int, libc::socklen_t) = (0, int_len);
        if unsafe { libc::getsockopt(fd, libc::SOL_SOCKET, libc::SO_RCVBUF, std::ptr::addr_of_mut!(granted).cast(), &mut granted_len) } != 0 {
            return Err(std::io::Error::last_os_error()).context("SO_RCVBUF of the netfilter queue socket");
        }
        return Ok(usize::try_from(granted).unwrap_or(0));
    }
    anyhow::bail!("no netlink socket of this process has port {port} (queue {queue_num})")
}

/// Serves `queue_num` until `stop` is set, counting into `stats`; returns what the kernel
/// dropped on the queue meanwhile.
pub fn run(queue_num: u16, mut shaper: Shaper, stats: &DirectionStats, stop: &AtomicBool) -> Result<KernelDrops> {
    let mut queue = Queue::open().context("cannot open a netfilter queue socket (root needed)")?;
    queue.bind(queue_num).with_context(|| format!("cannot bind netfilter queue {queue_num}"))?;
    queue.set_fail_open(queue_num, false)?;
    queue.set_queue_max_len(queue_num, QUEUE_MAX_LEN)?;
    let granted = enlarge_receive_buffer(queue_num, SOCKET_RECEIVE_BUFFER)?;
    anyhow::ensure!(granted >= SOCKET_RECEIVE_BUFFER, "the kernel granted a receive buffer of {granted} bytes, not {SOCKET_RECEIVE_BUFFER}");
    queue.set_nonblocking(true);
    let mut held: VecDeque<(Instant, Message)> = VecDeque::new();
    while !stop.load(Ordering::Relaxed) {
        let mut progressed = false;
        match queue.recv() {
            Ok(mut message) => {
                progressed = true;
                match shaper.admit(message.get_payload().len(), Instant::now(), stats) {
                    Verdict::SendAt(at) => held.push_back((at, message)),
                    Verdict::Lost | Verdict::QueueFull => {
                        message.set_verdict(NfVerdict::Drop);
                        queue.verdict(message)?;
                    }
                }
            }
            Err(error) if error.kind() == ErrorKind::WouldBlock => {}
            Err(error) => return Err(error).context("netfilter queue receive failed"),
        }
        let now = Instant::now();
        while held.front().is_some_and(|(at, _)| *at <= now) {
            let (_, mut message) = held.pop_front().expect("front exists");
            message.set_verdict(NfVerdict::Accept);
            queue.verdict(message)?;
            progressed = true;
        }
        if !progressed {
            std::thread::sleep(IDLE_SLEEP);
        }
    }
    // Packets still held are released rather than silently lost on shutdown.
    for (_, mut message) in held {
        message.set_verdict(NfVerdict::Accept);
        queue.verdict(message)?;
    }
    // Read while still bound: the kernel forgets the queue's counters on unbind.
    let drops = KernelDrops::read(queue_num).with_context(|| format!("queue {queue_num} missing from {QUEUES_PROCFS}"))?;
    queue.unbind(queue_num)?;
    Ok(drops)
}

#[cfg(test)]
mod tests {
    use super::KernelDrops;

    #[test]
    fn kernel_drops_are_read_from_the_queue_s_own_line() {
        let table = "    1  30505     3 2 65531     0     0    18750  1\n    2  30624     0 2 65531     7   277    18749  1\n";
        assert_eq!(KernelDrops::parse(table, 2), Some(KernelDrops { queue_full: 7, socket_full: 277 }));
        assert_eq!(KernelDrops::parse(table, 1), Some(KernelDrops { queue_full: 0, socket_full: 0 }));
        assert_eq!(KernelDrops::parse(table, 3), None);
        assert_eq!(KernelDrops::parse("", 1), None);
        assert_eq!(KernelDrops::parse("garbage line\n 1 2\n", 1), None);
    }
}
