//! The path stream (path_report.rs) over a real quiche connection pair (quiche's test pipe, the
//! origin's own configuration): the session's first round opens a WebTransport uni stream with
//! a PATH report of the connection's RTT and window, the next report waits for the interval, and
//! the stream ends with the session.

use std::time::Duration;

use holoquic_proto::h3::{stream_type, WebTransportStreamHeader};
use holoquic_proto::{Message, PathReport};

use super::limits_tests::Harness;
use super::path_report::REPORT_INTERVAL;

/// The server's first unidirectional stream after its control stream (3).
const PATH_STREAM: u64 = 7;

/// The PATH reports in `bytes`, read from the start of the stream (`header`: it begins with the
/// WebTransport uni stream header).
fn reports(mut bytes: &[u8], header: bool) -> Vec<PathReport> {
    if header {
        let (h, used) = WebTransportStreamHeader::decode(bytes, stream_type::WEBTRANSPORT_UNI).expect("a WebTransport uni stream header");
        assert_eq!(h.session_id, 0, "the path stream names the session");
        bytes = &bytes[used..];
    }
    let mut out = Vec::new();
    while !bytes.is_empty() {
        let (message, used) = Message::decode(bytes).expect("whole PATH messages");
        let Message::Path(report) = message else { panic!("only PATH on the path stream, got {message:?}") };
        out.push(report);
        bytes = &bytes[used..];
    }
    out
}

#[test]
fn a_session_gets_path_reports_every_interval_until_it_ends() {
    let mut h = Harness::with_session();
    let (bytes, fin) = h.read(PATH_STREAM);
    let first = reports(&bytes, true);
    assert_eq!(first.len(), 1, "one report as the session opens");
    assert!(!fin);
    let stats = h.pipe.server.path_stats().find(|p| p.active).unwrap();
    let report = first[0];
    assert!(report.cwnd_bytes > 0 && report.cwnd_bytes <= stats.cwnd as u64 * 2, "the window as quiche has it: {report:?}");
    assert!(report.smoothed_rtt_us >= report.min_rtt_us, "smoothed ≥ minimum: {report:?}");
    assert!(u128::from(report.smoothed_rtt_us) <= stats.rtt.as_micros() + 1_000_000, "the connection's RTT: {report:?} vs {:?}", stats.rtt);

    // Rounds within the interval add nothing: a report is due every quarter second, not every round.
    h.turn();
    assert!(h.read(PATH_STREAM).0.is_empty(), "no second report within {REPORT_INTERVAL:?}");
    std::thread::sleep(REPORT_INTERVAL + Duration::from_millis(20));
    h.turn();
    assert_eq!(reports(&h.read(PATH_STREAM).0, false).len(), 1, "the next report after the interval");

    // The client ends the session (FIN on the CONNECT stream): the path stream ends too.
    h.pipe.client.stream_send(0, &[], true).unwrap();
    h.turn();
    h.turn();
    assert_eq!(h.wt.session_count(), 0);
    let (rest, fin) = h.read(PATH_STREAM);
    assert!(fin, "the path stream ends with its session (then {} bytes)", rest.len());
}
