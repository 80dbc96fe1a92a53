//! A whole run: the manifest (fetched over a first session, or read from a file), the pattern
//! it gives, the sessions opened over the ramp, progress lines while they play, and the report.

use std::fmt::Write as _;
use std::io::Write as _;
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, Context, Result};
use holoquic_proto::{Delivery, FecMode, Request};

use crate::event_loop::EventLoop;
use crate::options::{Options, Quality};
use crate::pattern::Pattern;
use crate::report::{resident_kb, Memory, Report, Summary, Tally};
use crate::scene::{Scene, MAX_MPD_BYTES};
use crate::session::State;

/// How long opening the first session and fetching the manifest may take.
const SETUP_TIMEOUT: Duration = Duration::from_secs(10);

/// The manifest's text: from `--mpd-file`, else a reliable request over a session of its own.
fn manifest(options: &Options) -> Result<String> {
    if let Some(file) = &options.mpd_file {
        let bytes = std::fs::read(file).with_context(|| format!("--mpd-file {}", file.display()))?;
        if bytes.len() > MAX_MPD_BYTES {
            bail!("--mpd-file {}: larger than {MAX_MPD_BYTES} bytes", file.display());
        }
        return String::from_utf8(bytes).map_err(|_| anyhow!("--mpd-file {}: not UTF-8", file.display()));
    }
    let mut event_loop = EventLoop::new(options.origin, &options.server_name, &options.wt_path)?;
    event_loop.open()?;
    let opened = event_loop.run_until(SETUP_TIMEOUT, None, |l| l.sessions[0].state == State::Open || l.sessions[0].is_closed());
    if let State::Closed(why) = &event_loop.sessions[0].state {
        bail!("no WebTransport session with {}: {}", options.origin, why.as_deref().unwrap_or("closed"));
    }
    if !opened {
        bail!("no WebTransport session with {} within {SETUP_TIMEOUT:?} (is the origin running there?)", options.origin);
    }
    let mut request = Request {
        request_id: 0,
        delivery: Delivery::Reliable,
        urgency: 0,
        deadline_ms: 0,
        fec_mode: FecMode::None,
        loss_ppm: 0,
        burst_milli: 0,
        overhead_permille: 0,
        path: options.mpd.clone(),
    };
    let stream = event_loop.sessions[0]
        .fetch(&mut request, Instant::now(), SETUP_TIMEOUT, Some(MAX_MPD_BYTES))
        .ok_or_else(|| anyhow!("could not send the manifest request"))?;
    event_loop.wake_now(0);
    event_loop.run_until(SETUP_TIMEOUT, None, |l| l.sessions[0].is_finished(None));
    let session = &mut event_loop.sessions[0];
    let text = session.take_kept(stream);
    let tally = session.tally.clone();
    event_loop.finish_all();
    match text {
        Some(bytes) if tally.on_time == 1 => String::from_utf8(bytes).map_err(|_| anyhow!("{}: not UTF-8", options.mpd)),
        _ if tally.lost_status > 0 => bail!("{}: the origin refused it (is it the manifest's origin path?)", options.mpd),
        _ => bail!("{}: not fetched within {SETUP_TIMEOUT:?}", options.mpd),
    }
}

/// The pattern every session plays, from the options and the scene.
pub fn pattern(options: &Options, scene: Scene) -> Result<Pattern> {
    let rungs = scene.rungs();
    if let Quality::Rung(n) = options.quality {
        if n >= rungs {
            bail!("--quality {n}: the scene's objects have {rungs} rungs (0 … {})", rungs - 1);
        }
    }
    let segments = (options.duration / scene.segment_seconds).ceil().max(1.0) as u64;
    Ok(Pattern {
        quality: options.quality.index(rungs),
        reliable_per_segment: (options.reliable_fraction * scene.objects.len() as f64).round() as usize,
        segments,
        segment_interval: Duration::from_secs_f64(scene.segment_seconds),
        deadline: Duration::from_millis(options.deadline_ms(scene.segment_seconds)),
        fec_mode: options.fec,
        loss_ppm: options.loss_ppm,
        overhead_permille: options.overhead_permille,
        repair: options.repair,
        scene,
    })
}

