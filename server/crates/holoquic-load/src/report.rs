//! What a run measured: each session's tally of object outcomes, and the report made of them —
//! on-time, late and lost objects, object latency percentiles, throughput, per session and in
//! total, the origin's memory when it was sampled — as text or JSON.
//!
//! Latencies are kept exactly (4 bytes per completed object: a 30-minute run of 300 sessions of
//! four objects a second is 9 MB), so percentiles are exact and need no histogram's buckets.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde::Serialize;

use crate::object::{LostReason, ObjectRequest, Outcome};

/// One session's outcomes.
#[derive(Debug, Default, Clone)]
pub struct Tally {
    pub requested: u64,
    pub on_time: u64,
    pub late: u64,
    pub lost_deadline: u64,
    pub lost_status: u64,
    /// Of those, how many got each status (503: the origin shed the request).
    pub statuses: BTreeMap<u16, u64>,
    pub lost_protocol: u64,
    pub lost_session: u64,
    pub lost_unsent: u64,
    /// Request → complete, in µs, of every completed object (on time or late), in completion order.
    pub latencies_us: Vec<u32>,
    /// Bytes received for objects: object bytes, or symbol bytes with redundant repair.
    pub payload_bytes: u64,
    /// Sizes of the objects that completed.
    pub object_bytes: u64,
    pub repair_requests: u64,
}

impl Tally {
    pub fn record(&mut self, outcome: Outcome, request: &ObjectRequest) {
        self.payload_bytes += request.received_bytes;
        self.repair_requests += u64::from(request.repair_requests);
        match outcome {
            Outcome::OnTime(took) | Outcome::Late(took) => {
                self.latencies_us.push(took.as_micros().min(u128::from(u32::MAX)) as u32);
                self.object_bytes += request.object_length;
                if matches!(outcome, Outcome::OnTime(_)) {
                    self.on_time += 1;
                } else {
                    self.late += 1;
                }
            }
            Outcome::Lost(LostReason::Deadline) => self.lost_deadline += 1,
            Outcome::Lost(LostReason::Status(status)) => {
                self.lost_status += 1;
                *self.statuses.entry(status).or_default() += 1;
            }
            Outcome::Lost(LostReason::Protocol) => self.lost_protocol += 1,
            Outcome::Lost(LostReason::Session) => self.lost_session += 1,
            Outcome::Lost(LostReason::Unsent) => self.lost_unsent += 1,
        }
    }

    pub fn lost(&self) -> u64 {
        self.lost_deadline + self.lost_status + self.lost_protocol + self.lost_session + self.lost_unsent
    }

    pub fn add(&mut self, other: &Tally) {
        self.requested += other.requested;
        self.on_time += other.on_time;
        self.late += other.late;
        self.lost_deadline += other.lost_deadline;
        self.lost_status += other.lost_status;
        for (status, count) in &other.statuses {
            *self.statuses.entry(*status).or_default() += count;
        }
        self.lost_protocol += other.lost_protocol;
        self.lost_session += other.lost_session;
        self.lost_unsent += other.lost_unsent;
        self.latencies_us.extend_from_slice(&other.latencies_us);
        self.payload_bytes += other.payload_bytes;
        self.object_bytes += other.object_bytes;
        self.repair_requests += other.repair_requests;
    }
}

/// Object latency percentiles, ms (nearest rank); all 0 when nothing completed.
#[derive(Debug, Clone, Copy, Default, Serialize, PartialEq)]
pub struct Latency {
    pub p50: f64,
    pub p95: f64,
    pub p99: f64,
    pub max: f64,
}

impl Latency {
    pub fn of(latencies_us: &[u32]) -> Self {
        let mut sorted = latencies_us.to_vec();
        sorted.sort_unstable();
        let at = |q: f64| match sorted.len() {
            0 => 0.0,
            n => f64::from(sorted[((q * n as f64).ceil() as usize).clamp(1, n) - 1]) / 1000.0,
        };
        Self { p50: at(0.50), p95: at(0.95), p99: at(0.99), max: at(1.0) }
    }
}

