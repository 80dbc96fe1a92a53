//! The command line: every option with its check, so a bad value stops the run at once with a
//! message naming the option, before any connection is opened.

use std::net::{SocketAddr, ToSocketAddrs};
use std::path::PathBuf;

use clap::Parser;
use holoquic_proto::FecMode;

/// Plays a scene's request pattern over N concurrent WebTransport sessions against a holoquic
/// origin and reports on-time objects, object latency and throughput.
///
/// Every session requests, once per segment duration, one segment of every object of the scene:
/// the first `--reliable-fraction` of the objects (the "in view" ones; which objects those are
/// rotates with the session and the segment) as reliable stream objects, the rest as RaptorQ
/// datagram objects, all due `--deadline-ms` after they are asked for, as the player does with
/// its buffer target. Certificates are not verified: point it at origins you run.
#[derive(Debug, Clone, Parser)]
#[command(name = "holoquic-load", version, about, long_about, allow_negative_numbers = true)]
pub struct Options {
    /// The origin's QUIC address, HOST:PORT
    #[arg(long, value_name = "HOST:PORT", default_value = "127.0.0.1:4433", value_parser = parse_address)]
    pub origin: SocketAddr,
    /// TLS server name (SNI) sent to the origin
    #[arg(long, value_name = "NAME", default_value = "localhost")]
    pub server_name: String,
    /// The origin's WebTransport session path
    #[arg(long, value_name = "PATH", default_value = "/holoquic", value_parser = parse_origin_path)]
    pub wt_path: String,
    /// The scene's manifest as an origin path; fetched over the first session unless --mpd-file is given
    #[arg(long, value_name = "PATH", default_value = "/content/demo/manifest.mpd", value_parser = parse_origin_path)]
    pub mpd: String,
    /// Read the manifest from this file instead (segment paths are still resolved against --mpd)
    #[arg(long, value_name = "FILE")]
    pub mpd_file: Option<PathBuf>,
    /// Concurrent sessions, each its own QUIC connection
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=10_000))]
    pub sessions: u32,
    /// Seconds of content each session plays (segments requested = duration / segment duration)
    #[arg(long, value_name = "S", default_value_t = 10.0, value_parser = positive_seconds)]
    pub duration: f64,
    /// Seconds over which the sessions are opened, evenly spaced
    #[arg(long, value_name = "S", default_value_t = 1.0, value_parser = non_negative_seconds)]
    pub ramp: f64,
    /// Quality rung of every request: an index (0 = lowest) or `top`; an object with fewer rungs uses its highest
    #[arg(long, value_name = "N|top", default_value = "top", value_parser = parse_quality)]
    pub quality: Quality,
    /// Fraction of each segment's objects requested reliably (in view); the rest as datagrams
    #[arg(long, value_name = "F", default_value_t = 0.5, value_parser = parse_fraction)]
    pub reliable_fraction: f64,
    /// Milliseconds from request to deadline [default: two segment durations, the player's 2-s buffer target at 1-s segments]
    #[arg(long, value_name = "MS", value_parser = clap::value_parser!(u64).range(1..=600_000))]
    pub deadline_ms: Option<u64>,
    /// FEC of datagram objects: none, planned (from --loss-ppm) or fixed (--overhead-permille)
    #[arg(long, value_name = "none|planned|fixed", default_value = "planned", value_parser = parse_fec)]
    pub fec: FecMode,
    /// Datagram loss reported in REQUESTs, parts per million (the origin plans repair from it)
    #[arg(long, value_name = "PPM", default_value_t = 0, value_parser = clap::value_parser!(u32).range(0..=1_000_000))]
    pub loss_ppm: u32,
    /// Repair symbols per 1000 source symbols with --fec fixed
    #[arg(long, value_name = "N", default_value_t = 100, value_parser = clap::value_parser!(u32).range(0..=2000))]
    pub overhead_permille: u32,
    /// Ask for repair symbols (REPAIR) when a datagram object is short after all its symbols were sent
    #[arg(long, value_name = "BOOL", default_value_t = true, action = clap::ArgAction::Set)]
    pub repair: bool,
    /// Seconds between progress lines on stderr; 0 for none
    #[arg(long, value_name = "S", default_value_t = 10.0, value_parser = non_negative_seconds)]
    pub interval: f64,
    /// Process id of the origin (on this machine): its resident memory is sampled and reported
    #[arg(long, value_name = "PID")]
    pub origin_pid: Option<u32>,
    /// Also write each progress line's numbers to FILE as CSV (one row per --interval: time,
    /// objects and their outcomes so far, latency and throughput since the last row, the origin's
    /// resident memory with --origin-pid, the machine's load average)
    #[arg(long, value_name = "FILE")]
    pub csv: Option<PathBuf>,
    /// Print the report as JSON on stdout instead of text
    #[arg(long)]
    pub json: bool,
    /// Also print one line per session in the text report
    #[arg(long)]
    pub per_session: bool,
    /// Exit with status 3 when any object was late or lost, or a session failed
    #[arg(long)]
    pub strict: bool,
}

