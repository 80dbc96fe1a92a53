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
        table.lines().find_map(|line| {
            let fields: Vec<u64> = line.split_whitespace().map(str::parse).collect::<Result<_, _>>().ok()?;
            match fields[..] {
                [queue, _, _, _, _, queue_full, socket_full, ..] if queue == u64::from(queue_num) => Some(KernelDrops { queue_full, socket_full }),
                _ => None,
            }
        })
    }
}

/// Serves `queue_num` until `stop` is set, counting into `stats`; returns what the kernel
/// dropped on the queue meanwhile.
pub fn run(queue_num: u16, mut shaper: Shaper, stats: &DirectionStats, stop: &AtomicBool) -> Result<KernelDrops> {
    let mut queue = Queue::open().context("cannot open a netfilter queue socket (root needed)")?;
    queue.bind(queue_num).with_context(|| format!("cannot bind netfilter queue {queue_num}"))?;
    queue.set_fail_open(queue_num, false)?;
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