/// The numbers of one session, or of all.
#[derive(Debug, Clone, Serialize)]
pub struct Summary {
    /// The session's index; absent in the total.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session: Option<usize>,
    pub requested: u64,
    pub on_time: u64,
    pub late: u64,
    pub lost: u64,
    pub lost_deadline: u64,
    pub lost_status: u64,
    /// Lost objects by the status the origin answered.
    pub statuses: BTreeMap<u16, u64>,
    pub lost_protocol: u64,
    pub lost_session: u64,
    pub lost_unsent: u64,
    pub latency_ms: Latency,
    pub payload_bytes: u64,
    pub object_bytes: u64,
    /// Payload bits per second over `seconds`.
    pub throughput_mbit_s: f64,
    pub seconds: f64,
    pub repair_requests: u64,
    /// Why the session ended early (absent when it ran to the end).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

impl Summary {
    pub fn of(session: Option<usize>, tally: &Tally, seconds: f64, error: Option<String>) -> Self {
        Self {
            session,
            requested: tally.requested,
            on_time: tally.on_time,
            late: tally.late,
            lost: tally.lost(),
            lost_deadline: tally.lost_deadline,
            lost_status: tally.lost_status,
            statuses: tally.statuses.clone(),
            lost_protocol: tally.lost_protocol,
            lost_session: tally.lost_session,
            lost_unsent: tally.lost_unsent,
            latency_ms: Latency::of(&tally.latencies_us),
            payload_bytes: tally.payload_bytes,
            object_bytes: tally.object_bytes,
            throughput_mbit_s: if seconds > 0.0 { tally.payload_bytes as f64 * 8.0 / seconds / 1e6 } else { 0.0 },
            seconds,
            repair_requests: tally.repair_requests,
            error,
        }
    }
}

/// The origin's resident memory over the run, kB, sampled at the progress interval.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Memory {
    /// (seconds since the run began, kB).
    pub samples: Vec<(f64, u64)>,
    pub start_kb: u64,
    pub max_kb: u64,
    pub end_kb: u64,
}

impl Memory {
    pub fn push(&mut self, at_s: f64, kb: u64) {
        if self.samples.is_empty() {
            self.start_kb = kb;
        }
        self.samples.push((at_s, kb));
        self.max_kb = self.max_kb.max(kb);
        self.end_kb = kb;
    }
}

/// The resident set of process `pid` in kB (`VmRSS` of /proc/PID/status), if readable.
pub fn resident_kb(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status.lines().find_map(|l| l.strip_prefix("VmRSS:")).and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
}

/// The whole run.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub mpd: String,
    pub objects: usize,
    pub quality: usize,
    pub segment_s: f64,
    pub segments: u64,
    pub deadline_ms: u64,
    pub reliable_per_segment: usize,
    /// Peak bits per second one session asks for: the scene's `bandwidth` sum at this rung.
    pub scene_peak_mbit_s: f64,
    pub sessions: usize,
    pub sessions_opened: usize,
    pub sessions_failed: usize,
    pub total: Summary,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub origin_memory: Option<Memory>,
    pub per_session: Vec<Summary>,
}

