//! NFQUEUE mode: impair packets the kernel hands to a netfilter queue.
//!
//! Loss is a DROP verdict; delay and rate limiting are done by *holding* the
//! verdict until the packet's departure time, so the kernel keeps the packet and
//! no copy is re-injected. One queue number serves one direction; the scripts
//! install the `iptables-legacy ... -j NFQUEUE --queue-num N` rule.

use std::collections::VecDeque;
use std::io::ErrorKind;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use nfq::{Message, Queue, Verdict as NfVerdict};

use crate::shaper::{Shaper, Verdict};
use crate::stats::DirectionStats;

/// How long the loop sleeps when no packet arrived and none is due.
const IDLE_SLEEP: Duration = Duration::from_micros(200);

/// Serves `queue_num` until `stop` is set, counting into `stats`.
pub fn run(queue_num: u16, mut shaper: Shaper, stats: &DirectionStats, stop: &AtomicBool) -> Result<()> {
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
    queue.unbind(queue_num)?;
    Ok(())
}