/// Which rung every request asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Quality {
    Top,
    Rung(usize),
}

impl Quality {
    /// The rung index for a scene whose objects have `rungs` rungs (at least 1).
    pub fn index(self, rungs: usize) -> usize {
        match self {
            Quality::Top => rungs.saturating_sub(1),
            Quality::Rung(n) => n,
        }
    }
}

impl Options {
    /// The deadline of every request, in ms, for segments of `segment_seconds`.
    pub fn deadline_ms(&self, segment_seconds: f64) -> u64 {
        self.deadline_ms.unwrap_or((2000.0 * segment_seconds).round() as u64)
    }

    /// Checks that need more than one option, or the origin's state.
    pub fn check(&self) -> Result<(), String> {
        if let Some(pid) = self.origin_pid {
            if !std::path::Path::new(&format!("/proc/{pid}/status")).exists() {
                return Err(format!("--origin-pid {pid}: no such process"));
            }
        }
        if let Some(file) = &self.mpd_file {
            if !file.is_file() {
                return Err(format!("--mpd-file {}: not a readable file", file.display()));
            }
        }
        Ok(())
    }
}

fn parse_address(text: &str) -> Result<SocketAddr, String> {
    let mut addresses = text.to_socket_addrs().map_err(|e| format!("not HOST:PORT ({e})"))?;
    addresses.next().ok_or_else(|| "the host has no address".into())
}

fn parse_origin_path(text: &str) -> Result<String, String> {
    if !text.starts_with('/') || text.len() > holoquic_proto::object::MAX_PATH_LEN || text.contains(char::is_whitespace) {
        return Err("an origin path starts with `/`, has no blanks and is at most 1024 bytes".into());
    }
    Ok(text.into())
}

fn seconds(text: &str) -> Result<f64, String> {
    let value: f64 = text.parse().map_err(|_| format!("{text:?} is not a number of seconds"))?;
    if !value.is_finite() || value > 86_400.0 {
        return Err("seconds must be finite and at most 86400 (a day)".into());
    }
    Ok(value)
}

fn positive_seconds(text: &str) -> Result<f64, String> {
    seconds(text).and_then(|v| if v > 0.0 { Ok(v) } else { Err("must be more than 0 seconds".into()) })
}

fn non_negative_seconds(text: &str) -> Result<f64, String> {
    seconds(text).and_then(|v| if v >= 0.0 { Ok(v) } else { Err("must not be negative".into()) })
}

fn parse_fraction(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(v) if (0.0..=1.0).contains(&v) => Ok(v),
        _ => Err(format!("{text:?} is not a fraction between 0 and 1")),
    }
}

fn parse_quality(text: &str) -> Result<Quality, String> {
    if text == "top" {
        return Ok(Quality::Top);
    }
    text.parse().map(Quality::Rung).map_err(|_| format!("{text:?} is neither a rung index (0, 1, …) nor `top`"))
}

fn parse_fec(text: &str) -> Result<FecMode, String> {
    match text {
        "none" => Ok(FecMode::None),
        "planned" => Ok(FecMode::Planned),
        "fixed" => Ok(FecMode::Fixed),
        _ => Err(format!("{text:?} is not one of none, planned, fixed")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Result<Options, String> {
        Options::try_parse_from(std::iter::once("holoquic-load").chain(args.iter().copied())).map_err(|e| e.to_string())
    }

    #[test]
    fn defaults_are_one_session_of_the_demo() {
        let o = parse(&[]).unwrap();
        assert_eq!((o.sessions, o.quality, o.fec, o.mpd.as_str()), (1, Quality::Top, FecMode::Planned, "/content/demo/manifest.mpd"));
        assert_eq!(o.deadline_ms(1.0), 2000);
        assert_eq!(Quality::Top.index(5), 4);
    }

    #[test]
    fn every_bad_value_names_its_option() {
        for (args, option) in [
            (&["--sessions", "0"][..], "--sessions"),
            (&["--duration", "-1"], "--duration"),
            (&["--duration", "nan"], "--duration"),
            (&["--reliable-fraction", "1.5"], "--reliable-fraction"),
            (&["--quality", "best"], "--quality"),
            (&["--fec", "lots"], "--fec"),
            (&["--loss-ppm", "2000000"], "--loss-ppm"),
            (&["--deadline-ms", "0"], "--deadline-ms"),
            (&["--origin", "nowhere"], "--origin"),
            (&["--mpd", "content/x.mpd"], "--mpd"),
            (&["--ramp", "-2"], "--ramp"),
        ] {
            let err = parse(args).unwrap_err();
            assert!(err.contains(option), "{args:?}: {err}");
        }
        let missing = parse(&["--mpd-file", "/nonexistent/manifest.mpd"]).unwrap().check().unwrap_err();
        assert!(missing.contains("--mpd-file"), "{missing}");
    }
}
