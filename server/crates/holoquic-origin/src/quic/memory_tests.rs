//! The origin's per-connection state stays bounded however many requests a connection serves:
//! the WebTransport layer over quiche's test pipe (the harness of `limits_tests.rs`), a
//! session asking for hundreds of objects one batch after another, as a player does for as long
//! as it plays.

use holoquic_proto::{Delivery, FecMode, Request};

use super::limits_tests::{request_stream_bytes, status, Harness};

/// Requests per batch, and batches: 600 requests, more than any bound the table could be given
/// by accident, far fewer than quiche's limit of the peer's open streams.
const BATCH: u64 = 50;
const BATCHES: u64 = 12;

fn reliable(request_id: u64) -> Request {
    Request {
        request_id,
        delivery: Delivery::Reliable,
        urgency: 3,
        deadline_ms: 0,
        fec_mode: FecMode::None,
        loss_ppm: 0,
        burst_milli: 0,
        overhead_permille: 0,
        path: "/content/d/obj".into(),
    }
}

/// Each object request served used to leave an entry in the session machine's stream table for
/// good (pruned only past 4096 per connection): the origin's memory crept up by ~130 bytes per
/// request for as long as a session played. Once the client has finished a stream and the
/// origin has answered on it, its state must go.
#[test]
fn finished_requests_leave_no_stream_state() {
    let mut h = Harness::with_session();
    let before = h.wt.bidi_stream_count();
    for batch in 0..BATCHES {
        let streams: Vec<u64> = (0..BATCH).map(|i| 4 + 4 * (batch * BATCH + i)).collect();
        for (i, &stream) in streams.iter().enumerate() {
            // As a player asks for a reliable object: the REQUEST and FIN together.
            let request_id = batch * BATCH + i as u64 + 1;
            h.pipe.client.stream_send(stream, &request_stream_bytes(reliable(request_id)), true).unwrap();
        }
        let mut answers: Vec<(Vec<u8>, bool)> = vec![(Vec::new(), false); streams.len()];
        for _ in 0..100 {
            h.turn();
            for (answer, &stream) in answers.iter_mut().zip(&streams) {
                let (bytes, fin) = h.read(stream);
                answer.0.extend(bytes);
                answer.1 |= fin;
            }
            if answers.iter().all(|(_, fin)| *fin) {
                break;
            }
        }
        for (answer, &stream) in answers.iter().zip(&streams) {
            assert!(answer.1, "stream {stream}: the object never finished");
            assert_eq!(status(&answer.0), 200, "stream {stream}");
        }
    }
    h.turn();
    let after = h.wt.bidi_stream_count();
    assert!(after <= before + 2 * BATCH as usize, "{after} bidi streams tracked after {} finished requests ({before} before)", BATCH * BATCHES);
    assert!(!h.pipe.server.is_closed() && h.wt.session_count() == 1);
}