impl Report {
    pub fn text(&self, per_session: bool) -> String {
        let t = &self.total;
        let percent = |n: u64| if t.requested > 0 { 100.0 * n as f64 / t.requested as f64 } else { 0.0 };
        let mut out = String::new();
        let _ = writeln!(
            out,
            "holoquic-load: {} sessions × {} segments of {} ({} objects, rung {}: peak {:.1} Mbit/s a session, {} s segments, deadline {} ms, {} reliable per segment)",
            self.sessions,
            self.segments,
            self.mpd,
            self.objects,
            self.quality,
            self.scene_peak_mbit_s,
            self.segment_s,
            self.deadline_ms,
            self.reliable_per_segment
        );
        let _ = writeln!(out, "sessions: {} opened, {} failed", self.sessions_opened, self.sessions_failed);
        let _ = writeln!(
            out,
            "objects: {} requested, {} on time ({:.2} %), {} late, {} lost (deadline {}, status {}{}, protocol {}, session {}, unsent {})",
            t.requested,
            t.on_time,
            percent(t.on_time),
            t.late,
            t.lost,
            t.lost_deadline,
            t.lost_status,
            if t.statuses.is_empty() { String::new() } else { format!(" {:?}", t.statuses) },
            t.lost_protocol,
            t.lost_session,
            t.lost_unsent
        );
        let l = t.latency_ms;
        let _ = writeln!(out, "latency ms: p50 {:.1}  p95 {:.1}  p99 {:.1}  max {:.1}", l.p50, l.p95, l.p99, l.max);
        let _ = writeln!(
            out,
            "throughput: {:.1} Mbit/s over {:.1} s ({:.1} MB of objects complete), {} repair requests",
            t.throughput_mbit_s,
            t.seconds,
            t.object_bytes as f64 / 1e6,
            t.repair_requests
        );
        if let Some(m) = &self.origin_memory {
            let per_session = (m.max_kb.saturating_sub(m.start_kb)) as f64 / 1024.0 / self.sessions.max(1) as f64;
            let _ = writeln!(
                out,
                "origin RSS: {:.1} MB at start, {:.1} MB max, {:.1} MB at end ({:.2} MB per session above the start)",
                m.start_kb as f64 / 1024.0,
                m.max_kb as f64 / 1024.0,
                m.end_kb as f64 / 1024.0,
                per_session
            );
        }
        let errors: Vec<&Summary> = self.per_session.iter().filter(|s| s.error.is_some()).collect();
        for s in errors.iter().take(5) {
            let _ = writeln!(out, "session {}: {}", s.session.unwrap_or(0), s.error.as_deref().unwrap_or(""));
        }
        if errors.len() > 5 {
            let _ = writeln!(out, "… and {} more sessions ended early", errors.len() - 5);
        }
        if per_session {
            let _ = writeln!(out, "session requested on_time late lost p50_ms p95_ms p99_ms Mbit/s");
            for s in &self.per_session {
                let l = s.latency_ms;
                let _ = writeln!(
                    out,
                    "{} {} {} {} {} {:.1} {:.1} {:.1} {:.2}",
                    s.session.unwrap_or(0),
                    s.requested,
                    s.on_time,
                    s.late,
                    s.lost,
                    l.p50,
                    l.p95,
                    l.p99,
                    s.throughput_mbit_s
                );
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use holoquic_proto::Delivery;
    use std::time::{Duration, Instant};

    #[test]
    fn percentiles_are_nearest_rank() {
        let us: Vec<u32> = (1..=100).rev().map(|ms| ms * 1000).collect();
        assert_eq!(Latency::of(&us), Latency { p50: 50.0, p95: 95.0, p99: 99.0, max: 100.0 });
        assert_eq!(Latency::of(&[7000]), Latency { p50: 7.0, p95: 7.0, p99: 7.0, max: 7.0 });
        assert_eq!(Latency::of(&[]), Latency::default());
    }

    #[test]
    fn tallies_add_up_and_summaries_count_every_outcome() {
        let t0 = Instant::now();
        let mut request = ObjectRequest::new(1, Delivery::Reliable, t0, t0);
        request.received_bytes = 1000;
        request.object_length = 1000;
        let mut a = Tally { requested: 3, ..Tally::default() };
        a.record(Outcome::OnTime(Duration::from_millis(2)), &request);
        a.record(Outcome::Late(Duration::from_millis(9)), &request);
        a.record(Outcome::Lost(LostReason::Status(404)), &ObjectRequest::new(2, Delivery::Datagram, t0, t0));
        let mut total = Tally::default();
        total.add(&a);
        total.add(&a);
        let s = Summary::of(None, &total, 2.0, None);
        assert_eq!((s.requested, s.on_time, s.late, s.lost, s.lost_status), (6, 2, 2, 2, 2));
        assert_eq!(s.statuses, BTreeMap::from([(404, 2)]));
        assert_eq!((s.object_bytes, s.throughput_mbit_s), (4000, 4000.0 * 8.0 / 2.0 / 1e6));
        assert_eq!(s.latency_ms.max, 9.0);
    }
}