/// Runs the whole load and returns its report.
pub fn run(options: &Options) -> Result<Report> {
    let text = manifest(options)?;
    let scene = Scene::parse(&options.mpd, &text).with_context(|| format!("the manifest {}", options.mpd))?;
    let pattern = pattern(options, scene)?;
    let sessions = options.sessions as usize;
    let mut event_loop = EventLoop::new(options.origin, &options.server_name, &options.wt_path)?;
    let start = Instant::now();
    let ramp = Duration::from_secs_f64(options.ramp);
    let late_limit = pattern.deadline.max(Duration::from_secs(5));
    // Past this nothing can still be on its way: every segment asked for, due and past its late limit.
    let hard_end = start + ramp + pattern.segment_interval.mul_f64(pattern.segments as f64) + pattern.deadline + late_limit + Duration::from_secs(5);
    let mut memory = options.origin_pid.map(|_| Memory::default());
    let sample = |memory: &mut Option<Memory>| {
        if let (Some(m), Some(kb)) = (memory.as_mut(), options.origin_pid.and_then(resident_kb)) {
            m.push(start.elapsed().as_secs_f64(), kb);
        }
    };
    sample(&mut memory);
    let interval = (options.interval > 0.0).then(|| Duration::from_secs_f64(options.interval));
    let mut progress = Progress::new(sessions);
    // Rows are flushed as they come, so a run cut short still leaves its rows.
    let mut csv = match &options.csv {
        Some(path) => {
            let mut file = std::io::BufWriter::new(std::fs::File::create(path).with_context(|| format!("--csv {}", path.display()))?);
            writeln!(file, "{}", ProgressRow::CSV_HEADER).context("writing --csv")?;
            Some(file)
        }
        None => None,
    };
    let mut next_tick = interval.map(|i| start + i);
    let mut finished_at: Vec<Option<Instant>> = Vec::new();
    loop {
        let now = Instant::now();
        while event_loop.sessions.len() < sessions && start + ramp.mul_f64(event_loop.sessions.len() as f64 / sessions as f64) <= now {
            event_loop.open()?;
            finished_at.push(None);
        }
        for (i, session) in event_loop.sessions.iter().enumerate() {
            if finished_at[i].is_none() && session.is_finished(Some(&pattern)) {
                finished_at[i] = Some(now);
            }
        }
        if event_loop.sessions.len() == sessions && finished_at.iter().all(Option::is_some) || now >= hard_end {
            break;
        }
        if let (Some(tick), Some(every)) = (next_tick, interval) {
            if now >= tick {
                sample(&mut memory);
                let row = progress.row(&event_loop, start, memory.as_ref());
                eprintln!("{}", row.line());
                if let Some(csv) = csv.as_mut() {
                    writeln!(csv, "{}", row.csv()).context("writing --csv")?;
                    csv.flush().context("writing --csv")?;
                }
                next_tick = Some(tick + every);
            }
        }
        let next_open = (event_loop.sessions.len() < sessions).then(|| start + ramp.mul_f64(event_loop.sessions.len() as f64 / sessions as f64));
        let until = [Some(hard_end), next_tick, next_open].into_iter().flatten().min().unwrap_or(hard_end);
        event_loop.turn(until, Some(&pattern));
    }
    let end = Instant::now();
    sample(&mut memory);
    event_loop.finish_all();
    let mut total = Tally::default();
    let mut per_session = Vec::new();
    let mut first_open: Option<Instant> = None;
    for (i, session) in event_loop.sessions.iter().enumerate() {
        total.add(&session.tally);
        let opened = session.opened_at;
        first_open = match (first_open, opened) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        let seconds = opened.map_or(0.0, |o| (finished_at[i].unwrap_or(end) - o).as_secs_f64());
        let error = match &session.state {
            State::Closed(Some(why)) => Some(why.clone()),
            _ if opened.is_none() => Some("the session never opened".into()),
            _ => None,
        };
        per_session.push(Summary::of(Some(i), &session.tally, seconds, error));
    }
    let total_seconds = first_open.map_or(0.0, |o| (end - o).as_secs_f64());
    let failed = per_session.iter().filter(|s| s.error.is_some()).count();
    Ok(Report {
        mpd: options.mpd.clone(),
        objects: pattern.scene.objects.len(),
        quality: pattern.quality,
        segment_s: pattern.scene.segment_seconds,
        segments: pattern.segments,
        deadline_ms: pattern.deadline.as_millis() as u64,
        reliable_per_segment: pattern.reliable_per_segment,
        scene_peak_mbit_s: pattern.scene.peak_bits_per_second(pattern.quality) as f64 / 1e6,
        sessions,
        sessions_opened: event_loop.sessions.iter().filter(|s| s.opened_at.is_some()).count(),
        sessions_failed: failed,
        total: Summary::of(None, &total, total_seconds, None),
        origin_memory: memory,
        per_session,
    })
}

/// The numbers of one progress line: totals so far, latency and throughput since the last line,
/// the origin's memory and the machine's load.
struct ProgressRow {
    at_s: f64,
    open: usize,
    sessions: usize,
    total: Tally,
    recent: crate::report::Latency,
    mbit_s: f64,
    origin_rss_kb: Option<u64>,
    load1: Option<f64>,
}

impl ProgressRow {
    /// The CSV header matching `csv`.
    const CSV_HEADER: &'static str = "t_s,sessions_open,requested,on_time,late,lost,p50_ms,p99_ms,mbit_s,origin_rss_kb,load1";

    fn line(&self) -> String {
        let mut line = format!(
            "t={:.0}s sessions open {}/{}: {} objects, {} on time, {} late, {} lost; since the last line p50 {:.1} ms, p99 {:.1} ms, {:.1} Mbit/s",
            self.at_s,
            self.open,
            self.sessions,
            self.total.requested,
            self.total.on_time,
            self.total.late,
            self.total.lost(),
            self.recent.p50,
            self.recent.p99,
            self.mbit_s
        );
        if let Some(kb) = self.origin_rss_kb {
            let _ = write!(line, "; origin RSS {:.1} MB", kb as f64 / 1024.0);
        }
        line
    }

    /// One CSV row (`CSV_HEADER`); a value not measured is left empty.
    fn csv(&self) -> String {
        let t = &self.total;
        format!(
            "{:.1},{},{},{},{},{},{:.1},{:.1},{:.1},{},{}",
            self.at_s,
            self.open,
            t.requested,
            t.on_time,
            t.late,
            t.lost(),
            self.recent.p50,
            self.recent.p99,
            self.mbit_s,
            self.origin_rss_kb.map(|kb| kb.to_string()).unwrap_or_default(),
            self.load1.map(|l| format!("{l:.2}")).unwrap_or_default()
        )
    }
}

/// The machine's one-minute load average (/proc/loadavg), if readable.
fn load_average() -> Option<f64> {
    std::fs::read_to_string("/proc/loadavg").ok()?.split_whitespace().next()?.parse().ok()
}

/// The progress lines: what is new since the last one.
struct Progress {
    /// Per session: latencies and payload bytes already shown.
    shown: Vec<(usize, u64)>,
    last: Option<Instant>,
}

impl Progress {
    fn new(sessions: usize) -> Self {
        Self { shown: vec![(0, 0); sessions], last: None }
    }

    fn row(&mut self, event_loop: &EventLoop, start: Instant, memory: Option<&Memory>) -> ProgressRow {
        let now = Instant::now();
        let mut total = Tally::default();
        let (mut recent, mut recent_bytes) = (Vec::new(), 0);
        for (session, shown) in event_loop.sessions.iter().zip(self.shown.iter_mut()) {
            total.add(&session.tally);
            recent.extend_from_slice(&session.tally.latencies_us[shown.0..]);
            recent_bytes += session.tally.payload_bytes - shown.1;
            *shown = (session.tally.latencies_us.len(), session.tally.payload_bytes);
        }
        let since = self.last.unwrap_or(start);
        self.last = Some(now);
        ProgressRow {
            at_s: (now - start).as_secs_f64(),
            open: event_loop.sessions.iter().filter(|s| s.state == State::Open).count(),
            sessions: self.shown.len(),
            total,
            recent: crate::report::Latency::of(&recent),
            mbit_s: recent_bytes as f64 * 8.0 / (now - since).as_secs_f64().max(1e-3) / 1e6,
            origin_rss_kb: memory.map(|m| m.end_kb),
            load1: load_average(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A CSV row has a value (or an empty field) under every header column, in its order.
    #[test]
    fn csv_rows_match_the_header() {
        let columns = ProgressRow::CSV_HEADER.split(',').count();
        let total = Tally { requested: 40, on_time: 37, late: 1, lost_deadline: 2, ..Tally::default() };
        let recent = crate::report::Latency { p50: 6.0, p99: 41.0, p95: 30.0, max: 50.0 };
        let mut row = ProgressRow { at_s: 10.04, open: 4, sessions: 5, total, recent, mbit_s: 12.5, origin_rss_kb: Some(30768), load1: Some(2.5) };
        assert_eq!(row.csv(), "10.0,4,40,37,1,2,6.0,41.0,12.5,30768,2.50");
        row.origin_rss_kb = None;
        row.load1 = None;
        assert_eq!(row.csv().split(',').count(), columns);
        assert!(row.csv().ends_with("12.5,,"));
    }
}
